"""A division by a constant in an element-wise value (ops/eltwise.py ``ScalarOperand``). 0.81.1's
``div_unary_tile`` multiplies by its parameter (ckernel_sfpu_binop_with_unary.h: the host passes the inverse),
and the emulator follows it: x / c is ``mul_unary_tile`` of 1 / c where that is exact (c a power of two), with a
16-bit DST or under fast math; else, with a 32-bit DST, c filled into DST and ``div_binary_tile`` (the LLK's
division, within one float32 ulp of the quotient). c / x the same way."""

import struct

import pytest
import tilelang  # noqa: F401
import tilelang.language as T
import torch

import tilelang_tt

M, N = 64, 64


def divided(numerator: float | None, divisor: float | None, dtype: str):
    """Y = X / divisor (or numerator / X) of ``dtype`` tensors and fragments: float32 gives a 32-bit DST."""

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, 32), threads=128) as bx:
            x = T.alloc_fragment((32, N), dtype)
            y = T.alloc_fragment((32, N), dtype)
            T.copy(X[bx * 32, 0], x)
            for i, j in T.Parallel(32, N):
                if divisor is not None:
                    y[i, j] = x[i, j] / divisor
                else:
                    y[i, j] = numerator / x[i, j]
            T.copy(y, Y[bx * 32, 0])

    return main


def f32_bits(value: float) -> str:
    return f"0x{struct.unpack('<I', struct.pack('<f', value))[0]:08x}u"


def ulps(a: torch.Tensor, b: torch.Tensor) -> int:
    """The largest distance between two float32 tensors in units in the last place (finite, same sign)."""
    return int((a.view(torch.int32).long() - b.view(torch.int32).long()).abs().max())


def inputs(seed=3) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(M, N, generator=g) + 0.25) * torch.where(torch.rand(M, N, generator=g) < 0.5, -1.0, 1.0)


def test_a_power_of_two_divisor_is_a_product_with_its_exact_reciprocal():
    artifacts = tilelang_tt.compile(divided(None, 128.0, "float32"))
    source = artifacts.sources["compute.cpp"]
    assert f"mul_unary_tile(t_1, {f32_bits(1 / 128)});" in source
    assert "div_unary_tile" not in source and "div_binary_tile" not in source
    x = inputs()
    y = artifacts.run(x)
    assert torch.equal(y, x / 128)  # exact: a power of two scales


@pytest.mark.parametrize("divisor", [3.0, 0.1, -7.5])
def test_another_divisor_is_the_llk_division_of_the_constant_filled_into_dst(divisor):
    artifacts = tilelang_tt.compile(divided(None, divisor, "float32"))
    source = artifacts.sources["compute.cpp"]
    assert "div_binary_tile(t_2 * 2, (t_2 * 2) + 1, t_2 * 2)" in source and "fill_tile((t_1 * 2) + 1, " in source
    assert "div_unary_tile" not in source and "mul_unary_tile" not in source
    x = inputs()
    y = artifacts.run(x)
    exact = (x.double() / torch.tensor(divisor, dtype=torch.float32).double()).float()
    assert ulps(y, exact) <= 1  # div_binary_tile: within one float32 ulp (numerics.md, "Division and reciprocal")
    # the product with a reciprocal rounded to float32 is off by more somewhere: the division is not that product
    assert not torch.equal(y, x * (1 / torch.tensor(divisor, dtype=torch.float32)))


def test_a_constant_over_a_value_is_the_llk_division_with_a_32_bit_dst():
    artifacts = tilelang_tt.compile(divided(3.0, None, "float32"))
    source = artifacts.sources["compute.cpp"]
    assert "fill_tile((t_1 * 2) + 1, 3.0f)" in source and "div_binary_tile((t_2 * 2) + 1, t_2 * 2, t_2 * 2)" in source
    assert "recip_tile" not in source
    x = inputs()
    y = artifacts.run(x)
    assert ulps(y, (3.0 / x.double()).float()) <= 1


@pytest.mark.parametrize("options", [{"fast_math": True}, {}])
def test_fast_math_and_a_16_bit_dst_multiply_by_the_reciprocal(options):
    dtype = "float32" if options else "bfloat16"  # bfloat16 fragments: a 16-bit DST
    artifacts = tilelang_tt.compile(divided(None, 3.0, dtype), **options)
    source = artifacts.sources["compute.cpp"]
    assert f", {f32_bits(1 / 3)});" in source and "mul_unary_tile(" in source
    assert "div_unary_tile" not in source and "div_binary_tile" not in source
    x = inputs().to(getattr(torch, dtype))
    y = artifacts.run(x)
    exact = x.double() / 3
    if dtype == "bfloat16":
        assert torch.allclose(y.double(), exact, rtol=2 ** -8, atol=0)  # y rounded to bfloat16
    else:
        assert ulps(y, exact.float()) <= 2  # the reciprocal rounded, then the product


def test_the_emulator_multiplies_by_div_unary_tiles_parameter():
    # ttnn's kernels pass the inverse (ckernel_sfpu_binop_with_unary.h: "inversion is carried out on host side"):
    # a program calling div_unary_tile with 0.25's bits multiplies by 0.25, on the emulator as on the device
    artifacts = tilelang_tt.compile(divided(None, 4.0, "float32"))
    source = artifacts.sources["compute.cpp"]
    artifacts.sources["compute.cpp"] = source.replace("mul_unary_tile(", "div_unary_tile(")
    x = inputs()
    y = artifacts.run(x)
    assert torch.equal(y, x * 0.25)


def divided_by_parameter():
    """Y = X / scale and Z = scale / X, scale a float scalar parameter."""

    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), scale: T.float32, Y: T.Tensor((M, N), "float32"),
             Z: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, 32), threads=128) as bx:
            x = T.alloc_fragment((32, N), "float32")
            y = T.alloc_fragment((32, N), "float32")
            z = T.alloc_fragment((32, N), "float32")
            T.copy(X[bx * 32, 0], x)
            for i, j in T.Parallel(32, N):
                y[i, j] = x[i, j] / scale
                z[i, j] = scale / x[i, j]
            T.copy(y, Y[bx * 32, 0])
            T.copy(z, Z[bx * 32, 0])

    return main


@pytest.mark.parametrize("fast_math", [False, True])
def test_a_division_by_a_float_parameter(fast_math):
    # a 32-bit DST: the parameter's bits filled (fill_tile_bitcast) and div_binary_tile both ways; fast math:
    # x times the reciprocal the kernel computes from the parameter, and the recip of x times the parameter
    artifacts = tilelang_tt.compile(divided_by_parameter(), fast_math=fast_math)
    source = artifacts.sources["compute.cpp"]
    assert "div_unary_tile" not in source
    assert ("div_binary_tile" in source and "fill_tile_bitcast" in source) != fast_math
    x = inputs()
    y, z = artifacts.run(x, 0.3)
    scale = torch.tensor(0.3, dtype=torch.float32).double()
    if fast_math:  # math_approx_mode too: the approximate reciprocal of x
        assert ulps(y, (x.double() / scale).float()) <= 2
        assert torch.allclose(z.double(), scale / x.double(), rtol=2 ** -7, atol=0)
    else:
        assert ulps(y, (x.double() / scale).float()) <= 1 and ulps(z, (scale / x.double()).float()) <= 1
