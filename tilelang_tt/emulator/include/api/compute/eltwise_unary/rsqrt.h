// SFPU ops of tt-metal api/compute/eltwise_unary/rsqrt.h.
#pragma once

#include "api/emu/sfpu.h"

TT_EMU_SFPU_UNARY(rsqrt, Rsqrt)
