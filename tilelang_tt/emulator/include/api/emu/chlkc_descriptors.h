// What tt-metal's JIT build writes into a compute kernel's chlkc_descriptors.h (tt_metal/jit_build/
// genfiles.cpp, generate_all_descriptors): the per-CB tables (api/emu/cb_descriptors.h) and the scalars
// DST_ACCUM_MODE (ComputeConfig::fp32_dest_acc_en), DST_SYNC_MODE (dst_full_sync_en) and MATH_FIDELITY. The
// build gives them as -DTT_EMU_CB_FORMATS (cb_descriptors.h), -DTT_EMU_DST_ACCUM_MODE=0|1,
// -DTT_EMU_DST_FULL_SYNC=0|1 and -DTT_EMU_MATH_FIDELITY=0|2|3|4 (runtime/jit.cpp from the program; the driver
// gives its own compute kernels DST_ACCUM_MODE from the plan, driver.py _compute_defines); without them
// DST_ACCUM_MODE is false and there are no tables (the driver's own kernels use none: the device model reads
// the options at run time either way). The register-side formats (unpack_dst_format, pack_src_format) are not here.
//
// tt-metal compiles a compute kernel once per TRISC, each seeing its part of these (UCK_CHLKC_UNPACK,
// _MATH, _PACK; COMPILE_FOR_TRISC=0/1/2: tt_metal/jit_build/build.cpp JitBuildCompute); the emulator
// compiles it once for all three, with every table: runtime/jit.cpp builds a kernel file's compute
// kernel as the math TRISC's (-DCOMPILE_FOR_TRISC=1 -DUCK_CHLKC_MATH, which ttnn's kernel_lib tests to
// find DST_ACCUM_MODE).
#pragma once

#include <cstdint>

#include "api/emu/cb_descriptors.h"
#include "llk_defs.h"

#ifdef TT_EMU_DST_ACCUM_MODE
constexpr bool DST_ACCUM_MODE = TT_EMU_DST_ACCUM_MODE;
#else
constexpr bool DST_ACCUM_MODE = false;
#endif

#ifdef TT_EMU_MATH_FIDELITY  // ComputeConfig::math_fidelity (the math TRISC's descriptor)
constexpr ckernel::MathFidelity MATH_FIDELITY = static_cast<ckernel::MathFidelity>(TT_EMU_MATH_FIDELITY);
#endif

#ifdef TT_EMU_DST_FULL_SYNC
#define DST_SYNC_MODE (TT_EMU_DST_FULL_SYNC ? DstSync::SyncFull : DstSync::SyncHalf)
#endif
