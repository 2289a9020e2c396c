// ttnn's SDPA SFPU sequences (tt-metal 0.81.1 hw/ckernels/wormhole_b0/metal/llk_api/experimental/llk_sfpu/
// ckernel_sfpu_sdpa.h), with their LLK semantics on the DST tile the SFPU call points at
// (llk_math_eltwise_unary_sfpu_macros.h, emu::detail::sfpu_target):
// - calculate_exponential_first_column<approx, scale_bf16, fp32>: exp(x * scale) (ckernel_sfpu_sdpa.h:193-214:
//   _ckernel_sfpu_exp_accurate_ with SCALE_EN, or the polynomial with SCALE_EN, degree 4 with a float32 DST, 2
//   without), and calculate_recip_first_column<fp32>: 1 / x (:33-50, sfpu_reciprocal_iter), each on 4 of a
//   face's 8 SFPU iterations (ITERATIONS_HALF_FACE, dst_reg += 2) of the faces VectorMode::C selects (0 and 2):
//   column 0 of the tile's 32 rows, where a row statistic lives (runtime sfpu_unary_first_column); called raw
//   (outside SFPU_UNARY_CALL), on the one face the DST row counter points at; inside PACK(...), on the DST half the
//   packer holds, on its clock. The emulator's
//   exp is its Exp / ExpFast (runtime sfpu.cpp), the reciprocal the arch's sfpu_reciprocal_iter for the kernel's DST
//   (runtime sfpu_recip.cpp, sfpu_sdpa_recip_fn), rounded to DST's format.
// - calculate_fused_max_sub_exp_add_tile and calculate_softplus_first_column (ring / joint attention only), and
//   raw SFPI (sfpi::vFloat, dst_reg, v_if: a kernel's own SFPU code): not emulated.
#pragma once

#include <sys/types.h>  // uint, which the SDPA kernel's softplus_tile_first_column takes (the RISC-V libc's too)

#include <bit>
#include <cstdint>

#include "ckernel_sfpu_recip.h"
#include "llk_math_eltwise_unary_sfpu_macros.h"

namespace emu::detail {
inline void sdpa_first_column(emu::k::Unary op, float scale, const char* fn) {
  const emu::k::Loc loc = emu::k::Loc::current();
  const bool on_pack = emu::k::current_trisc == emu::k::Trisc::Pack;  // PACK(...): the packer drives the SFPU
  if (sfpu_target.raw) {
    // A raw call (compute_streaming.hpp recip_tile_first_column_wh_idst0_direct): the face the DST row counter
    // points at, one of the two holding column 0
    const std::uint32_t face = sfpu_dst_row % 64 / 16;
    if (sfpu_dst_row % 16 || (face != 0 && face != 2))
      emu::k::api_errorf(loc, "%s: a raw call at DST row %u: the emulator models it at the start of face 0 or 2", fn,
                         sfpu_dst_row);
    emu::k::sfpu_unary_first_column(op, sfpu_dst_row / 64, static_cast<std::uint8_t>(1u << face), scale, on_pack,
                                    fn, loc);
    return;
  }
  if (sfpu_target.vector_mode != ckernel::VectorMode::C)
    emu::k::api_errorf(loc, "%s: the emulator models it with VectorMode::C (the first column) only", fn);
  emu::k::sfpu_unary_first_column(op, sfpu_target.dst_index, 0b0101, scale, on_pack, fn, loc);
}
}  // namespace emu::detail

namespace ckernel::sfpu {

template <bool is_fp32_dest_acc_en>
inline void calculate_recip_first_column() {
  emu::detail::sdpa_first_column(APPROX ? emu::k::Unary::RecipFast : emu::k::Unary::Recip, 1.0f,
                                 "calculate_recip_first_column");
}

template <bool SDPA_EXP_APPROX_MODE, std::uint16_t scale_bf16, bool is_fp32_dest_acc_en>
inline void calculate_exponential_first_column() {
  const float scale = std::bit_cast<float>(static_cast<std::uint32_t>(scale_bf16) << 16);
  emu::detail::sdpa_first_column(SDPA_EXP_APPROX_MODE ? emu::k::Unary::ExpFast : emu::k::Unary::Exp, scale,
                                 "calculate_exponential_first_column");
}

template <bool is_fp32_dest_acc_en, bool reuse_cur_max_tile = false>
inline void calculate_fused_max_sub_exp_add_tile(int /*scale_bf16*/) {
  emu::k::api_errorf(emu::k::Loc::current(), "calculate_fused_max_sub_exp_add_tile: not emulated");
}

template <bool is_fp32_dest_acc_en>
inline void calculate_softplus_first_column(std::uint32_t /*param0*/, std::uint32_t /*param1*/,
                                            std::uint32_t /*param2*/) {
  emu::k::api_errorf(emu::k::Loc::current(), "calculate_softplus_first_column: not emulated");
}

}  // namespace ckernel::sfpu

// SFPI (tt-metal third_party/sfpi): the vector types of a kernel's own SFPU code compile; reading or writing DST
// through them stops the kernel (the one caller, _llk_math_eltwise_binary_sfpu_params_, stops first).
namespace sfpi {
struct vFloat {
  vFloat operator-(const vFloat&) const { return {}; }
  vFloat operator*(const vFloat&) const { return {}; }
  vFloat operator+(const vFloat&) const { return {}; }
  bool operator<(const vFloat&) const { return false; }
  bool operator>(const vFloat&) const { return false; }
};
struct DstReg {
  vFloat& operator[](int) const {
    emu::k::api_errorf(emu::k::Loc::current(), "sfpi::dst_reg: a kernel's own SFPI code is not emulated");
  }
  DstReg& operator++(int) { return *this; }
  DstReg& operator+=(int) { return *this; }
};
inline DstReg dst_reg;
}  // namespace sfpi

#define v_if(cond) if (cond)
#define v_else else
#define v_endif
