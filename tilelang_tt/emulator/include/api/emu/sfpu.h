// Shared by the SFPU API headers. The template parameters and arguments that choose among tt-metal's
// approximations select the emulator's model of the approximate form for exp_tile<approx>,
// recip_tile's ReciprocalApproxMode, gelu_tile / tanh_tile / sigmoid_tile<fast_and_approx> and the
// kernel's APPROX (math_approx_mode) in recip_tile, sqrt_tile and rsqrt_tile (with FAST_APPROX /
// RsqrtMode::Fast); the others (erf, log ... fast_and_approx) are accepted and ignored, as are those that
// set the op's DST precision and rounding (is_fp32_dest_acc_en, ReciprocalDestAcc, DstRoundingMode):
// the emulator computes the other ops in fp32 and rounds DST to bfloat16 (nearest even) unless the
// kernel's fp32_dest_acc_en. A VectorMode other than RC (the op on part of the tile) is an error but for binary max
// and min and recip_tile (faces_of).
#pragma once

#include <bit>

#include "api/compute/common.h"

namespace ckernel {

// tt-llk ckernel_defs.h: how an SFPU result is stored to a bfloat16 DST.
enum class DstRoundingMode : std::uint8_t { Default = 0, NearestEven = 1 };

// tt-llk ckernel_instr_params.h (the constant exp_tile's scale defaults to).
struct p_sfpu {
  static constexpr std::uint32_t kCONST_1_FP16B = 0x3F80;  // 1.0 in bfloat16
};

}  // namespace ckernel

namespace emu::detail {
constexpr const char* kWholeTilesOnly = "emulator: SFPU ops run on whole tiles only (VectorMode::RC)";

inline void require_whole_tile(ckernel::VectorMode vector_mode, const char* fn, emu::k::Loc loc) {
  if (vector_mode != ckernel::VectorMode::RC) emu::k::api_errorf(loc, "%s: %s", fn, kWholeTilesOnly);
}

// The faces an SFPU op's VectorMode selects, as sfpu_binary_faces takes them (bit f: face f): RC all four, C the
// left column of faces (0, 2), R the top row (0, 1) (tt-llk llk_math_eltwise_sfpu_common.h
// _llk_math_eltwise_sfpu_apply_vector_mode_); another mode is an error.
inline std::uint8_t faces_of(ckernel::VectorMode vector_mode, const char* fn, emu::k::Loc loc) {
  switch (vector_mode) {
    case ckernel::VectorMode::RC: return 0b1111;
    case ckernel::VectorMode::C: return 0b0101;
    case ckernel::VectorMode::R: return 0b0011;
    default: break;
  }
  emu::k::api_errorf(loc, "%s: VectorMode %u is not emulated (RC, R and C are)", fn, static_cast<unsigned>(vector_mode));
}

// The integer SFPU ops' template format as the runtime's id (tensix_types.h value).
constexpr std::uint8_t format_id(::DataFormat format) { return static_cast<std::uint8_t>(format); }

// The formats the WH/BH integer SFPU ops take as a template argument (api/compute/add_int_sfpu.h and
// the like; tensix_types.h's is_uint32_format is UInt32 there); each header static_asserts it. UInt16
// compiles but is reported at run time.
constexpr bool is_sfpu_int_format(::DataFormat format) {
  return format == ::DataFormat::Int32 || format == ::DataFormat::UInt32 || format == ::DataFormat::UInt16;
}
}  // namespace emu::detail
