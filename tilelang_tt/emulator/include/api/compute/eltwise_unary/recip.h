// SFPU ops of tt-metal api/compute/eltwise_unary/recip.h.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {

// The DST precision the op assumes and its approximation: Approximate (or Default with APPROX) runs tt-llk's one
// Newton step (compute.cpp, recip_fast); Precise is the exact 1 / x.
enum class ReciprocalDestAcc { BF16, FP32 };
enum class ReciprocalApproxMode { Default, Precise, Approximate };

template <ReciprocalDestAcc dest_acc = DST_ACCUM_MODE ? ReciprocalDestAcc::FP32 : ReciprocalDestAcc::BF16,
          ReciprocalApproxMode approximation = ReciprocalApproxMode::Default>
ALWI void recip_tile_init() {}

template <ReciprocalDestAcc dest_acc = DST_ACCUM_MODE ? ReciprocalDestAcc::FP32 : ReciprocalDestAcc::BF16,
          ReciprocalApproxMode approximation = ReciprocalApproxMode::Default>
ALWI void recip_tile(uint32_t idst, VectorMode vector_mode = VectorMode::RC, Loc loc = Loc::current()) {
  constexpr bool approximate = approximation == ReciprocalApproxMode::Default ? APPROX
                                                                               : approximation == ReciprocalApproxMode::Approximate;
  constexpr auto op = approximate ? emu::k::Unary::RecipFast : emu::k::Unary::Recip;
  // Part of the tile (ttnn's SDPA on Blackhole: VectorMode::C, the left faces holding the row statistics)
  if (vector_mode != VectorMode::RC)
    emu::k::sfpu_unary_faces(op, idst, emu::detail::faces_of(vector_mode, "recip_tile", loc), loc);
  else
    emu::k::sfpu_unary(op, idst, loc);
}

}  // namespace ckernel
