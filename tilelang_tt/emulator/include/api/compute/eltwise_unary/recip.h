// SFPU ops of tt-metal api/compute/eltwise_unary/recip.h.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {

// The DST precision the op assumes and its approximation (the emulator's 1 / x is exact).
enum class ReciprocalDestAcc { BF16, FP32 };
enum class ReciprocalApproxMode { Default, Precise, Approximate };

template <ReciprocalDestAcc dest_acc = DST_ACCUM_MODE ? ReciprocalDestAcc::FP32 : ReciprocalDestAcc::BF16,
          ReciprocalApproxMode approximation = ReciprocalApproxMode::Default>
ALWI void recip_tile_init() {}

template <ReciprocalDestAcc dest_acc = DST_ACCUM_MODE ? ReciprocalDestAcc::FP32 : ReciprocalDestAcc::BF16,
          ReciprocalApproxMode approximation = ReciprocalApproxMode::Default>
ALWI void recip_tile(uint32_t idst, VectorMode vector_mode = VectorMode::RC, Loc loc = Loc::current()) {
  emu::detail::require_whole_tile(vector_mode, "recip_tile", loc);
  emu::k::sfpu_unary(emu::k::Unary::Recip, idst, loc);
}

}  // namespace ckernel
