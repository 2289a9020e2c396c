// Data format reconfiguration (tt-metal api/compute/reconfig_data_format.h): the formats unpacker A (SrcA),
// unpacker B (SrcB) and the packer read and write, from a CB's (runtime/engine_formats.cpp). The (old, new) overloads
// reprogram only where the new CB's formats differ from the old one's; the two-source ones take (in0, in1) and map
// them as src_order says.
#pragma once

#include "api/compute/common.h"

namespace ckernel {

template <SrcOrder src_order = SrcOrder::Regular>
ALWI void reconfig_data_format(const uint32_t icb0_new_operand, const uint32_t icb1_new_operand,
                               Loc loc = Loc::current()) {
  constexpr bool reverse = src_order == SrcOrder::Reverse;
  emu::k::reconfig_source(false, -1, reverse ? icb1_new_operand : icb0_new_operand, "reconfig_data_format", loc);
  emu::k::reconfig_source(true, -1, reverse ? icb0_new_operand : icb1_new_operand, "reconfig_data_format", loc);
}
template <SrcOrder src_order = SrcOrder::Regular>
ALWI void reconfig_data_format(const uint32_t icb0_old_operand, const uint32_t icb0_new_operand,
                               const uint32_t icb1_old_operand, const uint32_t icb1_new_operand,
                               Loc loc = Loc::current()) {
  constexpr bool reverse = src_order == SrcOrder::Reverse;
  emu::k::reconfig_source(false, static_cast<int>(reverse ? icb1_old_operand : icb0_old_operand),
                          reverse ? icb1_new_operand : icb0_new_operand, "reconfig_data_format", loc);
  emu::k::reconfig_source(true, static_cast<int>(reverse ? icb0_old_operand : icb1_old_operand),
                          reverse ? icb0_new_operand : icb1_new_operand, "reconfig_data_format", loc);
}
ALWI void reconfig_data_format_srca(const uint32_t srca_new_operand, Loc loc = Loc::current()) {
  emu::k::reconfig_source(false, -1, srca_new_operand, "reconfig_data_format_srca", loc);
}
ALWI void reconfig_data_format_srca(const uint32_t srca_old_operand, const uint32_t srca_new_operand,
                                   Loc loc = Loc::current()) {
  emu::k::reconfig_source(false, static_cast<int>(srca_old_operand), srca_new_operand, "reconfig_data_format_srca",
                          loc);
}
ALWI void reconfig_data_format_srcb(const uint32_t srcb_new_operand, Loc loc = Loc::current()) {
  emu::k::reconfig_source(true, -1, srcb_new_operand, "reconfig_data_format_srcb", loc);
}
ALWI void reconfig_data_format_srcb(const uint32_t srcb_old_operand, const uint32_t srcb_new_operand,
                                   Loc loc = Loc::current()) {
  emu::k::reconfig_source(true, static_cast<int>(srcb_old_operand), srcb_new_operand, "reconfig_data_format_srcb",
                          loc);
}
template <bool is_tile_dim_reconfig_en = false>
ALWI void pack_reconfig_data_format(const uint32_t new_cb_id, Loc loc = Loc::current()) {
  emu::k::reconfig_pack(-1, new_cb_id, "pack_reconfig_data_format", loc);
}
template <bool is_tile_dim_reconfig_en = false>
ALWI void pack_reconfig_data_format(const uint32_t old_cb_id, const uint32_t new_cb_id, Loc loc = Loc::current()) {
  emu::k::reconfig_pack(static_cast<int>(old_cb_id), new_cb_id, "pack_reconfig_data_format", loc);
}

}  // namespace ckernel
