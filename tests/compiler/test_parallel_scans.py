"""Running sums written per row, a serial loop over the columns inside T.Parallel over the rows (a GPU thread
per row): a T.cumsum of the terms (LowerParallelScansTT). Run on the emulator against torch."""

import pytest
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_ops import assert_close, bf16


def blocked_cumsum(m, n, bm, bn, dtype):
    """Each row's inclusive cumsum, block by block of ``bn`` columns, the running total carried across blocks
    in a per-row fragment (TileOPs' tiled cumsum), in float32."""

    @T.prim_func
    def main(X: T.Tensor((m, n), dtype), Y: T.Tensor((m, n), dtype)):
        with T.Kernel(T.ceildiv(m, bm), threads=128) as bx:
            xs = T.alloc_shared((bm, bn), dtype)
            run = T.alloc_fragment((bm, bn), "float32")
            ys = T.alloc_fragment((bm, bn), dtype)
            total = T.alloc_fragment((bm,), "float32")
            T.clear(total)
            for k in T.serial(n // bn):
                T.copy(X[bx * bm, k * bn], xs)
                for i in T.Parallel(bm):
                    for j in T.serial(bn):
                        total[i] = total[i] + T.Cast("float32", xs[i, j])
                        run[i, j] = total[i]
                for i, j in T.Parallel(bm, bn):
                    ys[i, j] = T.Cast(dtype, run[i, j])
                T.copy(ys, Y[bx * bm, k * bn])

    return main


@pytest.mark.parametrize("m,n,bm,bn,dtype", [(64, 256, 32, 128, "bfloat16"), (32, 192, 32, 64, "float32")])
def test_a_running_sum_per_row_is_a_cumsum(m, n, bm, bn, dtype):
    x = bf16(m, n, seed=70).to(getattr(torch, dtype))
    y = torch.as_tensor(tilelang_tt.compile(blocked_cumsum(m, n, bm, bn, dtype)).run(x)).float()
    ref = x.float().cumsum(1)
    # the total carried across blocks is a T.reduce_sum and a block's prefix sums a T.cumsum: float32 terms at
    # the precision docs/numerics.md gives them (TF32 reads, hi + lo products), 2^-10 of the sums
    assert_close(y, ref, 2.0 ** -7 if dtype == "bfloat16" else 2.0 ** -10)


def discounted_energy(m, n):
    """A statement before the accumulation (the square, which the term reads) and one after it reading the
    running value: E[i, j] = 0.5 * sum_{k <= j} x[i, k]^2, and the row totals S[i] of all the squares."""

    @T.prim_func
    def main(X: T.Tensor((m, n), "float32"), E: T.Tensor((m, n), "float32"), S: T.Tensor((m,), "float32")):
        with T.Kernel(1, threads=128) as _:
            xs = T.alloc_shared((m, n), "float32")
            sq = T.alloc_fragment((m, n), "float32")
            e = T.alloc_fragment((m, n), "float32")
            acc = T.alloc_fragment((m,), "float32")
            T.copy(X[0, 0], xs)
            T.clear(acc)
            for i in T.Parallel(m):
                for j in T.serial(n):
                    sq[i, j] = xs[i, j] * xs[i, j]
                    acc[i] += sq[i, j]
                    e[i, j] = acc[i] * 0.5
            T.copy(e, E[0, 0])
            T.copy(acc, S[0])

    return main


def test_stores_around_the_accumulation_read_the_terms_and_the_running_value():
    x = bf16(32, 64, seed=71).float()  # bfloat16 values: their squares are exact in float32
    e, s = (torch.as_tensor(o) for o in tilelang_tt.compile(discounted_energy(32, 64)).run(x))
    # a float32 T.cumsum and T.reduce_sum (hi + lo products, TF32 reads: docs/numerics.md), as scan/cumsum_smem
    assert_close(e, 0.5 * (x * x).cumsum(1), 2.0 ** -10)
    assert_close(s, (x * x).sum(1), 2.0 ** -10)
