// tt-metal api/compute/eltwise_unary/eltwise_unary.h (deprecated one-call inits).
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"

namespace ckernel {
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void unary_op_init_common(uint32_t icb, uint32_t ocb, uint32_t = __builtin_LINE(), Loc loc = Loc::current()) {
  compute_kernel_hw_startup(icb, ocb, loc);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void init_sfpu(uint32_t icb, uint32_t ocb, uint32_t = __builtin_LINE(), Loc loc = Loc::current()) {
  compute_kernel_hw_startup(icb, ocb, loc);
}
}  // namespace ckernel
