// The LLK calls ttnn's compute kernel_lib makes itself, beside the compute API (reduce_helpers_compute.inl:
// the data-format reconfiguration of reduce_init_short_with_dt, reached by accumulating reductions;
// eltwise/core/chain.inl: the math and unpack inits of a broadcast binary op),
// with the signatures of tt-metal 0.81.1's llk_api (hw/ckernels/wormhole_b0/metal/llk_api/
// llk_unpack_common_api.h, llk_math_common_api.h), which a compute kernel sees through api/compute/
// common.h. The emulator models the compute API, not the LLKs below it: a kernel that calls one stops,
// naming it; except the broadcast binary inits (llk_math_binary_api.h llk_math_eltwise_binary_init,
// llk_unpack_AB_api.h llk_unpack_AB_init), which configure what the emulator's broadcast ops take from
// their own calls, as its compute API's <op>_bcast_<dim>_init do (api/compute/bcast.h): nothing to do.
#pragma once

#include <cstdint>

#include "api/emu/kernel_common.h"
#include "llk_defs.h"

namespace emu::detail {
[[noreturn]] inline void llk_not_emulated(const char* call, emu::k::Loc loc) {
  emu::k::api_errorf(loc, "%s: the emulator models the compute API, not this LLK call", call);
}
}  // namespace emu::detail

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

template <ckernel::EltwiseBinaryType eltwise_binary_type, ckernel::BroadcastType src_b_bcast_type,
          ckernel::MathFidelity math_fidelity, ckernel::EltwiseBinaryReuseDestType binary_reuse_dest =
                                                   ckernel::EltwiseBinaryReuseDestType::NONE>
inline void llk_math_eltwise_binary_init(const std::uint32_t /*operand_A*/, const std::uint32_t /*operand_B*/,
                                         const std::uint32_t /*acc_to_dest*/ = 0) {}

template <ckernel::BroadcastType BType = ckernel::BroadcastType::NONE>
inline void llk_unpack_AB_init(const std::uint32_t /*operandA*/, const std::uint32_t /*operandB*/) {}
