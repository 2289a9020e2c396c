// tt-metal 0.81.1 api/compute/reduce_custom.h on Wormhole: reduce_block_max_row, the row maximum of a block of
// block_ct_dim tiles (row_start_index .. + block_ct_dim - 1 of icb, scaled by the scaler tile's 1.0) into DST tile
// idst, as reduce_tile<MAX, REDUCE_ROW> over those tiles computes it (the header's documented equivalent); the init
// programs the packer's REDUCE_ROW edge mask (llk_pack_reduce_mask_config), the uninit clears it, as reduce_init /
// reduce_uninit do. respect_trigger (the unpack split in two halves gated by a Tensix semaphore the packer posts:
// reduce_custom.h's NOTE) in the runtime forms as tt-llk's _llk_unpack_AB_reduce_block_max_row_runtime_ and its
// uninit (wormhole_b0 llk_unpack_AB_reduce_custom_runtime.h:124-145, 169-182): the unpacker waits for a token of
// UNPACK_MATH_DONE (overlap_first_half) or FPU_SFPU before the first half of the block and of FPU_SFPU before the
// second, and the uninit takes them; in the template forms it is not emulated.
#pragma once

#include <cstdint>

#include "api/compute/reduce.h"
#include "tensor_shape.h"

namespace emu::detail {
inline void check_block_max_row(const ckernel::TensorShape& shape, bool respect_trigger, emu::k::Loc loc) {
  if (respect_trigger)
    emu::k::api_errorf(loc, "reduce_block_max_row: respect_trigger (Tensix semaphore handshake) is not emulated");
  if (shape.total_num_faces() != 4) emu::k::api_errorf(loc, "reduce_block_max_row: 32 x 32 tiles only");
}
// The block width the last runtime init programmed (the unpacker's MOP there), which the runtime call reduces.
inline thread_local std::uint32_t block_max_row_width = 0;
inline void block_max_row(std::uint32_t block_ct_dim, std::uint32_t icb, std::uint32_t icb_scaler,
                          std::uint32_t row_start_index, std::uint32_t idst, emu::k::Loc loc,
                          bool respect_trigger = false, bool overlap_first_half = false) {
  using ckernel::semaphore;
  constexpr auto unpack = emu::k::Trisc::Unpack;
  for (std::uint32_t j = 0; j < block_ct_dim; ++j) {
    if (respect_trigger && j == 0)
      emu::k::t6_semaphore_wait(unpack, overlap_first_half ? semaphore::UNPACK_MATH_DONE : semaphore::FPU_SFPU, false,
                                loc);
    if (respect_trigger && j == block_ct_dim / 2) emu::k::t6_semaphore_wait(unpack, semaphore::FPU_SFPU, false, loc);
    emu::k::reduce_tile(emu::k::Pool::Max, emu::k::RDim::Row, icb, icb_scaler, row_start_index + j, 0, idst, loc);
  }
}
}  // namespace emu::detail

namespace ckernel {

template <std::uint32_t block_ct_dim, bool respect_trigger = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void reduce_block_max_row_init(const ckernel::TensorShape& tensor_shape, std::uint32_t /*ocb*/,
                                    Loc loc = Loc::current()) {
  emu::detail::check_block_max_row(tensor_shape, respect_trigger, loc);
  emu::k::reduce_init(emu::k::RDim::Row, loc);
}
template <std::uint32_t block_ct_dim, bool respect_trigger = false, std::uint32_t num_faces = 4>
ALWI void reduce_block_max_row_init(std::uint32_t ocb, Loc loc = Loc::current()) {
  reduce_block_max_row_init<block_ct_dim, respect_trigger>(
      ckernel::tensor_shape_from_num_faces(ckernel::MAX_FACE_R_DIM, num_faces), ocb, loc);
}

template <std::uint32_t block_ct_dim, bool respect_trigger = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void reduce_block_max_row(const ckernel::TensorShape& tensor_shape, std::uint32_t icb, std::uint32_t icb_scaler,
                               std::uint32_t row_start_index, std::uint32_t idst, Loc loc = Loc::current()) {
  emu::detail::check_block_max_row(tensor_shape, respect_trigger, loc);
  emu::detail::block_max_row(block_ct_dim, icb, icb_scaler, row_start_index, idst, loc);
}
template <std::uint32_t block_ct_dim, bool respect_trigger = false, std::uint32_t num_faces = 4>
ALWI void reduce_block_max_row(std::uint32_t icb, std::uint32_t icb_scaler, std::uint32_t row_start_index,
                               std::uint32_t idst, Loc loc = Loc::current()) {
  reduce_block_max_row<block_ct_dim, respect_trigger>(
      ckernel::tensor_shape_from_num_faces(ckernel::MAX_FACE_R_DIM, num_faces), icb, icb_scaler, row_start_index,
      idst, loc);
}

template <bool respect_trigger = false>
ALWI void reduce_block_max_row_uninit(std::uint32_t /*icb*/, Loc loc = Loc::current()) {
  emu::k::reduce_uninit(loc);
}

ALWI void reduce_block_max_row_init_runtime(const ckernel::TensorShape& tensor_shape, std::uint32_t /*ocb*/,
                                            std::uint32_t block_ct_dim, std::uint32_t /*icb*/,
                                            std::uint32_t /*icb_scaler*/, bool /*respect_trigger*/ = false,
                                            Loc loc = Loc::current()) {
  emu::detail::check_block_max_row(tensor_shape, false, loc);
  emu::detail::block_max_row_width = block_ct_dim;
  emu::k::reduce_init(emu::k::RDim::Row, loc);
}
ALWI void reduce_block_max_row_init_runtime(std::uint32_t ocb, std::uint32_t block_ct_dim, std::uint32_t icb,
                                            std::uint32_t icb_scaler, bool respect_trigger = false,
                                            std::uint32_t num_faces = 4, Loc loc = Loc::current()) {
  reduce_block_max_row_init_runtime(ckernel::tensor_shape_from_num_faces(ckernel::MAX_FACE_R_DIM, num_faces), ocb,
                                    block_ct_dim, icb, icb_scaler, respect_trigger, loc);
}

// The block's width is the runtime init's (emu::detail::block_max_row_width).
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void reduce_block_max_row_runtime(const ckernel::TensorShape& tensor_shape, std::uint32_t icb,
                                       std::uint32_t icb_scaler, std::uint32_t row_start_index, std::uint32_t idst,
                                       bool respect_trigger = false, bool overlap_first_half = false,
                                       Loc loc = Loc::current()) {
  emu::detail::check_block_max_row(tensor_shape, false, loc);
  emu::detail::block_max_row(emu::detail::block_max_row_width, icb, icb_scaler, row_start_index, idst, loc,
                             respect_trigger, overlap_first_half);
}
ALWI void reduce_block_max_row_runtime(std::uint32_t icb, std::uint32_t icb_scaler, std::uint32_t row_start_index,
                                       std::uint32_t idst, bool respect_trigger = false,
                                       bool overlap_first_half = false, std::uint32_t num_faces = 4,
                                       Loc loc = Loc::current()) {
  reduce_block_max_row_runtime(ckernel::tensor_shape_from_num_faces(ckernel::MAX_FACE_R_DIM, num_faces), icb,
                               icb_scaler, row_start_index, idst, respect_trigger, overlap_first_half, loc);
}

ALWI void reduce_block_max_row_uninit_runtime(std::uint32_t /*icb*/, bool respect_trigger = false,
                                              bool overlap_first_half = false, Loc loc = Loc::current()) {
  emu::k::reduce_uninit(loc);
  if (respect_trigger) {
    emu::k::t6_semaphore_get(emu::k::Trisc::Unpack, semaphore::FPU_SFPU, loc);
    if (overlap_first_half) emu::k::t6_semaphore_get(emu::k::Trisc::Unpack, semaphore::UNPACK_MATH_DONE, loc);
  }
}

}  // namespace ckernel
