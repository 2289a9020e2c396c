// SFPU binary ops on DST tiles (tt-metal api/compute/eltwise_binary_sfpu.h):
// DST[odst] = DST[idst0] op DST[idst1] (rsub: DST[idst1] - DST[idst0]).
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {

ALWI void add_binary_tile_init() {}
template <ckernel::DstRoundingMode dst_rounding_mode = ckernel::DstRoundingMode::Default,
          bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void add_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) {
  emu::k::sfpu_binary(emu::k::SfpuBinary::Add, idst0, idst1, odst, loc);
}

ALWI void sub_binary_tile_init() {}
template <ckernel::DstRoundingMode dst_rounding_mode = ckernel::DstRoundingMode::Default,
          bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sub_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) {
  emu::k::sfpu_binary(emu::k::SfpuBinary::Sub, idst0, idst1, odst, loc);
}

ALWI void mul_binary_tile_init() {}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void mul_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) {
  emu::k::sfpu_binary(emu::k::SfpuBinary::Mul, idst0, idst1, odst, loc);
}

ALWI void div_binary_tile_init() {}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void div_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) {
  emu::k::sfpu_binary(emu::k::SfpuBinary::Div, idst0, idst1, odst, loc);
}

ALWI void rsub_binary_tile_init() {}
template <ckernel::DstRoundingMode dst_rounding_mode = ckernel::DstRoundingMode::Default,
          bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void rsub_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) {
  emu::k::sfpu_binary(emu::k::SfpuBinary::Rsub, idst0, idst1, odst, loc);
}

ALWI void power_binary_tile_init() {}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void power_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) {
  emu::k::sfpu_binary(emu::k::SfpuBinary::Pow, idst0, idst1, odst, loc);
}

}  // namespace ckernel
