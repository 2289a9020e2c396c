// tt-metal 0.81.1 api/compute/eltwise_unary/softplus.h: softplus_tile (ttnn's ring / joint SDPA, through
// logsigmoid): not emulated. The header brings the SFPU launch macros as the real one does under TRISC_MATH.
#pragma once

#include "api/compute/common.h"
#include "llk_math_eltwise_unary_sfpu_macros.h"

namespace ckernel {

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void softplus_tile(uint32_t /*idst*/, uint32_t /*beta*/, uint32_t /*beta_reciprocal*/, uint32_t /*threshold*/,
                        Loc loc = Loc::current()) {
  emu::k::api_errorf(loc, "softplus_tile: not emulated");
}
ALWI void softplus_tile_init() {}

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void softplus_tile_pack(uint32_t /*idst*/, uint32_t /*beta*/, uint32_t /*beta_reciprocal*/,
                             uint32_t /*threshold*/, Loc loc = Loc::current()) {
  emu::k::api_errorf(loc, "softplus_tile_pack: not emulated");
}
ALWI void softplus_tile_init_pack() {}

}  // namespace ckernel
