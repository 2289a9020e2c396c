// tt-metal api/compute/eltwise_unary/eltwise_unary.h: the one-call inits, deprecated there (a
// warning, as there) in favour of compute_kernel_hw_startup(icb, ocb) then copy_init(icb).
#pragma once

#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"

namespace ckernel {
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
[[deprecated(
    "Use compute_kernel_hw_startup(icb, ocb) once at kernel start, then copy_init(icb). This will be removed after "
    "20-09-2026.")]]
ALWI void unary_op_init_common(uint32_t icb, uint32_t ocb, uint32_t call_line = __builtin_LINE(),
                               Loc loc = Loc::current()) {
  compute_kernel_hw_startup(icb, ocb, loc);
  copy_init<is_fp32_dest_acc_en>(icb, 0, 0, call_line);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
[[deprecated(
    "Use compute_kernel_hw_startup(icb, ocb) once at kernel start, then copy_init(icb). This will be removed after "
    "20-09-2026.")]]
ALWI void init_sfpu(uint32_t icb, uint32_t ocb, uint32_t call_line = __builtin_LINE(), Loc loc = Loc::current()) {
  compute_kernel_hw_startup(icb, ocb, loc);
  copy_init<is_fp32_dest_acc_en>(icb, 0, 0, call_line);
}
}  // namespace ckernel
