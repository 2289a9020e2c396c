// DST register acquire/commit/wait/release (tt-metal api/compute/reg_api.h). DST holds 16
// tiles split in two halves; one acquire holds 8 tiles (4 with fp32_dest_acc_en).
#pragma once

#include "api/compute/common.h"

namespace ckernel {

ALWI void tile_regs_acquire(Loc loc = Loc::current()) { emu::k::tile_regs_acquire(loc); }
ALWI void tile_regs_wait(Loc loc = Loc::current()) { emu::k::tile_regs_wait(loc); }
// Committing ends the math thread's DST section; its DST row counter, which a raw SFPU sequence leaves advanced
// (ckernel.h emu::detail::sfpu_dst_row), is back at 0 for the next: every LLK math op resets it (the matmul MOP's
// end op SETRWC SET_ABD_F, tt-llk wormhole_b0 llk_math_matmul.h:482-486; the SFPU's clear_dst_reg_addr,
// cmath_common.h:285-288), and ttnn's SDPA ends its sections with the raw sequence (compute_streaming.hpp:866-870).
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tile_regs_commit(Loc loc = Loc::current()) {
  emu::detail::sfpu_dst_row = 0;
  emu::k::tile_regs_commit(loc);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tile_regs_release(Loc loc = Loc::current()) {
  emu::k::tile_regs_release(loc);
}
// acquire_dst = tile_regs_acquire + tile_regs_wait; release_dst = tile_regs_commit + tile_regs_release.
// Deprecated in tt-metal (https://github.com/tenstorrent/tt-metal/issues/5868): a warning, as there.
[[deprecated("Use tile_regs_acquire() instead")]]
ALWI void acquire_dst(Loc loc = Loc::current()) { emu::k::acquire_dst(loc); }
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
[[deprecated("Use tile_regs_release() instead")]]
ALWI void release_dst(Loc loc = Loc::current()) {
  emu::k::release_dst(loc);
}

}  // namespace ckernel
