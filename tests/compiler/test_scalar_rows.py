"""Scalar code over rows (ScalarRowsToBlocksTT): one sequential program per row, serial sweeps carrying
scalars, compiled into row blocks and reductions along the row, run on the emulator against torch; the
running values (scans) and products it refuses, at their statement."""

import inspect

import pytest
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_negative import assert_diagnostic, compile_error

PATH = inspect.getsourcefile(inspect.currentframe())


def randn(*shape, seed, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def softmax_rows(B, N):
    """KernelBench's softmax: the max from the first element on, the exponentials stored and summed,
    then scaled in a third sweep that reads what the second stored."""

    @T.prim_func
    def main(X: T.Tensor((B, N), "float32"), Y: T.Tensor((B, N), "float32")):
        with T.Kernel(B, threads=1) as bx:
            top = T.alloc_local((1,), "float32")
            total = T.alloc_local((1,), "float32")
            top[0] = X[bx, 0]
            for j in range(1, N):
                top[0] = T.max(top[0], X[bx, j])
            total[0] = 0.0
            for j in range(N):
                e = T.exp(X[bx, j] - top[0])
                Y[bx, j] = e
                total[0] += e
            scale = 1.0 / total[0]
            for j in range(N):
                Y[bx, j] = Y[bx, j] * scale

    return main


@pytest.mark.parametrize("B, N", [(32, 256), (64, 96)])
def test_softmax_swept_by_one_program_per_row_matches_torch(B, N):
    x = randn(B, N, seed=B + N)
    y = tilelang_tt.compile(softmax_rows(B, N)).run(x, torch.zeros(B, N))
    torch.testing.assert_close(y, torch.softmax(x, dim=1), rtol=1e-3, atol=1e-5)


def min_max_scale(B, H, N, dtype):
    """A block per (batch, head) row of a rank-3 tensor: its min and max in one sweep (two reductions
    of one loop), then the row scaled into [0, 1] in the tensor's dtype."""

    @T.prim_func
    def main(X: T.Tensor((B, H, N), dtype), Y: T.Tensor((B, H, N), dtype)):
        with T.Kernel(H, B, threads=1) as (h, b):
            lo = T.alloc_local((1,), "float32")
            hi = T.alloc_local((1,), "float32")
            lo[0] = T.float32(1e30)
            hi[0] = T.float32(-1e30)
            for j in T.serial(N):
                lo[0] = T.min(lo[0], T.Cast("float32", X[b, h, j]))
                hi[0] = T.max(T.Cast("float32", X[b, h, j]), hi[0])
            for j in T.serial(N):
                Y[b, h, j] = T.Cast(dtype, (T.Cast("float32", X[b, h, j]) - lo[0]) / (hi[0] - lo[0]))

    return main


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_min_max_scaling_of_rows_of_a_rank_3_tensor_matches_torch(dtype):
    B, H, N = 2, 16, 64
    x = randn(B, H, N, seed=7, dtype=getattr(torch, dtype))
    y = tilelang_tt.compile(min_max_scale(B, H, N, dtype)).run(x)
    xf = x.float()
    lo, hi = xf.amin(dim=2, keepdim=True), xf.amax(dim=2, keepdim=True)
    torch.testing.assert_close(y.float(), ((xf - lo) / (hi - lo)).to(y.dtype).float(), rtol=2e-2, atol=1e-2)


def row_statistics(B, N):
    """KernelBench's reductions to a vector: each row's mean and (population) variance in two sweeps,
    stored per row into rank-1 outputs after the loops."""

    @T.prim_func
    def main(X: T.Tensor((B, N), "float32"), Mean: T.Tensor((B,), "float32"), Var: T.Tensor((B,), "float32")):
        with T.Kernel(B, threads=1) as bx:
            total = T.alloc_local((1,), "float32")
            dev = T.alloc_local((1,), "float32")
            total[0] = 0.0
            for j in range(N):
                total[0] += X[bx, j]
            mean = total[0] / N
            dev[0] = 0.0
            for j in range(N):
                dev[0] += (X[bx, j] - mean) * (X[bx, j] - mean)
            Mean[bx] = mean
            Var[bx] = dev[0] / N

    return main


def test_row_means_and_variances_stored_per_row_into_vectors_match_torch():
    x = randn(64, 128, seed=11)
    mean, var = tilelang_tt.compile(row_statistics(64, 128)).run(x)
    torch.testing.assert_close(mean, x.mean(dim=1), rtol=1e-2, atol=1e-3)
    torch.testing.assert_close(var, x.var(dim=1, unbiased=False), rtol=1e-2, atol=1e-3)


def running_product(B, N):
    @T.prim_func
    def main(X: T.Tensor((B, N), "float32"), Y: T.Tensor((B, N), "float32")):
        with T.Kernel(B, threads=1) as bx:
            running = T.alloc_local((1,), "float32")
            running[0] = T.float32(1)
            for j in T.serial(N):
                running[0] *= X[bx, j]
                Y[bx, j] = running[0]

    return main


def exclusive_sum(B, N):
    @T.prim_func
    def main(X: T.Tensor((B, N), "float32"), Y: T.Tensor((B, N), "float32")):
        with T.Kernel(B, threads=1) as bx:
            acc = T.alloc_local((1,), "float32")
            acc[0] = T.float32(0)
            for j in T.serial(N):
                Y[bx, j] = acc[0]
                acc[0] = acc[0] + X[bx, j]  # LINE: exclusive_sum

    return main


def row_cdf(B, N, dtype):
    """The cumulative distribution of each row's exponentials: their total in a first sweep, then a
    running sum (read after each addition) divided by it, from a T.alloc_var."""

    @T.prim_func
    def main(X: T.Tensor((B, N), dtype), Y: T.Tensor((B, N), "float32")):
        with T.Kernel(B, threads=1) as bx:
            total = T.alloc_var("float32")
            running = T.alloc_var("float32")
            total = T.float32(0)
            for j in T.serial(N):
                total = total + T.exp(T.Cast("float32", X[bx, j]))
            running = T.float32(0)
            for j in T.serial(N):
                running = running + T.exp(T.Cast("float32", X[bx, j]))
                Y[bx, j] = running / total

    return main


@pytest.mark.parametrize("B, N, dtype", [(32, 64, "float32"), (64, 128, "bfloat16")])
def test_a_running_sum_read_after_each_addition_is_a_scan_of_the_row_matching_torch(B, N, dtype):
    x = randn(B, N, seed=N, dtype=getattr(torch, dtype))
    y = tilelang_tt.compile(row_cdf(B, N, dtype)).run(x)
    e = x.float().exp()
    torch.testing.assert_close(y, e.cumsum(dim=1) / e.sum(dim=1, keepdim=True), rtol=1e-3, atol=1e-4)


def row_product(B, N):
    @T.prim_func
    def main(X: T.Tensor((B, N), "float32"), Y: T.Tensor((B, N), "float32")):
        with T.Kernel(B, threads=1) as bx:
            p = T.alloc_local((1,), "float32")
            p[0] = T.float32(1)
            for j in T.serial(N):
                p[0] = p[0] * X[bx, j]
            for j in T.serial(N):
                Y[bx, j] = X[bx, j] / p[0]

    return main


def test_a_running_product_and_a_product_of_the_row_run_serially_matching_torch():
    """Once refused (no block scan or product reduction): the loop stays serial, a column of 32 rows a step
    (tests/compiler/test_running_scans.py)."""
    x = torch.rand(32, 64, generator=torch.Generator().manual_seed(3)) * 0.8 + 0.6
    y = torch.as_tensor(tilelang_tt.compile(running_product(32, 64)).run(x))
    torch.testing.assert_close(y, x.cumprod(1), rtol=2.0**-19, atol=0)
    y = torch.as_tensor(tilelang_tt.compile(row_product(32, 64)).run(x))
    torch.testing.assert_close(y, x / x.prod(1, keepdim=True), rtol=2.0**-19, atol=0)


def test_an_exclusive_running_sum_is_refused_at_its_statement():
    err = compile_error(exclusive_sum(32, 64))
    assert_diagnostic(err, "ScalarRowsToBlocksTT", "`acc[0]` is a running sum along the row, read before its term "
                      "is added (an exclusive scan)", "exclusive_sum", path=PATH,
                      source=inspect.getsource(inspect.getmodule(randn)))
    assert "an inclusive running sum compiles" in err.hint
