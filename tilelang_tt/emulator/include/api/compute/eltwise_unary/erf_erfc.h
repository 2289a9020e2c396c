// SFPU ops of tt-metal api/compute/eltwise_unary/erf_erfc.h.
#pragma once

#include "api/emu/sfpu.h"

TT_EMU_SFPU_UNARY(erf, Erf)
