// tt-metal 0.81.1 api/compute/common_globals.h: ALWI and the MATH / PACK / UNPACK wrappers, which the
// emulator's compute API defines in api/compute/common.h (one thread runs all three).
#pragma once

#include "api/compute/common.h"
