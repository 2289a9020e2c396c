// SFPU integer multiplication of two DST tiles (tt-metal api/compute/mul_int_sfpu.h):
// DST[odst] = DST[idst0] * DST[idst1] on 32-bit words, modulo 2^32 (the low 32 bits of the product,
// the same for Int32 and UInt32: see kIntBinary in runtime/compute.cpp for why). UInt16 (LO16) is
// reported as not emulated. Needs fp32_dest_acc_en. The init takes the format too (it loads the
// constants of the chunked Int32/UInt32 product, or the UInt16 one).
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {

template <DataFormat data_format>
ALWI void mul_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) {
  static_assert(emu::detail::is_sfpu_int_format(data_format),
                "mul_int_tile: data_format must be Int32, UInt32 or UInt16");
  emu::k::sfpu_int_binary(emu::k::IntBinary::Mul, emu::detail::format_id(data_format), idst0, idst1, odst, loc);
}

template <DataFormat data_format>
ALWI void mul_int_tile_init() {
  static_assert(emu::detail::is_sfpu_int_format(data_format),
                "mul_int_tile_init: data_format must be Int32, UInt32 or UInt16");
}

}  // namespace ckernel
