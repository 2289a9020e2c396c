// The pieces of tt-llk's ckernel.h (common/inc/ckernel.h) kernels reach on the emulator: load_blocking, the
// load that waits for the core's earlier stores to land (ttnn's pad_tile.hpp drains its padding stores with
// it; the emulator's stores land at once: a plain load), and the mailboxes between the core's RISC-Vs
// (ckernel.h:549-558): mailbox_write(thread, data) sends `data` to `thread` (a ckernel_defs.h ThreadId),
// mailbox_read(thread) waits for the next message from `thread` to the caller and returns it
// (runtime/dataflow.cpp says which thread a kernel is).
#pragma once

#include <cstdint>
#include <type_traits>

#include "ckernel_defs.h"
#include "kernel_api.hpp"

namespace ckernel {

template <typename T, typename = std::enable_if_t<std::is_trivially_copyable_v<T>>>
inline T load_blocking(volatile T* ptr) {
  static_assert(sizeof(T) == sizeof(std::uint16_t) || sizeof(T) == sizeof(std::uint32_t),
                "load_blocking: operand must be 16-bit or 32-bit");
  return *ptr;
}

inline void mailbox_write(const std::uint8_t thread, const std::uint32_t data,
                          emu::k::Loc loc = emu::k::Loc::current()) {
  emu::k::mailbox_write(thread, data, loc);
}

[[nodiscard]] inline std::uint32_t mailbox_read(const std::uint8_t thread, emu::k::Loc loc = emu::k::Loc::current()) {
  return emu::k::mailbox_read(thread, loc);
}

}  // namespace ckernel
