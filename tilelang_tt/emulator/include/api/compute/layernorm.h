// tt-metal 0.81.1 api/compute/layernorm.h: the compute API and rsqrt calls layernorm kernels use, nothing of its own.
#pragma once

#include "api/compute/compute_kernel_api.h"
#include "api/compute/eltwise_unary/rsqrt.h"
