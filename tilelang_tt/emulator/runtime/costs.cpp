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
// An SFPU op runs its function once per face of the tile (timing.hpp: kSfpuFaces x the cycles per face of
// 8 rows). Where tt-llk 0.81.1 states the op's throughput or runs it as a fixed TTI sequence, that figure;
// else the LOWER BOUND of its operands: a load per DST operand, one instruction, a store, per row.
namespace {
uint64_t tile(uint64_t face_cycles) { return kSfpuFaces * face_cycles; }
}  // namespace

uint64_t sfpu_cycles(k::Unary op) {
  switch (op) {
    case k::Unary::Exp: return tile(kSfpuExp);
    case k::Unary::ExpFast: return tile(kSfpuExpApprox);
    case k::Unary::Fp32ToFp16b: return tile(kSfpuTypecastFp16b);
    default: return tile(kSfpuUnaryFloor);
  }
}

uint64_t sfpu_cycles(k::SfpuBinary op) {
  return tile(op == k::SfpuBinary::Max || op == k::SfpuBinary::Min ? kSfpuMaxMin : kSfpuBinaryFloor);
}

// A tile and a scalar the op holds in a register: one DST operand.
uint64_t sfpu_scalar_cycles(k::SfpuBinary) { return tile(kSfpuUnaryFloor); }

uint64_t sfpu_cycles(k::IntBinary) { return tile(kSfpuBinaryFloor); }

uint64_t sfpu_scalar_cycles(k::IntBinary) { return tile(kSfpuUnaryFloor); }

uint64_t sfpu_compare_cycles(k::Compare) { return tile(kSfpuUnaryFloor); }

uint64_t sfpu_where_cycles() { return tile(kSfpuWhereFloor); }

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
