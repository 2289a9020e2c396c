// SFPU ops of tt-metal api/compute/eltwise_unary/log1p.h.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {
template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void log1p_tile_init() {}
template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void log1p_tile(uint32_t idst, Loc loc = Loc::current()) {
  emu::k::sfpu_unary(emu::k::Unary::Log1p, idst, loc);
}
}  // namespace ckernel
