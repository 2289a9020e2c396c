// SFPU binary ops on DST tiles (tt-metal api/compute/eltwise_binary_sfpu.h):
// DST[odst] = DST[idst0] op DST[idst1].
#pragma once

#include "api/emu/sfpu.h"

TT_EMU_SFPU_BINARY(add_binary, Add)
TT_EMU_SFPU_BINARY(sub_binary, Sub)
TT_EMU_SFPU_BINARY(mul_binary, Mul)
TT_EMU_SFPU_BINARY(div_binary, Div)
TT_EMU_SFPU_BINARY(rsub_binary, Rsub)
TT_EMU_SFPU_BINARY(power_binary, Pow)
