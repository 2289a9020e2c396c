// SFPU ops of tt-metal api/compute/eltwise_unary/relu.h.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {
ALWI void relu_tile_init() {}
ALWI void relu_tile(uint32_t idst, Loc loc = Loc::current()) { emu::k::sfpu_unary(emu::k::Unary::Relu, idst, loc); }
}  // namespace ckernel
