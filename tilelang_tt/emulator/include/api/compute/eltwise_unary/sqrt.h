// SFPU ops of tt-metal api/compute/eltwise_unary/sqrt.h.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {
ALWI void sqrt_tile_init() {}
// The kernel's APPROX picks tt-llk's 10-bit algorithm over the 23-bit one, FAST_APPROX drops the edge handling
// (ckernel_sfpu_sqrt.h; compute.cpp, sqrt_body).
template <bool FAST_APPROX = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sqrt_tile(uint32_t idst, Loc loc = Loc::current()) {
  using emu::k::Unary;
  constexpr Unary op = APPROX ? (FAST_APPROX ? Unary::SqrtApproxFast : Unary::SqrtApprox)
                              : (FAST_APPROX ? Unary::SqrtFast : Unary::Sqrt);
  emu::k::sfpu_unary(op, idst, loc);
}
}  // namespace ckernel
