"""Scalars of a block (issue 12, item 6): a ``T.alloc_var`` set once from the block coordinates is
its value (InlineScalarVarsTT); tensor elements read at block coordinates: a per-head value ``Sinks[by]`` in an
element-wise value is read by the reader — the tile holding it into the generated block's CB page,
the element out of it — and broadcast over the block. And index arithmetic that may go negative (a
sliding window's first key block ``max(0, (bx - w) // bn)``) is evaluated with TIR's signed floor
division, not the kernels' unsigned integers."""

import pytest
import tilelang
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_ops import assert_close, bf16
from tilelang_tt import TTCompileError


def scaled_heads(batch, heads, seq, dim, dtype="bfloat16", scale_dtype="bfloat16"):
    """Y[b, h] = X[b, h] * Scale[h]: the per-head scale read element-wise into a per-row fragment,
    the way TileLang's attention-sink example reads ``Sinks[by]``."""

    @T.prim_func
    def main(X: T.Tensor((batch, heads, seq, dim), dtype), Scale: T.Tensor((heads,), scale_dtype),
             Y: T.Tensor((batch, heads, seq, dim), dtype)):
        with T.Kernel(T.ceildiv(seq, 32), heads, batch, threads=128) as (bx, by, bz):
            x = T.alloc_shared((32, dim), dtype)
            s = T.alloc_fragment((32,), scale_dtype)
            y = T.alloc_fragment((32, dim), dtype)
            T.copy(X[bz, by, bx * 32:(bx + 1) * 32, :], x)
            for i in T.Parallel(32):
                s[i] = Scale[by]
            for i, j in T.Parallel(32, dim):
                y[i, j] = x[i, j] * s[i]
            T.copy(y, Y[bz, by, bx * 32:(bx + 1) * 32, :])

    return main


def biased_by_batch_and_head(batch, heads, m, n):
    """Y[b, h] = X[b, h] + Bias[b, h]: an element of a 2-D tensor at two block coordinates, used
    directly in the element-wise value."""

    @T.prim_func
    def main(X: T.Tensor((batch, heads, m, n), "float32"), Bias: T.Tensor((batch, heads), "float32"),
             Y: T.Tensor((batch, heads, m, n), "float32")):
        with T.Kernel(1, heads, batch, threads=128) as (bx, by, bz):
            x = T.alloc_shared((m, n), "float32")
            y = T.alloc_fragment((m, n), "float32")
            T.copy(X[bz, by, :, :], x)
            for i, j in T.Parallel(m, n):
                y[i, j] = x[i, j] + Bias[bz, by] * 2.0
            T.copy(y, Y[bz, by, :, :])

    return main


@pytest.mark.parametrize("grid", [(1, 1), (3, 1), None])
def test_a_per_head_scale_is_broadcast_over_the_block(grid):
    batch, heads, seq, dim = 2, 40, 64, 32  # 40 heads: Scale spans two tiles of its column layout
    x, scale = bf16(batch, heads, seq, dim, seed=1), bf16(heads, seed=2)
    art = tilelang_tt.compile(scaled_heads(batch, heads, seq, dim), **({"grid": grid} if grid else {}))
    out = torch.as_tensor(art.run(x, scale)).float()
    assert_close(out, (x.float() * scale.float()[None, :, None, None]), 2.0 ** -7)
    assert "load_element_Float16_b" in art.sources["reader.cpp"]


def test_an_element_of_a_matrix_at_two_block_coordinates():
    x = torch.randn(2, 3, 32, 64)
    bias = torch.randn(2, 3)
    out = torch.as_tensor(tilelang_tt.compile(biased_by_batch_and_head(2, 3, 32, 64)).run(x, bias))
    assert torch.allclose(out, x + 2.0 * bias[:, :, None, None], atol=1e-6)


def test_an_integer_element_is_read_and_converted():
    """An int32 per-head value cast to the block's dtype, as the generated-block error asks."""
    x = bf16(1, 3, 32, 32, seed=3)
    scale = torch.tensor([3, -2, 5], dtype=torch.int32)
    art = tilelang_tt.compile(scaled_int_heads(1, 3, 32, 32))
    out = torch.as_tensor(art.run(x, scale)).float()
    assert_close(out, x.float() * scale.float()[None, :, None, None], 2.0 ** -7)
    with pytest.raises(TTCompileError, match=r"`Scale\[.*\]` depends on the indices only but is not a float value"):
        tilelang_tt.compile(scaled_heads(1, 3, 32, 32, scale_dtype="int32"))


def scaled_int_heads(batch, heads, seq, dim):
    @T.prim_func
    def main(X: T.Tensor((batch, heads, seq, dim), "bfloat16"), Scale: T.Tensor((heads,), "int32"),
             Y: T.Tensor((batch, heads, seq, dim), "bfloat16")):
        with T.Kernel(T.ceildiv(seq, 32), heads, batch, threads=128) as (bx, by, bz):
            x = T.alloc_shared((32, dim), "bfloat16")
            y = T.alloc_fragment((32, dim), "bfloat16")
            T.copy(X[bz, by, bx * 32:(bx + 1) * 32, :], x)
            for i, j in T.Parallel(32, dim):
                y[i, j] = x[i, j] * T.Cast("bfloat16", Scale[by])
            T.copy(y, Y[bz, by, bx * 32:(bx + 1) * 32, :])

    return main


def windowed_sum(n, window_blocks):
    """Y's row block b = the sum of X's row blocks max(0, b - w + 1) .. b: the loop's first block
    is computed from a difference that is negative for the first blocks."""

    @T.prim_func
    def main(X: T.Tensor((n, 32), "float32"), Y: T.Tensor((n, 32), "float32")):
        with T.Kernel(1, n // 32, threads=128) as (bx, by):
            x = T.alloc_shared((32, 32), "float32")
            acc = T.alloc_fragment((32, 32), "float32")
            T.clear(acc)
            for k in T.serial(T.max(0, (by * 32 - (window_blocks - 1) * 32) // 32), by + 1):
                T.copy(X[k * 32, 0], x)
                for i, j in T.Parallel(32, 32):
                    acc[i, j] += x[i, j]
            T.copy(acc, Y[by * 32, 0])

    return main


def test_a_loop_start_that_is_a_negative_floor_division_is_clamped_as_tir_computes_it():
    """(by * 32 - 64) // 32 is -2 for the first block: as unsigned integers it was a huge number,
    max(0, it) kept it, and the loop ran no iteration (the window example returned zeros)."""
    n, w = 160, 3
    x = torch.randn(n, 32)
    out = torch.as_tensor(tilelang_tt.compile(windowed_sum(n, w), grid=(1, 1)).run(x))
    blocks = x.reshape(n // 32, 32, 32)
    ref = torch.stack([blocks[max(0, b - w + 1):b + 1].sum(0) for b in range(n // 32)]).reshape(n, 32)
    assert torch.allclose(out, ref, atol=1e-5)


def alternate_rows(m, n):
    @T.prim_func
    def main(A: T.Tensor((m, n), "float32"), C: T.Tensor((m, n), "float32")):
        with T.Kernel(1, m // 32, threads=128) as (bx, by):
            a = T.alloc_shared((32, n), "float32")
            c = T.alloc_fragment((32, n), "float32")
            T.copy(A[by * 32, 0], a)
            for i, j in T.Parallel(32, n):
                c[i, j] = T.if_then_else(T.Cast("bool", (by * 32 + i) % 2), a[i, j], -a[i, j])
            T.copy(c, C[by * 32, 0])

    return main


def test_a_mask_of_index_modulo_is_generated_by_the_reader():
    """(by * 32 + i) % 2 as a condition: the reader evaluates it (floor_mod) into the mask."""
    x = torch.randn(64, 64)
    out = torch.as_tensor(tilelang_tt.compile(alternate_rows(64, 64)).run(x))
    odd = (torch.arange(64) % 2 == 1)[:, None]
    assert torch.equal(out, torch.where(odd, x, -x))


def decayed_rows(heads, n, accumulate=False, halvings=0):
    """Y[h] = X[h] * 2^((i + 1) lg) with lg = log2(1 - 2^(-5 - h)), the retention example's per-head
    decay kept in a ``T.alloc_var``; ``halvings`` halves it in a loop of that many steps (unrolled
    into its value); ``accumulate`` halves it h + 1 times (a loop of a varying trip count: not a
    value the kernels can substitute)."""

    @T.prim_func
    def main(X: T.Tensor((heads, 32, n), "float32"), Y: T.Tensor((heads, 32, n), "float32")):
        with T.Kernel(1, heads, threads=128) as (bx, by):
            lg = T.alloc_var("float32")
            lg = T.log2(1.0 - T.exp2(-5.0 - 1.0 * by))
            if accumulate:
                for k in T.serial(by + 1):
                    lg = lg * 0.5  # LINE: decayed_rows
            if halvings:
                for k in T.serial(halvings):
                    lg = lg * 0.5
            x = T.alloc_shared((32, n), "float32")
            y = T.alloc_fragment((32, n), "float32")
            T.copy(X[by, 0, 0], x)
            for i, j in T.Parallel(32, n):
                y[i, j] = x[i, j] * T.exp2(T.Cast("float32", i + 1) * lg)
            T.copy(y, Y[by, 0, 0])

    return main


def test_a_scalar_variable_of_the_block_coordinates_is_its_value():
    x = torch.randn(3, 32, 64)
    out = torch.as_tensor(tilelang_tt.compile(decayed_rows(3, 64), grid=(2, 1)).run(x))
    gamma = 1 - 2.0 ** (-5.0 - torch.arange(3.0))
    ref = x * gamma[:, None, None] ** (torch.arange(32.0) + 1)[None, :, None]
    assert_close(out, ref, 2.0 ** -10)


def test_a_scalar_variable_updated_in_a_loop_of_constant_trip_count_is_its_final_value():
    x = torch.randn(3, 32, 64)
    out = torch.as_tensor(tilelang_tt.compile(decayed_rows(3, 64, halvings=2), grid=(2, 1)).run(x))
    lg = torch.log2(1 - 2.0 ** (-5.0 - torch.arange(3.0))) * 0.25
    ref = x * torch.exp2(lg[:, None, None] * (torch.arange(32.0) + 1)[None, :, None])
    assert_close(out, ref, 2.0 ** -10)


def test_a_scalar_variable_updated_in_a_loop_stays_refused_at_its_store():
    with pytest.raises(TTCompileError, match=r"store into `lg`, a scalar variable \(T.alloc_var\) set in a loop") as info:
        tilelang_tt.compile(decayed_rows(2, 32, accumulate=True))
    assert info.value.location is not None and info.value.location[0] == __file__
