// tt-metal 0.81.1 llk_api/llk_sfpu/llk_math_eltwise_binary_sfpu_macros.h, which ttnn's kernel_lib includes on the
// math TRISC (kernel_lib/eltwise/unary/misc.inl, under TRISC_MATH) for api/compute/copy_dest_values.h. The
// emulator's binary SFPU ops are its compute API's (api/compute/eltwise_binary_sfpu.h) and take nothing from here.
#pragma once
