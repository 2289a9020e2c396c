// SFPU ops of tt-metal api/compute/eltwise_unary/gelu.h.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {
template <bool fast_and_approx = true, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void gelu_tile_init() {}
// fast_and_approx (the default): tt-metal's lookup-table approximation (compute.cpp, gelu_lut); otherwise the
// exact 0.5 x (1 + erf(x / sqrt 2)) in fp32 (tt-metal's precise form, a piecewise polynomial with a bfloat16 DST
// and a rational erf with an fp32 one, is not modelled).
template <bool fast_and_approx = true, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void gelu_tile(uint32_t idst, Loc loc = Loc::current()) {
  emu::k::sfpu_unary(fast_and_approx ? emu::k::Unary::GeluLut : emu::k::Unary::Gelu, idst, loc);
}
}  // namespace ckernel
