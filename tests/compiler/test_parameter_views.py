"""Views of parameters (``T.Tensor(shape, X.data)``, MapParameterViewsTT), run on the emulator
against torch: a view regrouping a parameter's leading dimensions reads and writes the parameter's
own elements, through slices (tiles, or rows of a row-major tensor) and element accesses."""

import pytest
import tilelang  # noqa: F401
import tilelang.language as T
import torch

from tests.compiler.test_ops import assert_close, run


def filter_bank_gemm(M=64, KH=2, KW=2, C=32, F=64, OH=4, OW=8, bk=32, dtype="bfloat16"):
    """out (M // (OH * OW), OH, OW, F) = A (M, KH * KW * C) @ W (KH, KW, C, F), the filters read
    through their (KH * KW * C, F) view in 32-row slices (one channel block of one tap each) and the
    output written through its (M, F) view in blocks of OH * OW rows (whole images)."""
    K, bm = KH * KW * C, OH * OW

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), W: T.Tensor((KH, KW, C, F), dtype),
             O: T.Tensor((M // bm, OH, OW, F), dtype)):
        with T.Kernel(1, M // bm, threads=128) as (bx, by):
            a = T.alloc_shared((bm, bk), dtype)
            w = T.alloc_shared((bk, F), dtype)
            acc = T.alloc_fragment((bm, F), "float32")
            o = T.alloc_shared((bm, F), dtype)
            w_2d = T.Tensor((K, F), dtype, W.data)
            o_2d = T.Tensor((M, F), dtype, O.data)
            T.clear(acc)
            for kk in T.Pipelined(K // bk, num_stages=2):
                T.copy(A[by * bm, kk * bk], a)
                T.copy(w_2d[kk * bk, 0], w)
                T.gemm(a, w, acc)
            T.copy(acc, o)
            T.copy(o, o_2d[by * bm, 0])

    return main


@pytest.mark.parametrize("KH, KW, C, OH, OW", [(2, 2, 32, 4, 8), (3, 1, 64, 8, 4)])
def test_gemm_through_views_of_its_filters_and_output(KH, KW, C, OH, OW):
    M, F = 2 * OH * OW, 64
    a = torch.randn(M, KH * KW * C).bfloat16()
    w = torch.randn(KH, KW, C, F).bfloat16()
    out, _ = run(filter_bank_gemm(M, KH, KW, C, F, OH, OW), a, w)
    ref = (a.float() @ w.float().reshape(KH * KW * C, F)).reshape(M // (OH * OW), OH, OW, F)
    assert_close(out, ref, 2.0**-7)


def scaled_through_a_view(B=2, R=32, N=64):
    """Y (B, R, N) = 2 X (B * R, N), the stores made element by element into Y's (B * R, N) view."""

    @T.prim_func
    def main(X: T.Tensor((B * R, N), "float32"), Y: T.Tensor((B, R, N), "float32")):
        with T.Kernel(1, B, threads=128) as (bx, by):
            x = T.alloc_shared((R, N), "float32")
            y_flat = T.Tensor((B * R, N), "float32", Y.data)
            T.copy(X[by * R, 0], x)
            for i, j in T.Parallel(R, N):
                y_flat[by * R + i, j] = x[i, j] * 2.0

    return main


def test_element_stores_through_a_view():
    x = torch.randn(64, 64)
    out, _ = run(scaled_through_a_view(), x)
    assert_close(out, (2 * x).reshape(2, 32, 64), 2.0**-10)


def copied_into_a_view(M=64, N=64):
    """The former refusal's kernel: 32-row blocks of X copied into a (M, N) view of a (2, M // 2, N) Y."""

    @T.prim_func
    def main(X: T.Tensor((M, N), "bfloat16"), Y: T.Tensor((2, M // 2, N), "bfloat16")):
        with T.Kernel(1, 2, threads=128) as (bx, by):
            x = T.alloc_shared((32, N), "bfloat16")
            y_flat = T.Tensor((M, N), "bfloat16", Y.data)
            T.copy(X[by * 32, 0], x)
            T.copy(x, y_flat[by * 32, 0])

    return main


def test_block_copies_into_a_view():
    x = torch.randn(64, 64).bfloat16()
    out, _ = run(copied_into_a_view(), x)
    assert torch.equal(out, x.float().reshape(2, 32, 64))
