// Tile-scalar ops of tt-metal api/compute/eltwise_unary/binop_with_scalar.h: DST[idst] op the fp32
// whose bits are param1 (rsub: param1 - DST[idst]); add/sub_unary_tile_int32: DST[idst] +/- the int32
// whose bits are param1, on the 32-bit words of an integer tile, modulo 2^32 (needs fp32_dest_acc_en).
#pragma once

#include "api/emu/sfpu.h"
#include "ckernel_sfpu_binop_with_unary.h"

namespace ckernel {

// The ops' codes (binop_with_scalar.h:32), calculate_binop_with_scalar's BINOP_MODE.
enum { ADD_UNARY = 0, SUB_UNARY = 1, MUL_UNARY = 2, DIV_UNARY = 3, RSUB_UNARY = 4 };

ALWI void binop_with_scalar_tile_init() {}

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void add_unary_tile(uint32_t idst, uint32_t param1, Loc loc = Loc::current()) {
  emu::k::sfpu_scalar(emu::k::SfpuBinary::Add, idst, std::bit_cast<float>(param1), loc);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sub_unary_tile(uint32_t idst, uint32_t param1, Loc loc = Loc::current()) {
  emu::k::sfpu_scalar(emu::k::SfpuBinary::Sub, idst, std::bit_cast<float>(param1), loc);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void mul_unary_tile(uint32_t idst, uint32_t param1, Loc loc = Loc::current()) {
  emu::k::sfpu_scalar(emu::k::SfpuBinary::Mul, idst, std::bit_cast<float>(param1), loc);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void div_unary_tile(uint32_t idst, uint32_t param1, Loc loc = Loc::current()) {
  emu::k::sfpu_scalar(emu::k::SfpuBinary::Div, idst, std::bit_cast<float>(param1), loc);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void rsub_unary_tile(uint32_t idst, uint32_t param1, Loc loc = Loc::current()) {
  emu::k::sfpu_scalar(emu::k::SfpuBinary::Rsub, idst, std::bit_cast<float>(param1), loc);
}

ALWI void add_unary_tile_int32(uint32_t idst, uint32_t param1, Loc loc = Loc::current()) {
  emu::k::sfpu_int_scalar(emu::k::IntBinary::Add, idst, param1, loc);
}
ALWI void sub_unary_tile_int32(uint32_t idst, uint32_t param1, Loc loc = Loc::current()) {
  emu::k::sfpu_int_scalar(emu::k::IntBinary::Sub, idst, param1, loc);
}

}  // namespace ckernel
