// tt-metal 0.81.1 api/compute/cumsum.h: cumsum_tile(idst, first), a running sum down a tile's columns. Declared
// for ttnn's kernel_lib (eltwise/unary/math.inl, Cumsum); not emulated: a kernel that calls it stops, naming
// the call.
#pragma once

#include "api/compute/common.h"
#include "api/emu/not_emulated.h"

namespace ckernel {
ALWI void cumsum_tile(uint32_t /*idst*/, bool /*first*/ = true, Loc loc = Loc::current()) {
  emu::detail::llk_not_emulated("cumsum_tile", loc);
}
ALWI void cumsum_tile_init(Loc loc = Loc::current()) { emu::detail::llk_not_emulated("cumsum_tile_init", loc); }
}  // namespace ckernel
