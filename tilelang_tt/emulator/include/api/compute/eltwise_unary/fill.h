// Fills of tt-metal api/compute/eltwise_unary/fill.h: fill_tile with a float (rounded to bfloat16
// unless fp32_dest_acc_en), fill_tile_bitcast with the float whose bits are param0, fill_tile_int with
// the 32-bit word param0 (an Int32 or UInt32 tile, needs fp32_dest_acc_en; UInt16 is not emulated).
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {
ALWI void fill_tile_init() {}
ALWI void fill_tile(uint32_t idst, float param0, Loc loc = Loc::current()) { emu::k::fill_tile(idst, param0, loc); }
template <DataFormat DATA_FORMAT>
ALWI void fill_tile_int(uint32_t idst, uint32_t param0, Loc loc = Loc::current()) {
  static_assert(emu::detail::is_sfpu_int_format(DATA_FORMAT),
                "fill_tile_int: DATA_FORMAT must be Int32, UInt32 or UInt16");
  emu::k::fill_tile_int(emu::detail::format_id(DATA_FORMAT), idst, param0, loc);
}
ALWI void fill_tile_bitcast(uint32_t idst, uint32_t param0, Loc loc = Loc::current()) {
  emu::k::fill_tile_bitcast(idst, param0, loc);
}
}  // namespace ckernel
