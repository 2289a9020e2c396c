// SFPU ops of tt-metal api/compute/eltwise_unary/isinf_isnan.h: 1.0 where the value is a NaN / an infinity, else 0.0.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {
ALWI void isinf_tile_init() {}
ALWI void isinf_tile(uint32_t idst, Loc loc = Loc::current()) { emu::k::sfpu_unary(emu::k::Unary::IsInf, idst, loc); }
ALWI void isnan_tile_init() {}
ALWI void isnan_tile(uint32_t idst, Loc loc = Loc::current()) { emu::k::sfpu_unary(emu::k::Unary::IsNan, idst, loc); }
}  // namespace ckernel
