// SFPU ops of tt-metal api/compute/eltwise_unary/rsqrt.h.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {

// Fast drops the edge handling (zero, infinity, negative inputs); the kernel's APPROX picks the algorithm, as
// for sqrt_tile (ckernel_sfpu_rsqrt.h; compute.cpp, sqrt_body).
enum class RsqrtMode { Default, Fast };

ALWI void rsqrt_tile_init() {}
template <RsqrtMode mode = RsqrtMode::Default, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void rsqrt_tile(uint32_t idst, Loc loc = Loc::current()) {
  using emu::k::Unary;
  constexpr bool fast = mode == RsqrtMode::Fast;
  constexpr Unary op = APPROX ? (fast ? Unary::RsqrtApproxFast : Unary::RsqrtApprox)
                              : (fast ? Unary::RsqrtFast : Unary::Rsqrt);
  emu::k::sfpu_unary(op, idst, loc);
}

}  // namespace ckernel
