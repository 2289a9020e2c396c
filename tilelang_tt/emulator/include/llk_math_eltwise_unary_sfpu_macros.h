// tt-metal 0.81.1's SFPU launch macros (hw/ckernels/<arch>/metal/llk_api/llk_sfpu/llk_math_eltwise_unary_sfpu_macros.h)
// and what they expand to, as kernels that call an SFPU function of ckernel::sfpu themselves reach them (ttnn's SDPA
// compute kernel: SFPU_UNARY_CALL(.., calculate_exponential_first_column, ..)). There
// _llk_math_eltwise_unary_sfpu_params_ (tt-llk llk_math_eltwise_unary_sfpu_params.h) points the SFPU at DST tile
// `dst_index` and calls the function once per face the VectorMode selects; here it records the tile and the mode
// (emu::detail::sfpu_target) and calls the function once: the emulator's ckernel::sfpu functions
// (experimental/llk_sfpu/ckernel_sfpu_sdpa.h) apply their LLK semantics to the faces that mode selects. The inits
// program SFPU state (constants, address modes) the emulator does not have: they do nothing.
#pragma once

#include <cstdint>

#include "api/compute/common.h"

// The SfpuType values ttnn's SDPA kernels name (llk_sfpu_types.h, a subset; the real enum has the same names).
enum class SfpuType { exponential, reciprocal, log, softplus };

namespace emu::detail {
// The DST tile and VectorMode of the SFPU call in progress (set by _llk_math_eltwise_unary_sfpu_params_); outside
// one (`raw`) an SFPU function works on the face at the DST row counter (ckernel.h emu::detail::sfpu_dst_row).
struct SfpuTarget {
  std::uint32_t dst_index = 0;
  ckernel::VectorMode vector_mode = ckernel::VectorMode::RC;
  bool raw = true;
};
inline thread_local SfpuTarget sfpu_target{};
}  // namespace emu::detail

template <typename Callable, typename... Args>
inline void _llk_math_eltwise_unary_sfpu_params_(Callable&& sfpu_func, std::uint32_t dst_index,
                                                 ckernel::VectorMode vector_mode = ckernel::VectorMode::RC,
                                                 Args&&... args) {
  emu::detail::sfpu_target = {dst_index, vector_mode, false};
  static_cast<Callable&&>(sfpu_func)(static_cast<Args&&>(args)...);
  emu::detail::sfpu_target.raw = true;
  emu::detail::sfpu_dst_row = 0;
}

// The binary form (tt-llk llk_math_eltwise_binary_sfpu_params.h) runs a kernel's own SFPI code on two DST tiles:
// not emulated.
template <typename Callable, typename... Args>
inline void _llk_math_eltwise_binary_sfpu_params_(Callable&& /*sfpu_func*/, std::uint32_t /*dst_index_in0*/,
                                                  std::uint32_t /*dst_index_in1*/, std::uint32_t /*dst_index_out*/,
                                                  ckernel::VectorMode /*vector_mode*/ = ckernel::VectorMode::RC,
                                                  Args&&... /*args*/) {
  emu::k::api_errorf(emu::k::Loc::current(),
                     "_llk_math_eltwise_binary_sfpu_params_: a kernel's own SFPI code is not emulated");
}

namespace ckernel {
// llk_math_eltwise_unary_sfpu_init.h:262 (and its no-argument form)
template <SfpuType sfpu_op, class F, class... ARGS>
inline void llk_math_eltwise_unary_sfpu_init(F&& /*init_func*/, ARGS&&... /*args*/) {}
template <SfpuType sfpu_op, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
inline void llk_math_eltwise_unary_sfpu_init() {}
}  // namespace ckernel

#define _SFPU_EXPAND(...) __VA_ARGS__
#define SFPU_UNARY_CALL(DST_SYNC, DST_ACCUM, FN, TEMPLATES, DST_IDX, VECTOR_MODE, ...) \
  _llk_math_eltwise_unary_sfpu_params_(::ckernel::sfpu::FN<_SFPU_EXPAND TEMPLATES>, DST_IDX, VECTOR_MODE, ##__VA_ARGS__)
#define SFPU_UNARY_INIT(OP) ::ckernel::llk_math_eltwise_unary_sfpu_init<::SfpuType::OP, DST_ACCUM_MODE>()
#define SFPU_UNARY_INIT_FN(OP, INIT_FN, TEMPLATES) \
  ::ckernel::llk_math_eltwise_unary_sfpu_init<::SfpuType::OP>(INIT_FN<_SFPU_EXPAND TEMPLATES>)
