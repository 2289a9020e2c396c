// SFPU binary max/min on DST tiles (tt-metal api/compute/binary_max_min.h).
#pragma once

#include "api/emu/sfpu.h"

TT_EMU_SFPU_BINARY(binary_max, Max)
TT_EMU_SFPU_BINARY(binary_min, Min)
