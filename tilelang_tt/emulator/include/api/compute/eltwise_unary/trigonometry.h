// SFPU ops of tt-metal api/compute/eltwise_unary/trigonometry.h.
#pragma once

#include "api/emu/sfpu.h"

TT_EMU_SFPU_UNARY(sin, Sin)
TT_EMU_SFPU_UNARY(cos, Cos)
TT_EMU_SFPU_UNARY(tan, Tan)
