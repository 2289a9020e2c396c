// The one piece of tt-llk's ckernel.h (common/inc/ckernel.h) a data movement kernel reaches on the
// emulator: load_blocking, the load that waits for the core's earlier stores to land (ttnn's
// pad_tile.hpp drains its padding stores with it). The emulator's stores land at once: a plain load.
#pragma once

#include <cstdint>
#include <type_traits>

namespace ckernel {

template <typename T, typename = std::enable_if_t<std::is_trivially_copyable_v<T>>>
inline T load_blocking(volatile T* ptr) {
  static_assert(sizeof(T) == sizeof(std::uint16_t) || sizeof(T) == sizeof(std::uint32_t),
                "load_blocking: operand must be 16-bit or 32-bit");
  return *ptr;
}

}  // namespace ckernel
