// tt-metal 0.81.1 api/compute/experimental/fast_untilize.h: the unpacker's fast untilize. ttnn's
// kernel_lib selects it on Blackhole only (untilize_helpers.inl can_use_fast_untilize: false unless
// ARCH_BLACKHOLE); the emulated Wormhole kernels never call it. The declarations are the header's; a
// kernel that instantiates one does not compile.
#pragma once

#include <cstdint>

#include "api/compute/common.h"

namespace ckernel {

namespace fast_untilize_detail {
template <std::uint32_t>
inline constexpr bool emulated = false;
}  // namespace fast_untilize_detail

template <std::uint32_t full_ct_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void fast_untilize_init(uint32_t /*icb*/, uint32_t /*ocb*/, uint32_t /*call_line*/ = __builtin_LINE()) {
  static_assert(fast_untilize_detail::emulated<full_ct_dim>, "fast_untilize (Blackhole's) is not emulated");
}

template <std::uint32_t full_ct_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void fast_untilize_init_skip_remap(uint32_t /*icb*/, uint32_t /*ocb*/, uint32_t /*call_line*/ = __builtin_LINE()) {
  static_assert(fast_untilize_detail::emulated<full_ct_dim>, "fast_untilize (Blackhole's) is not emulated");
}

template <std::uint32_t full_ct_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void fast_untilize_block(uint32_t /*icb*/, uint32_t /*ocb*/, uint32_t /*input_tile_index*/ = 0,
                              uint32_t /*output_tile_index*/ = 0) {
  static_assert(fast_untilize_detail::emulated<full_ct_dim>, "fast_untilize (Blackhole's) is not emulated");
}

template <std::uint32_t full_ct_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void fast_untilize_uninit(uint32_t /*ocb*/) {
  static_assert(fast_untilize_detail::emulated<full_ct_dim>, "fast_untilize (Blackhole's) is not emulated");
}

}  // namespace ckernel
