// Broadcast binary ops (tt-metal api/compute/bcast.h): the second operand's row 0 (ROW),
// column 0 (COL) or element (0,0) (SCALAR) is broadcast over the tile.
#pragma once

#include "api/compute/common.h"

namespace ckernel {

template <EltwiseBinaryType tBcastOp, BroadcastType tBcastDim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void any_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                          Loc loc = Loc::current()) {
  detail::check_fpu_binary<tBcastOp>();
  emu::k::binary_tiles(detail::binary_of(tBcastOp), detail::bcast_of(tBcastDim), icb0, icb1, itile0, itile1, idst,
                       loc);
}

template <EltwiseBinaryType tBcastOp, BroadcastType tBcastDim>
ALWI void bcast_init(uint32_t, uint32_t, uint32_t = __builtin_LINE()) {}

#define TT_EMU_BCAST(op, OP, dim, DIM)                                                                     \
  template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>                                                     \
  ALWI void op##_tiles_bcast_##dim(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1,         \
                                   uint32_t idst, Loc loc = Loc::current()) {                              \
    any_tiles_bcast<EltwiseBinaryType::OP, BroadcastType::DIM>(icb0, icb1, itile0, itile1, idst, loc);     \
  }                                                                                                        \
  ALWI void op##_bcast_##dim##_init(uint32_t, uint32_t, uint32_t = __builtin_LINE()) {}

TT_EMU_BCAST(add, ELWADD, rows, ROW)
TT_EMU_BCAST(add, ELWADD, cols, COL)
TT_EMU_BCAST(add, ELWADD, scalar, SCALAR)
TT_EMU_BCAST(sub, ELWSUB, rows, ROW)
TT_EMU_BCAST(sub, ELWSUB, cols, COL)
TT_EMU_BCAST(sub, ELWSUB, scalar, SCALAR)
TT_EMU_BCAST(mul, ELWMUL, rows, ROW)
TT_EMU_BCAST(mul, ELWMUL, cols, COL)
TT_EMU_BCAST(mul, ELWMUL, scalar, SCALAR)
#undef TT_EMU_BCAST

template <BroadcastType tBcastDim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void add_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                          Loc loc = Loc::current()) {
  any_tiles_bcast<EltwiseBinaryType::ELWADD, tBcastDim>(icb0, icb1, itile0, itile1, idst, loc);
}
template <BroadcastType tBcastDim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sub_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                          Loc loc = Loc::current()) {
  any_tiles_bcast<EltwiseBinaryType::ELWSUB, tBcastDim>(icb0, icb1, itile0, itile1, idst, loc);
}
template <BroadcastType tBcastDim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void mul_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                          Loc loc = Loc::current()) {
  any_tiles_bcast<EltwiseBinaryType::ELWMUL, tBcastDim>(icb0, icb1, itile0, itile1, idst, loc);
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
