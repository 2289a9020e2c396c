// SFPU int32 division of two DST tiles (tt-metal api/compute/div_int32_floor.h):
// DST[odst] = floor(DST[idst0] / DST[idst1]) (div_int32_floor_tile) or the quotient truncated toward
// zero (div_int32_trunc_tile), int32 words. A zero divisor is an error. Needs fp32_dest_acc_en.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {

ALWI void div_int32_floor_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) {
  emu::k::sfpu_int_binary(emu::k::IntBinary::FloorDiv, emu::detail::format_id(DataFormat::Int32), idst0, idst1, odst,
                          loc);
}

ALWI void div_int32_trunc_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) {
  emu::k::sfpu_int_binary(emu::k::IntBinary::TruncDiv, emu::detail::format_id(DataFormat::Int32), idst0, idst1, odst,
                          loc);
}

ALWI void div_int32_floor_tile_init() {}
ALWI void div_int32_trunc_tile_init() {}

}  // namespace ckernel
