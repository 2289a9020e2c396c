// SFPU ops of tt-metal api/compute/eltwise_unary/rsqrt.h.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {

// The approximation rsqrt_tile uses (the emulator's 1 / sqrt(x) is exact).
enum class RsqrtMode { Default, Fast };

ALWI void rsqrt_tile_init() {}
template <RsqrtMode mode = RsqrtMode::Default, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void rsqrt_tile(uint32_t idst, Loc loc = Loc::current()) {
  emu::k::sfpu_unary(emu::k::Unary::Rsqrt, idst, loc);
}

}  // namespace ckernel
