// fill_tile of tt-metal api/compute/eltwise_unary/fill.h.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {
ALWI void fill_tile_init() {}
ALWI void fill_tile(uint32_t idst, float param0, Loc loc = Loc::current()) { emu::k::fill_tile(idst, param0, loc); }
}  // namespace ckernel
