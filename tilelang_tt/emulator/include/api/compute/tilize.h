// Row-major data in a CB -> tiles (tt-metal api/compute/tilize.h). tilize_init puts the unpacker in
// tilize mode for blocks of `block` tiles' width until tilize_uninit; tilize_block reads 32 rows of
// `block` tiles' width from the read pointer of icb (see runtime/tilize.cpp) and acquires DST
// itself, one tile at a time. Not emulated: fast_tilize_* and the tilizeA_B reduce variants.
#pragma once

#include "api/compute/common.h"

namespace ckernel {

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tilize_init(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t /*call_line*/ = __builtin_LINE(),
                      Loc loc = Loc::current()) {
  emu::k::tilize_init(icb, block, ocb, "tilize_init", loc);
}

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tilize_init_short_with_dt(uint32_t /*old_icb*/, uint32_t new_icb, uint32_t block, uint32_t ocb,
                                    Loc loc = Loc::current()) {
  emu::k::tilize_init(new_icb, block, ocb, "tilize_init_short_with_dt", loc);
}

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tilize_block(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t input_tile_index = 0,
                       uint32_t output_tile_index = 0, Loc loc = Loc::current()) {
  emu::k::tilize_block(icb, block, ocb, input_tile_index, output_tile_index, loc);
}

ALWI void tilize_uninit(uint32_t icb, uint32_t ocb, Loc loc = Loc::current()) { emu::k::tilize_uninit(icb, ocb, loc); }

}  // namespace ckernel
