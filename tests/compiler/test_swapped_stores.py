"""Stores at swapped indices (issue 29): ``C_t[j, i] = ..`` in ``for i, j in T.Parallel(m, n)`` writes the
(n, m) block ``C_t``; T.Parallel's iterations are independent, so the nest is the one in the store's order,
its reads ``X[i, j]`` of (m, n) blocks transposed (``transpose_tile``) and its vectors indexed by ``j`` per
row of ``C_t``. sglang's swap-AB GEMM accumulates so (``C_local_accum[j, i] += C_local[i, j] * C_scale[j]``)."""

import pytest
import tilelang  # noqa: F401
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_ops import assert_close, bf16
from tests.kernels import lower_until
from tilelang_tt.ir.common import COL, ROW, vector_kinds


def swap_ab_gemm(m, n, k, bm, bn, bk):
    """C^T (n, m) = (A B^T)^T with a per-row scale of B, the accumulator indexed transposed: per K step
    ``acc_t[j, i] += c[i, j] * s[j]`` (a (bn, bm) accumulator of (bm, bn) products)."""

    @T.prim_func
    def main(A: T.Tensor((m, k), "bfloat16"), B: T.Tensor((n, k), "bfloat16"), S: T.Tensor((n, k // bk), "float32"),
             C: T.Tensor((n, m), "bfloat16")):
        with T.Kernel(T.ceildiv(n, bn), T.ceildiv(m, bm), threads=128) as (bx, by):
            a_s = T.alloc_shared((bm, bk), "bfloat16")
            b_s = T.alloc_shared((bn, bk), "bfloat16")
            s = T.alloc_fragment((bn,), "float32")
            c = T.alloc_fragment((bm, bn), "float32")
            acc_t = T.alloc_fragment((bn, bm), "float32")
            T.clear(acc_t)
            for ko in T.Pipelined(k // bk, num_stages=2):
                T.copy(A[by * bm, ko * bk], a_s)
                T.copy(B[bx * bn, ko * bk], b_s)
                for i in T.Parallel(bn):
                    s[i] = S[bx * bn + i, ko]
                T.clear(c)
                T.gemm(a_s, b_s, c, transpose_B=True)
                for i, j in T.Parallel(bm, bn):
                    acc_t[j, i] += c[i, j] * s[j]
            T.copy(acc_t, C[bx * bn, by * bm])

    return main


@pytest.mark.parametrize("bm, bn", [(64, 128), (128, 64), (64, 16)])
def test_swap_ab_gemm_accumulates_transposed(bm, bn):
    m, n, k, bk = 128, 128, 128, 64
    a, b = bf16(m, k, seed=1), bf16(n, k, seed=2)
    s = torch.rand(n, k // bk, generator=torch.Generator().manual_seed(3)) + 0.5
    c = torch.as_tensor(tilelang_tt.compile(swap_ab_gemm(m, n, k, bm, bn, bk)).run(a, b, s))
    ref = sum((a[:, ko * bk:(ko + 1) * bk].float() @ b[:, ko * bk:(ko + 1) * bk].float().T) * s[:, ko]
              for ko in range(k // bk)).T
    assert_close(c, ref, 2.0**-7)


def transposed_bias_store(m, n):
    """Y (n, m) = (X + bias[j])^T * gain[i]: the store swaps the loops, ``bias`` is per column of X (a
    row of Y) and ``gain`` per row of X (a column of Y)."""

    @T.prim_func
    def main(X: T.Tensor((m, n), "float32"), bias: T.Tensor((n,), "float32"), gain: T.Tensor((m,), "float32"),
             Y: T.Tensor((n, m), "float32")):
        with T.Kernel(1, threads=128) as _:
            x = T.alloc_shared((m, n), "float32")
            b = T.alloc_fragment((n,), "float32")
            g = T.alloc_fragment((m,), "float32")
            y = T.alloc_fragment((n, m), "float32")
            T.copy(X, x)
            T.copy(bias, b)
            T.copy(gain, g)
            for i, j in T.Parallel(m, n):
                y[j, i] = (x[i, j] + b[j]) * g[i]
            T.copy(y, Y)

    return main


def test_a_transposed_store_reads_its_vectors_per_row_and_per_column():
    m, n = 64, 96
    gen = torch.Generator().manual_seed(4)
    x, bias, gain = torch.randn(m, n, generator=gen), torch.randn(n, generator=gen), torch.randn(m, generator=gen)
    y = torch.as_tensor(tilelang_tt.compile(transposed_bias_store(m, n)).run(x, bias, gain))
    assert_close(y, ((x + bias) * gain[:, None]).T, 2.0**-10)


def test_the_vectors_of_a_swapped_store_take_the_stores_rows_and_columns():
    """``y[j, i] = (x[i, j] + b[j]) * g[i]``: ``b`` holds a value per row of ``y`` (a column vector), ``g`` a
    value per column (a row vector), as in the nest written in the store's order."""
    func = lower_until(transposed_bias_store(64, 96), "LowerTTTileIntrinsics")["main"]
    kinds = {buffer.name: kind for buffer, kind in vector_kinds(func).items()}  # the kernel's names are unique
    assert (kinds["b"], kinds["g"]) == (COL, ROW)
