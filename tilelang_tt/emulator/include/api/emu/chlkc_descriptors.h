// What tt-metal's JIT build writes into a compute kernel's chlkc_descriptors.h (tt_metal/jit_build/
// genfiles.cpp, generate_all_descriptors): per CB index the L1 data format the unpacker reads and the
// packer writes (unpack_src_format, pack_dst_format: the CB's format, DataFormat::Invalid = 255 for an
// index without a CB) and the tile dimensions (32 x 32: the emulator's only tile), and the scalars
// DST_ACCUM_MODE (ComputeConfig::fp32_dest_acc_en) and DST_SYNC_MODE (dst_full_sync_en). The build
// gives them as -DTT_EMU_CB_FORMATS (cb_descriptors.h), -DTT_EMU_DST_ACCUM_MODE=0|1 and
// -DTT_EMU_DST_FULL_SYNC=0|1 (runtime/jit.cpp from the program); without them DST_ACCUM_MODE is false
// and there are no tables (the driver's own kernels use none: the device model reads the options at
// run time either way). The register-side formats (unpack_dst_format, pack_src_format) are not here.
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

#ifdef TT_EMU_DST_FULL_SYNC
#define DST_SYNC_MODE (TT_EMU_DST_FULL_SYNC ? DstSync::SyncFull : DstSync::SyncHalf)
#endif

#ifdef TT_EMU_CB_FORMATS

namespace emu::detail {
// The arrays as the kernel indexes them, in constant expressions: the CB's format (255 past the
// described CBs) and the tile dimensions.
template <typename T>
struct CbFormatTable {
  constexpr T operator[](uint32_t cb) const { return static_cast<T>(cb < sizeof(cb_formats) ? cb_formats[cb] : 0xff); }
};
template <typename T>
struct CbDimTable {
  T dim;
  constexpr T operator[](uint32_t) const { return dim; }
};
}  // namespace emu::detail

constexpr emu::detail::CbFormatTable<std::int32_t> unpack_src_format{};
constexpr emu::detail::CbFormatTable<unsigned char> pack_dst_format{};
constexpr emu::detail::CbDimTable<std::uint8_t> unpack_tile_r_dim{32};
constexpr emu::detail::CbDimTable<std::uint8_t> unpack_tile_c_dim{32};
constexpr emu::detail::CbDimTable<std::uint8_t> pack_tile_r_dim{32};
constexpr emu::detail::CbDimTable<std::uint8_t> pack_tile_c_dim{32};
#endif
