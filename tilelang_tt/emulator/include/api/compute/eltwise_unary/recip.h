// SFPU ops of tt-metal api/compute/eltwise_unary/recip.h.
#pragma once

#include "api/emu/sfpu.h"

TT_EMU_SFPU_UNARY(recip, Recip)
