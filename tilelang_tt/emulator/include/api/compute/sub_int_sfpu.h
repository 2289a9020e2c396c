// SFPU integer subtraction of two DST tiles (tt-metal api/compute/sub_int_sfpu.h), on 32-bit words
// modulo 2^32: sub_int_tile DST[odst] = DST[idst0] - DST[idst1], rsub_int_tile DST[odst] =
// DST[idst1] - DST[idst0]. data_format: Int32 or UInt32; UInt16 (LO16) is reported as not emulated.
// Needs fp32_dest_acc_en.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {

template <DataFormat data_format>
ALWI void sub_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) {
  static_assert(emu::detail::is_sfpu_int_format(data_format),
                "sub_int_tile: data_format must be Int32, UInt32 or UInt16");
  emu::k::sfpu_int_binary(emu::k::IntBinary::Sub, emu::detail::format_id(data_format), idst0, idst1, odst, loc);
}

template <DataFormat data_format>
ALWI void rsub_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) {
  static_assert(emu::detail::is_sfpu_int_format(data_format),
                "rsub_int_tile: data_format must be Int32, UInt32 or UInt16");
  emu::k::sfpu_int_binary(emu::k::IntBinary::Rsub, emu::detail::format_id(data_format), idst0, idst1, odst, loc);
}

ALWI void sub_int_tile_init() {}
ALWI void rsub_int_tile_init() {}

}  // namespace ckernel
