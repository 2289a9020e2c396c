// tt-metal 0.81.1 api/compute/softmax.h: the exp and reciprocal calls softmax kernels use, nothing of its own.
#pragma once

#include "api/compute/eltwise_unary/exp.h"
#include "api/compute/eltwise_unary/recip.h"
