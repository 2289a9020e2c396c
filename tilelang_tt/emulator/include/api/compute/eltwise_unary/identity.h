// SFPU ops of tt-metal api/compute/eltwise_unary/identity.h.
#pragma once

#include "api/emu/sfpu.h"

TT_EMU_SFPU_UNARY(identity, Identity)
