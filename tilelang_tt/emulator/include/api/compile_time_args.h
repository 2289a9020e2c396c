// Compile-time kernel arguments: the driver passes -DKERNEL_COMPILE_TIME_ARGS=a,b,c, and named ones
// (CreateKernel's named_compile_args) as -DKERNEL_COMPILE_TIME_ARG_MAP={"name",value},... as tt-metal's
// JIT build does (api/compile_time_args.h). Only a kernel built with named args reaches <string_view>.
#pragma once

#include <cstdint>
#ifdef KERNEL_COMPILE_TIME_ARG_MAP
#include <string_view>
#include <utility>
#endif

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

#ifdef KERNEL_COMPILE_TIME_ARG_MAP
namespace {
constexpr std::pair<std::string_view, uint32_t> named_args_map[] = {KERNEL_COMPILE_TIME_ARG_MAP};
}

// tt-metal reaches __builtin_unreachable for a name the map lacks; here the constant evaluation
// fails on the throw, so the kernel does not compile and the error names this line.
constexpr uint32_t get_named_ct_arg(std::string_view name) {
  for (const auto& [arg_name, arg_value] : named_args_map) {
    if (name == arg_name) return arg_value;
  }
  throw "get_named_compile_time_arg_val: the kernel has no named compile-time arg of this name";
}

constexpr uint32_t get_named_compile_time_arg_val(std::string_view name) { return get_named_ct_arg(name); }
#endif
