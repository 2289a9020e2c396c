"""The fuzz tests' oracle: a float64 torch reference evaluated together with a first-order running
error bound on what the compiled program may return.

Each operation adds one rounding of ``U_BF16 = 2^-8`` relative when DST holds bfloat16 (RNE to 8
significant bits: half an ulp, which is 2^-8 of a value just above a power of two, the unit roundoff
itself: no margin there) or ``U_FP32 = 2^-21`` when an on-chip block is float32 (DST in fp32: a few
fp32 ulps cover the SFPU evaluation), and ``TINY`` absolute (a result below the least normal fp32),
and propagates operand errors through each op's derivative bound or the image of the operand's
interval (exactly for the monotone ops). Stores into a bfloat16 block add one bf16 rounding.
GEMM and sums add ``(n + 2) * 2^-24`` of the magnitude sum (fp32 accumulation, with n the number of
terms) and one bf16 rounding of the partial sum per accumulation step when the partial sums are
bfloat16; a float32 block they read through the FPU's source registers adds its TF32 truncation
(:func:`source_rounding`). A case fails when any element is outside its bound or not finite."""

from __future__ import annotations

import math
from typing import Callable, NamedTuple

import torch

from tilelang_tt.ops.sfpu_errors import APPROX_ERRORS, ERF_FIT

U_BF16 = 2.0 ** -8
U_FP32 = 2.0 ** -21
EPS_ACC = 2.0 ** -24  # fp32 accumulation, per term


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


def _mul(a, b):
    # an operand whose bound is infinite (not checked: rsqrt near 0) times an exact 0 (relu of a negative) is not
    # checked either: 0 * inf is NaN, and a NaN bound would fail every element it reaches
    bound = a.v.abs() * b.e + b.v.abs() * a.e + a.e * b.e
    return Val(a.v * b.v, torch.where(bound.isnan(), math.inf, bound))


def _div(a, b):
    low = _above(Val(b.v.abs(), b.e), 0.0)
    bound = (a.e * b.v.abs() + a.v.abs() * b.e) / (b.v.abs() * low)
    return Val(a.v / b.v, torch.where(low > 0, bound, math.inf))


OPS: dict[str, Callable[..., Val]] = {
    "+": lambda a, b: Val(a.v + b.v, a.e + b.e),
    "-": lambda a, b: Val(a.v - b.v, a.e + b.e),
    "*": lambda a, b: _mul(a, b),
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


# -- the math family's ops (cases.py math_cases) ---------------------------------------------------
# The emulator computes each SFPU op the compiler emits in fp32 with the C library (runtime/sfpu.cpp: kUnary,
# kSfpuBinary), exactly rounded or within an ulp or two, then rounds DST (bfloat16 without fp32_dest_acc_en);
# the precise forms without the compile option math_approx_mode (exp_tile<false>, recip_tile's Default mode = APPROX
# = math_approx_mode (recip.h), gelu_tile<false>, erf_tile<false>: ops/sfpu.py). One ``rounded`` per op covers
# that evaluation; with math_approx_mode an approximate form adds its own error (APPROX_ERRORS). What an op adds to its operand's error is the exact image of the
# interval [v - e, v + e] under it (:func:`_image`), or a Lipschitz bound where that is simpler.
TINY = 2.0 ** -126  # the least normal fp32: a result below it may come back as a denormal or as zero


def _image(a: Val, f, critical=(), low: float = -math.inf, high: float = math.inf) -> torch.Tensor:
    """max |f(x) - f(a.v)| over x in [a.v - a.e, a.v + a.e]: f continuous and monotone between the
    ``critical`` points (its extrema; a jump of a step function is monotone too); infinite where the interval
    leaves f's domain (low, high)."""
    lo, hi = a.v - a.e, a.v + a.e
    fv = f(a.v)
    points = [f(lo.clamp(min=low, max=high)), f(hi.clamp(min=low, max=high))]
    points += [torch.where((lo <= c) & (c <= hi), f(torch.full_like(a.v, c)), fv) for c in critical]
    bound = torch.stack([(p - fv).abs() for p in points]).amax(0)
    outside = (lo <= low) | (hi >= high)
    return torch.where(outside | bound.isnan(), math.inf, bound)


def _monotone(f, low: float = -math.inf, high: float = math.inf, critical=()):
    return lambda a: Val(f(a.v), _image(a, f, critical, low, high))


def _gelu(a: Val) -> Val:
    """0.5 x (1 + erf(x / sqrt 2)): |gelu'| = |Phi(x) + x phi(x)| <= 1.13 (its maximum, at x = sqrt 2:
    0.9214 + 1.4142 * 0.1468 = 1.129). gelu_tile evaluates it in fp32 (runtime/sfpu.cpp: gelu): 1 + erf cancels
    where erf is near -1, leaving erf's and the sum's roundings (2^-24 each, absolute, below 1) and erf's
    operand's (x / sqrt 2 within 2^-24 relative: |erf'| |x / sqrt 2| 2^-24 <= 0.8 |x| 2^-24) times 0.5 |x|."""
    x = a.v.abs()
    value = 0.5 * a.v * (1 + torch.erf(a.v / math.sqrt(2.0)))
    return Val(value, 1.13 * a.e + 0.5 * x * (2 + 0.8 * x) * 2.0 ** -24)


def _fmod(a: Val, b: Val) -> Val:
    """fmod(x, c) of a constant c: slope 1 between the multiples of c (fmod is exact in IEEE arithmetic), a jump
    of |c| where x crosses one; its values lie in (-|c|, |c|), so 2 |c| bounds any difference."""
    c = b.v
    piece_lo, piece_hi = torch.trunc((a.v - a.e) / c), torch.trunc((a.v + a.e) / c)
    return Val(torch.fmod(a.v, c), torch.where(piece_lo == piece_hi, a.e, torch.maximum(a.e, 2 * c.abs())))


def _pow(a: Val, b: Val) -> Val:
    """x^y with x > 0: exp(y ln x) is monotone in y ln x, which is monotone in each of ln x and y, so its extremes
    over the box of the operands' intervals are at the corners. x^c of a constant integer c on any x: the
    image of x's interval (x^2's minimum at 0)."""
    value = a.v.pow(b.v)
    if bool((b.e == 0).all()) and bool((b.v == b.v.round()).all()) and bool((b.v > 0).all()):
        return Val(value, _image(a, lambda x: x.pow(b.v), critical=(0.0,)))
    corners = [(a.v + sa * a.e).clamp(min=0).pow(b.v + sb * b.e) for sa in (-1, 1) for sb in (-1, 1)]
    bound = torch.stack([(c - value).abs() for c in corners]).amax(0)
    return Val(value, torch.where((a.v - a.e > 0) & ~bound.isnan(), bound, math.inf))


def _compare(op):
    """1.0 where ``a op b`` holds, else 0.0: exact unless the operands' intervals overlap, where either is
    possible (a tie of exact operands, errors 0, is exact: comp.h's comparisons are exact on DST values)."""
    def compare(a: Val, b: Val) -> Val:
        value = op(a.v, b.v).double()
        margin = a.e + b.e
        return Val(value, torch.where(((a.v - b.v).abs() <= margin) & (margin > 0), 1.0, 0.0))
    return compare


def _where(op):
    """where(a op b, x, y): the chosen value's error; where the comparison is uncertain (:func:`_compare`), the
    other value may be chosen instead."""
    def where(a: Val, b: Val, x: Val, y: Val) -> Val:
        mask = _compare(op)(a, b)
        chosen = mask.v > 0
        value, error = torch.where(chosen, x.v, y.v), torch.where(chosen, x.e, y.e)
        other = (x.v - y.v).abs() + torch.maximum(x.e, y.e)
        return Val(value, torch.where(mask.e > 0, torch.maximum(error, other), error))
    return where


COMPARISONS = {"gt": torch.gt, "ge": torch.ge, "lt": torch.lt, "le": torch.le, "eq": torch.eq, "ne": torch.ne}
OPS.update({
    "log2": _monotone(torch.log2, low=0.0), "log10": _monotone(torch.log10, low=0.0),
    "log1p": _monotone(torch.log1p, low=-1.0),
    "recip": _monotone(torch.reciprocal, low=0.0),  # 1 / x of x > 0 (the generator's guard)
    "sin": lambda a: Val(a.v.sin(), a.e.clamp(max=2.0)), "cos": lambda a: Val(a.v.cos(), a.e.clamp(max=2.0)),
    "tan": _monotone(torch.tan, low=-math.pi / 2, high=math.pi / 2),
    "floor": _monotone(torch.floor), "ceil": _monotone(torch.ceil), "trunc": _monotone(torch.trunc),
    "round": _monotone(torch.round), "nearbyint": _monotone(torch.round),  # both half to even (round_tile)
    "gelu": _gelu, "fmod": _fmod, "pow": _pow,
    # T.Cast inside a value: DST computes at one precision (ops/sfpu.py _same: casts ignored), TIR rounds: either
    "cast_float32": lambda a: a, "cast_bfloat16": lambda a: rounded(a, U_BF16),
    **{op: _compare(f) for op, f in COMPARISONS.items()},
    **{f"where_{op}": _where(f) for op, f in COMPARISONS.items()},
})

# Calls the compiler writes as other ops (ops/sfpu.py COMPOSED), evaluated as those ops: each rounds.
COMPOSED = {
    "exp10": lambda x: ("exp", ("*", x, ("c", math.log(10.0)))),
    "sinh": lambda x: ("*", ("-", ("exp", x), ("exp", ("neg", x))), ("c", 0.5)),
    "cosh": lambda x: ("*", ("+", ("exp", x), ("exp", ("neg", x))), ("c", 0.5)),
    "hypot": lambda x, y: ("sqrt", ("+", ("*", x, x), ("*", y, y))),
    "clamp": lambda x, lo, hi: ("max", ("min", x, hi), lo),
}


def approximated(form: str, out: Val) -> Val:
    """``out`` (the exact op's value and its operands' propagated error) computed by the approximate ``form``: the
    form's error at the operand the program holds, whose exact image is within out.e of out.v."""
    rel, absolute = APPROX_ERRORS[form]
    return Val(out.v, out.e + rel * (out.v.abs() + out.e) + absolute)


def evaluate(tree, env: dict[str, Val], u: float, approx: bool = False) -> Val:
    """``tree``'s reference value and error bound; ``approx``: compiled with math_approx_mode (APPROX_ERRORS)."""
    kind = tree[0]
    if kind == "x":
        return env[tree[1]]
    if kind == "c":
        return exact(torch.tensor(tree[1]))
    if kind in COMPOSED:
        return evaluate(COMPOSED[kind](*tree[1:]), env, u, approx)
    out = OPS[kind](*(evaluate(t, env, u, approx) for t in tree[1:]))
    form = "recip" if kind == "/" and tree[1][0] == "c" else kind
    if approx and form in APPROX_ERRORS:
        out = approximated(form, out)
    out = rounded(out, u)
    return Val(out.v, out.e + TINY)


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


def copied(val: Val, dtype: str) -> Val:
    """A block an FPU op (here the reduction) reads, as copy_tile brings it to DST for an element-wise value: a
    float32 block goes through SrcA as TF32 (below 2^-10 relative: the datacopy multiplies nothing, so SrcA's
    ignored last bit does not count). Its CB cannot be unpacked straight to DST for the copy
    (``UnpackToDestMode::UnpackToDestFp32``, tilelang_tt/passes/insert_dst_management_tt.py
    _copied_float32_blocks), since that mode would give the FPU op a Float32 source register format it cannot
    hold (tt-llk cunpack_common.h should_unpack_to_dest: the mode is per CB, for every op unpacking it)."""
    return Val(val.v, val.e + source_rounding(dtype, srca=False) * val.v.abs()) if dtype == "float32" else val
