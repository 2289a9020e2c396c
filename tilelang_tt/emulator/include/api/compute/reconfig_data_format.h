// Data format reconfiguration (tt-metal api/compute/reconfig_data_format.h). The emulator
// unpacks and packs every CB in its own format, so these only keep kernels source-compatible.
#pragma once

#include "api/compute/common.h"

namespace ckernel {

template <SrcOrder src_order = SrcOrder::Regular>
ALWI void reconfig_data_format(const uint32_t, const uint32_t) {}
template <SrcOrder src_order = SrcOrder::Regular>
ALWI void reconfig_data_format(const uint32_t, const uint32_t, const uint32_t, const uint32_t) {}
ALWI void reconfig_data_format_srca(const uint32_t) {}
ALWI void reconfig_data_format_srca(const uint32_t, const uint32_t) {}
ALWI void reconfig_data_format_srcb(const uint32_t) {}
ALWI void reconfig_data_format_srcb(const uint32_t, const uint32_t) {}
template <bool is_tile_dim_reconfig_en = false>
ALWI void pack_reconfig_data_format(const uint32_t) {}
template <bool is_tile_dim_reconfig_en = false>
ALWI void pack_reconfig_data_format(const uint32_t, const uint32_t) {}

}  // namespace ckernel
