// SFPU ops of tt-metal api/compute/eltwise_unary/erf_erfc.h.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {
template <bool fast_and_approx = true>
ALWI void erf_tile_init() {}
namespace detail {
#ifdef INP_FLOAT32
constexpr bool kErfFp32Lut = true;
#else
constexpr bool kErfFp32Lut = false;
#endif
}  // namespace detail

// tt-metal's bfloat16 rational fit; fast_and_approx (the default) divides by a one-step reciprocal (compute.cpp,
// erf_rational). With INP_FLOAT32 ckernel_sfpu_erf.h evaluates a degree-16 fp32 fit, which is not emulated.
template <bool fast_and_approx = true>
ALWI void erf_tile(uint32_t idst, Loc loc = Loc::current()) {
  static_assert(!detail::kErfFp32Lut || fast_and_approx != fast_and_approx,
                "emulator: erf_tile with INP_FLOAT32 (ckernel_sfpu_erf.h's fp32 ERF_LUT) is not emulated");
  emu::k::sfpu_unary(fast_and_approx ? emu::k::Unary::ErfFast : emu::k::Unary::Erf, idst, loc);
}
}  // namespace ckernel
