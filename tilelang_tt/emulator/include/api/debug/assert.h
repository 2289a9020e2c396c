// tt-metal 0.81.1 api/debug/assert.h: ASSERT(condition[, type]). On the device it does something only
// with the watcher on (WATCHER_ENABLED: the core hangs and the host reports the kernel's line); the
// emulator always checks it, as a debugging run with the watcher would, and stops naming the line.
#pragma once

#include "kernel_api.hpp"  // emu::k::api_errorf, Loc

#define ASSERT(condition, ...)                                                                        \
  do {                                                                                                \
    if (!(condition)) emu::k::api_errorf(emu::k::Loc::current(), "ASSERT(%s) failed", #condition);    \
  } while (0)
