"""StoreGlobalFillsTT alone: a T.fill of a global tensor region is a filled fragment copied there."""

import tilelang  # noqa: F401
import tilelang.language as TL
import torch
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

import tilelang_tt
from tests.compiler.test_ops import assert_close
from tests.kernels import gemm, lower_until, run_pass
from tests.passes.helpers import names, tl
from tilelang_tt.passes.store_global_fills_tt import PASS, StoreGlobalFillsTT


def test_registered_under_its_name():
    assert StoreGlobalFillsTT().info.name == PASS == "StoreGlobalFillsTT"


@I.ir_module
class Before:
    @T.prim_func
    def main(C: T.Buffer((2, 64, 128), "float32")):
        for by in T.thread_binding(2, thread="blockIdx.y"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                tl.tileop.fill(tl.region(C[by, 0, 0], 2, 1, 64, 128), T.float32(0))
                tl.tileop.fill(tl.region(C[by, 0, 0], 2, 1, 1, 32), T.float32(1))


@I.ir_module
class Expected:
    @T.prim_func
    def main(C: T.Buffer((2, 64, 128), "float32")):
        for by in T.thread_binding(2, thread="blockIdx.y"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                C_fill = T.sblock_alloc_buffer((64, 128), "float32", scope="local.fragment")
                C_fill1 = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                tl.tileop.fill(tl.region(C_fill[0, 0], 2, 64, 128), T.float32(0))
                tl.tileop.copy(tl.region(C_fill[0, 0], 1, 64, 128), tl.region(C[by, 0, 0], 2, 1, 64, 128))
                tl.tileop.fill(tl.region(C_fill1[0], 2, 32), T.float32(1))
                tl.tileop.copy(tl.region(C_fill1[0], 1, 32), tl.region(C[by, 0, 0], 2, 1, 1, 32))


def test_hand_written_fills_of_a_matrix_and_of_a_row_become_copies_of_filled_fragments():
    after = StoreGlobalFillsTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_kernels_filling_only_blocks_are_unchanged():
    before = lower_until(gemm(64, 64, 64, 32, 32, 32), PASS)
    assert run_pass(before, PASS)["main"].same_as(before["main"])


def clear_then_split_k(M=64, N=64, K=128, splits=2):
    """The output cleared by one launch, then the split-K partial products added into it by the next
    (T.atomic_add): the zeroed output the sums start from, whatever the caller passed."""
    bk = K // splits

    @TL.prim_func
    def main(A: TL.Tensor((M, K), "bfloat16"), B: TL.Tensor((K, N), "bfloat16"), C: TL.Tensor((M, N), "float32")):
        with TL.Kernel(1) as bx:
            TL.clear(C)
        with TL.Kernel(1, 1, splits) as (bx, by, bz):
            a = TL.alloc_shared((M, bk), "bfloat16")
            b = TL.alloc_shared((bk, N), "bfloat16")
            c = TL.alloc_fragment((M, N), "float32")
            TL.copy(A[0, bz * bk], a)
            TL.copy(B[bz * bk, 0], b)
            TL.clear(c)
            TL.gemm(a, b, c)
            TL.atomic_add(C[0, 0], c)

    return main


def test_a_global_clear_then_atomic_adds_run_against_torch():
    a, b = torch.randn(64, 128).bfloat16(), torch.randn(128, 64).bfloat16()
    out = tilelang_tt.compile(clear_then_split_k()).run(a, b, torch.full((64, 64), 7.0))
    assert_close(out, a.float() @ b.float(), 2.0**-10)


def test_a_global_fill_of_rows_runs_against_torch():
    """Each block sets its 32 rows of O to 2.5 then adds X into them in the next launch."""

    @TL.prim_func
    def main(X: TL.Tensor((64, 64), "float32"), O: TL.Tensor((64, 64), "float32")):
        with TL.Kernel(2) as by:
            TL.fill(O[by * 32 : (by + 1) * 32, :], 2.5)
        with TL.Kernel(2) as by:
            x = TL.alloc_shared((32, 64), "float32")
            o = TL.alloc_fragment((32, 64), "float32")
            TL.copy(X[by * 32, 0], x)
            TL.copy(O[by * 32, 0], o)
            for i, j in TL.Parallel(32, 64):
                o[i, j] += x[i, j]
            TL.copy(o, O[by * 32, 0])

    x = torch.randn(64, 64)
    assert_close(tilelang_tt.compile(main).run(x, torch.zeros(64, 64)), x + 2.5, 2.0**-20)
