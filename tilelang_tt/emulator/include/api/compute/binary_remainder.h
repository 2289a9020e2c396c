// SFPU integer remainder of two DST tiles (tt-metal api/compute/binary_remainder.h):
// DST[odst] = DST[idst0] - floor(DST[idst0] / DST[idst1]) * DST[idst1] (the divisor's sign; the
// tt-llk implementation's definition), int32 (remainder_int32_tile) or uint32 (remainder_uint32_tile)
// words. A zero divisor is an error. Needs fp32_dest_acc_en. The float remainder_binary_tile is not emulated.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {

ALWI void remainder_int32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) {
  emu::k::sfpu_int_binary(emu::k::IntBinary::FloorMod, emu::detail::format_id(DataFormat::Int32), idst0, idst1, odst,
                          loc);
}

ALWI void remainder_uint32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) {
  emu::k::sfpu_int_binary(emu::k::IntBinary::FloorMod, emu::detail::format_id(DataFormat::UInt32), idst0, idst1, odst,
                          loc);
}

ALWI void remainder_int32_tile_init() {}
ALWI void remainder_uint32_tile_init() {}

}  // namespace ckernel
