// tt-metal 0.81.1 llk_api/llk_sfpu/ckernel_sfpu_copy_dest_values.h, which ttnn's kernel_lib includes on the math
// TRISC (kernel_lib/eltwise/unary/misc.inl, under TRISC_MATH) for api/compute/copy_dest_values.h. The emulator's
// copy_dest_values.h stops a kernel that calls it and needs nothing from here.
#pragma once
