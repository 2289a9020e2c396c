// A call the emulator declares (as the real header of its path does) but does not model: it stops the kernel,
// naming the call and its line.
#pragma once

#include "api/compute/common.h"  // emu::k (through the compute API, which every includer declares)

namespace emu::detail {
[[noreturn]] inline void llk_not_emulated(const char* call, emu::k::Loc loc) {
  emu::k::api_errorf(loc, "%s: the emulator models the compute API, not this LLK call", call);
}
}  // namespace emu::detail
