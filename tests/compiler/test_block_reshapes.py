"""Copies between on-chip blocks of different shapes and the same values (LowerBlockReshapesTT,
tilelang_tt.ops.copy), run on the emulator against torch: a row of a block into a row vector or a
column (per-row) vector, at a loop's row or a constant one, as T.copy or as a T.Parallel of its
elements; a [1, n] block into a vector of n."""

import pytest
import tilelang  # noqa: F401
import tilelang.language as T
import torch

torch.manual_seed(0)

from tests.compiler.test_negative import compile_error
from tests.compiler.test_ops import assert_close, run

SOURCE = open(__file__).read()


def line_of(marker: str) -> int:
    return next(i for i, text in enumerate(SOURCE.splitlines(), 1) if text.rstrip().endswith(f"# LINE: {marker}"))


def weighted_rows(R=4, N=128, dtype="bfloat16", form="copy"):
    """out[j] = sum over s of (s + 1) * P[s, j]: each row of a block moved into a row vector in turn."""

    @T.prim_func
    def main(P: T.Tensor((R, N), dtype), O: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            parts = T.alloc_fragment((R, N), dtype)
            v = T.alloc_fragment((N,), "float32")
            acc = T.alloc_fragment((N,), "float32")
            T.copy(P[0:R, :], parts)
            T.clear(acc)
            for s in T.serial(R):
                if form == "copy":
                    T.copy(parts[s, :], v)  # LINE: float32_row
                else:
                    for j in T.Parallel(N):
                        v[j] = parts[s, j]
                for j in T.Parallel(N):
                    acc[j] += v[j] * T.Cast("float32", s + 1)
            T.copy(acc, O[0:N])

    return main


@pytest.mark.parametrize("R, N, dtype, form", [(4, 128, "bfloat16", "copy"), (3, 64, "bfloat16", "elements"),
                                               (40, 32, "bfloat16", "copy")])
def test_rows_of_a_block_into_a_row_vector(R, N, dtype, form):
    p = torch.randn(R, N).to(getattr(torch, dtype))
    out, _ = run(weighted_rows(R, N, dtype, form), p)
    ref = (torch.arange(1, R + 1).float()[:, None] * p.float()).sum(0)
    assert_close(out, ref, 2.0**-10)


def scaled_by_a_row(R=4, N=64, D=64, row=2, form="copy"):
    """O[i, d] = X[i, d] * P[row, i]: row ``row`` of a block used per row of another (a column)."""

    @T.prim_func
    def main(X: T.Tensor((N, D), "float32"), P: T.Tensor((R, N), "bfloat16"), O: T.Tensor((N, D), "float32")):
        with T.Kernel(1, threads=128) as bx:
            parts = T.alloc_fragment((R, N), "bfloat16")
            scale = T.alloc_fragment((N,), "float32")
            x = T.alloc_fragment((N, D), "float32")
            T.copy(P[0:R, :], parts)
            T.copy(X[0:N, :], x)
            if form == "copy":
                T.copy(parts[row, :], scale)
            else:
                for i in T.Parallel(N):
                    scale[i] = parts[row, i]
            for i, d in T.Parallel(N, D):
                x[i, d] = x[i, d] * scale[i]
            T.copy(x, O[0:N, :])

    return main


@pytest.mark.parametrize("R, N, row, form", [(4, 64, 2, "copy"), (2, 32, 0, "elements"), (8, 96, 7, "copy")])
def test_a_row_of_a_block_into_a_column_vector(R, N, row, form):
    x, p = torch.randn(N, 64), torch.randn(R, N).bfloat16()
    out, _ = run(scaled_by_a_row(R, N, 64, row, form), x, p)
    assert_close(out, x * p[row].float()[:, None], 2.0**-10)


def one_row_block_into_a_vector(N=128):
    """O = 3 P for a (1, N) P: the [1, N] block copied into a row vector of N (the same tiles)."""

    @T.prim_func
    def main(P: T.Tensor((1, N), "float32"), O: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            p = T.alloc_fragment((1, N), "float32")
            v = T.alloc_fragment((N,), "float32")
            T.copy(P[0:1, :], p)
            T.copy(p[0, :], v)
            for j in T.Parallel(N):
                v[j] = v[j] * 3.0
            T.copy(v, O[0:N])

    return main


def test_a_row_of_a_float32_block_is_refused_at_the_copy():
    """The FPU would read it as TF32 (10 mantissa bits): refused, naming the copy's line."""
    err = compile_error(weighted_rows(4, 64, "float32"))
    assert err.pass_name == "LowerBlockReshapesTT"
    assert "row s of the float32 block `parts` [4, 64] moved into the vector `v`" in err.message
    assert err.location[:2] == (__file__, line_of("float32_row"))
    assert "keep `parts` bfloat16" in err.hint


def test_one_row_block_into_a_row_vector():
    p = torch.randn(1, 128)
    out, _ = run(one_row_block_into_a_vector(), p)
    assert_close(out, 3 * p[0], 2.0**-10)


def peak_per_row(R=4, N=64, D=64):
    """O[i, d] = X[i, d] * 2 max_s P[s, i]: the column maxima of P (a row vector) read per row of X,
    each of its tiles transposed into a column vector."""

    @T.prim_func
    def main(X: T.Tensor((N, D), "float32"), P: T.Tensor((R, N), "bfloat16"), O: T.Tensor((N, D), "float32")):
        with T.Kernel(1, threads=128) as bx:
            parts = T.alloc_fragment((R, N), "bfloat16")
            peak = T.alloc_fragment((N,), "float32")
            scale = T.alloc_fragment((N,), "float32")
            x = T.alloc_fragment((N, D), "float32")
            T.copy(P[0:R, :], parts)
            T.copy(X[0:N, :], x)
            T.reduce_max(parts, peak, dim=0, clear=True)
            for i in T.Parallel(N):
                scale[i] = peak[i] * 2.0
            for i, d in T.Parallel(N, D):
                x[i, d] = x[i, d] * scale[i]
            T.copy(x, O[0:N, :])

    return main


def test_a_row_vector_read_into_a_column_vector():
    x, p = torch.randn(64, 64), torch.randn(4, 64).bfloat16()
    out, artifacts = run(peak_per_row(), x, p)
    assert "transpose_tile(cb_peak" in artifacts.sources["compute.cpp"]
    assert_close(out, x * (2 * p.float().amax(0))[:, None], 2.0**-10)


def row_sums_per_column(N=64):
    """O[i, j] = X[i, j] (1 + sum_d X[j, d]): the row sums (a column vector) read per column of X (a
    row vector), each of its tiles transposed."""

    @T.prim_func
    def main(X: T.Tensor((N, N), "bfloat16"), O: T.Tensor((N, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            x = T.alloc_fragment((N, N), "bfloat16")
            y = T.alloc_fragment((N, N), "float32")
            sums = T.alloc_fragment((N,), "float32")
            scale = T.alloc_fragment((N,), "float32")
            T.copy(X[0:N, :], x)
            T.reduce_sum(x, sums, dim=1, clear=True)
            for j in T.Parallel(N):
                scale[j] = sums[j] + 1.0
            for i, j in T.Parallel(N, N):
                y[i, j] = x[i, j] * scale[j]
            T.copy(y, O[0:N, :])

    return main


@pytest.mark.parametrize("N", [64, 96])
def test_a_column_vector_read_into_a_row_vector(N):
    x = torch.randn(N, N).bfloat16()
    out, artifacts = run(row_sums_per_column(N), x)
    assert "transpose_tile(cb_sums" in artifacts.sources["compute.cpp"]
    assert_close(out, x.float() * (1 + x.float().sum(1))[None, :], 2.0**-10)
