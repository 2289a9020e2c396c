// tt-metal 0.81.1 api/compute/eltwise_unary/typecast.h: typecast_tile<IN, OUT> converts DST tile idst
// between data formats on the SFPU. Emulated: Float32 -> Float16_b (calculate_typecast_fp32_to_fp16b: rounded
// to nearest, ties to even, and kept as FP32 in DST), Float16_b -> Float32 (no SFPU work: "handled by packer") and
// Int32 -> Float32 (calculate_typecast_int32_to_fp32: the nearest float32, ties to even; a 32-bit DST).
// Any other pair (ttnn's kernel_lib calls Float32 -> Int32 for Int32 reductions, reduce_helpers_compute.inl)
// stops the kernel naming it.
#pragma once

#include "api/compute/common.h"
#include "api/emu/sfpu.h"

namespace ckernel {

namespace detail {
template <uint32_t IN_DTYPE, uint32_t OUT_DTYPE>
constexpr bool typecast_emulated() {
  constexpr uint32_t f32 = static_cast<uint32_t>(DataFormat::Float32);
  constexpr uint32_t f16b = static_cast<uint32_t>(DataFormat::Float16_b);
  constexpr uint32_t i32 = static_cast<uint32_t>(DataFormat::Int32);
  return (IN_DTYPE == f32 && OUT_DTYPE == f16b) || (IN_DTYPE == f16b && OUT_DTYPE == f32) ||
         (IN_DTYPE == i32 && OUT_DTYPE == f32);
}
}  // namespace detail

template <uint32_t IN_DTYPE, uint32_t OUT_DTYPE, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void typecast_tile(uint32_t idst, Loc loc = Loc::current()) {
  if constexpr (!detail::typecast_emulated<IN_DTYPE, OUT_DTYPE>()) {
    emu::k::api_errorf(loc, "typecast_tile<%u, %u> is not emulated", IN_DTYPE, OUT_DTYPE);
  } else if constexpr (IN_DTYPE == static_cast<uint32_t>(DataFormat::Float32)) {
    emu::k::sfpu_unary(emu::k::Unary::Fp32ToFp16b, idst, loc);
  } else if constexpr (IN_DTYPE == static_cast<uint32_t>(DataFormat::Int32)) {
    emu::k::sfpu_unary(emu::k::Unary::Int32ToFp32, idst, loc);
  }
}

template <uint32_t IN_DTYPE, uint32_t OUT_DTYPE>
ALWI void typecast_tile_init(Loc loc = Loc::current()) {
  if constexpr (!detail::typecast_emulated<IN_DTYPE, OUT_DTYPE>()) {
    emu::k::api_errorf(loc, "typecast_tile_init<%u, %u> is not emulated", IN_DTYPE, OUT_DTYPE);
  }
}

}  // namespace ckernel
