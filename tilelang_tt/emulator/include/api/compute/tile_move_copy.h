// CB -> DST copy (tt-metal api/compute/tile_move_copy.h).
#pragma once

#include "api/compute/common.h"
#include "llk_sdpa_api.h"  // the LLK calls ttnn's SDPA kernel makes beside these (not emulated)

namespace ckernel {

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void copy_init(std::uint32_t /*cbid*/, std::uint32_t /*transpose*/ = 0,
                    std::uint32_t /*transpose_within_16x16_face*/ = false,
                    std::uint32_t /*call_line*/ = __builtin_LINE()) {}

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void copy_tile(std::uint32_t in_cb_id, std::uint32_t in_tile_index, std::uint32_t dst_tile_index,
                    Loc loc = Loc::current()) {
  emu::k::copy_tile(in_cb_id, in_tile_index, dst_tile_index, loc);
}

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void copy_block(std::uint32_t in_cb_id, std::uint32_t start_in_tile_index, std::uint32_t start_dst_tile_index,
                     std::uint32_t ntiles, Loc loc = Loc::current()) {
  for (std::uint32_t i = 0; i < ntiles; ++i)
    emu::k::copy_tile(in_cb_id, start_in_tile_index + i, start_dst_tile_index + i, loc);
}

}  // namespace ckernel
