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
