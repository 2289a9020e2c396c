"""Numpy models of the SFPU's approximations, written from the 0.81.1 sources they cite (tt-llk and tt-metal's
ckernel_sfpu_*.h, sfpi, the Tensix ISA documentation), not from the emulator: tests/emulator/test_kernel_api_numerics.py
pins the emulator's kernel API against them and tests/compiler/test_math_approx_mode.py compiled programs."""

from __future__ import annotations

import numpy as np

from .sfpu_llk_models import model_recip, sfpmad


def mad(a, b, c) -> np.ndarray:
    """One SFPMAD, a * b + c, as Wormhole's computes it (sfpu_llk_models.sfpmad: the ISA documentation's bit-perfect
    model, the product cut to 27 bits with a sticky bit before one rounding), element by element."""
    a, b, c = np.broadcast_arrays(*(np.asarray(v, dtype=np.float32) for v in (a, b, c)))
    words = [v.view(np.uint32).ravel() for v in (a, b, c)]
    out = np.array([sfpmad(int(x), int(y), int(z), False) for x, y, z in zip(*words)], dtype=np.uint32)
    return out.reshape(a.shape).view(np.float32)


def bits_of(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).view(np.uint32)


def model_sqrt(x: np.ndarray, approx: bool, reciprocal: bool, fast: bool = False) -> np.ndarray:
    """sqrt_tile / rsqrt_tile as 0.81.1 ckernel_sfpu_sqrt.h's _calculate_sqrt_body_ computes them, with sqrt_init's
    constants: the seed bits(C - (bits(x) >> 1)); APPROX one step of SQRT_10-bits, else SQRT_23-bits' polynomial and
    Newton step; the edge cases (+-0, inf, negatives) unless fast."""
    x = np.asarray(x, dtype=np.float32)
    xb = bits_of(x)
    inf_minus_x = (np.uint32(0x7F800000) - xb).view(np.float32)
    nonzero, negative = (xb << np.uint32(1)) != 0, (xb >> np.uint32(31)) != 0
    y = ((np.uint32(0x5F0B3892 if approx else 0x5F1110A0)) - (xb >> np.uint32(1))).view(np.float32)
    with np.errstate(all="ignore"):
        if approx:
            c = mad(x, y, 0.0)
            t = mad(-y, c, np.float32(1.89099014875))
            step = mad(c, t, 0.0) if not reciprocal else mad(y, t, 0.0)
        else:
            xy = mad(x, y, 0.0)
            c = mad(-y, xy, 0.0)
            y = mad(y, mad(c, mad(c, 1.0, np.float32(2.2533049)), np.float32(2.2825186)), 0.0)
            xy = mad(x, y, 0.0)
            r = mad(-y, xy, 1.0)
            step = mad(r, y * np.float32(0.5), y) if reciprocal else mad(r, mad(0.5, xy, 0.0), xy)
        if reciprocal:
            regular = (inf_minus_x.view(np.uint32) != 0) & nonzero
            out = np.where(regular, step, inf_minus_x)
            if not fast:
                out = np.where(regular & negative, np.float32(np.nan), out)
        else:
            # the precise form's step is under a signed compare with inf's bits (a positive NaN skips it), the
            # approximate form's under a != (ckernel_sfpu_sqrt.h:59, :98)
            stepped = (xb != 0x7F800000) if approx else (xb.view(np.int32) < 0x7F800000)
            out = np.where(stepped, step, c if approx else y)
            if not fast:
                out = np.where(~nonzero, x, np.where(negative, np.float32(np.nan), out))
    return out.astype(np.float32)


def model_exp_fast(x: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """exp_tile<true> as 0.81.1 ckernel_sfpu_exp.h computes it (ClampToNegative) after exp_tile_init<true, scale>:
    y = max(x, -88.5 / scale), t = (A * scale) y + (B - C) (one SFPMAD; exp_init rounds A * scale
    and -88.5 / scale to fp32 at compile time), |t| rounded to nearest, ties away from zero, clamped to 65535
    (SFP_STOCH_RND FP32_TO_UINT16, not stochastic), shifted left 15 bits into an fp32 word."""
    s = np.float32(scale)
    a, b_minus_c = np.float32(256.0 * 1.4426950408889634) * s, np.float32(32500.818359375)
    y = np.maximum(np.asarray(x, dtype=np.float32), np.float32(-88.5) / s)
    t = np.abs(mad(a, y, b_minus_c).astype(np.float64))
    mag = np.where(t < 0.5, 0, np.minimum(np.floor(t) + (t - np.floor(t) >= 0.5), 65535)).astype(np.uint32)
    return (mag << np.uint32(15)).view(np.float32)


def model_erf(x: np.ndarray, approx: bool) -> np.ndarray:
    """erf_tile<approx> as 0.81.1 ckernel_sfpu_erf.h computes it with the bfloat16 ERF_LUT (the compiled kernels
    define no INP_FLOAT32): x clamped to [-10, 10], x P(x^2) / Q(x^2) by Horner in x^2
    (piecewise_rational_eval_parity_numer_denom: the denominator's extra leading term first), times
    Wormhole's sfpu_reciprocal<approx> (one Newton step, else two: sfpu_llk_models), clamped to [-1, 1]."""
    num = (1.1280932447, 2.7609212279e-01, 4.5400281738e-02, 7.4481184425e-04)  # x^1, x^3, x^5, x^7
    den = (1.0, 5.7439188334e-01, 1.3675764810e-01, 8.2844606784e-03, 2.4813862145e-05)  # x^0 .. x^8
    num, den = [np.float32(c) for c in num], [np.float32(c) for c in den]
    x = np.clip(np.asarray(x, dtype=np.float32), -10, 10)
    x2 = mad(x, x, 0.0)
    numer, denom = np.full_like(x, num[3]), mad(den[4], x2, den[3])
    for k in (2, 1, 0):
        numer, denom = mad(numer, x2, num[k]), mad(denom, x2, den[k])
    return np.clip(mad(mad(numer, x, 0.0), model_recip(denom, "wormhole_b0", True, approx), 0.0), -1, 1)


def lut_entry(v: float, mantissa_bits: int) -> float:
    """A coefficient as sfpi's sLut makes a table entry of it (sfpi_lib.h sLut::convert): the mantissa rounded to
    ``mantissa_bits`` (10: SFPLUTFP32's FP16 entries, 4: SFPLUT's FP8 ones) half up; zero stays zero."""
    drop = 23 - mantissa_bits
    b = int(bits_of(np.float32(v))) + (1 << (drop - 1))
    return float(np.uint32(b & ~((1 << drop) - 1)).view(np.float32))


def model_lut(x, splits, slopes, intercepts, mantissa_bits: int, retain_sign: bool) -> np.ndarray:
    """SFPLUT / SFPLUTFP32 (tt-isa-documentation WormholeB0 SFPLUT.md, SFPLUTFP32.md): slope * |x| + intercept of
    |x|'s segment (upper ends ``splits``), one SFPMAD, with x's sign when ``retain_sign`` (SGN_RETAIN)."""
    x = np.asarray(x, dtype=np.float32)
    b = np.abs(x)
    seg = np.searchsorted(np.asarray(splits, np.float32), b, side="right")
    a = np.array([lut_entry(v, mantissa_bits) for v in slopes])[seg]
    c = np.array([lut_entry(v, mantissa_bits) for v in intercepts])[seg]
    d = mad(a, b, c)
    return np.copysign(d, x) if retain_sign else d


TABLE1 = (0.5, 1.0, 1.5, 2.0, 3.0)  # SFPLUTFP32 FP16_6ENTRY_TABLE1, sfpi's default 6-entry LutMode::Fp16x6_HWM3


def model_gelu_lut(x: np.ndarray) -> np.ndarray:
    """gelu_tile<true> as 0.81.1 ckernel_sfpu_gelu.h's calculate_gelu_appx computes it: x * 0.5 plus the 6-entry
    FP16 table of gelu_init<true> (LutSign::Update: the sign not retained)."""
    lut = model_lut(x, TABLE1, (0.1928, 0.4939, 0.6188, 0.6099, 0.5402, 0.5),
                    (-0.00010443, -0.1604, -0.2796, -0.2635, -0.1194, 0.0), 10, retain_sign=False)
    return mad(mad(x, 0.5, 0.0), 1.0, lut)


def model_tanh_lut(x: np.ndarray) -> np.ndarray:
    """tanh_tile<true> as 0.81.1 ckernel_sfpu_tanh.h's calculate_tanh<true> computes it: the 6-entry FP16 table of
    tanh_init<true> with the sign retained."""
    return model_lut(x, TABLE1, (0.96191406, 0.57617188, 0.28710938, 0.0964355469, 0.0390625, 0.0),
                     (0.0, 0.192871094, 0.48193359, 0.76806641, 0.8828125, 1.0), 10, retain_sign=True)


def model_sigmoid_lut(x: np.ndarray) -> np.ndarray:
    """sigmoid_tile<.., true> as 0.81.1 ckernel_sfpu_sigmoid_appx.h computes it: SFPLUT's 3-entry FP8 table of
    sigmoid_appx_init (splits 1 and 2), the sign retained, plus 0.5."""
    lut = model_lut(x, (1.0, 2.0), (0.22656, 0.26562, 0.0), (0.0, -0.04687, 0.5), 4, retain_sign=True)
    return mad(lut, 1.0, 0.5)
