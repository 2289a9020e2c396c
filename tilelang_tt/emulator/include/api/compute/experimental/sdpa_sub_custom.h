// tt-metal 0.81.1 api/compute/experimental/sdpa_sub_custom.h: ttnn's SDPA subtracts a row's maximum from ct_dim
// tiles at once (one unpack of the column vector for the block, llk_unpack_AB_sub_bcast_col_custom):
// DST[idst + j] = in0[itile0 + j] - in1[itile1] broadcast along its column 0 (sub_tiles_bcast_cols, api/compute/
// bcast.h), j < ct_dim, each charged as that op (ASSUMPTION: the saved column-vector unpacks are not modelled).
#pragma once

#include <cstdint>

#include "api/compute/bcast.h"

namespace ckernel {

ALWI void sub_bcast_cols_init_short_custom(std::uint32_t /*icb0*/, std::uint32_t /*icb1*/, std::uint32_t /*ct_dim*/,
                                           std::uint32_t /*call_line*/ = __builtin_LINE()) {}

ALWI void sub_tiles_bcast_cols_custom(std::uint32_t icb0, std::uint32_t icb1, std::uint32_t itile0, std::uint32_t itile1,
                                      std::uint32_t idst, std::uint32_t ct_dim, Loc loc = Loc::current()) {
  for (std::uint32_t j = 0; j < ct_dim; ++j)
    emu::k::binary_tiles(emu::k::BinaryOp::Sub, emu::k::Bcast::Col, icb0, icb1, itile0 + j, itile1, idst + j, 0, loc);
}

}  // namespace ckernel
