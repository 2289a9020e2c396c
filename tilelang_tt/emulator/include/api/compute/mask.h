// tt-metal 0.81.1 api/compute/mask.h: mask_tile (zero where the mask tile is 0) and mask_posinf_tile. Declared
// for ttnn's kernel_lib (eltwise/unary/misc.inl, Mask / MaskPosInf); not emulated: a kernel that calls them
// stops, naming the call.
#pragma once

#include "api/compute/common.h"
#include "api/emu/not_emulated.h"

namespace ckernel {
ALWI void mask_tile_init(Loc loc = Loc::current()) { emu::detail::llk_not_emulated("mask_tile_init", loc); }
ALWI void mask_tile(uint32_t /*idst_data*/, uint32_t /*idst2_mask*/, DataFormat /*data_format*/ = DataFormat::Float16_b,
                    Loc loc = Loc::current()) {
  emu::detail::llk_not_emulated("mask_tile", loc);
}
ALWI void mask_posinf_tile(uint32_t /*idst_data*/, uint32_t /*idst2_mask*/, Loc loc = Loc::current()) {
  emu::detail::llk_not_emulated("mask_posinf_tile", loc);
}
}  // namespace ckernel
