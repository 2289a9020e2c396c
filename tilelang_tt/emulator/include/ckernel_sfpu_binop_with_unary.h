// The SFPU function behind binop_with_scalar's tiles (tt-metal 0.81.1 llk_api/llk_sfpu/
// ckernel_sfpu_binop_with_unary.h:26 calculate_binop_with_scalar), which kernels reach through SFPU_UNARY_CALL with a
// VectorMode of their own (ttnn's SDPA logsigmoid_sub: VectorMode::C): not emulated; add_unary_tile and the
// others (api/compute/eltwise_unary/binop_with_scalar.h) are.
#pragma once

#include <cstdint>

#include "llk_math_eltwise_unary_sfpu_macros.h"

namespace ckernel::sfpu {
template <bool APPROXIMATION_MODE, int BINOP_MODE, int ITERATIONS, bool is_fp32_dest_acc_en>
void calculate_binop_with_scalar(std::uint32_t /*param*/) {
  emu::k::api_errorf(emu::k::Loc::current(), "calculate_binop_with_scalar through SFPU_UNARY_CALL: not emulated");
}
}  // namespace ckernel::sfpu
