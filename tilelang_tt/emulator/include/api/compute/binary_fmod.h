// SFPU float fmod of two DST tiles (tt-metal api/compute/binary_fmod.h):
// DST[odst] = fmod(DST[idst0], DST[idst1]), the sign of the dividend.
#pragma once

#include "api/emu/sfpu.h"

TT_EMU_SFPU_BINARY(fmod_binary, Fmod)
