// SFPU ops of tt-metal api/compute/eltwise_unary/negative.h.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {
ALWI void negative_tile_init() {}
ALWI void negative_tile(uint32_t idst, Loc loc = Loc::current()) {
  emu::k::sfpu_unary(emu::k::Unary::Negative, idst, loc);
}
}  // namespace ckernel
