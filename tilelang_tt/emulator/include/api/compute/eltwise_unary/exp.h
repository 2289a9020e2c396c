// SFPU ops of tt-metal api/compute/eltwise_unary/exp.h.
#pragma once

#include "api/emu/sfpu.h"

TT_EMU_SFPU_UNARY(exp, Exp)
