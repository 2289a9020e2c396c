// SFPU ops of tt-metal api/compute/eltwise_unary/erf_erfc.h.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {
template <bool fast_and_approx = true>
ALWI void erf_tile_init() {}
// tt-metal's rational fit; fast_and_approx (the default) divides by a one-step reciprocal (compute.cpp, erf_rational)
template <bool fast_and_approx = true>
ALWI void erf_tile(uint32_t idst, Loc loc = Loc::current()) {
  emu::k::sfpu_unary(fast_and_approx ? emu::k::Unary::ErfFast : emu::k::Unary::Erf, idst, loc);
}
}  // namespace ckernel
