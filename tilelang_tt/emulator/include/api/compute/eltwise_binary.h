// FPU element-wise binary ops on CB tiles (tt-metal api/compute/eltwise_binary.h).
#pragma once

#include "api/compute/common.h"
#include "api/emu/llk_binary_inits.h"

namespace ckernel {

// acc_to_dest: the op's tiles add to DST instead of overwriting it. On wormhole_b0 and blackhole
// only ELWADD and ELWSUB accumulate: tt-llk's eltwise_binary_configure_mop_standard issues ELWMUL
// with acc_to_dest 0 whatever is asked (mul_init's default true, "for backwards compatibility
// with Quasar", is unused there).
template <bool full_init, EltwiseBinaryType eltwise_binary_type>
ALWI void binary_tiles_init(std::uint32_t /*icb0*/, std::uint32_t /*icb1*/, bool acc_to_dest = false,
                            std::uint32_t /*call_line*/ = __builtin_LINE(), Loc loc = Loc::current()) {
  detail::check_fpu_binary<eltwise_binary_type>();
  emu::k::binary_init(detail::binary_of(eltwise_binary_type),
                      acc_to_dest && eltwise_binary_type != EltwiseBinaryType::ELWMUL, loc);
}

ALWI void add_init(std::uint32_t icb0, std::uint32_t icb1, bool acc_to_dest = false,
                   std::uint32_t call_line = __builtin_LINE(), Loc loc = Loc::current()) {
  binary_tiles_init<true, EltwiseBinaryType::ELWADD>(icb0, icb1, acc_to_dest, call_line, loc);
}
ALWI void sub_init(std::uint32_t icb0, std::uint32_t icb1, bool acc_to_dest = false,
                   std::uint32_t call_line = __builtin_LINE(), Loc loc = Loc::current()) {
  binary_tiles_init<true, EltwiseBinaryType::ELWSUB>(icb0, icb1, acc_to_dest, call_line, loc);
}
ALWI void mul_init(std::uint32_t icb0, std::uint32_t icb1, bool acc_to_dest = true,
                   std::uint32_t call_line = __builtin_LINE(), Loc loc = Loc::current()) {
  binary_tiles_init<true, EltwiseBinaryType::ELWMUL>(icb0, icb1, acc_to_dest, call_line, loc);
}

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void add_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                    Loc loc = Loc::current()) {
  emu::k::binary_tiles(emu::k::BinaryOp::Add, emu::k::Bcast::None, icb0, icb1, itile0, itile1, idst, 0, loc);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sub_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                    Loc loc = Loc::current()) {
  emu::k::binary_tiles(emu::k::BinaryOp::Sub, emu::k::Bcast::None, icb0, icb1, itile0, itile1, idst, 0, loc);
}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void mul_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                    Loc loc = Loc::current()) {
  emu::k::binary_tiles(emu::k::BinaryOp::Mul, emu::k::Bcast::None, icb0, icb1, itile0, itile1, idst, 0, loc);
}

// Dest-reuse forms: one operand is the DST tile itself.
template <EltwiseBinaryReuseDestType reuse_dest>
ALWI void add_reuse_dest_init(std::uint32_t, std::uint32_t = __builtin_LINE()) {}
template <EltwiseBinaryReuseDestType reuse_dest>
ALWI void sub_reuse_dest_init(std::uint32_t, std::uint32_t = __builtin_LINE()) {}
template <EltwiseBinaryReuseDestType reuse_dest>
ALWI void mul_reuse_dest_init(std::uint32_t, std::uint32_t = __builtin_LINE()) {}

template <EltwiseBinaryType eltwise_binary_type, EltwiseBinaryReuseDestType reuse_dest,
          bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void binary_reuse_dest_tiles(std::uint32_t in_cb_id, std::uint32_t in_tile_index, std::uint32_t dst_tile_index,
                                  Loc loc = Loc::current()) {
  detail::check_fpu_binary<eltwise_binary_type>();
  static_assert(reuse_dest != EltwiseBinaryReuseDestType::NONE, "reuse_dest must be DEST_TO_SRCA or DEST_TO_SRCB");
  emu::k::binary_reuse_dest(detail::binary_of(eltwise_binary_type), reuse_dest == EltwiseBinaryReuseDestType::DEST_TO_SRCA,
                            in_cb_id, in_tile_index, dst_tile_index, loc);
}
template <EltwiseBinaryReuseDestType reuse_dest, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void add_reuse_dest_tiles(std::uint32_t in_cb_id, std::uint32_t in_tile_index, std::uint32_t dst_tile_index,
                               Loc loc = Loc::current()) {
  binary_reuse_dest_tiles<EltwiseBinaryType::ELWADD, reuse_dest>(in_cb_id, in_tile_index, dst_tile_index, loc);
}
template <EltwiseBinaryReuseDestType reuse_dest, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sub_reuse_dest_tiles(std::uint32_t in_cb_id, std::uint32_t in_tile_index, std::uint32_t dst_tile_index,
                               Loc loc = Loc::current()) {
  binary_reuse_dest_tiles<EltwiseBinaryType::ELWSUB, reuse_dest>(in_cb_id, in_tile_index, dst_tile_index, loc);
}
template <EltwiseBinaryReuseDestType reuse_dest, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void mul_reuse_dest_tiles(std::uint32_t in_cb_id, std::uint32_t in_tile_index, std::uint32_t dst_tile_index,
                               Loc loc = Loc::current()) {
  binary_reuse_dest_tiles<EltwiseBinaryType::ELWMUL, reuse_dest>(in_cb_id, in_tile_index, dst_tile_index, loc);
}

}  // namespace ckernel
