// Ternary SFPU select on DST tiles (tt-metal api/compute/eltwise_unary/where.h):
// DST[odst] = DST[idst0] != 0 ? DST[idst1] : DST[idst2], element by element. data_format names the
// format DST holds: Float16_b, or Float32 under fp32_dest_acc_en (the integer formats are not
// emulated); another one is reported, as the hardware would read the tiles wrongly.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {
template <DataFormat data_format>
ALWI void where_tile(uint32_t idst0, uint32_t idst1, uint32_t idst2, uint32_t odst, Loc loc = Loc::current()) {
  emu::k::where_tile(static_cast<std::uint8_t>(data_format), idst0, idst1, idst2, odst, loc);
}
ALWI void where_tile_init() {}
}  // namespace ckernel
