// Row-major data in a CB -> tiles (tt-metal api/compute/tilize.h). tilize_init puts the unpacker in
// tilize mode for blocks of `block` tiles' width until tilize_uninit; tilize_block reads 32 rows of
// `block` tiles' width from the read pointer of icb (see runtime/tilize.cpp) and acquires DST
// itself, one tile at a time. fast_tilize_* (the 0.81.1 header's Wormhole path: the unpacker's fast
// tilize, tilize.h fast_tilize_init_impl / fast_tilize_block) give the same tiles of a bfloat16 block;
// of a Float32 block the fast unpacker keeps TF32 only (ttnn kernel_lib tilize_helpers.hpp Fp32Mode::Fast
// "lossy, truncates to tf32 precision"), which the emulator does not model: it refuses a Float32 icb.
// Not emulated: the tilizeA_B reduce variants.
#pragma once

#include "api/compute/common.h"
#include "api/emu/cb_descriptors.h"

namespace ckernel {

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tilize_init(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t /*call_line*/ = __builtin_LINE(),
                      Loc loc = Loc::current()) {
  emu::k::tilize_init(icb, block, ocb, "tilize_init", loc);
}

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tilize_init_short_with_dt(uint32_t old_icb, uint32_t new_icb, uint32_t block, uint32_t ocb,
                                    Loc loc = Loc::current()) {
  // SrcA to new_icb's formats where they differ from old_icb's (0.81.1 tilize.h:131)
  emu::k::reconfig_source(false, static_cast<int>(old_icb), new_icb, "tilize_init_short_with_dt", loc);
  emu::k::tilize_init(new_icb, block, ocb, "tilize_init_short_with_dt", loc);
}

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tilize_block(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t input_tile_index = 0,
                       uint32_t output_tile_index = 0, Loc loc = Loc::current()) {
  emu::k::tilize_block(icb, block, ocb, input_tile_index, output_tile_index, loc);
}

ALWI void tilize_uninit(uint32_t icb, uint32_t ocb, Loc loc = Loc::current()) { emu::k::tilize_uninit(icb, ocb, loc); }

namespace fast_tilize_detail {
ALWI void check_format(uint32_t icb, Loc loc) {
  if (emu::detail::cb_dataformat(icb, loc) == ::DataFormat::Float32)
    emu::k::api_errorf(loc, "fast_tilize of a Float32 CB (%u) truncates to TF32 on the device, which the emulator "
                            "does not model", icb);
}
}  // namespace fast_tilize_detail

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void fast_tilize_init(uint32_t icb, uint32_t full_dim, uint32_t ocb, uint32_t /*call_line*/ = __builtin_LINE(),
                           Loc loc = Loc::current()) {
  fast_tilize_detail::check_format(icb, loc);
  emu::k::tilize_init(icb, full_dim, ocb, "fast_tilize_init", loc);
}

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void fast_tilize_init_skip_remap(uint32_t icb, uint32_t full_dim, uint32_t ocb,
                                      uint32_t /*call_line*/ = __builtin_LINE(), Loc loc = Loc::current()) {
  fast_tilize_detail::check_format(icb, loc);
  emu::k::tilize_init(icb, full_dim, ocb, "fast_tilize_init_skip_remap", loc);
}

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void fast_tilize_block(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t input_tile_index = 0,
                            uint32_t output_tile_index = 0, Loc loc = Loc::current()) {
  emu::k::tilize_block(icb, block, ocb, input_tile_index, output_tile_index, loc);
}

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void fast_tilize_uninit(uint32_t icb, uint32_t ocb, uint32_t /*full_dim*/, Loc loc = Loc::current()) {
  emu::k::tilize_uninit(icb, ocb, loc);
}

}  // namespace ckernel
