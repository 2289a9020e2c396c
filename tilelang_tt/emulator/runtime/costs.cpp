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

// ---------------------------------------------------------------- SFPU
// An SFPU op runs its function once per face of the tile (timing.hpp: kSfpuFaces x the cycles of a face's
// ITERATIONS = 8 rows), one cycle per instruction issued. The cycles of a face, with a 16-bit DST and with a
// 32-bit one (fp32_dest_acc_en picks the LLK's path), from the tt-metal 0.81.1 wheel's Wormhole LLK
// (tt_metal/hw/ckernels/wormhole_b0/metal/llk_api/llk_sfpu/ckernel_sfpu_<op>.h, "<op>.h:<line>" below; tt-llk's
// common/inc/sfpu for relu and where), each of one of three kinds:
//  STATED  the source states the throughput or is a fixed TTI sequence of a stated length;
//  COUNTED the instructions of the op's SFPI code per row, counted by hand (docs/timing-model.md, "SFPU costs",
//          states the rules: an instruction per vector operation, load, store and dst_reg++; an SFPLOADI per
//          immediate (two for a float32 one a bfloat16 or float16 cannot hold), none for a constant register;
//          v_if its SFPPUSHC and condition, v_else SFPCOMPC, v_endif SFPPOPC; an SFPNOP after an SFPMAD-class
//          instruction whose result the next instruction reads, as the 0.81.1 TTI sequences do, and two cycles
//          per SFPSWAP);
//  FLOOR   a LOWER BOUND where nobody counted: a load per DST operand, one instruction, a store, dst_reg++.
// Blackhole takes Wormhole's figures: its exp, reciprocal and gelu sources differ (not counted).
namespace {
uint64_t tile(uint64_t face_cycles) { return kSfpuFaces * face_cycles; }

struct SfpuCost {
  uint64_t dst16, dst32;  // cycles per face (8 rows) with a 16-bit and with a 32-bit DST
};
constexpr SfpuCost rows(uint64_t dst16, uint64_t dst32) { return {dst16 * kSfpuRows, dst32 * kSfpuRows}; }
constexpr SfpuCost rows(uint64_t both) { return rows(both, both); }
constexpr SfpuCost kUnaryFloor = rows(4);   // FLOOR: SFPLOAD, one op, SFPSTORE, dst_reg++
constexpr SfpuCost kBinaryFloor = rows(5);  // FLOOR: two SFPLOADs, one op, SFPSTORE, dst_reg++

SfpuCost unary_cost(k::Unary op) {
  switch (op) {
    // STATED exp.h:287 _sfpu_exp_21f_bf16_tti_ BODY_LEN 17 + 1 (16-bit DST's rounding) + 2 (CLAMP_NEGATIVE);
    // COUNTED exp.h:213 _sfpu_exp_fp32_accurate_ (exp.h:471 calculate_exponential's 32-bit DST path): 45
    case k::Unary::Exp: return rows(20, 45);
    // STATED exp.h calculate_exponential<APPROXIMATION_MODE, CLAMP_NEGATIVE>: "~20 cycles for 8 elements"
    case k::Unary::ExpFast: return {kSfpuExpApprox, kSfpuExpApprox};
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
    case k::Unary::Tanh: return {124, 51 * kSfpuRows};
    // COUNTED tanh.h:154 calculate_tanh<APPROXIMATION_MODE>: one SFPLUTFP32
    case k::Unary::TanhLut: return rows(5);
    // COUNTED gelu.h:150 calculate_gelu_piecewise (16-bit DST): 83; gelu.h:296 the rational erf of the 32-bit
    // DST path (two degree-8 polynomials, a reciprocal): 100
    case k::Unary::Gelu: return rows(83, 100);
    // COUNTED gelu.h:227 calculate_gelu_appx: x / 2 plus SFPLUTFP32
    case k::Unary::GeluLut: return rows(8);
    // COUNTED log.h:44 calculate_log_body (its 16-bit DST polynomial of degree 2, its 32-bit one of degree 8)
    case k::Unary::Log: return rows(29, 40);
    // COUNTED abs.h:19, negative.h:15: one instruction; relu (tt-llk relu.h:115 _relu_min_impl_): SFPMOV and
    // a two-cycle SFPSWAP; square.h:36 two rows at a time, rounded to bfloat16 in software with a 16-bit DST
    case k::Unary::Abs: return rows(4);
    case k::Unary::Negative: return rows(4);
    case k::Unary::Relu: return rows(6);
    case k::Unary::Square: return rows(8, 3);
    // STATED typecast's calculate_typecast_fp32_to_fp16b: 8 TTI instructions per row
    case k::Unary::Fp32ToFp16b: return {kSfpuTypecastFp16b, kSfpuTypecastFp16b};
    // STATED wormhole_b0 ckernel_sfpu_typecast.h:359 calculate_typecast_int32_to_fp32 (SFPLOADMACRO): "a throughput
    // of 4 cycles per input row" (a 32-bit DST only: Int32 needs it)
    case k::Unary::Int32ToFp32: return {kSfpuTypecastInt32, kSfpuTypecastInt32};
    // COUNTED tt-llk rounding_ops.h:26 _trunc_body_: three SFPLOADIs, SFPEXEXP, SFPIADD, SFPSHFT2, SFPENCC,
    // SFPAND, with the row's load, store and dst_reg++: 11 (no SFPMAD, no rounding: either DST);
    // rounding_ops.h:53 _floor_body_ / :69 _ceil_body_ add SFPSETCC, SFPIADD, SFPMAD and SFPENCC (the SFPMAD's
    // result is stored after the SFPENCC: no SFPNOP): 15
    case k::Unary::Trunc: return rows(11);
    case k::Unary::Floor:
    case k::Unary::Ceil: return rows(15);
    default: return kUnaryFloor;  // FLOOR: sin, cos, tan, sign, erf, log1p, expm1, identity
  }
}

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
    // STATED binary_max_min.h: "3 cycles per input row"
    case k::SfpuBinary::Max:
    case k::SfpuBinary::Min: return {kSfpuMaxMin, kSfpuMaxMin};
    default: return kBinaryFloor;  // FLOOR: pow, log with a base, round, fmod
  }
}

uint64_t pick(const ComputeOptions& o, SfpuCost c) { return tile(o.fp32_dest_acc_en ? c.dst32 : c.dst16); }
}  // namespace

uint64_t sfpu_cycles(const ComputeOptions& o, k::Unary op) { return pick(o, unary_cost(op)); }

uint64_t sfpu_cycles(const ComputeOptions& o, k::SfpuBinary op) { return pick(o, binary_cost(op)); }

// STATED exp.h:651-655 calculate_exponential<APPROXIMATION_MODE, .., ITERATIONS = 32, CLAMP_NEGATIVE = false>: "~68
// cycles for 32 elements" (SFPU rows: the whole tile, VectorMode::None), two replays of a 32-instruction pattern.
uint64_t sfpu_exp_approx_unclamped_cycles() { return 68; }

// COUNTED binop_with_unary.h:27 calculate_binop_with_scalar: the scalar loaded once before the loop; the op and
// an SFPNOP before the store; rsub with a 16-bit DST rounds to nearest even in software (float32_to_bf16_rne, 8).
uint64_t sfpu_scalar_cycles(const ComputeOptions& o, k::SfpuBinary op) {
  return pick(o, op == k::SfpuBinary::Rsub ? rows(13, 5) : rows(5));
}

uint64_t sfpu_cycles(k::IntBinary) { return tile(kBinaryFloor.dst32); }

uint64_t sfpu_scalar_cycles(k::IntBinary) { return tile(kUnaryFloor.dst32); }

uint64_t sfpu_compare_cycles(k::Compare) { return tile(kUnaryFloor.dst16); }

// STATED tt-llk where.h:18 _calculate_where_: 3 cycles per row when the output is the condition's tile, else 4
// (its SFPLOADMACRO schedules)
uint64_t sfpu_where_cycles(bool in_place) { return tile((in_place ? 3 : 4) * kSfpuRows); }

uint64_t sfpu_fill_cycles() { return tile(kSfpuFill); }

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
