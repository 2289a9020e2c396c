// SFPU integer add of two DST tiles (tt-metal api/compute/add_int_sfpu.h):
// DST[odst] = DST[idst0] + DST[idst1] on 32-bit words, modulo 2^32. data_format: Int32 or UInt32
// (the same sum); UInt16 (the LO16 mode) is reported as not emulated. Needs fp32_dest_acc_en.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {

template <DataFormat data_format>
ALWI void add_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) {
  static_assert(emu::detail::is_sfpu_int_format(data_format),
                "add_int_tile: data_format must be Int32, UInt32 or UInt16");
  emu::k::sfpu_int_binary(emu::k::IntBinary::Add, emu::detail::format_id(data_format), idst0, idst1, odst, loc);
}

ALWI void add_int_tile_init() {}

}  // namespace ckernel
