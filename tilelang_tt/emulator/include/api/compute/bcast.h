// Broadcast binary ops (tt-metal api/compute/bcast.h): the second operand's row bcast_row_idx
// (ROW; row 0 by default), column 0 (COL) or element (0,0) (SCALAR) is broadcast over the tile.
#pragma once

#include "api/compute/common.h"
#include "api/emu/llk_binary_inits.h"

namespace ckernel {

// bcast_row_idx: the row of the second operand's tile a ROW broadcast broadcasts (tt-llk
// _llk_unpack_AB_ offsets the unpacker to it); COL and SCALAR broadcasts ignore it.
template <EltwiseBinaryType tBcastOp, BroadcastType tBcastDim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void any_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                          uint32_t bcast_row_idx = 0, Loc loc = Loc::current()) {
  detail::check_fpu_binary<tBcastOp>();
  emu::k::binary_tiles(detail::binary_of(tBcastOp), detail::bcast_of(tBcastDim), icb0, icb1, itile0, itile1, idst,
                       bcast_row_idx, loc);
}

template <EltwiseBinaryType tBcastOp, BroadcastType tBcastDim>
ALWI void bcast_init(uint32_t, uint32_t, uint32_t = __builtin_LINE()) {}

// <op>_tiles_bcast_<dim> and its init, for each op and broadcast dimension; the row broadcasts take
// bcast_row_idx as well.
#define TT_EMU_BCAST_INIT(op, dim) \
  ALWI void op##_bcast_##dim##_init(uint32_t, uint32_t, uint32_t = __builtin_LINE()) {}
#define TT_EMU_BCAST_ROWS(op, OP)                                                                          \
  template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>                                                     \
  ALWI void op##_tiles_bcast_rows(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst, \
                                  uint32_t bcast_row_idx = 0, Loc loc = Loc::current()) {                  \
    any_tiles_bcast<EltwiseBinaryType::OP, BroadcastType::ROW>(icb0, icb1, itile0, itile1, idst, bcast_row_idx, \
                                                               loc);                                       \
  }                                                                                                        \
  TT_EMU_BCAST_INIT(op, rows)
#define TT_EMU_BCAST(op, OP, dim, DIM)                                                                     \
  template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>                                                     \
  ALWI void op##_tiles_bcast_##dim(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1,         \
                                   uint32_t idst, Loc loc = Loc::current()) {                              \
    any_tiles_bcast<EltwiseBinaryType::OP, BroadcastType::DIM>(icb0, icb1, itile0, itile1, idst, 0, loc);  \
  }                                                                                                        \
  TT_EMU_BCAST_INIT(op, dim)

TT_EMU_BCAST_ROWS(add, ELWADD)
TT_EMU_BCAST(add, ELWADD, cols, COL)
TT_EMU_BCAST(add, ELWADD, scalar, SCALAR)
TT_EMU_BCAST_ROWS(sub, ELWSUB)
TT_EMU_BCAST(sub, ELWSUB, cols, COL)
TT_EMU_BCAST(sub, ELWSUB, scalar, SCALAR)
TT_EMU_BCAST_ROWS(mul, ELWMUL)
TT_EMU_BCAST(mul, ELWMUL, cols, COL)
TT_EMU_BCAST(mul, ELWMUL, scalar, SCALAR)
#undef TT_EMU_BCAST
#undef TT_EMU_BCAST_ROWS
#undef TT_EMU_BCAST_INIT

template <BroadcastType tBcastDim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void add_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                          uint32_t bcast_row_idx = 0, Loc loc = Loc::current()) {
  any_tiles_bcast<EltwiseBinaryType::ELWADD, tBcastDim>(icb0, icb1, itile0, itile1, idst, bcast_row_idx, loc);
}
template <BroadcastType tBcastDim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sub_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                          uint32_t bcast_row_idx = 0, Loc loc = Loc::current()) {
  any_tiles_bcast<EltwiseBinaryType::ELWSUB, tBcastDim>(icb0, icb1, itile0, itile1, idst, bcast_row_idx, loc);
}
template <BroadcastType tBcastDim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void mul_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                          uint32_t bcast_row_idx = 0, Loc loc = Loc::current()) {
  any_tiles_bcast<EltwiseBinaryType::ELWMUL, tBcastDim>(icb0, icb1, itile0, itile1, idst, bcast_row_idx, loc);
}

// Broadcast copy CB -> DST.
template <BroadcastType bcast_type, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void unary_bcast_init(uint32_t) {}
template <BroadcastType bcast_type, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void unary_bcast(uint32_t icb, uint32_t in_tile_index, uint32_t dst_tile_index, Loc loc = Loc::current()) {
  emu::k::unary_bcast(detail::bcast_of(bcast_type), icb, in_tile_index, dst_tile_index, loc);
}
template <BroadcastType bcast_type>
ALWI void unary_bcast_uninit(uint32_t) {}

}  // namespace ckernel
