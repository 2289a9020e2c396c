"""Python models of recip_tile's and div_binary_tile's LLK sequences, written from the tt-metal 0.81.1 headers
(hw/ckernels/{wormhole_b0,blackhole}/metal/llk_api/llk_sfpu/ckernel_sfpu_recip.h and ckernel_sfpu_binary.h) and the
Tensix ISA documentation, not from the emulator, on the FP32 words (Python ints) the SFPU holds:

* SFPMAD: tt-isa-documentation Miscellaneous/FMA/README.md, the bit-perfect models of Wormhole's and Blackhole's
  multiply-add (fma_model_wh, fma_model_bh): the product's 48 bits cut to 27 with a sticky bit before the add (not an
  exact fma), one rounding to nearest even, denormals read as and flushed to zero.
* SFPARECIP (Blackhole): BlackholeA0 SFPARECIP.md, ApproxRecip's 128-entry table.
* sfpi: ``a * b`` is SFPMAD(a, b, +0); ``v_if(t < 0)`` tests the sign bit; ``v_if(x == 0)`` fires for +0 only
  (ckernel_sfpu_binary.h:88-90: a bare ``== 0.0f`` measured not to fire for -0.0).
"""

from __future__ import annotations

import numpy as np

SIGN, INF, ONE, NEG_ZERO, QNAN = 0x80000000, 0x7F800000, 0x3F800000, 0x80000000, 0x7FC00000
TWO = 0x40000000
MASK32 = 0xFFFFFFFF


def f32_bits(x: float) -> int:
    return int(np.float32(x).view(np.uint32))


def sfpmad(a: int, b: int, c: int, blackhole: bool) -> int:
    """a * b + c on FP32 words as the arch's SFPMAD computes it (fma_model_wh / fma_model_bh)."""

    def unpack(v):
        e = (v >> 23) & 0xFF
        return e, (0 if e == 0 else (v & 0x7FFFFF) | 0x800000)

    xe, xm = unpack(a)
    ye, ym = unpack(b)
    ze, zm = unpack(c)
    z_sign, p_sign = c & SIGN, (a ^ b) & SIGN
    p = (xm * ym) << 3
    p = (p >> 23) | int((p & 0x7FFFFF) != 0)
    pe = xe + ye - 127
    z = zm << 3
    nan = 0
    if xe == 255 or ye == 255 or pe >= 255 or ze == 255:
        bad_x = xe == 255 and (xm != 0x800000 or ym == 0)
        bad_y = ye == 255 and (ym != 0x800000 or xm == 0)
        z_nan = ze == 255 and z != 0x800000 << 3
        if blackhole:
            if bad_x or bad_y or z_nan or (ze == 255 and (xe == 255 or ye == 255) and z_sign != p_sign):
                return QNAN
            return c if ze == 255 else p_sign | INF
        if bad_x or bad_y or (ze == 255 and not z_nan and (xe == 255 or ye == 255 or pe >= 255) and z_sign != p_sign):
            nan = p_sign | 0x7F800001
        elif z_nan:
            nan = z_sign | 0x7F800001
        else:
            return c if ze == 255 else p_sign | INF
        pe = min(pe, 255)
    if p == 0 or pe < 0:
        if blackhole:
            return c if z else z_sign & p_sign
        if not nan:
            return c if z else 0
        p, pe = 0, 0

    def shifted(v, s):
        if s >= 64:
            return 0
        out = v >> s
        return out | int((out << s) != v) if out else 0

    re = max(pe, ze)
    if pe < re:
        p = shifted(p, re - pe)
    if ze < re:
        z = shifted(z, re - ze)
    r_sign = p_sign if p >= z else z_sign
    zz = (~z if z_sign != r_sign else z) & MASK32
    pp = (~p if p_sign != r_sign else p) & MASK32
    r = (zz + pp + int(p_sign != z_sign)) & MASK32
    if r == 0:
        return (z_sign & p_sign) if blackhole else nan
    n = 5 - (32 - r.bit_length())
    re += n
    if re >= 255:
        return nan if (not blackhole and nan) else r_sign | INF
    if blackhole:
        if re <= 0:
            n, re = n + 1, 0
    elif re < 0:
        return nan
    if n <= 0:
        r = (r << -n) & MASK32
    elif blackhole:
        r = (r >> n) | int((r & (n | 1)) != 0)
    else:
        r = (r >> n) | (r & 1)
    out = (re << 23) + ((r >> 3) & 0x7FFFFF)
    out += int(((r & 7) + (out & 1)) > 4)
    if out >> 23 == 0:
        return r_sign if blackhole else nan
    return ((r_sign if blackhole or not nan else nan) | out) & MASK32


def setexp(v: int, e: int) -> int:
    return (v & ~INF & MASK32) | ((e & 0xFF) << 23)


def biased_exponent(v: int) -> int:
    return (v >> 23) & 0xFF


def arecip(x: int) -> int:
    """SFPARECIP_MOD1_RECIP (BlackholeA0 SFPARECIP.md): sign + ApproxRecip(|x|)."""
    table = (127, 125, 123, 121, 119, 117, 116, 114, 112, 110, 109, 107, 105, 104, 102, 100, 99, 97, 96, 94, 93, 91,
             90, 88, 87, 85, 84, 83, 81, 80, 79, 77, 76, 75, 74, 72, 71, 70, 69, 68, 66, 65, 64, 63, 62, 61, 60, 59,
             58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41, 40, 40, 39, 38, 37, 36, 35, 35,
             34, 33, 32, 31, 31, 30, 29, 28, 28, 27, 26, 25, 25, 24, 23, 23, 22, 21, 21, 20, 19, 19, 18, 17, 17, 16,
             15, 15, 14, 14, 13, 12, 12, 11, 11, 10, 9, 9, 8, 8, 7, 7, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0)
    sign, mag = x & SIGN, x & ~SIGN & MASK32
    if mag < 0x00800000:
        return sign | INF
    if mag >= 0x7E800000:
        return sign
    return sign | ((253 - (mag >> 23)) << 23) | (table[(mag >> 16) & 0x7F] << 16)


# ---------------------------------------------------------------- Wormhole
SEED_DEFAULT = tuple(f32_bits(k) for k in (0.3232325017452239990234375, 1.4545459747314453125,
                                            2.121212482452392578125))  # ckernel_sfpu_recip.h:148-150
SEED_BF16 = tuple(f32_bits(k) for k in (0.32133400440216064453125, 1.4514148235321044921875,
                                         2.1200883388519287109375))  # ckernel_sfpu_recip.h:142-144


def wh_reciprocal_iter(x: int, max_iter: int, round_to_bf16: bool = False, normalized: bool = False,
                       seed=SEED_DEFAULT) -> int:
    """wormhole_b0 ckernel_sfpu_recip.h:28-105 sfpu_reciprocal_iter<max_iter, round_to_bf16, normalized>."""
    def mad(a, b, c):
        return sfpmad(a, b, c, False)

    k0, k1, k2 = seed
    negative_x = (x | SIGN) if normalized else (0xBF800000 | (x & 0x7FFFFF))  # setsgn / copyman(-1.0f, in)
    y = mad(k0, negative_x, k1)
    y = mad(y, negative_x, k2)
    scale = mad(~x & (SIGN | INF) & MASK32, f32_bits(0.5), 0)  # setman(~in, 0) * 0.5
    for _ in range(2 if max_iter > 1 else 1):
        t = mad(negative_x, y, ONE)
        y = mad(y, t, y)
    if round_to_bf16:
        y = bf16_nearest_away(y)
    if not normalized:
        y = mad(y, scale, 0)
    return (y & ~SIGN & MASK32) | (x & SIGN)  # copysgn(y, in)


def bf16_nearest_away(v: int) -> int:
    """convert<vFloat16b>(v, RoundMode::Nearest): nearest, ties away from zero (ckernel_sfpu_recip.h:24-26)."""
    return (v + 0x8000) & 0xFFFF0000


def bf16_rne(v: int) -> int:
    """float32_to_bf16_rne (ckernel_sfpu_conversions.h:39-59): + 0x7fff + the kept LSB, the low half cleared."""
    return (v + 0x7FFF + ((v >> 16) & 1)) & 0xFFFF0000


def wh_div_fp32(in0: int, in1: int) -> int:
    """wormhole_b0 ckernel_sfpu_binary.h:236-275, calculate_sfpu_binary_div with a float32 DST."""
    def mad(a, b, c):
        return sfpmad(a, b, c, False)

    ma, mb = setexp(in0, 127), setexp(in1, 127)
    r = wh_reciprocal_iter(mb, 1, normalized=True)
    q = mad(ma, r, 0)
    residual = mad(q, mb ^ SIGN, ma)
    q = mad(residual, r, q)
    ea, eb = biased_exponent(in0), biased_exponent(in1) - 127
    exponent = ea - eb + biased_exponent(q)
    half = (exponent & MASK32) >> 1
    result = mad(setexp(q, half), setexp(ONE, exponent - half), 0)
    if not (1 <= ea < 255 and -126 <= eb < 128):
        result = mad(in0, (in1 & (SIGN | INF)) ^ INF, 0)
        if in1 & ~SIGN & MASK32 > INF:
            result = in1
    return result


def wh_div_bf16(in0: int, in1: int) -> int:
    """wormhole_b0 ckernel_sfpu_binary.h:276-292: in0 * sfpu_reciprocal_iter<2>(in1), the zero divisor's cases, RNE."""
    result = sfpmad(in0, wh_reciprocal_iter(in1, 2), 0, False)
    if in1 == 0:
        result = QNAN if in0 == 0 else INF | (in0 & SIGN)
    return bf16_rne(result)


# ---------------------------------------------------------------- Blackhole
def bh_reciprocal_iter(x: int, max_iter: int, normalized: bool = False) -> int:
    """blackhole ckernel_sfpu_recip.h:22-59 sfpu_reciprocal_iter<max_iter, normalized>, vConstFloatPrgm0 = 2."""
    def mad(a, b, c):
        return sfpmad(a, b, c, True)

    minus_two = TWO | SIGN
    y = arecip(x)
    if max_iter == 0:
        return y
    t = mad(x, y, minus_two)
    if normalized:
        y = mad(y, t ^ SIGN, NEG_ZERO)
        if max_iter > 1:
            t = mad(x, y, minus_two)
            y = mad(y, t ^ SIGN, NEG_ZERO)
    elif max_iter > 1:
        y1 = mad(y, t ^ SIGN, NEG_ZERO)
        if t & SIGN:
            t = mad(x, y1, minus_two)
            y = mad(y1, t ^ SIGN, NEG_ZERO)
    elif t & SIGN:
        y = mad(y, t ^ SIGN, NEG_ZERO)
    return y


def bh_recip_fp32(x: int) -> int:
    """blackhole ckernel_sfpu_recip.h:157-176 _calculate_reciprocal_fast_24b_5c_ (DISABLE_SFPLOADMACRO form)."""
    def mad(a, b, c):
        return sfpmad(a, b, c, True)

    y = arecip(x)
    e = mad(x ^ SIGN, y, ONE)
    t = mad(e, e, e)
    t2 = mad(t, e, e)
    t2 = ONE if (t2 & SIGN) == 0 and t2 > ONE else t2  # SFPSWAP min(t2, 1.0): sign-magnitude order
    return mad(t2, y, y)


def bh_recip_bf16(x: int) -> int:
    """blackhole ckernel_sfpu_recip.h:80-155 _calculate_reciprocal_fast_8b_3c_ (DISABLE_SFPLOADMACRO form): arecip
    with the low half 0x8000, e = x y - 1, y + (e's word >> 16, logical: SFPSHFT mod 5), stored to a 16-bit DST as
    its top 16 bits."""
    y = arecip(x) | 0x8000
    e = sfpmad(sfpmad(0, 0, x, True), y, f32_bits(-1.0), True)
    return ((y + (e >> 16)) & MASK32) & 0xFFFF0000


def bh_div_fp32(in0: int, in1: int) -> int:
    """blackhole ckernel_sfpu_binary.h:248-284, calculate_sfpu_binary_div with a float32 DST."""
    def mad(a, b, c):
        return sfpmad(a, b, c, True)

    ma, mb = setexp(in0, 127), setexp(in1, 127)
    r = bh_reciprocal_iter(mb, 1, normalized=True)
    q = mad(ma, r, 0)
    residual = mad(q ^ SIGN, mb, ma)
    q = mad(residual, r, q)
    ea, eb = biased_exponent(in0), biased_exponent(in1) - 127
    exponent = ea - eb + biased_exponent(q)
    half = (exponent & MASK32) >> 1
    result = mad(setexp(q, half), setexp(ONE, exponent - half), 0)
    if not (1 <= ea < 255 and -126 <= eb < 128):
        nan_divisor = MASK32 if in1 & ~SIGN & MASK32 > INF else 0
        result = mad(in0 ^ SIGN, ~in1 & (SIGN | INF) & MASK32, nan_divisor)
    return result


def bh_div_bf16(in0: int, in1: int) -> int:
    result = sfpmad(in0, bh_reciprocal_iter(in1, 2), 0, True)
    if in1 == 0:
        result = QNAN if in0 == 0 else INF | (in0 & SIGN)
    return bf16_rne(result)


# ---------------------------------------------------------------- the ops, on arrays
def _words(x) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)


def _apply(fn, *arrays) -> np.ndarray:
    words = [_words(a).ravel() for a in arrays]
    out = np.array([fn(*(int(w[i]) for w in words)) for i in range(words[0].size)], dtype=np.uint32)
    return out.reshape(np.shape(arrays[0])).view(np.float32)


def model_div(a, b, arch: str, fp32_dest: bool) -> np.ndarray:
    """div_binary_tile(a, b) as the arch's calculate_sfpu_binary_div computes it."""
    fn = {("wormhole_b0", True): wh_div_fp32, ("wormhole_b0", False): wh_div_bf16,
          ("blackhole", True): bh_div_fp32, ("blackhole", False): bh_div_bf16}[arch, fp32_dest]
    return _apply(fn, a, b)


def model_recip(x, arch: str, fp32_dest: bool, approximate: bool) -> np.ndarray:
    """recip_tile<dest_acc, approximation> as the arch's calculate_reciprocal computes it."""
    if arch == "blackhole":
        fn = arecip if approximate else bh_recip_fp32 if fp32_dest else bh_recip_bf16
    elif approximate:
        def fn(v):
            return wh_reciprocal_iter(v, 0)
    elif fp32_dest:
        def fn(v):
            return wh_reciprocal_iter(v, 2)
    else:
        def fn(v):
            return wh_reciprocal_iter(v, 1, round_to_bf16=True, seed=SEED_BF16)
    return _apply(fn, x)


def model_sdpa_recip(x, arch: str, fp32_dest: bool, approximate: bool) -> np.ndarray:
    """ttnn SDPA's calculate_recip_first_column (experimental/llk_sfpu/ckernel_sfpu_sdpa.h:33-50) after
    sfpu_reciprocal_init<false>: the arch's sfpu_reciprocal_iter, <0> with APPROX, <2> with a float32 DST, else <1>
    converted to bfloat16 (nearest, ties away from zero)."""
    iterate = bh_reciprocal_iter if arch == "blackhole" else wh_reciprocal_iter
    steps = 0 if approximate else 2 if fp32_dest else 1

    def fn(v):
        y = iterate(v, steps)
        return y if approximate or fp32_dest else bf16_nearest_away(y)
    return _apply(fn, x)
