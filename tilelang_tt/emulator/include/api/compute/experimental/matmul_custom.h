// tt-metal 0.81.1 api/compute/experimental/matmul_custom.h: matmul_block without the math MOP (the math thread
// issues the block's MVMULs itself, llk_math_matmul_no_mop) and matmul_set_in1_column_stride (in1's tiles
// stride_tiles apart in its CB). The product is matmul_block's: DST[idst + r * ct_dim + c] += in0[in0_tile_index +
// r * kt_dim] x in1[in1_tile_index + c] (api/compute/matmul.h), the same cycles (ASSUMPTION: the MOP and the
// instructions issued one by one take the matrix unit as long). The column stride is not emulated.
#pragma once

#include "api/compute/matmul.h"

#ifndef MM_THROTTLE
#define MM_THROTTLE 0
#endif

namespace ckernel {

ALWI void matmul_set_in1_column_stride(uint32_t /*in1_cb_id*/, uint32_t /*stride_tiles*/, Loc loc = Loc::current()) {
  emu::k::api_errorf(loc, "matmul_set_in1_column_stride: not emulated");
}

ALWI void mm_no_mop_init_short(uint32_t in0_cb_id, uint32_t in1_cb_id, const bool transpose = false,
                               uint32_t ct_dim = 1, uint32_t rt_dim = 1, uint32_t kt_dim = 1,
                               Loc loc = Loc::current()) {
  emu::k::matmul_init("mm_no_mop_init_short", transpose, ct_dim, rt_dim, kt_dim, loc);
}

ALWI void matmul_block_no_mop(uint32_t in0_cb_id, uint32_t in1_cb_id, uint32_t in0_tile_index,
                              uint32_t in1_tile_index, uint32_t idst, const bool transpose, uint32_t ct_dim,
                              uint32_t rt_dim, uint32_t kt_dim, Loc loc = Loc::current()) {
  emu::k::matmul_block(in0_cb_id, in1_cb_id, in0_tile_index, in1_tile_index, idst, transpose, ct_dim, rt_dim, kt_dim,
                       loc);
}

ALWI void mm_no_mop_reinit_short(uint32_t in0_cb_id, uint32_t in1_cb_id, const bool transpose = false,
                                 uint32_t ct_dim = 1, uint32_t rt_dim = 1, uint32_t kt_dim = 1,
                                 Loc loc = Loc::current()) {
  emu::k::matmul_init("mm_no_mop_reinit_short", transpose, ct_dim, rt_dim, kt_dim, loc);
}

// The _fidelity forms take the math fidelity as a template argument instead of the kernel's: the emulator's
// matmul uses the kernel's (ComputeConfig::math_fidelity), so another one is refused.
template <MathFidelity math_fidelity>
ALWI void mm_no_mop_init_short_fidelity(uint32_t in0_cb_id, uint32_t in1_cb_id, const bool transpose = false,
                                        uint32_t ct_dim = 1, uint32_t rt_dim = 1, uint32_t kt_dim = 1,
                                        Loc loc = Loc::current()) {
  if (math_fidelity != MATH_FIDELITY)
    emu::k::api_errorf(loc, "mm_no_mop_init_short_fidelity: a math fidelity other than the kernel's is not emulated");
  mm_no_mop_init_short(in0_cb_id, in1_cb_id, transpose, ct_dim, rt_dim, kt_dim, loc);
}

template <MathFidelity math_fidelity>
ALWI void matmul_block_no_mop_fidelity(uint32_t in0_cb_id, uint32_t in1_cb_id, uint32_t in0_tile_index,
                                       uint32_t in1_tile_index, uint32_t idst, const bool transpose, uint32_t ct_dim,
                                       uint32_t rt_dim, uint32_t kt_dim, Loc loc = Loc::current()) {
  if (math_fidelity != MATH_FIDELITY)
    emu::k::api_errorf(loc, "matmul_block_no_mop_fidelity: a math fidelity other than the kernel's is not emulated");
  matmul_block_no_mop(in0_cb_id, in1_cb_id, in0_tile_index, in1_tile_index, idst, transpose, ct_dim, rt_dim, kt_dim,
                      loc);
}

template <MathFidelity math_fidelity>
ALWI void mm_no_mop_reinit_short_fidelity(uint32_t in0_cb_id, uint32_t in1_cb_id, const bool transpose = false,
                                          uint32_t ct_dim = 1, uint32_t rt_dim = 1, uint32_t kt_dim = 1,
                                          Loc loc = Loc::current()) {
  if (math_fidelity != MATH_FIDELITY)
    emu::k::api_errorf(loc, "mm_no_mop_reinit_short_fidelity: a math fidelity other than the kernel's is not emulated");
  mm_no_mop_reinit_short(in0_cb_id, in1_cb_id, transpose, ct_dim, rt_dim, kt_dim, loc);
}

}  // namespace ckernel
