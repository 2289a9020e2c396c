// SFPU ops of tt-metal api/compute/eltwise_unary/exp.h: exp_tile on the math thread and exp_packthread_tile, the
// same SFPU work driven from the pack thread (on the DST half it holds between tile_regs_wait and
// tile_regs_release, charged to the packer's clock: runtime sfpu_unary_ex).
// - The init's scale: the approximate exp folds exp_init<approx, scale>'s scale into its constants
//   (llk_sfpu/ckernel_sfpu_exp.h:692-760 exp_init: A * scale, THRESHOLD / scale), so exp_tile<true> computes
//   exp(x * scale) with those constants, x itself unrounded (runtime exp_fast_scaled); the precise exp ignores it
//   (the tile call's scale_en scales instead).
// - The whole tile: iterations = 8 per face with VectorMode::RC, or iterations = 32 in one call with
//   VectorMode::None (ttnn's SDPA); partial tiles and scale_en are not emulated (a compile error).
// - InputClamping::None with the approximation: inputs below -88.5 give values the LLK does not bound (its
//   callers pack with the packer's ReLU); the emulator's fast exp gives what it gives there (its clamped form),
//   charged the unclamped sequence's cycles with 32 iterations (costs.cpp).
#pragma once

#include <bit>

#include "api/emu/sfpu.h"

namespace ckernel {

// Whether the fast approximation clamps inputs below ~-88.5.
enum class InputClamping : uint8_t {
  ClampToNegative = 1,
  None = 0,
};

}  // namespace ckernel

namespace emu::detail {
// The scale the last exp init gave the approximate exp (1.0 for the precise one), per TRISC thread.
inline thread_local float exp_init_scale = 1.0f;

template <bool approx, uint32_t scale>
inline void exp_init() {
  exp_init_scale = approx ? std::bit_cast<float>(scale) : 1.0f;
}

template <bool approx, bool scale_en, ckernel::InputClamping input_clamping, int iterations>
inline void exp_whole_tile(uint32_t idst, ckernel::VectorMode vector_mode, bool on_pack, const char* fn,
                           emu::k::Loc loc) {
  static_assert(!scale_en, "emulator: exp_tile's input scaling (scale_en) is not supported");
  static_assert(iterations == 8 || iterations == 32, "emulator: exp_tile runs on whole tiles only (iterations 8 or 32)");
  const bool whole = iterations == 8 ? vector_mode == ckernel::VectorMode::RC : vector_mode == ckernel::VectorMode::None;
  if (!whole)
    emu::k::api_errorf(loc, "%s: the emulator runs it on whole tiles only (iterations 8 with VectorMode::RC, or 32 with "
                            "VectorMode::None)", fn);
  const bool unclamped = approx && input_clamping == ckernel::InputClamping::None && iterations == 32;
  emu::k::sfpu_unary_ex(approx ? emu::k::Unary::ExpFast : emu::k::Unary::Exp, idst, exp_init_scale,
                        unclamped ? emu::k::exp_approx_unclamped_tile_cycles() : 0, on_pack, fn, loc);
}
}  // namespace emu::detail

namespace ckernel {

template <bool approx = false, uint32_t scale = 0x3F800000,
          InputClamping input_clamping = InputClamping::ClampToNegative, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void exp_tile_init() {
  emu::detail::exp_init<approx, scale>();
}

template <bool approx = false, bool scale_en = false, InputClamping input_clamping = InputClamping::ClampToNegative,
          int iterations = 8, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void exp_tile(uint32_t idst, VectorMode vector_mode = VectorMode::RC, uint16_t scale = p_sfpu::kCONST_1_FP16B,
                   Loc loc = Loc::current()) {
  emu::detail::exp_whole_tile<approx, scale_en, input_clamping, iterations>(idst, vector_mode, false, "exp_tile", loc);
}

template <bool approx = false, uint32_t scale = 0x3F800000,
          InputClamping input_clamping = InputClamping::ClampToNegative, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void exp_packthread_tile_init() {
  emu::detail::exp_init<approx, scale>();
}

template <bool approx = false, bool scale_en = false, InputClamping input_clamping = InputClamping::ClampToNegative,
          int iterations = 8, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void exp_packthread_tile(uint32_t idst, VectorMode vector_mode = VectorMode::RC,
                              uint16_t scale = p_sfpu::kCONST_1_FP16B, Loc loc = Loc::current()) {
  emu::detail::exp_whole_tile<approx, scale_en, input_clamping, iterations>(idst, vector_mode, true,
                                                                            "exp_packthread_tile", loc);
}

}  // namespace ckernel
