// SFPU ops of tt-metal api/compute/eltwise_unary/gelu.h.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {
template <bool fast_and_approx = true, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void gelu_tile_init() {}
template <bool fast_and_approx = true, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void gelu_tile(uint32_t idst, Loc loc = Loc::current()) {
  emu::k::sfpu_unary(emu::k::Unary::Gelu, idst, loc);
}
}  // namespace ckernel
