// Pieces shared by the dataflow and compute kernel APIs: data formats and runtime args. The
// circular-buffer calls differ between the two (tt-metal api/compute/cb_api.h takes uint32_t,
// api/dataflow/dataflow_api.h int32_t), so each API header declares its own.
#pragma once

#include <bit>
#include <cstdint>

#include "api/compile_time_args.h"
#include "hostdevcommon/kernel_structs.h"
#include "internal/risc_attribs.h"  // tt_l1_ptr
#include "internal/tt-1xx/cache.h"  // invalidate_l1_cache: risc_common.h there
#include "kernel_api.hpp"

// Kernel-side data format ids (tt-metal tensix_types.h values).
enum class DataFormat : std::uint8_t {
  Float32 = 0,
  Float16 = 1,
  Bfp8 = 2,
  Bfp4 = 3,
  Bfp2 = 11,
  Float16_b = 5,
  Bfp8_b = 6,
  Bfp4_b = 7,
  Bfp2_b = 15,
  Lf8 = 10,
  Int8 = 14,
  UInt8 = 30,
  UInt16 = 9,
  Int32 = 8,
  UInt32 = 24,
  Tf32 = 4,
  Invalid = 0xff
};

namespace emu::detail {
constexpr ::DataFormat kernel_format(emu::DataFormat f) {
  switch (f) {
    case emu::DataFormat::Float32: return ::DataFormat::Float32;
    case emu::DataFormat::Float16_b: return ::DataFormat::Float16_b;
    case emu::DataFormat::Bfp8_b: return ::DataFormat::Bfp8_b;
    case emu::DataFormat::Bfp4_b: return ::DataFormat::Bfp4_b;
    case emu::DataFormat::UInt32: return ::DataFormat::UInt32;
    case emu::DataFormat::Int32: return ::DataFormat::Int32;
    case emu::DataFormat::UInt16: return ::DataFormat::UInt16;
    case emu::DataFormat::UInt8: return ::DataFormat::UInt8;
  }
  return ::DataFormat::Invalid;
}
}  // namespace emu::detail

// The kernel's NOC: tt-metal 0.81.1 internal/dataflow/dataflow_api_common.h:10, NOC_INDEX from its build
// (device_types.hpp).
constexpr std::uint8_t noc_index = NOC_INDEX;

// The core's own NOC coordinates, my_x[noc] / my_y[noc] (tt-metal: the firmware's uint8_t arrays, set at
// boot, risc_common.h); here an object indexed the same way that asks the device model for the calling
// kernel's core (the same on both NOCs: device.cpp, my_noc_coord).
namespace emu::detail {
template <bool y>
struct MyNocCoord {
  std::uint8_t operator[](std::uint32_t noc) const {
    const emu::k::Loc loc = emu::k::Loc::current();
    return static_cast<std::uint8_t>(y ? emu::k::my_noc_y(noc, loc) : emu::k::my_noc_x(noc, loc));
  }
};
}  // namespace emu::detail
inline constexpr emu::detail::MyNocCoord<false> my_x{};
inline constexpr emu::detail::MyNocCoord<true> my_y{};

template <typename T>
FORCE_INLINE T get_arg_val(int arg_idx, emu::k::Loc loc = emu::k::Loc::current()) {
  static_assert(sizeof(T) == 4, "only 4-byte runtime args are supported");
  return std::bit_cast<T>(emu::k::arg(static_cast<uint32_t>(arg_idx), false, loc));
}

template <typename T>
FORCE_INLINE T get_common_arg_val(int arg_idx, emu::k::Loc loc = emu::k::Loc::current()) {
  static_assert(sizeof(T) == 4, "only 4-byte runtime args are supported");
  return std::bit_cast<T>(emu::k::arg(static_cast<uint32_t>(arg_idx), true, loc));
}
