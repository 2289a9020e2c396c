"""One on-chip block copied into several tensors (MarkMultiStoresTT's ``tt.multi_store`` runs): a result written to the
output and to a cache, a row sum stored twice, copies at different slices of one tensor, with other work between
them and compute still reading the block, in a pipelined loop, a block the reader fills copied out twice: compiled
and run on the emulator against torch. The writer writes the block's CB pages into each tensor and pops them once.
Tolerances: copies are exact; bfloat16 outputs of computed values within 2^-8 of their magnitude (one rounding),
float32 row sums within 2^-9 (reduce_tile reads float32 as TF32)."""

import pytest
import tilelang.language as T
import torch

import tilelang_tt
from tilelang_tt import BufferLayout

BF16, TF32_SUM = 2.0**-8, 2.0**-9


def data(*shape, seed, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def assert_close(out, ref, rel):
    out, ref = out.double(), ref.double()
    err = ((out - ref).abs() / ref.abs().clamp(min=1.0)).max().item()
    assert err <= rel, f"max relative error {err} > {rel}"


def result_and_cache(M, N, bm, bn, dtype):
    """An element-wise result written to the output Y and to a cache K at the same place (a KV-cache update)."""
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype), K: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            x = T.alloc_shared((bm, bn), dtype)
            y = T.alloc_fragment((bm, bn), "float32")
            T.copy(X[by * bm, bx * bn], x)
            for i, j in T.Parallel(bm, bn):
                y[i, j] = T.exp(T.Cast("float32", x[i, j])) * 0.5
            T.copy(y, Y[by * bm, bx * bn])
            T.copy(y, K[by * bm, bx * bn])

    return main


@pytest.mark.parametrize("M,N,bm,bn,dtype", [(64, 96, 32, 32, "bfloat16"), (96, 64, 32, 64, "float32")])
def test_a_result_written_to_the_output_and_to_a_cache(M, N, bm, bn, dtype):
    torch_dtype = getattr(torch, dtype)
    x = data(M, N, seed=1, dtype=torch_dtype)
    artifacts = tilelang_tt.compile(result_and_cache(M, N, bm, bn, dtype))
    y, k = artifacts.run(x)
    ref = (x.float().exp() * 0.5).to(torch_dtype)
    assert_close(y, ref, BF16)
    assert torch.equal(y, k)
    writer = artifacts.sources["writer.cpp"]
    assert writer.count("cb_pop_front") == 1 and writer.count("noc_async_write_page") == 2


def test_a_result_written_to_two_row_major_tensors():
    """Both tensors laid out in rows: compute untilizes the block once into its staging CB, the writer writes its
    rows into each."""
    x = data(64, 64, seed=7)
    rows = BufferLayout(layout="row_major")
    y, k = tilelang_tt.compile(result_and_cache(64, 64, 32, 32, "float32"), layouts={"Y": rows, "K": rows}).run(x)
    assert_close(y, x.exp() * 0.5, BF16)
    assert torch.equal(y, k)


def row_sums_twice(M, N, bm):
    """A norm's row sums stored twice: into the statistics S and into the second half of R."""
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), S: T.Tensor((M,), "float32"), R: T.Tensor((2 * M,), "float32")):
        with T.Kernel(M // bm, threads=128) as bx:
            a = T.alloc_shared((bm, N), "float32")
            s = T.alloc_fragment((bm,), "float32")
            T.copy(A[bx * bm, 0], a)
            for i, j in T.Parallel(bm, N):
                a[i, j] = a[i, j] * a[i, j]
            T.reduce_sum(a, s, dim=1)
            T.copy(s, R[M + bx * bm])
            T.copy(s, S[bx * bm])

    return main


def test_a_row_sum_stored_twice():
    a = data(64, 128, seed=2)
    s, r = tilelang_tt.compile(row_sums_twice(64, 128, 32)).run(a)
    ref = (a * a).sum(1)
    assert_close(s, ref, TF32_SUM * 4)
    assert torch.equal(r[64:], s)


def with_work_between(M, N, b):
    """F copied into C, then, after G is computed from F, into the right half of D and the left half of D: other
    work between the copies, and compute still reading F after its first copy (F's hand-off CB)."""
    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), C: T.Tensor((M, N), "bfloat16"), E: T.Tensor((M, N), "float32"),
             D: T.Tensor((M, 2 * N), "bfloat16")):
        with T.Kernel(N // b, M // b, threads=128) as (bx, by):
            A_s = T.alloc_shared((b, b), "bfloat16")
            F = T.alloc_fragment((b, b), "float32")
            G = T.alloc_fragment((b, b), "float32")
            T.copy(A[by * b, bx * b], A_s)
            for i, j in T.Parallel(b, b):
                F[i, j] = T.max(T.Cast("float32", A_s[i, j]), 0.0) + 1.0
            T.copy(F, C[by * b, bx * b])
            for i, j in T.Parallel(b, b):
                G[i, j] = F[i, j] * T.Cast("float32", A_s[i, j])
            T.copy(G, E[by * b, bx * b])
            T.copy(F, D[by * b, N + bx * b])
            T.copy(F, D[by * b, bx * b])

    return main


def test_copies_with_other_work_between_and_reads_after_the_first():
    a = data(64, 96, seed=3, dtype=torch.bfloat16)
    c, e, d = tilelang_tt.compile(with_work_between(64, 96, 32)).run(a)
    f = a.float().clamp(min=0) + 1
    assert_close(c, f.bfloat16(), BF16)
    assert_close(e, f.bfloat16().float() * a.float(), BF16)
    assert torch.equal(d, torch.cat([c, c], 1))


def pipelined(M, N, b):
    """Each step's block copied into D and then into C, inside a pipelined loop over the column blocks."""
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32"), D: T.Tensor((M, N), "float32")):
        with T.Kernel(M // b, threads=128) as by:
            A_s = T.alloc_shared((b, b), "float32")
            F = T.alloc_fragment((b, b), "float32")
            for k in T.Pipelined(N // b, num_stages=2):
                T.copy(A[by * b, k * b], A_s)
                for i, j in T.Parallel(b, b):
                    F[i, j] = A_s[i, j] - 1.5
                T.copy(F, D[by * b, k * b])
                T.copy(F, C[by * b, k * b])

    return main


def test_copies_of_each_step_of_a_pipelined_loop():
    a = data(64, 128, seed=4)
    c, d = tilelang_tt.compile(pipelined(64, 128, 32)).run(a)
    assert torch.equal(c, a - 1.5) and torch.equal(d, a - 1.5)


def read_block_copied_twice(M, N, b):
    """A block the reader fills, copied out twice without compute (a tensor duplicated)."""
    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), C: T.Tensor((M, N), "bfloat16"), D: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(N // b, M // b, threads=128) as (bx, by):
            A_s = T.alloc_shared((b, b), "bfloat16")
            T.copy(A[by * b, bx * b], A_s)
            T.copy(A_s, C[by * b, bx * b])
            T.copy(A_s, D[by * b, bx * b])

    return main


def test_a_block_the_reader_fills_copied_twice():
    a = data(64, 64, seed=5, dtype=torch.bfloat16)
    c, d = tilelang_tt.compile(read_block_copied_twice(64, 64, 32)).run(a)
    assert torch.equal(c, a) and torch.equal(d, a)


def copied_again_in_a_branch_rewritten(M, N, b):
    """The rewrite MarkMultiStoresTT's refusal of a copy in a branch gives: the branch copies F into a block of its own."""
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32"), D: T.Tensor((M, N), "float32")):
        with T.Kernel(N // b, M // b, threads=128) as (bx, by):
            F = T.alloc_fragment((b, b), "float32")
            F_2 = T.alloc_fragment((b, b), "float32")
            for i, j in T.Parallel(b, b):
                F[i, j] = A[by * b + i, bx * b + j] + 1.0
            T.copy(F, C[by * b, bx * b])
            if bx == 0:
                T.copy(F, F_2)
                T.copy(F_2, D[by * b, bx * b])

    return main


def test_the_rewrite_of_a_copy_in_a_branch():
    a = data(64, 64, seed=6)
    c, d = tilelang_tt.compile(copied_again_in_a_branch_rewritten(64, 64, 32)).run(a)
    assert torch.equal(c, a + 1)
    assert torch.equal(d[:, :32], a[:, :32] + 1) and not d[:, 32:].any()
