// tt-metal 0.81.1 api/compute/eltwise_unary/cbrt.h: cbrt_tile, the cube root. Declared for ttnn's kernel_lib
// (eltwise/unary/math.inl, Cbrt); not emulated: a kernel that calls it stops, naming the call.
#pragma once

#include "api/compute/common.h"
#include "api/emu/not_emulated.h"

namespace ckernel {
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void cbrt_tile(uint32_t /*idst*/, Loc loc = Loc::current()) { emu::detail::llk_not_emulated("cbrt_tile", loc); }
ALWI void cbrt_tile_init(Loc loc = Loc::current()) { emu::detail::llk_not_emulated("cbrt_tile_init", loc); }
}  // namespace ckernel
