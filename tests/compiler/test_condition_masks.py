"""Bool blocks compute fills (issue 29 item 6): ``mask[i, j] = x[i, j] > t`` then ``T.if_then_else(mask[i, j],
..)``. WidenMaskBlocksTT makes such a block a bfloat16 block of 1.0 and 0.0 (the SFPU's comparisons compute
those values) and its reads tests of ``!= 0``; run on the emulator against torch: a 2-D mask of a float block
(bfloat16 and float32), a per-column mask vector spread over the block, a condition on an int32 block
(sglang's sparse attention: ``mask[i] = Indices[..] >= 0``: the SFPU's integer comparison converted by
``typecast_tile<Int32, Float32>``), int32 values converted to floats in a value, and the refusal of a select on an int32
comparison."""

import inspect
import sys

import pytest
import tilelang  # noqa: F401
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_negative import assert_diagnostic, compile_error
from tests.compiler.test_ops import bf16

THIS = inspect.getsourcefile(sys.modules[__name__])
SOURCE = inspect.getsource(sys.modules[__name__])


def thresholded(m, n, dtype, threshold):
    """Y = X where X > t, else -2 X: the condition kept in a bool block first."""

    @T.prim_func
    def main(X: T.Tensor((m, n), dtype), Y: T.Tensor((m, n), dtype)):
        with T.Kernel(1, m // 32, threads=128) as (bx, by):
            x = T.alloc_shared((32, n), dtype)
            keep = T.alloc_fragment((32, n), "bool")
            y = T.alloc_fragment((32, n), dtype)
            T.copy(X[by * 32, 0], x)
            for i, j in T.Parallel(32, n):
                keep[i, j] = x[i, j] > threshold
            for i, j in T.Parallel(32, n):
                y[i, j] = T.if_then_else(keep[i, j], x[i, j], x[i, j] * -2.0)
            T.copy(y, Y[by * 32, 0])

    return main


def column_gate(m, n):
    """Y = X masked to -inf in the columns whose bias is negative (a per-column bool vector)."""

    @T.prim_func
    def main(X: T.Tensor((m, n), "float32"), Bias: T.Tensor((n,), "float32"), Y: T.Tensor((m, n), "float32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            x = T.alloc_shared((m, n), "float32")
            b = T.alloc_fragment((n,), "float32")
            valid = T.alloc_fragment((n,), "bool")
            y = T.alloc_fragment((m, n), "float32")
            T.copy(X, x)
            T.copy(Bias, b)
            for j in T.Parallel(n):
                valid[j] = b[j] >= 0
            for i, j in T.Parallel(m, n):
                y[i, j] = T.if_then_else(valid[j], x[i, j] + b[j], -T.infinity("float32"))
            T.copy(y, Y)

    return main


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_a_bool_block_of_a_float_condition(dtype):
    g = torch.Generator().manual_seed(11)
    x = bf16(64, 96, seed=11) if dtype == "bfloat16" else torch.randn(64, 96, generator=g)
    out = torch.as_tensor(tilelang_tt.compile(thresholded(64, 96, dtype, 0.25)).run(x)).float()
    xf = x.float()
    assert torch.equal(out, torch.where(xf > 0.25, xf, xf * -2.0).to(x.dtype).float())


def test_a_bool_vector_spread_over_the_block():
    g = torch.Generator().manual_seed(12)
    x, bias = torch.randn(32, 64, generator=g), torch.randn(64, generator=g)
    out = torch.as_tensor(tilelang_tt.compile(column_gate(32, 64)).run(x, bias))
    assert torch.equal(out, torch.where(bias[None, :] >= 0, x + bias[None, :], torch.tensor(-torch.inf)))


def index_mask(n_idx, m, n):
    """Scores masked where the index table holds -1 (sglang's sparse attention): a bool vector of the
    comparison of an int32 block, spread over the scores."""

    @T.prim_func
    def main(Idx: T.Tensor((n_idx, n), "int32"), S: T.Tensor((m, n), "float32"),
             Y: T.Tensor((n_idx * m, n), "float32")):
        with T.Kernel(1, n_idx, threads=128) as (bx, by):
            s = T.alloc_shared((m, n), "float32")
            mask = T.alloc_fragment((n,), "bool")
            y = T.alloc_fragment((m, n), "float32")
            T.copy(S, s)
            for j in T.Parallel(n):
                mask[j] = Idx[by, j] >= 0
            for h, j in T.Parallel(m, n):
                y[h, j] = T.if_then_else(mask[j], s[h, j], -T.infinity("float32"))
            T.copy(y, Y[by * m, 0])

    return main


def test_a_bool_vector_of_a_condition_on_int32_values():
    """The int32 comparison (lt_int_tile ...) converted to a float by typecast_tile<Int32, Float32>."""
    g = torch.Generator().manual_seed(13)
    idx = torch.randint(-1, 5, (2, 64), generator=g, dtype=torch.int32)
    s = torch.randn(32, 64, generator=g)
    art = tilelang_tt.compile(index_mask(2, 32, 64))
    out = torch.as_tensor(art.run(idx, s))
    ref = torch.cat([torch.where(idx[b] >= 0, s, torch.tensor(-torch.inf)) for b in range(2)])
    assert torch.equal(out, ref)
    assert "typecast_tile<(uint32_t)DataFormat::Int32, (uint32_t)DataFormat::Float32>" in art.sources["compute.cpp"]


def counts_scaled(m, n, dtype):
    """Y = X * (3 C - 1) + (C >= 2) for an int32 tensor C: int32 values converted to floats in the value."""

    @T.prim_func
    def main(X: T.Tensor((m, n), dtype), C: T.Tensor((m, n), "int32"), Y: T.Tensor((m, n), dtype)):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            x = T.alloc_shared((m, n), dtype)
            c = T.alloc_shared((m, n), "int32")
            y = T.alloc_fragment((m, n), dtype)
            T.copy(X, x)
            T.copy(C, c)
            for i, j in T.Parallel(m, n):
                y[i, j] = x[i, j] * T.Cast(dtype, c[i, j] * 3 - 1) + T.Cast(dtype, c[i, j] >= 2)
            T.copy(y, Y)

    return main


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_int32_values_converted_to_floats(dtype):
    g = torch.Generator().manual_seed(14)
    x = torch.randn(32, 64, generator=g).to(getattr(torch, dtype))
    c = torch.randint(-5, 5, (32, 64), generator=g, dtype=torch.int32)
    out = torch.as_tensor(tilelang_tt.compile(counts_scaled(32, 64, dtype)).run(x, c)).float()
    ref = x.float() * (c * 3 - 1).float() + (c >= 2).float()
    if dtype == "float32":
        assert torch.equal(out, ref)
    else:  # computed in float32 in DST, rounded once by the packer
        assert torch.equal(out, ref.to(torch.bfloat16).float())


def selected_on_int32(m, n):
    @T.prim_func
    def main(X: T.Tensor((m, n), "float32"), C: T.Tensor((m, n), "int32"), Y: T.Tensor((m, n), "float32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            x = T.alloc_shared((m, n), "float32")
            c = T.alloc_shared((m, n), "int32")
            y = T.alloc_fragment((m, n), "float32")
            T.copy(X, x)
            T.copy(C, c)
            for i, j in T.Parallel(m, n):
                y[i, j] = T.if_then_else(c[i, j] >= 2, x[i, j], -x[i, j])  # LINE: selected_on_int32
            T.copy(y, Y)

    return main


def test_a_select_on_an_int32_comparison_is_refused():
    """A float selected on an int32 block's comparison (not converted: a select on block values) is refused at
    the statement, as on float blocks."""
    err = compile_error(selected_on_int32(32, 64))
    assert_diagnostic(err, "LowerTTTileIntrinsics", "selects on the values of blocks", "selected_on_int32",
                      THIS, SOURCE)
