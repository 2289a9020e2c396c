// SFPU ops of tt-metal api/compute/eltwise_unary/trigonometry.h.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {
ALWI void sin_tile_init() {}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sin_tile(uint32_t idst, Loc loc = Loc::current()) {
  emu::k::sfpu_unary(emu::k::Unary::Sin, idst, loc);
}
ALWI void cos_tile_init() {}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void cos_tile(uint32_t idst, Loc loc = Loc::current()) {
  emu::k::sfpu_unary(emu::k::Unary::Cos, idst, loc);
}
ALWI void tan_tile_init() {}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tan_tile(uint32_t idst, Loc loc = Loc::current()) {
  emu::k::sfpu_unary(emu::k::Unary::Tan, idst, loc);
}
}  // namespace ckernel
