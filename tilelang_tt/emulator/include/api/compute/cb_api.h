// Circular buffer calls of the compute kernel (tt-metal api/compute/cb_api.h).
#pragma once

#include "api/compute/common.h"
