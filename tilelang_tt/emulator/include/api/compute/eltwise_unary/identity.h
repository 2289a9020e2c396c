// SFPU ops of tt-metal api/compute/eltwise_unary/identity.h.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {
ALWI void identity_tile_init() {}
ALWI void identity_tile(uint32_t idst, Loc loc = Loc::current()) {
  emu::k::sfpu_unary(emu::k::Unary::Identity, idst, loc);
}
}  // namespace ckernel
