// The reciprocal (recip_tile) and the division (div_binary_tile) as tt-metal 0.81.1's LLKs compute them, instruction by
// instruction on the FP32 words the SFPU holds: hw/ckernels/{wormhole_b0,blackhole}/metal/llk_api/llk_sfpu/
// ckernel_sfpu_recip.h (sfpu_reciprocal_iter, sfpu_reciprocal_init, calculate_reciprocal) and ckernel_sfpu_binary.h
// (calculate_sfpu_binary_div), and ttnn SDPA's calculate_recip_first_column, line numbers below. The two archs run
// different sequences: Wormhole a quadratic seed refined by Newton steps, Blackhole the SFPARECIP estimate refined by
// Newton steps (or, into a bfloat16 DST, rounded by the sign of its residual).
//
// The instructions' semantics:
// - SFPMAD (sfpmad_model, which sfpu.cpp's approximations use too): tt-isa-documentation Miscellaneous/FMA (fma.c, fma_model_wh / fma_model_bh, "bit-perfect"
//   models of Wormhole's and Blackhole's SFPMAD; WormholeB0 and BlackholeA0 SFPMAD.md): denormal inputs read as zero;
//   the product's 48 bits cut to the addend's 24 + 3 with a sticky bit (partially fused: not an exact fma); one
//   rounding, to nearest even; a denormal result flushed to zero (Wormhole: +0, and every zero result is +0;
//   Blackhole: the sign kept, NaN results the canonical 0x7fc00000).
// - SFPARECIP (Blackhole only): BlackholeA0 SFPARECIP.md ApproxRecip, a 128-entry table on the top 7 mantissa bits.
// - SFPSETEXP / SFPEXEXP / SFPSETMAN / SFPSETSGN, SFPSHFT and the integer ops: bit operations (their .md functional
//   models); SFPSTORE into a 16-bit DST keeps a word's top 16 bits (the emulator's DST then rounds nothing more).
// - `a * b` of two vFloats is SFPMAD(a, b, +0) (sfpi's SFPMUL: LCONST_0 as the addend); `a * b + c` one SFPMAD.
// - v_if(t < 0) tests the sign bit (SFPSETCC); v_if(in1 == 0) fires for the word +0 only (SFPSETCC EQ0 on the 32
//   bits: ckernel_sfpu_binary.h:88-90 records that a bare `== 0.0f` does not fire for -0.0 on silicon).
#include <bit>
#include <cstdint>
#include <limits>

#include "compute.hpp"

namespace emu::k {

namespace {

constexpr uint32_t kSign = 0x80000000u, kInf = 0x7f800000u, kOne = 0x3f800000u, kNegZero = 0x80000000u;

constexpr uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }
float value(uint32_t u) { return std::bit_cast<float>(u); }

// SFPSETEXP, SFPEXEXP (biased), SFPSETSGN
uint32_t setexp(uint32_t v, uint32_t exponent) { return (v & ~kInf) | ((exponent & 0xffu) << 23); }
int32_t exexp_biased(uint32_t v) { return static_cast<int32_t>((v >> 23) & 0xffu); }
uint32_t setsgn(uint32_t v, uint32_t sign_of) { return (v & ~kSign) | (sign_of & kSign); }

}  // namespace

// One SFPMAD as the arch's bit-perfect model computes a * b + c (fma_model_wh / fma_model_bh).
uint32_t sfpmad_model(uint32_t a, uint32_t b, uint32_t c, bool blackhole) {
  struct Operand {
    int e;       // biased exponent
    uint64_t m;  // the 24-bit significand, 0 for a zero or denormal (read as zero)
  };
  const auto operand = [](uint32_t v) {
    const int e = static_cast<int>((v >> 23) & 0xffu);
    return Operand{e, e == 0 ? 0 : uint64_t((v & 0x7fffffu) | 0x800000u)};
  };
  const Operand x = operand(a), y = operand(b), z0 = operand(c);
  const uint32_t z_sign = c & kSign, p_sign = (a ^ b) & kSign;
  // the product with three guard bits, cut to the addend's width: 23 bits dropped into a sticky bit
  uint64_t p = (x.m * y.m) << 3;
  p = (p >> 23) | ((p & 0x7fffffu) != 0);
  int p_e = x.e + y.e - 127;
  uint64_t z = z0.m << 3;
  int z_e = z0.e;
  uint32_t nan = 0;  // Wormhole's NaN result: its bits, which the sum's bits then join
  if (x.e == 255 || y.e == 255 || p_e >= 255 || z_e == 255) {
    const bool invalid_product = (x.e == 255 && (x.m != 0x800000u || y.m == 0)) ||
                                 (y.e == 255 && (y.m != 0x800000u || x.m == 0));
    const bool z_nan = z_e == 255 && z != (uint64_t(0x800000u) << 3);
    if (blackhole) {
      if (invalid_product || z_nan || (z_e == 255 && (x.e == 255 || y.e == 255) && z_sign != p_sign))
        return 0x7fc00000u;
      return z_e == 255 ? c : (p_sign | kInf);
    }
    if (invalid_product || (z_e == 255 && !z_nan && (x.e == 255 || y.e == 255 || p_e >= 255) && z_sign != p_sign))
      nan = p_sign | 0x7f800001u;
    else if (z_nan)
      nan = z_sign | 0x7f800001u;
    else
      return z_e == 255 ? c : (p_sign | kInf);
    if (p_e > 255) p_e = 255;
  }
  // a zero product, or one that underflows on its own: the addend (a zero addend: +0 on Wormhole, the product's and
  // the addend's common sign on Blackhole)
  if (p == 0 || p_e < 0) {
    if (blackhole) return z != 0 ? c : (z_sign & p_sign);
    if (nan == 0) return z != 0 ? c : 0u;
    p = 0;
    p_e = 0;
  }
  // align to the larger exponent, the bits shifted out of a nonzero result kept as a sticky bit
  const auto shift_right = [](uint64_t& v, int s) {
    if (s >= 64) {
      v = 0;
      return;
    }
    const uint64_t before = v;
    v >>= s;
    if (v != 0) v |= ((v << s) != before);
  };
  int r_e = p_e > z_e ? p_e : z_e;
  if (p_e < r_e) shift_right(p, r_e - p_e);
  if (z_e < r_e) shift_right(z, r_e - z_e);
  const uint32_t r_sign = p >= z ? p_sign : z_sign;
  // the signed sum in 32-bit two's complement (the larger magnitude's sign)
  uint32_t r = static_cast<uint32_t>((z_sign != r_sign ? ~z : z) + (p_sign != r_sign ? ~p : p) +
                                     (p_sign != z_sign ? 1 : 0));
  if (r == 0) return blackhole ? (z_sign & p_sign) : nan;
  // normalise to 1 integer bit and 26 fraction bits
  int n = 5 - std::countl_zero(r);
  r_e += n;
  if (r_e >= 255) return (!blackhole && nan != 0) ? nan : (r_sign | kInf);
  if (blackhole) {
    if (r_e <= 0) {
      n += 1;
      r_e = 0;
    }
  } else if (r_e < 0) {
    return nan;  // far below the normal range: flushed before rounding
  }
  if (n <= 0) r <<= -n;
  else if (blackhole) r = (r >> n) | ((r & static_cast<uint32_t>(n | 1)) != 0);
  else r = (r >> n) | (r & 1u);  // Wormhole keeps only the lowest bit sticky
  uint32_t out = (static_cast<uint32_t>(r_e) << 23) + ((r >> 3) & 0x7fffffu);
  out += ((r & 7u) + (out & 1u)) > 4;  // round to nearest, ties to even
  if ((out >> 23) == 0) return blackhole ? r_sign : nan;  // a denormal after rounding: flushed
  return (blackhole || nan == 0 ? r_sign : nan) | out;
}

namespace {

// SFPARECIP_MOD1_RECIP (BlackholeA0 SFPARECIP.md): the sign kept, ApproxRecip of the magnitude: infinity below 2^-126
// (zero, denormals), zero from 2^126 on, else the exponent 253 - e and a 7-bit mantissa from the table.
uint32_t arecip(uint32_t x) {
  static constexpr uint8_t kTable[128] = {
      127, 125, 123, 121, 119, 117, 116, 114, 112, 110, 109, 107, 105, 104, 102, 100, 99, 97, 96, 94, 93, 91,
      90,  88,  87,  85,  84,  83,  81,  80,  79,  77,  76,  75,  74,  72,  71,  70,  69, 68, 66, 65, 64, 63,
      62,  61,  60,  59,  58,  57,  56,  55,  54,  53,  52,  51,  50,  49,  48,  47,  46, 45, 44, 43, 42, 41,
      40,  40,  39,  38,  37,  36,  35,  35,  34,  33,  32,  31,  31,  30,  29,  28,  28, 27, 26, 25, 25, 24,
      23,  23,  22,  21,  21,  20,  19,  19,  18,  17,  17,  16,  15,  15,  14,  14,  13, 12, 12, 11, 11, 10,
      9,   9,   8,   8,   7,   7,   6,   5,   5,   4,   4,   3,   3,   2,   2,   1,   1,  0};
  const uint32_t sign = x & kSign, mag = x & ~kSign;
  if (mag < 0x00800000u) return sign | kInf;
  if (mag >= 0x7e800000u) return sign;
  return sign | ((253u - (mag >> 23)) << 23) | (static_cast<uint32_t>(kTable[(mag >> 16) & 0x7fu]) << 16);
}

uint32_t mad_wh(uint32_t a, uint32_t b, uint32_t c) { return sfpmad_model(a, b, c, false); }
uint32_t mad_bh(uint32_t a, uint32_t b, uint32_t c) { return sfpmad_model(a, b, c, true); }

// ---------------------------------------------------------------- Wormhole (wormhole_b0 ckernel_sfpu_recip.h)
// sfpu_reciprocal_init's seeds (:131-152): y = k2 - k1 x + k0 x^2 on [1, 2); the default (minimax) one, and the one
// recip_tile_init loads for a precise reciprocal into a bfloat16 DST (round_to_bf16).
struct Seed {
  uint32_t k0, k1, k2;
};
constexpr Seed kSeedDefault{bits(0.3232325017452239990234375f), bits(1.4545459747314453125f),
                            bits(2.121212482452392578125f)};
constexpr Seed kSeedBf16{bits(0.32133400440216064453125f), bits(1.4514148235321044921875f),
                         bits(2.1200883388519287109375f)};

// convert<vFloat16b>(v, RoundMode::Nearest): to bfloat16, nearest with ties away from zero (ckernel_sfpu_recip.h:24-26)
uint32_t bf16_nearest_away(uint32_t v) { return (v + 0x8000u) & 0xffff0000u; }

// sfpu_reciprocal_iter<max_iter, round_to_bf16, normalized> (:28-105): max_iter 0 and 1 run one Newton step, 2 two.
uint32_t wh_reciprocal_iter(uint32_t in, int max_iter, bool round_to_bf16, bool normalized, const Seed& seed) {
  // -x: -1's sign and exponent with in's mantissa (copyman), or in with its sign set (normalized: |in| in [1, 2))
  const uint32_t negative_x = normalized ? (in | kSign) : (bits(-1.0f) & ~0x7fffffu) | (in & 0x7fffffu);
  uint32_t y = mad_wh(seed.k0, negative_x, seed.k1);  // :44
  y = mad_wh(y, negative_x, seed.k2);                 // :61
  // 2^(127 - e) as the exponent ~e with a cleared mantissa, halved by an SFPMAD (:57, :66, :77): an exponent of 0
  // gives infinity, 255 zero
  const uint32_t scale = mad_wh((~in) & (kSign | kInf), bits(0.5f), 0);
  const int steps = max_iter > 1 ? 2 : 1;
  for (int step = 0; step < steps; ++step) {
    const uint32_t t = mad_wh(negative_x, y, kOne);  // t = 1 - x y (:70, :85)
    y = mad_wh(y, t, y);                              // y = y + y t (:81, :86)
  }
  if (round_to_bf16) y = bf16_nearest_away(y);
  if (!normalized) y = mad_wh(y, scale, 0);
  return setsgn(y, in);  // copysgn (:102)
}

// _calculate_reciprocal_internal_ (:107-124): APPROX one Newton step; a float32 DST two; a bfloat16 DST one from the
// bfloat16 seed, rounded to bfloat16 (recip_tile_init loads that seed: api/compute/eltwise_unary/recip.h).
float wh_recip_approx(float x) { return value(wh_reciprocal_iter(bits(x), 0, false, false, kSeedDefault)); }
float wh_recip_fp32(float x) { return value(wh_reciprocal_iter(bits(x), 2, false, false, kSeedDefault)); }
float wh_recip_bf16(float x) { return value(wh_reciprocal_iter(bits(x), 1, true, false, kSeedBf16)); }

// calculate_sfpu_binary_div (wormhole_b0 ckernel_sfpu_binary.h:226-297), with sfpu_binary_init<DIV>'s default seed.
float wh_div_fp32(float a, float b) {
  const uint32_t in0 = bits(a), in1 = bits(b);
  const uint32_t ma = setexp(in0, 127), mb = setexp(in1, 127);                    // :239-240
  const uint32_t r = wh_reciprocal_iter(mb, 1, false, true, kSeedDefault);        // :242
  uint32_t q = mad_wh(ma, r, 0);                                                  // :243
  const uint32_t residual = mad_wh(q, mb ^ kSign, ma);                            // :245, ma + q (-mb)
  q = mad_wh(residual, r, q);                                                     // :246
  const int32_t ea = exexp_biased(in0), eb = exexp_biased(in1) - 127;             // :248-250
  const int32_t exponent = ea - eb + exexp_biased(q);                             // :254
  const int32_t half = static_cast<int32_t>(static_cast<uint32_t>(exponent) >> 1);
  uint32_t result = mad_wh(setexp(q, static_cast<uint32_t>(half)),                // :256, two factors
                           setexp(kOne, static_cast<uint32_t>(exponent - half)), 0);
  if (!(ea >= 1 && ea < 255 && eb >= -126 && eb < 128)) {                         // :265-275
    // the divisor's sign, its exponent inverted (zero -> infinity, infinity -> zero), no mantissa
    const uint32_t scale = (in1 & (kSign | kInf)) ^ kInf;
    result = mad_wh(in0, scale, 0);
    if ((in1 & ~kSign) > kInf) result = in1;  // a NaN divisor
  }
  return value(result);
}

// The bfloat16 DST's branch (:276-292): in0 times the two-step reciprocal, a zero divisor giving NaN (0 / 0) or
// infinity with in0's sign, rounded to bfloat16 (float32_to_bf16_rne: nearest, ties to even).
uint32_t bf16_rne(uint32_t v) { return (v + 0x7fffu + ((v >> 16) & 1u)) & 0xffff0000u; }

float wh_div_bf16(float a, float b) {
  const uint32_t in0 = bits(a), in1 = bits(b);
  uint32_t result = mad_wh(in0, wh_reciprocal_iter(in1, 2, false, false, kSeedDefault), 0);
  if (in1 == 0) result = in0 == 0 ? bits(std::numeric_limits<float>::quiet_NaN()) : setsgn(kInf, in0);
  return value(bf16_rne(result));
}

// ---------------------------------------------------------------- Blackhole (blackhole ckernel_sfpu_recip.h)
// sfpu_reciprocal_iter<max_iter, normalized> (:22-59) after sfpu_reciprocal_init<false> (vConstFloatPrgm0 = 2):
// y = SFPARECIP(x); t = x y - 2; y = y (-t) - 0, the step skipped where t is not negative (NaN: x or y zero or
// infinite).
uint32_t bh_reciprocal_iter(uint32_t x, int max_iter, bool normalized) {
  const uint32_t two = bits(2.0f);
  uint32_t y = arecip(x);
  if (max_iter == 0) return y;
  uint32_t t = mad_bh(x, y, two ^ kSign);                        // :33
  if (normalized) {
    y = mad_bh(y, t ^ kSign, kNegZero);                          // :37
    if (max_iter > 1) {
      t = mad_bh(x, y, two ^ kSign);
      y = mad_bh(y, t ^ kSign, kNegZero);
    }
  } else if (max_iter > 1) {
    const uint32_t y1 = mad_bh(y, t ^ kSign, kNegZero);         // :43
    if (t & kSign) {                                             // :45 v_if(t < 0)
      t = mad_bh(x, y1, two ^ kSign);
      y = mad_bh(y1, t ^ kSign, kNegZero);
    }
  } else if (t & kSign) {
    y = mad_bh(y, t ^ kSign, kNegZero);                          // :53
  }
  return y;
}

// calculate_reciprocal (:386-395): APPROX _calculate_reciprocal_fast_7b_ (SFPARECIP alone); a float32 DST
// _calculate_reciprocal_fast_24b_5c_ (:157-219, its DISABLE_SFPLOADMACRO form): e = 1 - x y, t = e e + e,
// t2 = min(t e + e, 1) (SFPSWAP: a NaN, from x or y zero or infinite, becomes 1), y + t2 y.
float bh_recip_approx(float x) { return value(arecip(bits(x))); }
float bh_recip_fp32(float x) {
  const uint32_t in = bits(x), y = arecip(in);
  const uint32_t e = mad_bh(in ^ kSign, y, kOne);
  const uint32_t t = mad_bh(e, e, e);
  uint32_t t2 = mad_bh(t, e, e);
  if (sign_magnitude_smaller(1.0f, value(t2))) t2 = kOne;
  return value(mad_bh(t2, y, y));
}

// A bfloat16 DST: _calculate_reciprocal_fast_8b_3c_ (:80-155, its DISABLE_SFPLOADMACRO form): y = SFPARECIP(x) with
// its low 16 bits 0x8000 (the midpoint to the next bfloat16), e = x y - 1, and e's word shifted right 16 bits
// (SFPSHFT mod 5: logical, BlackholeA0 SFPSHFT.md) added to y's: a carry into the bfloat16 part exactly where e is
// negative (1 / x above the midpoint). SFPSTORE into a 16-bit DST keeps the word's top 16 bits.
float bh_recip_bf16(float x) {
  const uint32_t in = bits(x);
  const uint32_t copy = mad_bh(0, 0, in);  // SFPMAD(0, 0, x): x through the MAD unit (a denormal becomes a zero)
  const uint32_t y = arecip(in) | 0x8000u;
  const uint32_t e = mad_bh(copy, y, bits(-1.0f));
  return value((y + (e >> 16)) & 0xffff0000u);
}

// calculate_sfpu_binary_div (blackhole ckernel_sfpu_binary.h:238-308).
float bh_div_fp32(float a, float b) {
  const uint32_t in0 = bits(a), in1 = bits(b);
  const uint32_t ma = setexp(in0, 127), mb = setexp(in1, 127);                    // :251-252
  const uint32_t r = bh_reciprocal_iter(mb, 1, true);                             // :254
  uint32_t q = mad_bh(ma, r, 0);                                                  // :255
  const uint32_t residual = mad_bh(q ^ kSign, mb, ma);                            // :256, ma - q mb
  q = mad_bh(residual, r, q);                                                     // :257
  const int32_t ea = exexp_biased(in0), eb = exexp_biased(in1) - 127;
  const int32_t exponent = ea - eb + exexp_biased(q);
  const int32_t half = static_cast<int32_t>(static_cast<uint32_t>(exponent) >> 1);
  uint32_t result = mad_bh(setexp(q, static_cast<uint32_t>(half)), setexp(kOne, static_cast<uint32_t>(exponent - half)), 0);
  if (!(ea >= 1 && ea < 255 && eb >= -126 && eb < 128)) {
    // ~in1 with a cleared mantissa: the inverted sign and exponent; nan_divisor - in0 scale, nan_divisor the all-ones
    // word (a NaN) where |in1| is a NaN (SFPGT against +inf), else +0
    const uint32_t scale = (~in1) & (kSign | kInf);
    const uint32_t nan_divisor = (in1 & ~kSign) > kInf ? 0xffffffffu : 0u;
    result = mad_bh(in0 ^ kSign, scale, nan_divisor);
  }
  return value(result);
}

float bh_div_bf16(float a, float b) {
  const uint32_t in0 = bits(a), in1 = bits(b);
  uint32_t result = mad_bh(in0, bh_reciprocal_iter(in1, 2, false), 0);
  if (in1 == 0) result = in0 == 0 ? bits(std::numeric_limits<float>::quiet_NaN()) : setsgn(kInf, in0);
  return value(bf16_rne(result));
}

// ttnn SDPA's calculate_recip_first_column (experimental/llk_sfpu/ckernel_sfpu_sdpa.h:33-50, the same on both archs)
// after sfpu_reciprocal_init<false> (compute_common.hpp): the arch's sfpu_reciprocal_iter, <0> with APPROX, <2> with
// a float32 DST, else <1> converted to bfloat16 (nearest, ties away from zero).
float wh_sdpa_recip_bf16(float x) {
  return value(bf16_nearest_away(wh_reciprocal_iter(bits(x), 1, false, false, kSeedDefault)));
}
float bh_sdpa_recip_fp32(float x) { return value(bh_reciprocal_iter(bits(x), 2, false)); }
float bh_sdpa_recip_bf16(float x) { return value(bf16_nearest_away(bh_reciprocal_iter(bits(x), 1, false))); }

}  // namespace

SfpuUnaryFn sfpu_recip_fn(bool approximate, SfpuMode mode) {
  if (mode.blackhole) {
    if (approximate) return bh_recip_approx;
    return mode.fp32_dest ? bh_recip_fp32 : bh_recip_bf16;
  }
  if (approximate) return wh_recip_approx;
  return mode.fp32_dest ? wh_recip_fp32 : wh_recip_bf16;
}

SfpuUnaryFn sfpu_sdpa_recip_fn(bool approximate, SfpuMode mode) {
  if (approximate) return mode.blackhole ? bh_recip_approx : wh_recip_approx;
  if (mode.blackhole) return mode.fp32_dest ? bh_sdpa_recip_fp32 : bh_sdpa_recip_bf16;
  return mode.fp32_dest ? wh_recip_fp32 : wh_sdpa_recip_bf16;
}

SfpuBinaryFn sfpu_div_fn(SfpuMode mode) {
  if (mode.blackhole) return mode.fp32_dest ? bh_div_fp32 : bh_div_bf16;
  return mode.fp32_dest ? wh_div_fp32 : wh_div_bf16;
}

float sfpu_reciprocal_wh(float x, int max_iter) {
  return value(wh_reciprocal_iter(bits(x), max_iter, false, false, kSeedDefault));
}

}  // namespace emu::k
