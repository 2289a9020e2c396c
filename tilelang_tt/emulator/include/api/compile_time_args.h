// Compile-time kernel arguments: the driver passes -DKERNEL_COMPILE_TIME_ARGS=a,b,c.
#pragma once

#include <array>
#include <cstdint>

#ifndef KERNEL_COMPILE_TIME_ARGS
#define KERNEL_COMPILE_TIME_ARGS
#endif

namespace emu::detail {
template <class... Ts>
constexpr std::array<uint32_t, sizeof...(Ts)> ct_args(Ts... values) {
  return {static_cast<uint32_t>(values)...};
}
}  // namespace emu::detail

constexpr auto kernel_compile_time_args = emu::detail::ct_args(KERNEL_COMPILE_TIME_ARGS);

template <uint32_t Idx>
constexpr uint32_t get_ct_arg() {
  static_assert(Idx < kernel_compile_time_args.size(), "compile-time arg index out of range");
  return kernel_compile_time_args[Idx];
}

#define get_compile_time_arg_val(arg_idx) get_ct_arg<arg_idx>()
