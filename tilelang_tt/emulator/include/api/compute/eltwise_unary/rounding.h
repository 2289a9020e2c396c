// SFPU rounding ops of tt-metal api/compute/eltwise_unary/rounding.h.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {
ALWI void rounding_op_tile_init() {}
ALWI void floor_tile(uint32_t idst, Loc loc = Loc::current()) { emu::k::sfpu_unary(emu::k::Unary::Floor, idst, loc); }
ALWI void ceil_tile(uint32_t idst, Loc loc = Loc::current()) { emu::k::sfpu_unary(emu::k::Unary::Ceil, idst, loc); }
ALWI void trunc_tile(uint32_t idst, Loc loc = Loc::current()) { emu::k::sfpu_unary(emu::k::Unary::Trunc, idst, loc); }
// Rounds half to even at `decimals` decimal places.
ALWI void round_tile(uint32_t idst, int32_t decimals, Loc loc = Loc::current()) {
  emu::k::sfpu_scalar(emu::k::SfpuBinary::Round, idst, static_cast<float>(decimals), loc);
}
}  // namespace ckernel
