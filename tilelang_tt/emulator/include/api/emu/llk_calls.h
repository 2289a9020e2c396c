// The LLK calls ttnn's compute kernel_lib makes itself, beside the compute API (reduce_helpers_compute.inl:
// the data-format reconfiguration of reduce_init_short_with_dt, reached by accumulating reductions),
// with the signatures of tt-metal 0.81.1's llk_api (hw/ckernels/wormhole_b0/metal/llk_api/
// llk_unpack_common_api.h, llk_math_common_api.h), which a compute kernel sees through api/compute/
// common.h. The emulator models the compute API, not the LLKs below it: a kernel that calls one stops,
// naming it (api/emu/not_emulated.h).
#pragma once

#include <cstdint>

#include "api/emu/kernel_common.h"
#include "api/emu/not_emulated.h"
#include "llk_defs.h"


template <bool is_fp32_dest_acc_en, p_dim_stride_target dim_stride_target, bool skip_int8 = false>
inline void llk_unpack_reconfig_data_format_srca(const std::uint32_t /*srca_new_operand*/,
                                                 emu::k::Loc loc = emu::k::Loc::current()) {
  emu::detail::llk_not_emulated("llk_unpack_reconfig_data_format_srca", loc);
}

template <bool is_fp32_dest_acc_en, p_dim_stride_target dim_stride_target, bool skip_int8 = false>
inline void llk_unpack_reconfig_data_format_srca(const std::uint32_t /*srca_old_operand*/,
                                                 const std::uint32_t /*srca_new_operand*/,
                                                 emu::k::Loc loc = emu::k::Loc::current()) {
  emu::detail::llk_not_emulated("llk_unpack_reconfig_data_format_srca", loc);
}

template <bool is_fp32_dest_acc_en, bool skip_int8 = false>
inline void llk_math_reconfig_data_format_srca(const std::uint32_t /*srca_new_operand*/,
                                               emu::k::Loc loc = emu::k::Loc::current()) {
  emu::detail::llk_not_emulated("llk_math_reconfig_data_format_srca", loc);
}

template <bool is_fp32_dest_acc_en, bool skip_int8 = false>
inline void llk_math_reconfig_data_format_srca(const std::uint32_t /*srca_old_operand*/,
                                               const std::uint32_t /*srca_new_operand*/,
                                               emu::k::Loc loc = emu::k::Loc::current()) {
  emu::detail::llk_not_emulated("llk_math_reconfig_data_format_srca", loc);
}
