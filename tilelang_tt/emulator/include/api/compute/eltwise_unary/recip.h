// SFPU ops of tt-metal api/compute/eltwise_unary/recip.h.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {

// The DST precision the LLK's sequence assumes and its approximation: Approximate (or Default with APPROX) runs
// tt-llk's approximate reciprocal, Precise the precise one for dest_acc's DST (runtime sfpu_recip.cpp, per arch).
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
  // Part of the tile (ttnn's SDPA on Blackhole: VectorMode::C, the left faces holding the row statistics)
  emu::k::sfpu_recip(idst, emu::detail::faces_of(vector_mode, "recip_tile", loc), approximate,
                     dest_acc == ReciprocalDestAcc::FP32, loc);
}

}  // namespace ckernel
