// Tile-scalar ops of tt-metal api/compute/eltwise_unary/binop_with_scalar.h.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {
ALWI void binop_with_scalar_tile_init() {}
}  // namespace ckernel

TT_EMU_SFPU_SCALAR(add_unary, Add)
TT_EMU_SFPU_SCALAR(sub_unary, Sub)
TT_EMU_SFPU_SCALAR(mul_unary, Mul)
TT_EMU_SFPU_SCALAR(div_unary, Div)
TT_EMU_SFPU_SCALAR(rsub_unary, Rsub)
