// The SFPU's arithmetic on one datum of DST (compute.hpp, sfpu_model): the float ops as tt-llk 0.81.1
// computes them where the emulator models an LLK's approximation (each model names its source), the
// others in fp32 with the C library; the integer ops on the raw 32-bit words of DST. compute.cpp's SFPU
// ops apply them to every datum of a tile.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "compute.hpp"

namespace emu::k {

bool sign_magnitude_smaller(float c, float d) {
  const auto ordered = [](float x) {
    const uint32_t bits = std::bit_cast<uint32_t>(x);
    return static_cast<int32_t>(bits ^ (static_cast<uint32_t>(static_cast<int32_t>(bits) >> 30) >> 1));
  };
  return ordered(c) < ordered(d);
}

namespace {

float gelu(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }
float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// One SFPMAD: a * b + c as Wormhole's SFPMAD computes it (sfpmad_model, sfpu_recip.cpp: tt-isa-documentation
// Miscellaneous/FMA's bit-perfect model; the product cut to 27 bits with a sticky bit before the add, one rounding to
// nearest even, denormals read as and flushed to +0). SFPMUL and SFPADD are SFPMAD with c = 0 and b = 1 (SFPMUL.md,
// SFPADD.md); sfpi compiles `a * b + c` of vFloats to one SFPMAD. The approximations of this file use Wormhole's rule
// on both archs (0.81.1 runs the same sqrt, rsqrt, gelu, tanh and sigmoid approximations and tables on both:
// blackhole's gelu intercept -0.2795 is the same FP16 entry as wormhole's -0.2796); Blackhole's SFPMAD differs in
// zero signs, NaN bits and denormal rounding only.
float sfpmad(float a, float b, float c) {
  return std::bit_cast<float>(
      sfpmad_model(std::bit_cast<uint32_t>(a), std::bit_cast<uint32_t>(b), std::bit_cast<uint32_t>(c), false));
}

// exp_tile<approx = true> with InputClamping::ClampToNegative (0.81.1 ckernel_sfpu_exp.h, calculate_exponential's
// APPROXIMATION_MODE && CLAMP_NEGATIVE path; exp_init programs its constants): Schraudolph's approximation. SFPSWAP
// clamps the input to at least -88.5; SFPMAD computes t = A * y + (B - C) with A = 256 / ln 2 and B - C =
// 32500.818359375 (one SFPMAD, partially fused, one round to nearest even); SFP_STOCH_RND with
// StochasticRounding = 0 and FP32_TO_UINT16 takes |t|, rounds it to nearest (ties away from zero; |t| < 0.5 to
// 0) and clamps it to 65535 (SFPSTOCHRND_FloatInt.md); SFPSHFT by 15 puts that 16-bit integer in the exponent
// and the top 7 mantissa bits of the fp32 result. exp_init<true, scale> folds its scale into the constants at
// compile time (exp_init, ckernel_sfpu_exp.h:718-738: A * scale and -88.5 / scale, each rounded to fp32 once), so
// the SFPMAD computes (A * scale) y + (B - C) with y = max(x, -88.5 / scale): no rounding of x * scale.
float exp_fast_scaled(float x, float scale) {
  constexpr float kA = 256.0f * 1.4426950408889634f, kBMinusC = 32500.818359375f;
  const float a = kA * scale, threshold = -88.5f / scale;
  const float y = std::max(x, threshold);
  const float t = std::fabs(sfpmad(a, y, kBMinusC));
  uint32_t mag = 0;
  if (!(t < 65536.0f)) mag = 65535;  // exponent >= 16 or NaN: the maximum magnitude
  else if (t >= 0.5f) mag = static_cast<uint32_t>(std::floor(t)) + (t - std::floor(t) >= 0.5f);
  return std::bit_cast<float>(mag << 15);
}

float exp_fast(float x) { return exp_fast_scaled(x, 1.0f); }

// sqrt_tile and rsqrt_tile (0.81.1 hw/ckernels/wormhole_b0/metal/llk_api/llk_sfpu/ckernel_sfpu_sqrt.h,
// _calculate_sqrt_body_, with sqrt_init's constants; ckernel_sfpu_rsqrt.h runs the same body with RECIPROCAL):
// Kokosinski et al.'s algorithms from the magic-constant seed y = bits(C - (bits(x) >> 1)) (an integer
// subtraction, SFPIADD). kApprox (APPROX, math_approx_mode): SQRT_10-bits, one step y' = y (k1 - y (x y)), C =
// 0x5f0b3892, k1 = 1.89099014875; otherwise SQRT_23-bits, y' = y (k1 + c (k2 + c)) with c = -y (x y), C =
// 0x5f1110a0, k1 = 2.2825186, k2 = 2.2533049, and a Newton step (1 - x y'^2) (y'/2) + y' (rsqrt) or
// (1 - x y'^2) (x y'/2) + x y' (sqrt). kFast (sqrt_tile<FAST_APPROX>, RsqrtMode::Fast) drops the edge handling:
// zero, infinity and negative inputs. Each arithmetic step is one SFPMAD; y/2 is SFPDIVP2 (exact).
template <bool kApprox, bool kRecip, bool kFast>
float sqrt_body(float x) {
  constexpr uint32_t kInfBits = 0x7f800000u;
  const uint32_t x_bits = std::bit_cast<uint32_t>(x);
  const bool nonzero = (x_bits << 1) != 0;  // _bits_without_sign_(x) != 0: +0 and -0 alike
  const bool negative = (x_bits >> 31) != 0;  // v_if(x < 0.0F) is a sign test
  const float nan = std::numeric_limits<float>::quiet_NaN();
  float y = std::bit_cast<float>((kApprox ? 0x5f0b3892u : 0x5f1110a0u) - (x_bits >> 1));
  if constexpr (kApprox) {
    const float c = sfpmad(x, y, 0.0f);
    const float t = sfpmad(-y, c, 1.89099014875f);
    if constexpr (kRecip) {
      // x = +-0 gives +-inf (the subtraction carries x's sign), x = inf gives 0
      if (kInfBits - x_bits != 0 && nonzero) y = !kFast && negative ? nan : sfpmad(y, t, 0.0f);
      else y = std::bit_cast<float>(kInfBits - x_bits);
    } else {
      y = x_bits != kInfBits ? sfpmad(c, t, 0.0f) : c;
    }
  } else {
    float xy = sfpmad(x, y, 0.0f);
    const float c = sfpmad(-y, xy, 0.0f);
    y = sfpmad(y, sfpmad(c, sfpmad(c, 1.0f, 2.2533049f), 2.2825186f), 0.0f);
    xy = sfpmad(x, y, 0.0f);
    const float one_minus_xyy = sfpmad(-y, xy, 1.0f);
    if constexpr (kRecip) {
      if (kInfBits - x_bits != 0 && nonzero) y = !kFast && negative ? nan : sfpmad(one_minus_xyy, y * 0.5f, y);
      else y = std::bit_cast<float>(kInfBits - x_bits);
    } else {
      // a signed compare: positive NaN and inf skip the step (y stays the seed's refinement), negatives run it
      if (static_cast<int32_t>(x_bits) < static_cast<int32_t>(kInfBits))
        y = sfpmad(one_minus_xyy, sfpmad(0.5f, xy, 0.0f), xy);
    }
  }
  if constexpr (!kFast && !kRecip) {
    if (!nonzero) y = x;  // sqrt(+-0) = +-0
    else if (negative) y = nan;
  }
  return y;
}

// A table coefficient as sfpi makes an SFPLUT / SFPLUTFP32 entry of a float (tenstorrent/sfpi include/sfpi_lib.h,
// sLut::convert; 0.81.1 pins sfpi 7.89.0, tt_metal/sfpi-version): the mantissa rounded to `bits` bits half up, the
// exponent rebiased by `bias`. lut16: SFPLUTFP32's FP16 entries (10 bits; a 5-bit exponent biased by 15, below the
// range the zero entry 0x7c00, above it 0x7bff; Lut16ToFp32 of SFPLUTFP32.md reads exponent 0 as a normal number).
// lut8: SFPLUT's FP8 entries for +-[0, 2) (4 bits; a 3-bit exponent E for 2^-E, below 2^-7 the zero entry 0xff,
// from 2 on 0x0f; Lut8ToFp32 of SFPLUT.md).
struct LutFields {
  uint32_t sign;
  int exp;
  uint32_t man;
};
LutFields lut_fields(float v, int bits, int bias) {
  const uint32_t b = std::bit_cast<uint32_t>(v);
  int exp = static_cast<int>((b >> 23) & 0xff);
  uint32_t man = (b & 0x7fffffu) + (1u << (22 - bits));
  if (man >> 23) {
    ++exp;
    man = 0;
  }
  return {b >> 31, exp - bias, man >> (23 - bits)};
}

float lut16(float v) {
  LutFields f = lut_fields(v, 10, 112);
  if (f.exp < 0) return f.sign ? -0.0f : 0.0f;
  if (f.exp >= 31) f = {f.sign, 30, 0x3ff};
  return std::bit_cast<float>((f.sign << 31) | (static_cast<uint32_t>(112 + f.exp) << 23) | (f.man << 13));
}

float lut8(float v) {
  LutFields f = lut_fields(v, 4, 128);
  if (f.exp + 7 < 0) return 0.0f;
  if (f.exp >= 0) f = {f.sign, -1, 0xf};
  return std::bit_cast<float>((f.sign << 31) | (static_cast<uint32_t>(128 + f.exp) << 23) | (f.man << 19));
}

// A piecewise linear table of |x| (SFPLUT, SFPLUTFP32): slope * |x| + intercept of x's segment, one SFPMAD,
// with x's sign when `retain_sign` (SGN_RETAIN) and the result's own otherwise (sfpi LutSign::Update).
template <size_t kSegments>
struct LutTable {
  float split[kSegments - 1];  // the segments' upper ends
  float slope[kSegments], intercept[kSegments];

  float operator()(float x, bool retain_sign) const {
    const float b = std::fabs(x);
    size_t i = 0;
    while (i + 1 < kSegments && !(b < split[i])) ++i;
    const float d = sfpmad(slope[i], b, intercept[i]);
    return retain_sign ? std::copysign(d, x) : d;
  }
};

// The 6-segment FP16 tables of SFPLUTFP32's FP16_6ENTRY_TABLE1 mode (splits 0.5, 1, 1.5, 2, 3: SFPLUTFP32.md), which
// sfpi's lut(v, s01, i01, s23, i23, s45, i45) with the default LutMode::Fp16x6_HWM3 runs; vLut16ss(a, b) and
// vLut16ii(a, b) put a in the low half, the lower segment.
LutTable<6> fp16_table(const float (&slope)[6], const float (&intercept)[6]) {
  LutTable<6> t{{0.5f, 1.0f, 1.5f, 2.0f, 3.0f}, {}, {}};
  for (size_t i = 0; i < 6; ++i) {
    t.slope[i] = lut16(slope[i]);
    t.intercept[i] = lut16(intercept[i]);
  }
  return t;
}

// gelu_tile<fast_and_approx = true> (the header's default; 0.81.1 ckernel_sfpu_gelu.h calculate_gelu_appx with
// gelu_init<true>'s table): x/2 (SFPMUL by vConstFloatPrgm0 = 0.5) plus the table with LutSign::Update, a fit of the
// even gelu(x) - x/2; from |x| = 3 on it is |x|/2, so the result is relu(x).
float gelu_lut(float x) {
  static const LutTable<6> table = fp16_table({0.1928f, 0.4939f, 0.6188f, 0.6099f, 0.5402f, 0.5f},
                                              {-0.00010443f, -0.1604f, -0.2796f, -0.2635f, -0.1194f, 0.0f});
  return sfpmad(sfpmad(x, 0.5f, 0.0f), 1.0f, table(x, false));
}

// tanh_tile<fast_and_approx = true> (0.81.1 ckernel_sfpu_tanh.h calculate_tanh<true>, tanh_init<true>'s table):
// the table with LutSign::Retain, sign(x) (A |x| + B); 1 from |x| = 3 on.
float tanh_lut(float x) {
  static const LutTable<6> table = fp16_table({0.96191406f, 0.57617188f, 0.28710938f, 0.0964355469f, 0.0390625f, 0.0f},
                                              {0.0f, 0.192871094f, 0.48193359f, 0.76806641f, 0.8828125f, 1.0f});
  return table(x, true);
}

// sigmoid_tile<.., fast_and_approx = true> (0.81.1 ckernel_sfpu_sigmoid_appx.h calculate_sigmoid_appx,
// sigmoid_appx_init's vLut8si(slope, intercept) entries): SFPLUT's 3-segment FP8 table (splits 1 and 2: SFPLUT.md)
// with the sign retained (LutSign::Retain, sfpi's default), plus 0.5: 1 from x = 2 on, 0 from x = -2 down.
float sigmoid_lut(float x) {
  static const LutTable<3> table{{1.0f, 2.0f},
                                 {lut8(0.22656f), lut8(0.26562f), lut8(0.0f)},
                                 {lut8(0.0f), lut8(-0.04687f), lut8(0.5f)}};
  return sfpmad(table(x, true), 1.0f, 0.5f);
}

// erf_tile (0.81.1 ckernel_sfpu_erf.h calculate_erf with the bfloat16 ERF_LUT; INP_FLOAT32, a kernel define ttnn's
// unary program factory passes for float32 inputs, selects a degree-16 fp32 fit instead, which erf_erfc.h refuses to
// compile): x clamped to [-10, 10], x P(x^2) / Q(x^2) with ERF_LUT's
// degree-7 odd numerator and degree-8 even denominator (ckernel_sfpu_piecewise_rational.h,
// piecewise_rational_eval_parity_numer_denom: Horner in x^2, one SFPMAD a step, the denominator's extra leading step
// first), the division numer * sfpu_reciprocal<fast_and_approx>(denom) (Wormhole's, sfpu_recip.cpp), the result
// clamped to [-1, 1].
template <bool kApprox>
float erf_rational(float x) {
  static constexpr float kNum[4] = {1.1280932447f, 2.7609212279e-01f, 4.5400281738e-02f, 7.4481184425e-04f};
  static constexpr float kDen[5] = {1.0f, 5.7439188334e-01f, 1.3675764810e-01f, 8.2844606784e-03f, 2.4813862145e-05f};
  x = std::clamp(x, -10.0f, 10.0f);  // sfpi::symmetric_clamp
  const float x2 = sfpmad(x, x, 0.0f);
  float numer = kNum[3];                        // x^7
  float denom = sfpmad(kDen[4], x2, kDen[3]);  // x^8, x^6
  for (int k = 2; k >= 0; --k) {
    numer = sfpmad(numer, x2, kNum[k]);
    denom = sfpmad(denom, x2, kDen[k]);
  }
  numer = sfpmad(numer, x, 0.0f);
  return std::clamp(sfpmad(numer, sfpu_reciprocal_wh(denom, kApprox ? 0 : 2), 0.0f), -1.0f, 1.0f);
}

// typecast_tile<Float32, Float16_b> (tt-metal 0.81.1 ckernel_sfpu_typecast.h calculate_typecast_fp32_to_fp16b): the
// bits plus 0x7FFF plus the lowest bit kept, the low 16 bits cleared, stored as FP32 (round to nearest, ties to even).
float fp32_to_fp16b(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  return std::bit_cast<float>((bits + 0x7FFFu + ((bits >> 16) & 1u)) & 0xFFFF0000u);
}

// typecast_tile<Int32, Float32> (0.81.1 wormhole_b0 ckernel_sfpu_typecast.h:345 calculate_typecast_int32_to_fp32):
// SFPCAST of |v| (round to nearest even), the sign set back, -2^31 fixed up: the nearest float32 of the int32 DST holds.
float int32_to_fp32(float x) { return static_cast<float>(std::bit_cast<int32_t>(x)); }

// SFPSWAP's min and max: relu_tile (0.81.1 ckernel_sfpu_relu.h _relu_min_impl_: the max with the threshold 0),
// binary_max_tile / binary_min_tile (ckernel_sfpu_binary_max_min.h) and unary_max / unary_min
// (ckernel_sfpu_unary_max_min.h), in sign_magnitude_smaller's order.
float swap_max(float a, float b) { return sign_magnitude_smaller(a, b) ? b : a; }
float swap_min(float a, float b) { return sign_magnitude_smaller(b, a) ? b : a; }
float relu(float x) { return swap_max(x, 0.0f); }

// Indexed by Unary; keep in enumerator order.
constexpr SfpuUnaryModel kUnary[] = {
    {"exp", [](float x) { return std::exp(x); }},
    {"log", [](float x) { return std::log(x); }},
    {"sqrt", sqrt_body<false, false, false>},
    {"rsqrt", sqrt_body<false, true, false>},
    // recip_tile runs its LLK's sequence for the arch and DST (sfpu_unary_fn); these rows are Wormhole's float32 ones
    {"recip", [](float x) { return sfpu_reciprocal_wh(x, 2); }},
    {"relu", relu},
    {"gelu", gelu},
    {"sigmoid", sigmoid},
    {"tanh", [](float x) { return std::tanh(x); }},
    {"abs", [](float x) { return std::fabs(x); }},
    {"negative", [](float x) { return -x; }},
    {"square", [](float x) { return x * x; }},
    {"silu", [](float x) { return x * sigmoid(x); }},
    {"sin", [](float x) { return std::sin(x); }},
    {"cos", [](float x) { return std::cos(x); }},
    {"floor", [](float x) { return std::floor(x); }},
    {"ceil", [](float x) { return std::ceil(x); }},
    {"sign", [](float x) { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f); }},
    {"erf", erf_rational<false>},
    {"log1p", [](float x) { return std::log1p(x); }},
    {"expm1", [](float x) { return std::expm1(x); }},
    {"exp2", [](float x) { return std::exp2(x); }},
    {"identity", [](float x) { return x; }},
    {"tan", [](float x) { return std::tan(x); }},
    {"trunc", [](float x) { return std::trunc(x); }},
    {"exp", exp_fast},
    {"recip", [](float x) { return sfpu_reciprocal_wh(x, 0); }},
    {"sqrt", sqrt_body<true, false, false>},
    {"rsqrt", sqrt_body<true, true, false>},
    {"sqrt", sqrt_body<false, false, true>},
    {"rsqrt", sqrt_body<false, true, true>},
    {"sqrt", sqrt_body<true, false, true>},
    {"rsqrt", sqrt_body<true, true, true>},
    {"gelu", gelu_lut},
    {"tanh", tanh_lut},
    {"sigmoid", sigmoid_lut},
    {"erf", erf_rational<true>},
    {"typecast", fp32_to_fp16b},
    {"typecast", int32_to_fp32},
    {"isnan", [](float x) { return std::isnan(x) ? 1.0f : 0.0f; }},
    {"isinf", [](float x) { return std::isinf(x) ? 1.0f : 0.0f; }},
};
static_assert(std::size(kUnary) == static_cast<size_t>(Unary::Count));

// power_tile/power_binary_tile (ckernel_sfpu_unary_power.h): a zero base to a negative power is NaN.
float power(float base, float exponent) {
  return base == 0.0f && exponent < 0.0f ? std::numeric_limits<float>::quiet_NaN() : std::pow(base, exponent);
}

// round_tile(x, decimals) (ckernel_sfpu_rounding_ops.h): 10^-decimals * round_even(x * 10^decimals).
float round_decimals(float x, float decimals) {
  if (decimals == 0.0f) return std::nearbyint(x);
  return std::nearbyint(x * std::pow(10.0f, decimals)) * std::pow(10.0f, -decimals);
}

// Indexed by SfpuBinary; keep in enumerator order.
constexpr SfpuBinaryModel kSfpuBinary[] = {
    {"add", [](float a, float b) { return a + b; }},
    {"sub", [](float a, float b) { return a - b; }},
    {"mul", [](float a, float b) { return a * b; }},
    // div_unary_tile multiplies by its parameter: the host passes the divisor's reciprocal (ckernel_sfpu_binop_with_unary.h
    // calculate_binop_with_scalar, BINOP_MODE DIV: "inversion is carried out on host side"); div_binary_tile runs
    // sfpu_div_fn's sequence
    {"div", [](float a, float b) { return a * b; }},
    {"max", swap_max},
    {"min", swap_min},
    {"rsub", [](float a, float b) { return b - a; }},
    {"power", power},
    {"log_with_base", [](float x, float base_scale) { return std::log(x) * base_scale; }},
    {"round", round_decimals},
    {"fmod", [](float a, float b) { return std::fmod(a, b); }},
};
static_assert(std::size(kSfpuBinary) == static_cast<size_t>(SfpuBinary::Count));

// The integer ops: two's complement, wrapping modulo 2^32 (nothing rounds their results).
int32_t s32(uint32_t x) { return static_cast<int32_t>(x); }

// Indexed by IntBinary; keep in enumerator order. Results modulo 2^32; comparisons give 1 or 0.
// mul: ckernel_sfpu_mul_int32.h (mul_int32, what mul_int_tile<Int32/UInt32> runs on Wormhole and
// Blackhole) splits both operands in 11-bit chunks, multiplies them exactly in fp32 and adds the
// partial products shifted by 0, 11 and 22 bits in 32-bit integer registers, dropping what lands
// above bit 31 (the top chunk product sums fit in 23 bits): the low 32 bits of the product, the same
// word for signed and unsigned operands (two's complement). Hence a * b modulo 2^32.
constexpr SfpuIntModel kIntBinary[] = {
    {"add_int_tile", "add_int_tile", [](uint32_t a, uint32_t b, bool) { return a + b; }},
    {"sub_int_tile", "sub_int_tile", [](uint32_t a, uint32_t b, bool) { return a - b; }},
    {"rsub_int_tile", "rsub_int_tile", [](uint32_t a, uint32_t b, bool) { return b - a; }},
    {"mul_int_tile", "mul_int_tile", [](uint32_t a, uint32_t b, bool) { return a * b; }},
    {"eq_int_tile", "eq_int_tile", [](uint32_t a, uint32_t b, bool) { return uint32_t(a == b); }},
    {"ne_int_tile", "ne_int_tile", [](uint32_t a, uint32_t b, bool) { return uint32_t(a != b); }},
    {"lt_int_tile", "lt_int_tile",
     [](uint32_t a, uint32_t b, bool sg) { return uint32_t(sg ? s32(a) < s32(b) : a < b); }},
    {"gt_int_tile", "gt_int_tile",
     [](uint32_t a, uint32_t b, bool sg) { return uint32_t(sg ? s32(a) > s32(b) : a > b); }},
    {"le_int_tile", "le_int_tile",
     [](uint32_t a, uint32_t b, bool sg) { return uint32_t(sg ? s32(a) <= s32(b) : a <= b); }},
    {"ge_int_tile", "ge_int_tile",
     [](uint32_t a, uint32_t b, bool sg) { return uint32_t(sg ? s32(a) >= s32(b) : a >= b); }},
    {"binary_max_int32_tile", "binary_max_uint32_tile",
     [](uint32_t a, uint32_t b, bool sg) { return (sg ? s32(a) >= s32(b) : a >= b) ? a : b; }},
    {"binary_min_int32_tile", "binary_min_uint32_tile",
     [](uint32_t a, uint32_t b, bool sg) { return (sg ? s32(a) <= s32(b) : a <= b) ? a : b; }},
    // div_int32_floor.h, binary_remainder.h (Remainder = a - floor(a / b) * b: the divisor's sign), on
    // int32 (a zero divisor is an error, checked by sfpu_int_binary; INT_MIN / -1 wraps to INT_MIN)
    {"div_int32_floor_tile", "div_int32_floor_tile", [](uint32_t a, uint32_t b, bool) {
       const int64_t x = s32(a), y = s32(b), q = x / y;
       return static_cast<uint32_t>(q - ((x % y != 0) && ((x < 0) != (y < 0))));
     }},
    {"div_int32_trunc_tile", "div_int32_trunc_tile",
     [](uint32_t a, uint32_t b, bool) { return static_cast<uint32_t>(int64_t(s32(a)) / int64_t(s32(b))); }},
    {"remainder_int32_tile", "remainder_uint32_tile", [](uint32_t a, uint32_t b, bool sg) {
       if (!sg) return a % b;
       const int64_t x = s32(a), y = s32(b), r = x % y;
       return static_cast<uint32_t>(r != 0 && ((r < 0) != (y < 0)) ? r + y : r);
     }},
};
static_assert(std::size(kIntBinary) == static_cast<size_t>(IntBinary::Count));

}  // namespace

const SfpuUnaryModel& sfpu_model(Unary op) { return kUnary[static_cast<size_t>(op)]; }
float sfpu_unary_scaled(Unary op, float x, float scale) {
  return op == Unary::ExpFast ? exp_fast_scaled(x, scale) : kUnary[static_cast<size_t>(op)].fn(x * scale);
}
const SfpuBinaryModel& sfpu_model(SfpuBinary op) { return kSfpuBinary[static_cast<size_t>(op)]; }
SfpuUnaryFn sfpu_unary_fn(Unary op, SfpuMode mode) {
  if (op == Unary::Recip || op == Unary::RecipFast) return sfpu_recip_fn(op == Unary::RecipFast, mode);
  return kUnary[static_cast<size_t>(op)].fn;
}
SfpuBinaryFn sfpu_binary_fn(SfpuBinary op, SfpuMode mode) {
  return op == SfpuBinary::Div ? sfpu_div_fn(mode) : kSfpuBinary[static_cast<size_t>(op)].fn;
}
const SfpuIntModel& sfpu_model(IntBinary op) { return kIntBinary[static_cast<size_t>(op)]; }

bool sfpu_compare(Compare op, float x, float value) {
  switch (op) {
    case Compare::Eq: return x == value;
    case Compare::Ne: return x != value;
    case Compare::Gt: return x > value;
    case Compare::Ge: return x >= value;
    case Compare::Lt: return x < value;
    case Compare::Le: return x <= value;
  }
  return false;
}

}  // namespace emu::k
