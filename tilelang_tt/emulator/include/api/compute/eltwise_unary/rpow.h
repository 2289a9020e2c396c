// tt-metal api/compute/eltwise_unary/rpow.h: declared so that kernels including it compile (ttnn's
// eltwise_sfpu.cpp includes it whatever its SFPU chain is); rpow_tile itself is not emulated and
// stops the run with an error naming the call.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {
ALWI void rpow_tile_init() {}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void rpow_tile(uint32_t /*idst*/, uint32_t /*base_val*/, VectorMode /*vector_mode*/ = VectorMode::RC,
                    Loc loc = Loc::current()) {
  emu::k::api_error("rpow_tile is not emulated", loc);
}
}  // namespace ckernel
