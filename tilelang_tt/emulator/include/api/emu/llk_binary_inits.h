// The math and unpack inits of a binary op with a broadcast operand, as tt-metal 0.81.1's llk_api declares them
// (hw/ckernels/wormhole_b0/metal/llk_api/llk_math_binary_api.h llk_math_eltwise_binary_init,
// llk_unpack_AB_api.h llk_unpack_AB_init), which api/compute/eltwise_binary.h and bcast.h include and ttnn's
// kernel_lib calls itself (eltwise/core/chain.inl, BinaryFpu with a broadcast). The emulator's broadcast ops
// take what these configure from their own calls, as its compute API's <op>_bcast_<dim>_init do
// (api/compute/bcast.h): nothing to do.
#pragma once

#include <cstdint>

#include "llk_defs.h"

using ckernel::BroadcastType;
using ckernel::EltwiseBinaryReuseDestType;
using ckernel::EltwiseBinaryType;
using ckernel::MathFidelity;

template <
    EltwiseBinaryType eltwise_binary_type,
    BroadcastType src_b_bcast_type,
    MathFidelity math_fidelity,
    EltwiseBinaryReuseDestType binary_reuse_dest = EltwiseBinaryReuseDestType::NONE>
inline void llk_math_eltwise_binary_init(const std::uint32_t /*operand_A*/, [[maybe_unused]] const std::uint32_t operand_B,
                                         const std::uint32_t /*acc_to_dest*/ = 0) {}

template <BroadcastType BType = BroadcastType::NONE>
inline void llk_unpack_AB_init(const std::uint32_t /*operandA*/, const std::uint32_t /*operandB*/) {}
