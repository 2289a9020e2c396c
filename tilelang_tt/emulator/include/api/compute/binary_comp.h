// SFPU integer comparisons of two DST tiles (tt-metal api/compute/binary_comp.h):
// DST[odst] = 1 where DST[idst0] <op> DST[idst1] holds, else 0, as integers. data_format: Int32
// compares signed, UInt32 unsigned (eq/ne compare the bits); UInt16 (LO16) is reported as not
// emulated. Needs fp32_dest_acc_en.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {

template <DataFormat data_format>
ALWI void eq_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) {
  static_assert(emu::detail::is_sfpu_int_format(data_format),
                "eq_int_tile: data_format must be Int32, UInt32 or UInt16");
  emu::k::sfpu_int_binary(emu::k::IntBinary::Eq, emu::detail::format_id(data_format), idst0, idst1, odst, loc);
}
template <DataFormat data_format>
ALWI void eq_int_tile_init() {
  static_assert(emu::detail::is_sfpu_int_format(data_format),
                "eq_int_tile_init: data_format must be Int32, UInt32 or UInt16");
}

template <DataFormat data_format>
ALWI void ne_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) {
  static_assert(emu::detail::is_sfpu_int_format(data_format),
                "ne_int_tile: data_format must be Int32, UInt32 or UInt16");
  emu::k::sfpu_int_binary(emu::k::IntBinary::Ne, emu::detail::format_id(data_format), idst0, idst1, odst, loc);
}
template <DataFormat data_format>
ALWI void ne_int_tile_init() {
  static_assert(emu::detail::is_sfpu_int_format(data_format),
                "ne_int_tile_init: data_format must be Int32, UInt32 or UInt16");
}

template <DataFormat data_format>
ALWI void lt_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) {
  static_assert(emu::detail::is_sfpu_int_format(data_format),
                "lt_int_tile: data_format must be Int32, UInt32 or UInt16");
  emu::k::sfpu_int_binary(emu::k::IntBinary::Lt, emu::detail::format_id(data_format), idst0, idst1, odst, loc);
}
template <DataFormat data_format>
ALWI void lt_int_tile_init() {
  static_assert(emu::detail::is_sfpu_int_format(data_format),
                "lt_int_tile_init: data_format must be Int32, UInt32 or UInt16");
}

template <DataFormat data_format>
ALWI void gt_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) {
  static_assert(emu::detail::is_sfpu_int_format(data_format),
                "gt_int_tile: data_format must be Int32, UInt32 or UInt16");
  emu::k::sfpu_int_binary(emu::k::IntBinary::Gt, emu::detail::format_id(data_format), idst0, idst1, odst, loc);
}
template <DataFormat data_format>
ALWI void gt_int_tile_init() {
  static_assert(emu::detail::is_sfpu_int_format(data_format),
                "gt_int_tile_init: data_format must be Int32, UInt32 or UInt16");
}

template <DataFormat data_format>
ALWI void le_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) {
  static_assert(emu::detail::is_sfpu_int_format(data_format),
                "le_int_tile: data_format must be Int32, UInt32 or UInt16");
  emu::k::sfpu_int_binary(emu::k::IntBinary::Le, emu::detail::format_id(data_format), idst0, idst1, odst, loc);
}
template <DataFormat data_format>
ALWI void le_int_tile_init() {
  static_assert(emu::detail::is_sfpu_int_format(data_format),
                "le_int_tile_init: data_format must be Int32, UInt32 or UInt16");
}

template <DataFormat data_format>
ALWI void ge_int_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) {
  static_assert(emu::detail::is_sfpu_int_format(data_format),
                "ge_int_tile: data_format must be Int32, UInt32 or UInt16");
  emu::k::sfpu_int_binary(emu::k::IntBinary::Ge, emu::detail::format_id(data_format), idst0, idst1, odst, loc);
}
template <DataFormat data_format>
ALWI void ge_int_tile_init() {
  static_assert(emu::detail::is_sfpu_int_format(data_format),
                "ge_int_tile_init: data_format must be Int32, UInt32 or UInt16");
}

}  // namespace ckernel
