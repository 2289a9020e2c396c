// Full 32x32 tile transpose CB -> DST (tt-metal api/compute/transpose.h).
#pragma once

#include "api/compute/common.h"

namespace ckernel {

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void transpose_init(uint32_t, uint32_t = __builtin_LINE()) {}

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void transpose_tile(uint32_t icb, uint32_t itile, uint32_t idst, Loc loc = Loc::current()) {
  emu::k::transpose_tile(icb, itile, idst, loc);
}

}  // namespace ckernel
