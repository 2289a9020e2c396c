// tt-metal 0.81.1 hw/inc/internal/mod_div_lib.h: integer helpers of the RISC-V kernels. Here mulsi3, the
// product ttnn's matmul compute kernel takes (bmm_large_block_zm_fused_bias_activation.cpp); not the
// fast_udiv_* divisions by constants.
#pragma once

#include <cstdint>

inline __attribute__((always_inline)) unsigned int mulsi3(unsigned int a, unsigned int b) { return a * b; }
