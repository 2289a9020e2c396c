// SFPU ops of tt-metal api/compute/eltwise_unary/log1p.h.
#pragma once

#include "api/emu/sfpu.h"

TT_EMU_SFPU_UNARY(log1p, Log1p)
