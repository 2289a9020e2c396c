// What tt-metal's JIT build generates per kernel as chlkc_descriptors.h: the data format of every
// circular buffer of the program, known when the kernel compiles, so that get_dataformat and
// get_tile_size (and DataflowBuffer's) are constant expressions a kernel may use as template
// arguments. The emulator's build passes the table as -DTT_EMU_CB_FORMATS=f0,f1,... (kernel-side
// DataFormat ids by CB index, 255 for none). Evaluated at run time, the calls read the CB's format
// from the device model and, with a table, check that it is the one the kernel was built with.
// Without a table they are not constexpr (TT_EMU_CB_CONSTEXPR): they work at run time only, and a
// constant-expression use does not compile.
#pragma once

#include <cstdint>
#include <type_traits>

#include "api/emu/kernel_common.h"

#ifdef TT_EMU_CB_FORMATS
#define TT_EMU_CB_CONSTEXPR constexpr
namespace emu::detail {
inline constexpr uint8_t cb_formats[] = {TT_EMU_CB_FORMATS};
}
#else
#define TT_EMU_CB_CONSTEXPR
#endif

namespace emu::detail {

// Bytes of one 32x32 tile in a kernel-side format (runtime/formats.cpp's tile_size_bytes; block
// float: 64 shared exponents plus the datums).
constexpr uint32_t kernel_tile_bytes(::DataFormat f) {
  switch (f) {
    case ::DataFormat::Float32: case ::DataFormat::Int32: case ::DataFormat::UInt32: return 4096;
    case ::DataFormat::Float16: case ::DataFormat::Float16_b: case ::DataFormat::UInt16: return 2048;
    case ::DataFormat::Bfp8: case ::DataFormat::Bfp8_b: return 1088;
    case ::DataFormat::Bfp4_b: return 576;
    case ::DataFormat::UInt8: return 1024;
    default: break;  // formats the device model does not hold
  }
  return 0;
}

TT_EMU_CB_CONSTEXPR inline ::DataFormat cb_dataformat(uint32_t cb, emu::k::Loc loc) {
#ifdef TT_EMU_CB_FORMATS
  if (std::is_constant_evaluated()) {
    if (cb < sizeof(cb_formats) && cb_formats[cb] != 0xff) return static_cast<::DataFormat>(cb_formats[cb]);
    throw "the kernel's build describes no format for this circular buffer (TT_EMU_CB_FORMATS)";
  }
#endif
  const ::DataFormat actual = kernel_format(emu::k::cb_format(cb, loc));
#ifdef TT_EMU_CB_FORMATS
  const uint32_t built = cb < sizeof(cb_formats) ? cb_formats[cb] : 0xff;
  if (built != static_cast<uint32_t>(actual))
    emu::k::api_errorf(loc, "CB %u: the kernel was built for data format %u (TT_EMU_CB_FORMATS), the program "
                            "configures %u", cb, built, static_cast<uint32_t>(actual));
#endif
  return actual;
}

}  // namespace emu::detail

// The per-CB tables of tt-metal's chlkc_descriptors.h (tt_metal/jit_build/genfiles.cpp
// generate_all_descriptors), which compute kernels and, through ttnn's kernel_lib
// (dfb_helpers_dataflow.inl get_tile_r_dim), data movement kernels read: per CB index the L1 data
// format the unpacker reads and the packer writes (unpack_src_format, pack_dst_format: the CB's format,
// DataFormat::Invalid = 255 for an index without a CB) and the tile dimensions (32 x 32 of four 16 x 16 faces:
// the emulator's only tile).
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
// The format the unpacker writes to the source registers, here the CB's too (ASSUMPTION: tt-metal derives it
// from the CB's format and fp32_dest_acc_en, one to one; kernels compare two CBs' entries: ttnn's SDPA
// compute_streaming.hpp sdpa_unpack_format_changed).
constexpr emu::detail::CbFormatTable<std::int32_t> unpack_dst_format{};
constexpr emu::detail::CbFormatTable<unsigned char> pack_dst_format{};
constexpr emu::detail::CbDimTable<std::uint8_t> unpack_tile_face_r_dim{16};
constexpr emu::detail::CbDimTable<std::uint8_t> unpack_tile_num_faces{4};
constexpr emu::detail::CbDimTable<std::uint8_t> unpack_tile_r_dim{32};
constexpr emu::detail::CbDimTable<std::uint8_t> unpack_tile_c_dim{32};
constexpr emu::detail::CbDimTable<std::uint8_t> pack_tile_r_dim{32};
constexpr emu::detail::CbDimTable<std::uint8_t> pack_tile_c_dim{32};
#endif
