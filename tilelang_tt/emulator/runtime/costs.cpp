// The timing model's cost of each compute tile op (compute.hpp; the model: timing.hpp). Every op of
// compute.cpp and tilize.cpp takes its cycles from here, and what its unpackers read where that is not
// each operand's whole tile; the constants, with their sources, are timing.hpp's table.
#include "compute.hpp"

namespace emu::timing {

// ---------------------------------------------------------------- FPU, datacopy and pack
// add/sub/mul_tiles[_bcast_*] and *_reuse_dest_tiles: one matrix-engine pass; mul runs the kernel's fidelity
// phases (0.81.1 api/compute/eltwise_binary.h and bcast.h pass MATH_FIDELITY for ELWMUL only).
uint64_t fpu_binary_cycles(const ComputeOptions& o, k::BinaryOp op) {
  return op == k::BinaryOp::Mul ? kFpuPass * fidelity_phases(o.math_fidelity) : kFpuPass;
}

// matmul_block counts each of its tile products: the same cost as the matmul_tiles doing it.
uint64_t matmul_cycles(const ComputeOptions& o) { return matmul_tile_cycles(o.math_fidelity, o.fp32_dest_acc_en); }

// The pools multiply at the kernel's fidelity, like mul.
uint64_t reduce_cycles(const ComputeOptions& o) { return kFpuPass * fidelity_phases(o.math_fidelity); }

uint64_t datacopy_cycles() { return kFpuPass; }

uint64_t pack_cycles() { return kPackTile; }

// ---------------------------------------------------------------- data format reconfiguration
// The instructions each reprogramming issues, one cycle each (ASSUMPTION, as timing.hpp's other single
// instructions), COUNTED in the 0.81.1 wheel's tt-llk/tt_llk_wormhole_b0 (a cfg_reg_rmw_tensix is an RMWCIB per
// byte its mask touches, ckernel.h:512). Its STALLWAIT waits for the engine to drain, which the TRISC's clock,
// charged op after op, already has. An (old, new) overload that finds the formats equal costs nothing: its
// comparison folds away for CB ids known at compile time (api/compute/reconfig_data_format.h).
//  unpack  llk_lib/llk_unpack_common.h:215 _llk_unpack_reconfig_data_format_srca_impl_: STALLWAIT, the unsigned
//          bit, the tile descriptor's format and the output format (an RMWCIB each), the tile-size SETDMAREG, the
//          Z and Y strides (an RMWCIB each): 7
//  math    llk_lib/llk_math_common.h:135 _llk_math_reconfig_data_format_srca_: STALLWAIT, the ALU format and INT8
//          enable (two bytes), the zero-flag state: 4
//  pack    common/inc/cpack_common.h:636 reconfig_packer_data_format: STALLWAIT, SETDMAREG and four REG2FLOPs of
//          the formats, the DEST read control, the L1 offset, the tile-size SETDMAREG, the exponent threshold, the
//          DST accumulation format, the strides (two): 14; a block float format adds its exponent section sizes
//          (four SETDMAREGs, STALLWAIT, four REG2FLOPs: 9)
uint64_t unpack_reconfig_cycles() { return kUnpackReconfig; }
uint64_t math_reconfig_cycles() { return kMathReconfig; }
uint64_t pack_reconfig_cycles(bool block_float) { return kPackReconfig + (block_float ? kPackReconfigBfp : 0); }

// ---------------------------------------------------------------- SFPU
// An SFPU op runs its function once per face of the tile (timing.hpp: kSfpuFaces x the cycles of a face's
// ITERATIONS = 8 rows), one cycle per instruction issued. The cycles of a face, with a 16-bit DST and with a
// 32-bit one (fp32_dest_acc_en picks the LLK's path), from the tt-metal 0.81.1 wheel's Wormhole LLK
// (tt_metal/hw/ckernels/wormhole_b0/metal/llk_api/llk_sfpu/ckernel_sfpu_<op>.h, "<op>.h:<line>" below; "tt-llk"
// is tt_metal/tt-llk/tt_llk_wormhole_b0/common/inc/sfpu), each of one of two kinds:
//  STATED  the source states the throughput or is a fixed TTI sequence of a stated length;
//  COUNTED the instructions of the op's SFPI code per row, counted by hand (docs/timing-model.md, "SFPU costs",
//          states the rules: an instruction per vector operation, load, store and dst_reg++; an SFPLOADI per
//          immediate (two for a float32 one a bfloat16 or float16 cannot hold), none for a constant register;
//          v_if its SFPPUSHC and condition, v_else SFPCOMPC, v_endif SFPPOPC; an SFPNOP after an SFPMAD-class
//          instruction whose result the next instruction reads unless an SFPLOADI the row needs anyway can
//          take the slot, as the 0.81.1 TTI sequences do, and two cycles per SFPSWAP).
// What a face's code runs once before its rows (a scalar, constants loaded outside the loop) is not charged.
// Every table below is also docs/timing-model.md's, which tests/emulator/test_sfpu_costs.py checks line by line
// (the form `case k::<Enum>::<Op>: ... return rows|per_face|per_tile(...)` is what it reads).
// Blackhole takes Wormhole's figures: most of its sources differ (not counted).
namespace {
uint64_t tile(uint64_t face_cycles) { return kSfpuFaces * face_cycles; }

struct SfpuCost {
  uint64_t dst16, dst32;  // cycles per face (8 rows) with a 16-bit and with a 32-bit DST
};
constexpr SfpuCost rows(uint64_t dst16, uint64_t dst32) { return {dst16 * kSfpuRows, dst32 * kSfpuRows}; }
constexpr SfpuCost rows(uint64_t both) { return rows(both, both); }
constexpr SfpuCost per_face(uint64_t dst16, uint64_t dst32) { return {dst16, dst32}; }

SfpuCost unary_cost(k::Unary op) {
  switch (op) {
    // STATED exp.h:317 _sfpu_exp_21f_bf16_tti_ BODY_LEN 17 + 1 (16-bit DST's rounding) + 2 (CLAMP_NEGATIVE);
    // COUNTED exp.h:213 _sfpu_exp_fp32_accurate_ (exp.h:471 calculate_exponential's 32-bit DST path): 45
    case k::Unary::Exp: return rows(20, 45);
    // STATED exp.h:626 calculate_exponential<APPROXIMATION_MODE, CLAMP_NEGATIVE>: "~20 cycles for 8 elements"
    case k::Unary::ExpFast: return per_face(20, 20);
    // COUNTED exp2.h:83 _sfpu_exp2_bf16_ (three float32 coefficients, two SFPLOADIs each, every row): 28;
    // exp2.h:17 _sfpu_exp2_fp32_accurate_ (float16 immediates, three constant registers): 33
    case k::Unary::Exp2: return rows(28, 33);
    // COUNTED recip.h:29 sfpu_reciprocal_iter, recip.h:108: one Newton step and the rounding to bfloat16: 17;
    // two steps: 20; RecipFast (APPROX, max_iter 0: the seed's step only): 16
    case k::Unary::Recip: return rows(17, 20);
    case k::Unary::RecipFast: return rows(16);
    // COUNTED sqrt.h:28 _calculate_sqrt_body_ and sqrt.h:124 (+1 rounding to bfloat16 with a 16-bit DST):
    // the 23-bit algorithm with its edge cases; APPROX the 10-bit one; FAST_APPROX without the edge cases
    case k::Unary::Sqrt: return rows(29, 28);
    case k::Unary::SqrtApprox: return rows(22, 21);
    case k::Unary::SqrtFast: return rows(21, 20);
    case k::Unary::SqrtApproxFast: return rows(14, 13);
    case k::Unary::Rsqrt: return rows(29, 28);
    case k::Unary::RsqrtApprox: return rows(22, 21);
    case k::Unary::RsqrtFast: return rows(25, 24);
    case k::Unary::RsqrtApproxFast: return rows(18, 17);
    // COUNTED sigmoid.h:18 _sfpu_sigmoid_: exp (the SFPI _sfpu_exp_21f_bf16_, or _sfpu_exp_fp32_accurate_), 1 + e,
    // its reciprocal (one or two Newton steps): 46, 65; silu.h:14 the same and x * sigmoid: 48, 67
    case k::Unary::Sigmoid: return rows(46, 65);
    case k::Unary::Silu: return rows(48, 67);
    // COUNTED sigmoid_appx.h:16 calculate_sigmoid_appx: SFPLUT + 0.5
    case k::Unary::SigmoidLut: return rows(8);
    // COUNTED tanh.h:126 _sfpu_tanh_polynomial_x2_ (two rows at a time, 31 instructions a pair: 124 a face);
    // tanh.h:24 _sfpu_tanh_fp32_accurate_: 51
    case k::Unary::Tanh: return per_face(124, 408);
    // COUNTED tanh.h:154 calculate_tanh<APPROXIMATION_MODE>: one SFPLUTFP32
    case k::Unary::TanhLut: return rows(5);
    // COUNTED gelu.h:150 calculate_gelu_piecewise (16-bit DST): 83; gelu.h:296 the rational erf of the 32-bit
    // DST path (two degree-8 polynomials, a reciprocal): 100
    case k::Unary::Gelu: return rows(83, 100);
    // COUNTED gelu.h:227 calculate_gelu_appx: x / 2 plus SFPLUTFP32
    case k::Unary::GeluLut: return rows(8);
    // COUNTED log.h:44 calculate_log_body (its 16-bit DST polynomial of degree 2, its 32-bit one of degree 8)
    case k::Unary::Log: return rows(29, 40);
    // COUNTED log1p.h:52 calculate_log1p_fp32: u = x + 1, the exponent split of log.h and its polynomial (degree 2,
    // or 8 of float16 coefficients), two v_ifs; + the rounding to bfloat16 with a 16-bit DST
    case k::Unary::Log1p: return rows(32, 44);
    // COUNTED expm1.h:60 _sfpu_expm1_: the reduction by ln 2, a degree-4 (32-bit: degree-6) polynomial and the
    // scaling by 2^i under three (five) nested v_ifs
    case k::Unary::Expm1: return rows(41, 63);
    // COUNTED trigonometry.h:213 calculate_sine, :286 calculate_cosine: the four-stage Cody-Waite reduction, an odd
    // polynomial of 3 (32-bit DST: 4) float32 coefficients, each two SFPLOADIs a row, the sign from the quadrant;
    // the 16-bit DST rounds
    case k::Unary::Sin: return rows(29, 31);
    case k::Unary::Cos: return rows(35, 37);
    // COUNTED trigonometry.h:168 calculate_tangent, :133 / :84 sfpu_tan: the reduction by pi/2, a polynomial of 3
    // (7) float32 coefficients, and under v_if the reciprocal for the odd quadrants (one Newton step)
    case k::Unary::Tan: return rows(49, 68);
    // COUNTED sign.h:22 calculate_sign: copysgn(1, x) and a v_if on |x| == 0
    case k::Unary::Sign: return rows(9);
    // COUNTED erf.h:65 calculate_erf (piecewise_rational.h:248): |x| clamped to 10 (an SFPSWAP and the sign: 5),
    // odd / even Horner in x^2 of degree 8/8 (a float32 input, INP_FLOAT32, which the emulator takes with a
    // 32-bit DST: 16/16), sfpu_reciprocal of the denominator (two Newton steps; ErfFast, APPROX: the seed's), the
    // product and a clamp to [-1, 1] (two SFPSWAPs)
    case k::Unary::Erf: return rows(56, 79);
    case k::Unary::ErfFast: return rows(52, 75);
    // COUNTED abs.h:19, negative.h:15: one instruction; identity.h:20: a load and a store; relu (tt-llk
    // relu.h:115 _relu_min_impl_): SFPMOV and a two-cycle SFPSWAP; square.h:36 two rows at a time, rounded to
    // bfloat16 in software with a 16-bit DST
    case k::Unary::Abs: return rows(4);
    case k::Unary::Negative: return rows(4);
    case k::Unary::Identity: return rows(3);
    case k::Unary::Relu: return rows(6);
    case k::Unary::Square: return rows(8, 3);
    // STATED typecast's calculate_typecast_fp32_to_fp16b: 8 TTI instructions per row
    case k::Unary::Fp32ToFp16b: return rows(8);
    // STATED typecast.h:359 calculate_typecast_int32_to_fp32 (SFPLOADMACRO): "a throughput of 4 cycles per input
    // row" (a 32-bit DST only: Int32 needs it)
    case k::Unary::Int32ToFp32: return rows(4);
    // COUNTED tt-llk ckernel_sfpu_isinf_isnan.h:15 _calculate_sfpu_isinf_isnan_: the row's load, 0.0 loaded, the
    // class test (sfpi is_nan / is_inf: SFPSETCC on the exponent and the mantissa, 2), 1.0 loaded under it,
    // SFPENCC, the store and dst_reg++: 8 (ASSUMPTION: two instructions for the class test)
    case k::Unary::IsNan:
    case k::Unary::IsInf: return rows(8);
    // COUNTED tt-llk rounding_ops.h:26 _trunc_body_: three SFPLOADIs, SFPEXEXP, SFPIADD, SFPSHFT2, SFPENCC,
    // SFPAND, with the row's load, store and dst_reg++: 11 (no SFPMAD, no rounding: either DST);
    // rounding_ops.h:53 _floor_body_ / :69 _ceil_body_ add SFPSETCC, SFPIADD, SFPMAD and SFPENCC (the SFPMAD's
    // result is stored after the SFPENCC: no SFPNOP): 15
    case k::Unary::Trunc: return rows(11);
    case k::Unary::Floor:
    case k::Unary::Ceil: return rows(15);
    case k::Unary::Count: break;
  }
  throw EmulatorError("unary_cost: Unary::Count is no op");
}

// Two DST tiles (<op>_binary_tile, binary_max/min_tile, power_binary_tile, fmod_binary_tile).
SfpuCost binary_cost(k::SfpuBinary op) {
  switch (op) {
    // COUNTED binary.h:103 calculate_sfpu_binary: the op and an SFPNOP before the store (no rounding by default)
    case k::SfpuBinary::Add:
    case k::SfpuBinary::Sub:
    case k::SfpuBinary::Rsub: return rows(6);
    // COUNTED binary.h:203 calculate_sfpu_binary_mul: with a 16-bit DST, conversions.h:39 float32_to_bf16_rne
    // (8) and a v_if on either operand being 0
    case k::SfpuBinary::Mul: return rows(21, 6);
    // COUNTED binary.h:227 calculate_sfpu_binary_div: 16-bit DST x * reciprocal (two Newton steps), the zero
    // cases, float32_to_bf16_rne; 32-bit DST the normalised quotient with a residual step and its exponents
    case k::SfpuBinary::Div: return rows(41, 47);
    // STATED binary_max_min.h:33: "a throughput of 3 cycles per input row"
    case k::SfpuBinary::Max:
    case k::SfpuBinary::Min: return rows(3);
    // COUNTED binary_pow.h:53 _sfpu_binary_power_21f_ (16-bit DST): log2 of |base| by a cubic, 2^z by the exp_21f
    // bit trick with two conversions.h:15 _float_to_int32_positive_ (a three-way v_if each, 17), the sign of a
    // negative base and the zero base; binary_pow.h:205 _sfpu_binary_power_f32_: log by a three-step Newton
    // reciprocal and a degree-5 series, Veltkamp-split product, exp.h:213 _sfpu_exp_fp32_accurate_ (42), the
    // special cases
    case k::SfpuBinary::Pow: return rows(103, 178);
    // COUNTED binary_fmod.h:42 _sfpu_binary_fmod_: recip.h:29's reciprocal (two steps), rounding_ops.h:26's
    // truncation, a - trunc * b and four v_if corrections; the 16-bit DST rounds
    case k::SfpuBinary::Fmod: return rows(68, 67);
    case k::SfpuBinary::LogBase:
    case k::SfpuBinary::Round:
    case k::SfpuBinary::Count: break;
  }
  throw EmulatorError("binary_cost: no API call takes two DST tiles for this op");
}

// A tile and a scalar (<op>_unary_tile, log_with_base_tile, round_tile, power_tile): the scalar is loaded before
// the loop.
SfpuCost scalar_cost(k::SfpuBinary op) {
  switch (op) {
    // COUNTED binop_with_unary.h:27 calculate_binop_with_scalar: the op and an SFPNOP before the store; rsub with
    // a 16-bit DST rounds to nearest even in software (float32_to_bf16_rne, 8)
    case k::SfpuBinary::Add:
    case k::SfpuBinary::Sub:
    case k::SfpuBinary::Mul:
    case k::SfpuBinary::Div: return rows(5);
    case k::SfpuBinary::Rsub: return rows(13, 5);
    // COUNTED log.h:44 calculate_log_body with HAS_BASE_SCALING (log.h:120): log's and the product by the scale
    // (two SFPLOADIs, an SFPNOP, the SFPMUL)
    case k::SfpuBinary::LogBase: return rows(33, 44);
    // COUNTED tt-llk rounding_ops.h:158 _calculate_round_ and :137 _round_even_: x * 10^d, |x| + 2^23 - 2^23, the
    // sign back under v_if (exponent < 23), the product by 10^-d
    case k::SfpuBinary::Round: return rows(18);
    // COUNTED unary_power.h:50 _sfpu_unary_power_21f_ (16-bit DST, the binary one's code without the second
    // load and with a shorter zero-base case); unary_power.h:237 _sfpu_unary_power_61f_updated_ with :196
    // _sfpu_pow2_f32_accurate_hilo_ (a degree-7 polynomial for 2^f)
    case k::SfpuBinary::Pow: return rows(98, 143);
    case k::SfpuBinary::Max:
    case k::SfpuBinary::Min:
    case k::SfpuBinary::Fmod:
    case k::SfpuBinary::Count: break;
  }
  throw EmulatorError("scalar_cost: no API call takes a tile and a scalar for this op");
}

// Two int32 DST tiles (a 32-bit DST only: the 32-bit column applies).
SfpuCost int_cost(k::IntBinary op) {
  switch (op) {
    // COUNTED tt-llk add_int.h:21 _add_int_ (sub_int.h, rsub the same): two loads, SFPIADD, store, dst_reg++
    case k::IntBinary::Add:
    case k::IntBinary::Sub:
    case k::IntBinary::Rsub: return rows(5);
    // STATED mul_int32.h:15 mul_int32: a fixed sequence of 30 TTI instructions (11-bit chunks multiplied as floats)
    case k::IntBinary::Mul: return rows(30);
    // STATED binary_comp.h:288 calculate_binary_eq_int: 7 TTI instructions a row
    case k::IntBinary::Eq:
    case k::IntBinary::Ne: return rows(7);
    // STATED binary_comp.h:195 calculate_binary_comp_int32: 9 TTI instructions a row
    case k::IntBinary::Lt:
    case k::IntBinary::Gt:
    case k::IntBinary::Le:
    case k::IntBinary::Ge: return rows(9);
    // STATED binary_max_min.h:87 calculate_binary_max_min_int32: "a throughput of 5 cycles per input row"
    case k::IntBinary::Max:
    case k::IntBinary::Min: return rows(5);
    // COUNTED div_int32_floor.h:17 calculate_div_int32_body: the divisor's reciprocal in float32 (seed, two
    // Newton steps), the quotient, its product with the divisor in 11-bit chunks, one correction and the signs;
    // floor adds a v_if
    case k::IntBinary::FloorDiv: return rows(119);
    case k::IntBinary::TruncDiv: return rows(115);
    // COUNTED binary_remainder.h:217 calculate_remainder_int32_body (:79 compute_unsigned_remainder_int32): the
    // same reciprocal and chunked product, the remainder's correction and the signs
    case k::IntBinary::FloorMod: return rows(125);
    case k::IntBinary::Count: break;
  }
  throw EmulatorError("int_cost: IntBinary::Count is no op");
}

// An int32 tile and a scalar (add_unary_tile_int32, sub_unary_tile_int32).
SfpuCost int_scalar_cost(k::IntBinary op) {
  switch (op) {
    // COUNTED binop_with_unary.h:82 calculate_add_int32, :94 calculate_sub_int32: load, SFPIADD, store, dst_reg++
    case k::IntBinary::Add:
    case k::IntBinary::Sub: return rows(4);
    default: break;
  }
  throw EmulatorError("int_scalar_cost: only add and sub take a scalar");
}

// <op>z_tile: the tile against zero.
SfpuCost zero_compare_cost(k::Compare op) {
  switch (op) {
    // STATED comp.h:71 calculate_comp: fixed TTI sequences per row (the stores of 0 and 1 under SFPSETCC; the store
    // with ADDR_MOD_2 steps DST): eqz, nez 6; ltz, gtz 8 (a NaN test against +inf); gez, lez 10
    case k::Compare::Eq:
    case k::Compare::Ne: return rows(6);
    case k::Compare::Lt:
    case k::Compare::Gt: return rows(8);
    case k::Compare::Ge:
    case k::Compare::Le: return rows(10);
  }
  throw EmulatorError("zero_compare_cost: no such comparison");
}

// unary_<op>_tile: the tile against a scalar, loaded before the loop.
SfpuCost scalar_compare_cost(k::Compare op) {
  switch (op) {
    // COUNTED unary_comp.h:40 calculate_unary_eq (ne, gt, lt, ge, le alike): load, the default result, v_if on
    // the comparison (two), the other result, v_endif, store, dst_reg++
    case k::Compare::Eq:
    case k::Compare::Ne:
    case k::Compare::Gt:
    case k::Compare::Ge:
    case k::Compare::Lt:
    case k::Compare::Le: return rows(9);
  }
  throw EmulatorError("scalar_compare_cost: no such comparison");
}

// ttnn's SDPA first-column sequences (experimental/llk_sfpu/ckernel_sfpu_sdpa.h), per tile: 4 of a face's 8
// iterations (dst_reg += 2) on the 2 faces VectorMode::C selects, each face's constants loaded before its rows.
constexpr SfpuCost per_tile(uint64_t dst16, uint64_t dst32) { return {dst16, dst32}; }
SfpuCost first_column_cost(k::Unary op) {
  switch (op) {
    // STATED sdpa.h:60 calculate_exponential_polynomial (sdpa.h:194 calculate_exponential_first_column<false>):
    // a fixed TTI sequence of 26 instructions plus the polynomial's (degree 2 with a 16-bit DST: 3, and the
    // rounding to bfloat16; degree 4 with a 32-bit DST: 7), 30 and 33 an iteration; the coefficients' SFPLOADIs
    // (6, 10) per face: 8 x 30 + 2 x 6, 8 x 33 + 2 x 10
    case k::Unary::Exp: return per_tile(252, 284);
    // COUNTED sdpa.h:197 calculate_exponential_first_column<true> runs exp.h:457 _ckernel_sfpu_exp_accurate_ with
    // its scale (SFPLOADI, SFPMUL, SFPNOP), not the fast exp: exp.h:116 _sfpu_exp_21f_bf16_ (27) or
    // _sfpu_exp_fp32_accurate_ (42), a load, a store and dst_reg += 2: 32 and 47 an iteration
    case k::Unary::ExpFast: return per_tile(256, 376);
    // COUNTED sdpa.h:34 calculate_recip_first_column: recip_tile's rows (recip.h:29), 8 of them
    case k::Unary::Recip: return per_tile(136, 160);
    case k::Unary::RecipFast: return per_tile(128, 128);
    default: break;
  }
  throw EmulatorError("first_column_cost: ckernel_sfpu_sdpa.h has no first-column sequence of this op");
}

uint64_t pick(const ComputeOptions& o, SfpuCost c) { return o.fp32_dest_acc_en ? c.dst32 : c.dst16; }
}  // namespace

uint64_t sfpu_cycles(const ComputeOptions& o, k::Unary op) { return tile(pick(o, unary_cost(op))); }

uint64_t sfpu_cycles(const ComputeOptions& o, k::SfpuBinary op) { return tile(pick(o, binary_cost(op))); }

uint64_t sfpu_first_column_cycles(const ComputeOptions& o, k::Unary op) { return pick(o, first_column_cost(op)); }

// STATED exp.h:651-655 calculate_exponential<APPROXIMATION_MODE, .., ITERATIONS = 32, CLAMP_NEGATIVE = false>: "~68
// cycles for 32 elements" (SFPU rows: the whole tile, VectorMode::None), two replays of a 32-instruction pattern.
uint64_t sfpu_exp_approx_unclamped_cycles() { return 68; }

uint64_t sfpu_scalar_cycles(const ComputeOptions& o, k::SfpuBinary op) { return tile(pick(o, scalar_cost(op))); }

uint64_t sfpu_cycles(k::IntBinary op) { return tile(int_cost(op).dst32); }

uint64_t sfpu_scalar_cycles(k::IntBinary op) { return tile(int_scalar_cost(op).dst32); }

// The comparison's float path is the same with either DST width (comp.h, unary_comp.h: no rounding).
uint64_t sfpu_compare_cycles(k::Compare op, bool against_zero) {
  return tile((against_zero ? zero_compare_cost(op) : scalar_compare_cost(op)).dst16);
}

// STATED tt-llk where.h:18 _calculate_where_: 3 cycles per row when the output is the condition's tile, else 4
// (its SFPLOADMACRO schedules)
uint64_t sfpu_where_cycles(bool in_place) { return tile((in_place ? 3 : 4) * kSfpuRows); }

uint64_t sfpu_fill_cycles() { return tile(kSfpuFill); }

// COUNTED sfpu_reduce<pool, Float32 | Float16_b, REDUCE_ROW>(dst, ct_dim, rt_dim) from its Wormhole TTI sequence
// (llk_sfpu/ckernel_sfpu_reduce.h; every instruction one cycle, an SFPSWAP two, as the SFPU table's rules; the REPLAY
// instruction that replays a recorded sequence one, then the sequence's own). Each tile is reduced alone in four
// groups of 8 rows, then (ct_dim > 1) each tile row's partial results are combined into its first tile:
//  SUM (perform_reduce_row_sum_avg, :846): a group (perform_reduce_row_sum_tile, :603) is 8 SFPLOADs, the REPLAY of
//   init_reduce_sum_avg's 6 interleaved SFPADDs (:1307-1312, no SFPNOP), horizontal_reduce<false> (:345: three
//   phases of 2 SFPMOV, 8/4/2 SFPSHFT2 and 2 SFPADD, 26) and 2 SFPSTOREs: 43; the combination
//   (sum_first_columns_across_tiles, :711), two batches of 4 SFPLOADs, per other tile 4 SFPLOADs and 4 SFPADDs, and
//   4 SFPSTOREs: 16 + 16 (ct_dim - 1) per tile row.
//  MAX, MIN (perform_reduce_row_max_min, :907): once per call _init_sfpu_config_reg (SFPCONFIG), MIN's SFPLOADI x 2
//   and SFPCONFIG, and record_horizontal_reduce_max (:419), whose lltt::record runs the 16 instructions it records
//   (4 SFPMOV, 8 SFPSHFT2, 4 SFPSWAP: 20; init_reduce_max_min's record<lltt::NoExec> is the form that does not)
//   and the record instruction: 22 (MIN 25); a group (perform_reduce_row_max_tile, :539) is 8 SFPLOADs, 6 SFPSWAPs,
//   horizontal_reduce_max (:451: phase 1 inline, 2 SFPMOV, 8 SFPSHFT2, 2 SFPSWAP: 14; the REPLAY and its 20) and 2
//   SFPSTOREs: 57; the combination (max_first_columns_across_tiles, :801) as SUM's with an SFPSWAP for each SFPADD:
//   16 + 24 (ct_dim - 1) per tile row.
uint64_t sfpu_reduce_row_cycles(k::SfpuReduce pool, uint32_t ct_dim, uint32_t rt_dim) {
  const bool sum = pool == k::SfpuReduce::Sum;
  const uint64_t call = sum ? 0 : pool == k::SfpuReduce::Min ? 25 : 22;
  const uint64_t tile_cycles = 4 * (sum ? 43 : 57);
  const uint64_t combine = ct_dim > 1 ? 16 + (sum ? 16 : 24) * (uint64_t{ct_dim} - 1) : 0;
  return call + uint64_t{rt_dim} * (uint64_t{ct_dim} * tile_cycles + combine);
}

// ---------------------------------------------------------------- what the unpackers read
// What the unpackers read of a tile (t.unpacked), from tt-llk 0.81.1's unpack MOPs (tt_llk_wormhole_b0/llk_lib;
// tt_llk_blackhole's program the same reads) as the MOP expander runs them (tt-isa-documentation
// MOPExpander.md, ExpandTemplate1). Every UNPACR below reads one 16x16 face (256 datums, the X end
// config_unpacker_x_end(face_r_dim) sets) unless said otherwise; the emulator's tiles are 32x32, four faces.
// The ops that read each operand's four faces record that where they run (compute.cpp).

// The broadcast operand of the binary broadcast ops and of unary_bcast through SrcB (unpacker B):
//  NONE: the four faces.
//  COL: faces 0 and 2, the tile's left column: 512 datums (llk_unpack_AB.h _llk_unpack_AB_mop_config_, lines
//    74-95: unpack_srcb starts each of the num_faces_r_dim outer iterations, which end setting SrcB's face
//    counter to 2; llk_unpack_A.h _llk_unpack_A_mop_config_, lines 158-167: unpack_srcb, srcb_set_z_2, then
//    the end op unpack_srcb).
//  ROW: faces 0 and 1, which hold the broadcast row, once per row of faces: 1024 datums, a whole tile's worth
//    (llk_unpack_AB.h lines 96-107: unpack_srcb before each SrcA face, srcb_clear_z after each row of faces;
//    llk_unpack_A.h lines 168-179: the replayed pair of unpack_srcb, srcb_clear_z, the pair again as end op).
//  SCALAR: face 0: 256 datums (llk_unpack_AB.h lines 108-116: start op unpack_srcb; llk_unpack_A.h lines
//    180-189: one unpack_srcb_inc_z_0).
// The other operand of a binary op reads its four faces to SrcA (unpack_srca in every one of those MOPs).
uint32_t bcast_datums(k::Bcast b) {
  switch (b) {
    case k::Bcast::Col: return kTileHW / 2;
    case k::Bcast::Scalar: return kTileHW / 4;
    case k::Bcast::Row: case k::Bcast::None: break;
  }
  return kTileHW;
}

// unary_bcast of a tile unpacked straight to DST (unpacker A; llk_unpack_A.h _llk_unpack_A_init_ lines 302-313
// and _llk_unpack_A_mop_config_ lines 126-149): ROW and SCALAR read one row of 16 datums per UNPACR
// (config_unpacker_x_end<UNP_A>(1)), ROW the first row of faces 0 and 1 (outer loop 2): 32 datums, SCALAR of
// face 0: 16; COL faces 0 and 2 (outer loop 2, the face counters stepped by 2): 512; NONE the four faces.
uint32_t bcast_to_dest_datums(k::Bcast b) {
  switch (b) {
    case k::Bcast::Row: return 32;
    case k::Bcast::Scalar: return 16;
    case k::Bcast::Col: return kTileHW / 2;
    case k::Bcast::None: break;
  }
  return kTileHW;
}

// reduce_tile (tt-llk llk_unpack_AB_reduce.h, Wormhole and Blackhole alike): SUM and AVG REDUCE_ROW swap the
// operands and, with four faces (full_tile), read both whole tiles in one UNPACR each, the scaler to SrcA and the
// data to SrcB (_llk_unpack_AB_reduce_init_ lines 125-132: X end 4 * 16 * 16 - 1 on both unpackers;
// _llk_unpack_AB_reduce_mop_config_ lines 57-67, _llk_unpack_AB_reduce_ lines 180-181). MAX REDUCE_ROW and every
// REDUCE_COL and REDUCE_SCALAR read the data's four faces to SrcA and the first row of each scaler face to SrcB, 16
// datums per UNPACR (init lines 133-137: config_unpacker_x_end<UNP_A>(face_r_dim), config_unpacker_x_end<UNP_B>(1);
// MOP lines 59, 70-71: num_faces replays of one UNPACR each, which step the face): 64 datums. (REDUCE_SCALAR's
// clears of SrcA before each face, UNPACR_NOPs, read nothing from L1.)
void reduce_unpack(UnpackLoad& u, k::Pool pool, k::RDim dim, DataFormat data, DataFormat scaler) {
  if (dim == k::RDim::Row && pool != k::Pool::Max) {
    u.read(Unpacker::A, scaler, kTileHW);
    u.read(Unpacker::B, data, kTileHW);
  } else {
    u.read(Unpacker::A, data, kTileHW);
    u.read(Unpacker::B, scaler, 4 * 16);
  }
}

}  // namespace emu::timing
