"""The fuzz tests' oracle: a float64 torch reference evaluated together with a first-order running
error bound on what the compiled program may return.

Each operation adds one rounding of ``U_BF16 = 2^-8`` relative when DST holds bfloat16 (RNE is half
an ulp, 2^-9: twice that margin) or ``U_FP32 = 2^-21`` when an on-chip block is float32 (DST in
fp32: a few fp32 ulps cover the SFPU evaluation), and propagates operand errors through each op's
derivative bound (exactly for the monotone ops). Stores into a bfloat16 block add one bf16 rounding.
GEMM and sums add ``(n + 2) * 2^-24`` of the magnitude sum (fp32 accumulation, with n the number of
terms) and one bf16 rounding of the partial sum per accumulation step when the partial sums are
bfloat16; a float32 block they read through the FPU's source registers adds its TF32 truncation
(:func:`source_rounding`). A case fails when any element is outside its bound or not finite."""

from __future__ import annotations

import math
from typing import Callable, NamedTuple

import torch

U_BF16 = 2.0 ** -8
U_FP32 = 2.0 ** -21
EPS_ACC = 2.0 ** -24  # fp32 accumulation, per term
# erf_tile is a rational fit (tt-metal 0.81.1 ckernel_sfpu_erf.h with the bfloat16 ERF_LUT: the compiled kernels
# define no INP_FLOAT32), 3.2e-3 from erf at most (near |x| = 2) whatever DST's format: README, "Numerics of the FPU
# and SFPU"; tests/emulator/test_kernel_api_numerics.py measures it.
ERF_FIT = 3.3e-3


class Val(NamedTuple):
    """A float64 reference value and a bound on the compiled program's absolute error."""

    v: torch.Tensor
    e: torch.Tensor


def exact(x: torch.Tensor) -> Val:
    x = x.double()
    return Val(x, torch.zeros_like(x))


def rounded(x: Val, u: float) -> Val:
    return Val(x.v, x.e + u * x.v.abs())


def _above(x: Val, low: float) -> torch.Tensor:
    """x.v - x.e, the operand's least value, held at ``low`` where the bound reaches below it (the
    guards keep every value above ``low``, but an accumulated bound may not): there the op's
    first-order bound is infinite, and the element is not checked (log, rsqrt and division of
    ``low`` are infinite)."""
    return (x.v - x.e).clamp(min=low)


def _log(a):
    return Val(a.v.log(), a.v.log() - _above(a, 0.0).log())


def _sqrt(a):
    # both sides: once the bound reaches below 0 the lower side is cut at sqrt(0) and the upper
    # side, sqrt(v + e) - sqrt(v), is the larger one
    root = a.v.sqrt()
    return Val(root, torch.maximum(root - (a.v - a.e).clamp(min=0).sqrt(), (a.v + a.e).sqrt() - root))


def _rsqrt(a):
    return Val(a.v.rsqrt(), _above(a, 0.0).rsqrt() - a.v.rsqrt())


def _div(a, b):
    low = _above(Val(b.v.abs(), b.e), 0.0)
    bound = (a.e * b.v.abs() + a.v.abs() * b.e) / (b.v.abs() * low)
    return Val(a.v / b.v, torch.where(low > 0, bound, math.inf))


OPS: dict[str, Callable[..., Val]] = {
    "+": lambda a, b: Val(a.v + b.v, a.e + b.e),
    "-": lambda a, b: Val(a.v - b.v, a.e + b.e),
    "*": lambda a, b: Val(a.v * b.v, a.v.abs() * b.e + b.v.abs() * a.e + a.e * b.e),
    "/": _div,
    "max": lambda a, b: Val(torch.maximum(a.v, b.v), torch.maximum(a.e, b.e)),
    "min": lambda a, b: Val(torch.minimum(a.v, b.v), torch.maximum(a.e, b.e)),
    "exp": lambda a: Val(a.v.exp(), a.v.exp() * torch.expm1(a.e)),
    "exp2": lambda a: Val(a.v.exp2(), a.v.exp2() * torch.expm1(a.e * math.log(2.0))),
    "log": _log,
    "sqrt": _sqrt,
    "rsqrt": _rsqrt,
    "abs": lambda a: Val(a.v.abs(), a.e),
    "neg": lambda a: Val(-a.v, a.e),
    "relu": lambda a: Val(a.v.clamp(min=0), a.e),
    "sigmoid": lambda a: Val(a.v.sigmoid(), a.e / 4),  # |sigmoid'| <= 1/4
    "tanh": lambda a: Val(a.v.tanh(), a.e),  # |tanh'| <= 1
    "erf": lambda a: Val(torch.erf(a.v), a.e * 2 / math.sqrt(math.pi) + ERF_FIT),  # |erf'| <= 2 / sqrt(pi)
}


def evaluate(tree, env: dict[str, Val], u: float) -> Val:
    kind = tree[0]
    if kind == "x":
        return env[tree[1]]
    if kind == "c":
        return exact(torch.tensor(tree[1]))
    return rounded(OPS[kind](*(evaluate(t, env, u) for t in tree[1:])), u)


def dst_rounding(*dtypes: str) -> float:
    """Rounding of one DST operation: fp32 DST when any on-chip block is float32."""
    return U_FP32 if "float32" in dtypes else U_BF16


def store_rounding(dtype: str) -> float:
    return U_BF16 if dtype == "bfloat16" else U_FP32


def source_rounding(dtype: str, srca: bool) -> float:
    """Relative error of a block's datum as an FPU op (T.gemm, T.reduce_*) reads it from the source registers,
    which hold 19 bits: a float32 datum is truncated to TF32's 10 mantissa bits (tt-isa-documentation WormholeB0
    UNPACR_Regular.md FormatConversion: ``DatumBits >> 13``; SrcASrcB.md), below 2^-10 relative, and SrcA's
    multiplier ignores the last of them (MVMUL.md, ELWMUL.md (†)): below 2^-9 in SrcA. bfloat16 datums fit."""
    if dtype != "float32":
        return 0.0
    return 2.0 ** -9 if srca else 2.0 ** -10
