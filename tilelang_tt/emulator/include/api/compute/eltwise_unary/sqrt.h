// SFPU ops of tt-metal api/compute/eltwise_unary/sqrt.h.
#pragma once

#include "api/emu/sfpu.h"

TT_EMU_SFPU_UNARY(sqrt, Sqrt)
