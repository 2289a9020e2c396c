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

// The LLK calls of ttnn's SDPA compute kernel (compute_common.hpp, compute_streaming.hpp), with the signatures of
// tt-metal 0.81.1's llk_api (llk_pack_common_api.h, llk_unpack_A_api.h, llk_math_unary_datacopy_api.h,
// llk_pack_tile_api.h). The packer's L1 accumulation and ReLU are what pack_reconfig_l1_acc / pack_relu_config do
// (api/compute/pack.h); llk_pack, llk_pack_init, llk_unpack_A_init and llk_math_eltwise_unary_datacopy_init (not
// emulated) are in llk_sdpa_api.h.

// llk_pack_common_api.h:250: enable or disable the packer's L1 accumulation.
inline void llk_pack_reconfig_l1_acc(const std::uint32_t enable, emu::k::Loc loc = emu::k::Loc::current()) {
  emu::k::pack_reconfig_l1_acc(enable, loc);
}

namespace emu::detail {
// The packer's ReLU modes the emulator models: none, and ZERO_RELU (max(x, 0)).
inline void pack_relu(const ckernel::ReluConfig& config, emu::k::Loc loc) {
  if (config.get_mode() != ckernel::ReluType::NO_RELU && config.get_mode() != ckernel::ReluType::ZERO_RELU)
    emu::k::api_errorf(loc, "pack_relu_config: only ReluConfig::none() and ReluConfig::zero() are emulated");
  emu::k::pack_relu(config.get_mode() == ckernel::ReluType::ZERO_RELU, loc);
}
}  // namespace emu::detail

// llk_pack_common_api.h:240.
inline void llk_pack_relu_config(const ckernel::ReluConfig& relu_config, emu::k::Loc loc = emu::k::Loc::current()) {
  emu::detail::pack_relu(relu_config, loc);
}

// tt-llk common/inc/cmath_common.h:290-298: the math thread's address-mode bank.
namespace ckernel::math {
// The bank selects the address modes of the math thread's instructions, which the emulator does not have: nothing.
inline void set_addr_mod_base() {}
inline void clear_addr_mod_base() {}
}  // namespace ckernel::math
