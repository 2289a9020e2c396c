// tt-metal 0.81.1 api/compute/eltwise_unary/typecast.h: typecast_tile<IN, OUT> converts DST tile idst
// between data formats on the SFPU. ttnn's kernel_lib calls it for Int32 reductions
// (reduce_helpers_compute.inl reduce_post_mul_tile); the emulator does not model the conversions: a
// kernel that calls it stops naming it.
#pragma once

#include "api/compute/common.h"

namespace ckernel {

template <uint32_t IN_DTYPE, uint32_t OUT_DTYPE, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void typecast_tile(uint32_t /*idst*/, Loc loc = Loc::current()) {
  emu::k::api_errorf(loc, "typecast_tile<%u, %u> is not emulated", IN_DTYPE, OUT_DTYPE);
}

template <uint32_t IN_DTYPE, uint32_t OUT_DTYPE>
ALWI void typecast_tile_init(Loc loc = Loc::current()) {
  emu::k::api_errorf(loc, "typecast_tile_init<%u, %u> is not emulated", IN_DTYPE, OUT_DTYPE);
}

}  // namespace ckernel
