"""Selections on the class of a value (T.isnan, and T.isinf, which TileLang writes as T.fabs(x) == inf and not
T.isnan(x)): compute makes the mask (isnan_tile: 1.0 or 0.0, ops/generate.py) and selects with where_tile.
TileOPs' nan_to_num (tests/outside/elementwise.py) runs the same way."""

import tilelang.language as T
import torch

import tilelang_tt

M, N = 64, 64


def nan_to_num(dtype="bfloat16"):
    """torch.nan_to_num(x, 0.5, 100, -100) element by element, and the NaN mask as a value."""
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype), D: T.Tensor((M, N), dtype)):
        with T.Kernel(2, 2, threads=128) as (bx, by):
            a = T.alloc_shared((32, 32), dtype)
            c = T.alloc_fragment((32, 32), dtype)
            d = T.alloc_fragment((32, 32), dtype)
            T.copy(A[by * 32, bx * 32], a)
            for i, j in T.Parallel(32, 32):
                v = T.Cast("float32", a[i, j])
                c[i, j] = T.if_then_else(T.isnan(v), T.Cast(dtype, 0.5), T.if_then_else(
                    T.isinf(v), T.if_then_else(v > 0, T.Cast(dtype, 100), T.Cast(dtype, -100)), a[i, j]))
                d[i, j] = T.Cast(dtype, T.isnan(v))
            T.copy(c, C[by * 32, bx * 32])
            T.copy(d, D[by * 32, bx * 32])

    return main


def _special(dtype):
    a = torch.randn(M, N, generator=torch.Generator().manual_seed(5)).to(dtype)
    a[::5, ::3], a[1::7, ::2], a[2::9, 1::4] = float("nan"), float("inf"), -float("inf")
    return a


def test_nan_and_infinities_are_selected_away_as_torch_nan_to_num():
    for dtype in ("bfloat16", "float32"):
        a = _special(getattr(torch, dtype))
        artifacts = tilelang_tt.compile(nan_to_num(dtype))
        c, d = artifacts.run(a)
        assert torch.equal(c.float(), torch.nan_to_num(a.float(), 0.5, 100, -100)), dtype
        assert torch.equal(d.float(), a.isnan().float()), dtype
        assert "isnan_tile(" in artifacts.sources["compute.cpp"]
