// tt-metal 0.81.1 api/debug/dprint.h as a kernel built without DEBUG_PRINT_ENABLED sees it (the
// default: the device's print server is off): DPRINT and its per-RISC forms accept a stream of
// values and print nothing.
#pragma once

namespace emu::detail {
struct NoPrint {
  template <typename T>
  constexpr const NoPrint& operator<<(const T&) const { return *this; }
};
}  // namespace emu::detail

#define DPRINT ::emu::detail::NoPrint()
#define DPRINT_DATA0(x)
#define DPRINT_DATA1(x)
#define DPRINT_MATH(x)
#define DPRINT_PACK(x)
#define DPRINT_UNPACK(x)
#define ENDL() '\n'
