// Metal 2.0 named kernel arguments (tt-metal 0.81.1 experimental/kernel_args.h): a kernel reads
// `get_arg(args::name)`, where `args::name` is an accessor the JIT's generated kernel_args_generated.h
// declares (runtime/jit.cpp writes it as tt-metal's jit_build/genfiles.cpp does):
//   RtaArg<T>{byte offset}   a runtime arg: the word at that offset of the core's runtime args;
//   CrtaArg<T>{byte offset}  a common runtime arg, likewise;
//   CtaVal<T>{value}         a compile-time arg: the value itself (constexpr).
// Only 32-bit args, as in 0.81.1. Reading an RTA past the args the host set is the runtime args' error.
#pragma once

#include <cstdint>

#ifdef COMPILE_FOR_TRISC
#include "api/compute/common.h"
#endif

// TT_KERNEL marks a named-argument entry point (the JIT generates kernel_main() from its signature);
// the emulator builds kernels that define kernel_main() themselves and refuses this form when used.
#define TT_KERNEL static FORCE_INLINE

namespace experimental {

template <typename T>
struct RtaArg {
  uint32_t byte_offset;
};

template <typename T>
struct CrtaArg {
  uint32_t byte_offset;
};

template <typename T>
struct CtaVal {
  T value;
};

template <typename T>
FORCE_INLINE T get_arg(RtaArg<T> arg, emu::k::Loc loc = emu::k::Loc::current()) {
  static_assert(sizeof(T) == 4, "Only uint32_t args are currently supported.");
  return *reinterpret_cast<const T*>(get_arg_addr(static_cast<int>(arg.byte_offset / sizeof(uint32_t)), loc));
}

template <typename T>
FORCE_INLINE T get_arg(CrtaArg<T> arg, emu::k::Loc loc = emu::k::Loc::current()) {
  static_assert(sizeof(T) == 4, "Only uint32_t args are currently supported.");
  return *reinterpret_cast<const T*>(get_common_arg_addr(static_cast<int>(arg.byte_offset / sizeof(uint32_t)), loc));
}

template <typename T>
constexpr T get_arg(CtaVal<T> arg) {
  return arg.value;
}

}  // namespace experimental
