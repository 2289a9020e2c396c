"""Rows walked by a serial loop around (or inside) a one-dimensional ``T.Parallel`` that read a tensor at swapped
indices (ParallelizeRowLoopsTT orders the nest as the on-chip block indexes it: the read is the transposed read of
a block), or store into a tensor at a row ``r0 + i``: compiled and run on the emulator against torch. A transpose is
exact; bfloat16 results of the SFPU's exp within 2^-6 of their magnitude."""

import pytest
import tilelang.language as T
import torch

import tilelang_tt

SFPU = 2.0**-6


def data(*shape, seed, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def transposed_rows(M, N, bm, bn, dtype, acc):
    """Row i of the block is column i of A's block: ``F[i, j] = exp(A[bx * bn + j, by * bm + i]) * 0.5``."""
    @T.prim_func
    def main(A: T.Tensor((N, M), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(N // bn, M // bm, threads=128) as (bx, by):
            F = T.alloc_fragment((bm, bn), acc)
            for i in T.serial(bm):
                for j in T.Parallel(bn):
                    F[i, j] = T.exp(A[bx * bn + j, by * bm + i]) * 0.5
            T.copy(F, B[by * bm, bx * bn])

    return main


@pytest.mark.parametrize("M,N,bm,bn,dtype", [(64, 96, 32, 32, "bfloat16"), (64, 64, 16, 64, "float32")])
def test_a_swapped_read_in_a_serial_row_loop_is_a_transposed_block(M, N, bm, bn, dtype):
    torch_dtype = getattr(torch, dtype)
    a = data(N, M, seed=1, dtype=torch_dtype)
    b = tilelang_tt.compile(transposed_rows(M, N, bm, bn, dtype, "float32")).run(a)
    ref = (a.float().T.exp() * 0.5).to(torch_dtype).double()
    err = ((b.double() - ref).abs() / ref.abs().clamp(min=1.0)).max().item()
    assert err <= SFPU, err


def column_threads(M, N, bm, bn):
    """A thread per column walking the rows, from global to global: ``B[by * bm + i, ..] = A[.., by * bm + i] + 1``."""
    @T.prim_func
    def main(A: T.Tensor((N, M), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(N // bn, M // bm, threads=128) as (bx, by):
            for j in T.Parallel(bn):
                for i in T.serial(bm):
                    B[by * bm + i, bx * bn + j] = A[bx * bn + j, by * bm + i] + 1.0

    return main


def test_a_thread_per_column_storing_row_r0_plus_i_of_a_tensor():
    a = data(128, 64, seed=2)
    b = tilelang_tt.compile(column_threads(64, 128, 32, 64)).run(a)
    assert torch.equal(b, a.T + 1)
