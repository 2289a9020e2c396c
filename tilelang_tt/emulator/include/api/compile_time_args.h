// Compile-time kernel arguments: the driver passes -DKERNEL_COMPILE_TIME_ARGS=a,b,c.
#pragma once

#include <cstdint>

#ifndef KERNEL_COMPILE_TIME_ARGS
#define KERNEL_COMPILE_TIME_ARGS
#endif

namespace emu::detail {
// The arguments as a constant array (std::array without <array>: kernel headers stay light).
template <uint32_t N>
struct CtArgs {
  uint32_t values[N > 0 ? N : 1];
  static constexpr uint32_t size() { return N; }
  constexpr uint32_t operator[](uint32_t i) const { return values[i]; }
};

template <class... Ts>
constexpr CtArgs<sizeof...(Ts)> ct_args(Ts... values) {
  return {{static_cast<uint32_t>(values)...}};
}
}  // namespace emu::detail

constexpr auto kernel_compile_time_args = emu::detail::ct_args(KERNEL_COMPILE_TIME_ARGS);

template <uint32_t Idx>
constexpr uint32_t get_ct_arg() {
  static_assert(Idx < kernel_compile_time_args.size(), "compile-time arg index out of range");
  return kernel_compile_time_args[Idx];
}

#define get_compile_time_arg_val(arg_idx) get_ct_arg<arg_idx>()
