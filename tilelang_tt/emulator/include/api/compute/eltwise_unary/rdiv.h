// tt-metal api/compute/eltwise_unary/rdiv.h: declared so that kernels including it compile (ttnn's
// eltwise_sfpu.cpp includes it whatever its SFPU chain is); rdiv_tile itself is not emulated and
// stops the run with an error naming the call.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {
// tt-llk's rounding of the SFPU division (the template argument of rdiv_tile).
enum class RoundingMode : uint8_t { None, Trunc, Floor };

ALWI void rdiv_tile_init() {}
template <RoundingMode rounding_mode = RoundingMode::None, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void rdiv_tile(uint32_t /*dst_index*/, uint32_t /*value*/, VectorMode /*vector_mode*/ = VectorMode::RC,
                    Loc loc = Loc::current()) {
  emu::k::api_error("rdiv_tile is not emulated", loc);
}
}  // namespace ckernel
