"""Running products, maxima and minima along a row written as scalar code (issue 29 item 3): KernelBench's
one program per row (``T.Kernel(B, threads=1)``) carrying a ``T.alloc_local`` or ``T.alloc_var`` through
``for j in T.serial(N)``. No block scan computes them in the kernel's order, so the loop stays serial and
each statement is a column of 32 rows (ScalarRowsToBlocksTT, CoarsenRowBlocksTT): the reader reads an
element per row, the SFPU combines one tile per column in float32, the writer writes an element per row.
Against torch (``torch.cumprod``, ``torch.cummax``: sequential in float32 too) the products differ by the
DST's multiply rounding, under 2^-19 relative after 96 factors (measured); maxima and minima are exact.
Down the columns (dim 0), GPU code with a lane per column already runs as row vectors, one per row."""

import pytest
import tilelang  # noqa: F401
import tilelang.language as T
import torch

import tilelang_tt
from tests.kernels import lower_until
from tilelang_tt.ir.common import COL, allocations, vector_kinds


def cumprod_rows(B, N, dtype, accum="float32", reverse=False):
    """KernelBench level 1, 90 (cumprod): a running product per row, from the last column with ``reverse``."""

    @T.prim_func
    def main(X: T.Tensor((B, N), dtype), Y: T.Tensor((B, N), dtype)):
        with T.Kernel(B, threads=1) as bx:
            running = T.alloc_local((1,), accum)
            running[0] = T.Cast(accum, 1)
            for j in T.serial(N):
                col = N - 1 - j if reverse else j
                running[0] *= T.Cast(accum, X[bx, col])
                Y[bx, col] = T.Cast(dtype, running[0])

    return main


def running_extremum(B, N, kind):
    """A running max (or min) per row in a ``T.alloc_var``, stored with the element it ends at."""

    @T.prim_func
    def main(X: T.Tensor((B, N), "float32"), Y: T.Tensor((B, N), "float32"), D: T.Tensor((B, N), "float32")):
        with T.Kernel(B, threads=1) as bx:
            best = T.alloc_var("float32")
            best = -T.infinity("float32") if kind == "max" else T.infinity("float32")
            for j in T.serial(N):
                best = T.max(best, X[bx, j]) if kind == "max" else T.min(best, X[bx, j])
                Y[bx, j] = best
                D[bx, j] = X[bx, j] - best

    return main


def cumprod_columns(M, N, dtype):
    """A running product down the columns (dim 0) written as GPU code: a lane per column of a 32-column block
    (``T.Parallel(32)``), serial over the rows."""

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(N // 32, threads=32) as bx:
            running = T.alloc_fragment((32,), "float32")
            for c in T.Parallel(32):
                running[c] = T.float32(1)
            for i in T.serial(M):
                for c in T.Parallel(32):
                    running[c] = running[c] * T.Cast("float32", X[i, bx * 32 + c])
                for c in T.Parallel(32):
                    Y[i, bx * 32 + c] = T.Cast(dtype, running[c])

    return main


def _rows(B, N, seed, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(B, N, generator=g) * 0.8 + 0.6).to(dtype)  # factors around 1: products stay in range


@pytest.mark.parametrize("B, N, dtype, reverse", [(64, 96, "float32", False), (32, 64, "float32", True),
                                                  (96, 64, "bfloat16", False)])
def test_cumprod_per_row_matches_torch(B, N, dtype, reverse):
    x = _rows(B, N, seed=N, dtype=getattr(torch, dtype))
    y = torch.as_tensor(tilelang_tt.compile(cumprod_rows(B, N, dtype, reverse=reverse)).run(x)).float()
    ref = x.float().flip(1).cumprod(1).flip(1) if reverse else x.float().cumprod(1)
    rel = 2.0**-19 if dtype == "float32" else 2.0**-7  # the DST's products; bfloat16: one ulp of Y
    torch.testing.assert_close(y, ref.to(getattr(torch, dtype)).float(), rtol=rel, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_cumprod_down_the_columns_matches_torch(dtype):
    x = _rows(64, 64, seed=7, dtype=getattr(torch, dtype))
    y = torch.as_tensor(tilelang_tt.compile(cumprod_columns(64, 64, dtype)).run(x)).float()
    rel = 2.0**-19 if dtype == "float32" else 2.0**-7
    torch.testing.assert_close(y, x.float().cumprod(0).to(getattr(torch, dtype)).float(), rtol=rel, atol=0)


@pytest.mark.parametrize("kind", ["max", "min"])
def test_running_max_and_min_per_row_are_exact(kind):
    x = torch.randn(32, 64, generator=torch.Generator().manual_seed(5))
    y, d = tilelang_tt.compile(running_extremum(32, 64, kind)).run(x)
    ref = x.cummax(1).values if kind == "max" else x.cummin(1).values
    assert torch.equal(torch.as_tensor(y), ref)
    assert torch.equal(torch.as_tensor(d), x - ref)


def test_the_running_value_is_a_value_per_row_of_the_rows_it_walks():
    """vector_kinds: the scalar's fragment, read and stored by nests over the rows of X (``X[bx + i, j]``),
    is a column vector, which CoarsenRowBlocksTT groups into 32 rows."""
    func = lower_until(cumprod_rows(64, 32, "float32"), "CoarsenRowBlocksTT")["main"]
    (running,) = [b for b in allocations(func) if b.name == "running"]
    assert vector_kinds(func)[running] == COL
    coarse = lower_until(cumprod_rows(64, 32, "float32"), "LowerTTTileIntrinsics")["main"]
    assert [int(d) for d in next(b for b in allocations(coarse) if b.name == "running").shape] == [32]
