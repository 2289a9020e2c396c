// SFPU rounding ops of tt-metal api/compute/eltwise_unary/rounding.h.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {
ALWI void rounding_op_tile_init() {}
ALWI void floor_tile(uint32_t idst, Loc loc = Loc::current()) { emu::k::sfpu_unary(emu::k::Unary::Floor, idst, loc); }
ALWI void ceil_tile(uint32_t idst, Loc loc = Loc::current()) { emu::k::sfpu_unary(emu::k::Unary::Ceil, idst, loc); }
}  // namespace ckernel
