// SFPU ops of tt-metal api/compute/eltwise_unary/exp.h. exp_tile's input scaling (scale_en) and
// partial iterations (iterations != 8: part of each face) are not emulated: a compile error.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {

// Whether the fast approximation clamps inputs below ~-88.5.
enum class InputClamping : uint8_t {
  ClampToNegative = 1,
  None = 0,
};

template <bool approx = false, uint32_t scale = 0x3F800000,
          InputClamping input_clamping = InputClamping::ClampToNegative, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void exp_tile_init() {}

template <bool approx = false, bool scale_en = false, InputClamping input_clamping = InputClamping::ClampToNegative,
          int iterations = 8, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void exp_tile(uint32_t idst, VectorMode vector_mode = VectorMode::RC, uint16_t scale = p_sfpu::kCONST_1_FP16B,
                   Loc loc = Loc::current()) {
  static_assert(!scale_en, "emulator: exp_tile's input scaling (scale_en) is not supported");
  static_assert(iterations == 8, "emulator: exp_tile runs on whole tiles only (iterations = 8)");
  static_assert(!approx || input_clamping == InputClamping::ClampToNegative,
                "emulator: exp_tile<approx = true> without input clamping (InputClamping::None) is not emulated");
  emu::detail::require_whole_tile(vector_mode, "exp_tile", loc);
  // approx: the fast approximation of ckernel_sfpu_exp.h (compute.cpp, exp_fast); otherwise exact
  emu::k::sfpu_unary(approx ? emu::k::Unary::ExpFast : emu::k::Unary::Exp, idst, loc);
}

}  // namespace ckernel
