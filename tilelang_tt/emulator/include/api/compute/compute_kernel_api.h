// SFPU ops declared in tt-metal api/compute/compute_kernel_api.h.
#pragma once

#include "api/emu/sfpu.h"

TT_EMU_SFPU_UNARY(sigmoid, Sigmoid)
TT_EMU_SFPU_UNARY(silu, Silu)
TT_EMU_SFPU_UNARY(tanh, Tanh)
TT_EMU_SFPU_UNARY(square, Square)
TT_EMU_SFPU_UNARY(log, Log)
TT_EMU_SFPU_UNARY(abs, Abs)
TT_EMU_SFPU_UNARY(sign, Sign)
TT_EMU_SFPU_UNARY(exp2, Exp2)
TT_EMU_SFPU_UNARY(expm1, Expm1)

namespace ckernel {
// log(x) * base_scale: base_scale is the bits of the fp32 1/ln(base) (0x3fb8aa3b: log2).
template <auto...>
ALWI void log_with_base_tile_init() {}
template <auto...>
ALWI void log_with_base_tile(uint32_t idst, uint32_t base_scale, Loc loc = Loc::current()) {
  emu::k::sfpu_scalar(emu::k::SfpuBinary::LogBase, idst, std::bit_cast<float>(base_scale), loc);
}
// x ^ exponent, the exponent given as fp32 bits; 0 ^ (negative) is NaN.
ALWI void power_tile_init() {}
template <auto...>
ALWI void power_tile(uint32_t idst, uint32_t param0, Loc loc = Loc::current()) {
  emu::k::sfpu_scalar(emu::k::SfpuBinary::Pow, idst, std::bit_cast<float>(param0), loc);
}
}  // namespace ckernel
