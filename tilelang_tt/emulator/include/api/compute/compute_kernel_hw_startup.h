// One-time compute configuration (tt-metal api/compute/compute_kernel_hw_startup.h): the unpackers' formats from
// icb0 (SrcA) and icb1 (SrcB), swapped by SrcOrder::Reverse (matmul: in0 to SrcB), the packer's from ocb.
#pragma once

#include "api/compute/common.h"

namespace ckernel {

template <SrcOrder src_order = SrcOrder::Regular>
ALWI void compute_kernel_hw_startup(uint32_t icb0, uint32_t icb1, uint32_t ocb, Loc loc = Loc::current()) {
  emu::k::hw_startup(icb0, icb1, ocb, src_order == SrcOrder::Reverse, loc);
}
ALWI void compute_kernel_hw_startup(uint32_t icb0, uint32_t ocb, Loc loc = Loc::current()) {
  emu::k::hw_startup(icb0, icb0, ocb, false, loc);
}

}  // namespace ckernel
