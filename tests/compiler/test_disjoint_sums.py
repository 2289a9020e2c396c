"""A tensor summed into with T.atomic_add by some blocks and stored or read by others, in regions
the block coordinates keep apart (LowerAtomicAddTT, ir/block_regions.py), run on the emulator
against torch: Stream-K's mix of tiles split over blocks and tiles computed whole; and the refusal
where a store may reach a summed region (its line, the blocks and the elements)."""

import pytest
import tilelang  # noqa: F401
import tilelang.language as T
import torch

from tests.compiler.test_negative import compile_error
from tests.compiler.test_ops import assert_close, run

SOURCE = open(__file__).read()


def line_of(marker: str) -> int:
    return next(i for i, text in enumerate(SOURCE.splitlines(), 1) if text.rstrip().endswith(f"# LINE: {marker}"))


def split_first_row(M=64, N=64, K=128, bm=32, bn=32, bk=32, split=2, form="block", store_row="own"):
    """C += A B for the first row of tiles, split over ``split`` blocks summing with T.atomic_add
    (``form``: the block or its elements, at ``by * bm`` or at row 0); C = A B for the other rows, each tile computed whole by
    the blocks of split 0 and stored (``store_row="first"``: stored into the first row, a clash)."""
    steps = K // bk // split

    @T.prim_func
    def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(N // bn, M // bm, split, threads=128) as (bx, by, bz):
            a = T.alloc_shared((bm, bk), "bfloat16")
            b = T.alloc_shared((bk, bn), "bfloat16")
            acc = T.alloc_fragment((bm, bn), "float32")
            T.clear(acc)
            if by == 0:
                for k in T.serial(steps):
                    T.copy(A[0, (bz * steps + k) * bk], a)
                    T.copy(B[(bz * steps + k) * bk, bx * bn], b)
                    T.gemm(a, b, acc)
                if form == "block":
                    T.atomic_add(C[by * bm, bx * bn], acc)
                elif form == "elements":
                    for i, j in T.Parallel(bm, bn):
                        T.atomic_add(C[by * bm + i, bx * bn + j], acc[i, j])
                else:  # "row 0": the destination does not name `by`, whose blocks of row 1 would sum too
                    T.atomic_add(C[0, bx * bn], acc)  # LINE: row_0
            elif bz == 0:
                for k in T.serial(K // bk):
                    T.copy(A[by * bm, k * bk], a)
                    T.copy(B[k * bk, bx * bn], b)
                    T.gemm(a, b, acc)
                T.copy(acc, C[by * bm if store_row == "own" else 0, bx * bn])  # LINE: store

    return main


@pytest.mark.parametrize("M, N, K, split, form", [(64, 64, 128, 2, "block"), (96, 64, 192, 3, "elements")])
def test_split_tiles_summed_and_whole_tiles_stored(M, N, K, split, form):
    gen = torch.Generator().manual_seed(M + K)
    a = torch.randn(M, K, generator=gen).bfloat16()
    b = torch.randn(K, N, generator=gen).bfloat16()
    c0 = torch.randn(M, N, generator=gen)
    out, _ = run(split_first_row(M, N, K, split=split, form=form), a, b, c0.clone())
    ref = a.float() @ b.float()
    ref[:32] += c0[:32]  # the sums add to what C held; the stores replace it
    assert_close(out, ref, 2.0**-10)


def test_a_store_into_a_summed_region_is_refused_at_the_store():
    err = compile_error(split_first_row(store_row="first"))
    assert err.pass_name == "LowerAtomicAddTT"
    assert "`C` is summed into with T.atomic_add and also read or written here" in err.message
    assert "block (bx 0, by 1, bz 0) touches [0:32, 0:32] here and block (bx 0, by 0, bz 0) may sum into " \
        "[0:32, 0:32]" in err.message
    assert err.location[:2] == (__file__, line_of("store"))


def test_a_split_some_of_whose_blocks_skip_their_add_is_refused():
    """Written C[0, ..], the sum's destination does not depend on `by`: the blocks of row 1 are in
    the turns of row 0 too, and skip their add (they would pass the turn on before the block before
    them added)."""
    err = compile_error(split_first_row(form="row 0"))
    assert err.pass_name == "LowerAtomicAddTT"
    assert "of the 4 blocks along by, bz that take turns summing into one region, 2 add" in err.message
    assert err.location[:2] == (__file__, line_of("row_0"))
