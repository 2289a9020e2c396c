"""Inf and NaN as the hardware computes them, modelled by the emulator (tilelang_tt/emulator/runtime/compute.cpp):

* the FPU (T.reduce_sum's reduce_tile, element-wise add/sub/mul of tiles) reads an exponent of 255 as a number,
  +-(1 + mantissa) * 2^128, saturates results of that size to Inf and never writes NaN (tt-isa-documentation
  WormholeB0 FloatBitPatterns.md): a row sum holding one Inf is that Inf (as torch), one holding +Inf and -Inf is
  finite (torch: NaN), a NaN counts as an Inf of its sign (torch: NaN);
* T.reduce_max (GMPOOL.md) and the SFPU's max, min and relu (SFPSWAP.md) order FP32 words as sign-magnitude
  integers: a +NaN wins, a -NaN loses (torch: NaN either way)."""

import math

import pytest
import tilelang.language as T
import torch

import tilelang_tt

M, N = 32, 64
NAN = float("nan")
NEG_NAN = -float("nan")  # the sign bit set, as x86 writes the NaN of an invalid operation
INF = float("inf")


def _rows(dtype):
    """Row r of the input: r = 0 one +Inf, 1 one -Inf, 2 +Inf and -Inf, 3 a +NaN, 4 a -NaN, the rest finite."""
    g = torch.Generator().manual_seed(3)
    x = torch.rand(M, N, generator=g) + 0.5
    x[0, 5] = INF
    x[1, 9] = -INF
    x[2, 3], x[2, 40] = INF, -INF
    x[3, 7] = NAN
    x[4, 20] = NEG_NAN
    x = x.to(getattr(torch, dtype))
    if dtype == "bfloat16":  # the NaNs by their bits: torch's conversions do not keep a NaN's sign
        x.view(torch.int16)[3, 7], x.view(torch.int16)[4, 20] = 0x7FC0, -0x40  # 0x7fc0, 0xffc0
    words = x.view(torch.int16 if dtype == "bfloat16" else torch.int32)
    assert words[3, 7].item() > 0 > words[4, 20].item()  # the sign bits of the two NaNs
    return x


def row_reduction(kind, dtype):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), C: T.Tensor((M,), dtype)):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((M, N), dtype)
            A_l = T.alloc_fragment((M, N), "float32")
            S = T.alloc_fragment((M,), "float32")
            T.copy(A[0, 0], A_s)
            T.copy(A_s, A_l)
            if kind == "sum":
                T.reduce_sum(A_l, S, dim=1)
            else:
                T.reduce_max(A_l, S, dim=1)
            T.copy(S, C[0])

    return main


def elementwise(op, dtype):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((M, N), dtype)
            C_l = T.alloc_fragment((M, N), dtype)
            T.copy(A[0, 0], A_s)
            for i, j in T.Parallel(M, N):
                if op == "relu":
                    C_l[i, j] = T.max(A_s[i, j], 0)
                elif op == "max":
                    C_l[i, j] = T.max(A_s[i, j], 0.75)
                else:
                    C_l[i, j] = T.min(A_s[i, j], 0.75)
            T.copy(C_l, C[0, 0])

    return main


def sign(x: float) -> float:
    return math.copysign(1.0, x)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_row_sum_with_inf_or_nan_is_what_the_fpu_computes(dtype):
    x = _rows(dtype)
    got = tilelang_tt.compile(row_reduction("sum", dtype)).run(x).float()
    assert got[0].item() == INF and got[1].item() == -INF  # as torch
    assert math.isfinite(got[2].item())  # torch: NaN; the FPU: 2^128 - 2^128 = 0 and the rest
    assert got[3].item() == INF and got[4].item() == -INF  # torch: NaN; a NaN is an Inf of its sign to the FPU
    finite = x.float()[5:].sum(1)
    assert torch.allclose(got[5:], finite, rtol=2e-2)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_row_max_keeps_a_positive_nan_and_drops_a_negative_one(dtype):
    x = _rows(dtype)
    got = tilelang_tt.compile(row_reduction("max", dtype)).run(x).float()
    assert got[0].item() == INF and got[2].item() == INF
    assert math.isnan(got[3].item())  # +NaN: above every number (GMPOOL's sign-magnitude order), as torch
    expected = x.float()[4].nan_to_num(nan=-INF).max().item()
    assert got[4].item() == pytest.approx(expected, rel=1e-2)  # -NaN: below every number (torch: NaN)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_sfpu_max_min_and_relu_order_nan_by_its_sign(dtype):
    x = _rows(dtype)
    relu = tilelang_tt.compile(elementwise("relu", dtype)).run(x).float()
    assert relu[0, 5].item() == INF and relu[1, 9].item() == 0.0 and sign(relu[1, 9].item()) > 0
    assert math.isnan(relu[3, 7].item())  # +NaN kept, as torch
    assert relu[4, 20].item() == 0.0  # -NaN dropped (torch: NaN)
    high = tilelang_tt.compile(elementwise("max", dtype)).run(x).float()
    assert math.isnan(high[3, 7].item()) and high[4, 20].item() == 0.75
    low = tilelang_tt.compile(elementwise("min", dtype)).run(x).float()
    assert low[3, 7].item() == 0.75 and math.isnan(low[4, 20].item())
