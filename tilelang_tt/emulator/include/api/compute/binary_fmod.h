// SFPU float fmod of two DST tiles (tt-metal api/compute/binary_fmod.h):
// DST[odst] = fmod(DST[idst0], DST[idst1]), the sign of the dividend.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {
ALWI void fmod_binary_tile_init() {}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void fmod_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) {
  emu::k::sfpu_binary(emu::k::SfpuBinary::Fmod, idst0, idst1, odst, loc);
}
}  // namespace ckernel
