// Tiles -> row-major data by the unpacker (tt-metal api/compute/untilize.h, deprecated there in
// favour of pack_untilize.h). untilize_block<block_ct_dim>(icb, full_ct_dim, ocb) turns tiles
// 0..full_ct_dim-1 of icb into 32 rows of full_ct_dim * 32 datums, packed in order into
// full_ct_dim pages of ocb; it acquires DST itself, block_ct_dim tiles at a time.
#pragma once

#include "api/compute/common.h"

namespace ckernel {

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
[[deprecated(
    "unpack-based untilize is deprecated; use pack_untilize instead. Scheduled for removal, see tt-metal#22904.")]]
ALWI void untilize_init(uint32_t icb, uint32_t /*call_line*/ = __builtin_LINE(), Loc loc = Loc::current()) {
  emu::k::untilize_init(icb, loc);
}

template <uint32_t block_ct_dim = 1, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
[[deprecated(
    "unpack-based untilize is deprecated; use pack_untilize instead. Scheduled for removal, see tt-metal#22904.")]]
ALWI void untilize_block(uint32_t icb, uint32_t full_ct_dim, uint32_t ocb, Loc loc = Loc::current()) {
  emu::k::untilize_block(block_ct_dim, icb, full_ct_dim, ocb, loc);
}

[[deprecated(
    "unpack-based untilize is deprecated; use pack_untilize instead. Scheduled for removal, see tt-metal#22904.")]]
ALWI void untilize_uninit(uint32_t icb, Loc loc = Loc::current()) {
  emu::k::untilize_uninit(icb, loc);
}

}  // namespace ckernel
