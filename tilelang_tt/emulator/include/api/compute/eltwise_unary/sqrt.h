// SFPU ops of tt-metal api/compute/eltwise_unary/sqrt.h.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {
ALWI void sqrt_tile_init() {}
template <bool FAST_APPROX = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sqrt_tile(uint32_t idst, Loc loc = Loc::current()) {
  emu::k::sfpu_unary(emu::k::Unary::Sqrt, idst, loc);
}
}  // namespace ckernel
