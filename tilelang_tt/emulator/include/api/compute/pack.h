// DST -> CB (tt-metal api/compute/pack.h). Packs into the CB's data format; bfloat16 rounds to
// nearest even.
#pragma once

#include "api/compute/common.h"
#include "api/compute/reg_api.h"
#include "llk_sdpa_api.h"  // the LLK calls ttnn's SDPA kernel makes beside these (not emulated)

namespace ckernel {

ALWI void pack_init(std::uint32_t /*ocb*/, std::uint32_t /*call_line*/ = __builtin_LINE()) {}

template <bool out_of_order_output = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_tile(std::uint32_t ifrom_dst, std::uint32_t icb, std::uint32_t output_tile_index = 0,
                    Loc loc = Loc::current()) {
  emu::k::pack_tile(ifrom_dst, icb, out_of_order_output, output_tile_index, loc);
}

ALWI void pack_reconfig_l1_acc(const std::uint32_t l1_acc_en, Loc loc = Loc::current()) {
  emu::k::pack_reconfig_l1_acc(l1_acc_en, loc);
}

// The packer's ReLU (tt-metal 0.81.1 api/compute/pack.h pack_relu_config): none, or ZERO_RELU (pack_tile packs
// max(x, 0)); the threshold modes stop the kernel, naming them.
ALWI void pack_relu_config(const ReluConfig& config, Loc loc = Loc::current()) { emu::detail::pack_relu(config, loc); }

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_block(std::uint32_t ifrom_dst, std::uint32_t icb, std::uint32_t ntiles, Loc loc = Loc::current()) {
  for (std::uint32_t i = 0; i < ntiles; ++i) emu::k::pack_tile(ifrom_dst + i, icb, false, 0, loc);
}

}  // namespace ckernel
