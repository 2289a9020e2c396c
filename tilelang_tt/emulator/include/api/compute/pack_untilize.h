// Tiles -> row-major data by the packer (tt-metal api/compute/pack_untilize.h). The inits put the
// packer in untilize mode for block_ct_dim-tile blocks of full_ct_dim-tile rows until
// pack_untilize_uninit. A block of block_ct_dim tiles becomes 32 rows of block_ct_dim * 32 datums
// at column block_c_index * block_ct_dim * 32 of rows full_ct_dim * 32 datums long, from the write
// pointer of ocb (see runtime/tilize.cpp). pack_untilize_block unpacks tiles 0..block_ct_dim-1 of
// icb and acquires DST itself; pack_untilize_dest packs the DST the kernel filled and holds.
#pragma once

#include "api/compute/common.h"

namespace ckernel {

namespace detail {
template <uint32_t block_ct_dim, uint32_t full_ct_dim, bool narrow_row = false,
          std::uint32_t row_num_datums = TILE_C_DIM, bool dense = false, bool diagonal = false>
constexpr void check_pack_untilize() {
  static_assert(block_ct_dim > 0 && full_ct_dim % block_ct_dim == 0,
                "full_ct_dim must be divisible by block_ct_dim");
  static_assert(!narrow_row && row_num_datums == TILE_C_DIM && !dense && !diagonal,
                "emulator: pack untilize of narrow rows, dense or diagonal packing is not emulated");
}
}  // namespace detail

template <
    uint32_t block_ct_dim = 8,
    uint32_t full_ct_dim = block_ct_dim,
    bool narrow_row = false,
    std::uint32_t row_num_datums = TILE_C_DIM,
    bool dense = false,
    bool configure_remap = true,
    bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_untilize_dest_init(uint32_t ocb, uint32_t /*call_line*/ = __builtin_LINE(), Loc loc = Loc::current()) {
  detail::check_pack_untilize<block_ct_dim, full_ct_dim, narrow_row, row_num_datums, dense>();
  emu::k::pack_untilize_init(block_ct_dim, full_ct_dim, ocb, "pack_untilize_dest_init", loc);
}

template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_untilize_init(uint32_t /*icb*/, uint32_t ocb, uint32_t /*call_line*/ = __builtin_LINE(),
                             Loc loc = Loc::current()) {
  detail::check_pack_untilize<block_ct_dim, full_ct_dim>();
  emu::k::pack_untilize_init(block_ct_dim, full_ct_dim, ocb, "pack_untilize_init", loc);
}

template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_untilize_init_skip_remap(uint32_t /*icb*/, uint32_t ocb, uint32_t /*call_line*/ = __builtin_LINE(),
                                        Loc loc = Loc::current()) {
  detail::check_pack_untilize<block_ct_dim, full_ct_dim>();
  emu::k::pack_untilize_init(block_ct_dim, full_ct_dim, ocb, "pack_untilize_init_skip_remap", loc);
}

template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_untilize_block(uint32_t icb, uint32_t block_rt_dim, uint32_t ocb, uint32_t block_c_index = 0,
                              Loc loc = Loc::current()) {
  detail::check_pack_untilize<block_ct_dim, full_ct_dim>();
  emu::k::pack_untilize_block(block_ct_dim, full_ct_dim, icb, block_rt_dim, ocb, block_c_index, loc);
}

template <
    uint32_t block_ct_dim = 8,
    uint32_t full_ct_dim = block_ct_dim,
    bool diagonal = false,
    bool narrow_row = false,
    std::uint32_t row_num_datums = TILE_C_DIM,
    uint32_t tile_dst_ct_offset = 0,
    bool dense = false>
ALWI void pack_untilize_dest(uint32_t ocb, uint32_t block_rt_dim = 1, uint32_t block_c_index = 0,
                             uint32_t tile_dst_rt_offset = 0, Loc loc = Loc::current()) {
  detail::check_pack_untilize<block_ct_dim, full_ct_dim, narrow_row, row_num_datums, dense, diagonal>();
  emu::k::pack_untilize_dest(block_ct_dim, full_ct_dim, ocb, block_rt_dim, block_c_index,
                             tile_dst_ct_offset + tile_dst_rt_offset, loc);
}

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_untilize_uninit(uint32_t ocb, Loc loc = Loc::current()) {
  emu::k::pack_untilize_uninit(ocb, loc);
}

}  // namespace ckernel
