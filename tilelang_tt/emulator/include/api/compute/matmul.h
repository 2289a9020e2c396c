// Tile matmul accumulating into DST (tt-metal api/compute/matmul.h):
// DST[idst] += A[in0_tile_index] x B[in1_tile_index] (B transposed when matmul_init's transpose is set).
#pragma once

#include "api/compute/common.h"

namespace ckernel {

ALWI void matmul_init(std::uint32_t /*in0_cb_id*/, std::uint32_t /*in1_cb_id*/, const std::uint32_t transpose = 0,
                      std::uint32_t /*call_line*/ = __builtin_LINE(), Loc loc = Loc::current()) {
  emu::k::matmul_init(transpose, loc);
}

ALWI void matmul_tiles(std::uint32_t in0_cb_id, std::uint32_t in1_cb_id, std::uint32_t in0_tile_index,
                       std::uint32_t in1_tile_index, std::uint32_t idst, Loc loc = Loc::current()) {
  emu::k::matmul_tiles(in0_cb_id, in1_cb_id, in0_tile_index, in1_tile_index, idst, loc);
}

ALWI void matmul_block_init(std::uint32_t /*in0_cb_id*/, std::uint32_t /*in1_cb_id*/,
                            const std::uint32_t transpose = 0, std::uint32_t /*ct_dim*/ = 1,
                            std::uint32_t /*rt_dim*/ = 1, std::uint32_t /*kt_dim*/ = 1,
                            std::uint32_t /*call_line*/ = __builtin_LINE(), Loc loc = Loc::current()) {
  emu::k::matmul_init(transpose, loc);
}

// One K step of an rt_dim x ct_dim output block: DST[idst + r*ct_dim + c] +=
// A[in0_tile_index + r*kt_dim] x B[in1_tile_index + c].
ALWI void matmul_block(std::uint32_t in0_cb_id, std::uint32_t in1_cb_id, std::uint32_t in0_tile_index,
                       std::uint32_t in1_tile_index, std::uint32_t idst, const std::uint32_t /*transpose*/,
                       std::uint32_t ct_dim, std::uint32_t rt_dim, std::uint32_t kt_dim,
                       std::uint32_t /*call_line*/ = __builtin_LINE(), Loc loc = Loc::current()) {
  for (std::uint32_t r = 0; r < rt_dim; ++r)
    for (std::uint32_t c = 0; c < ct_dim; ++c)
      emu::k::matmul_tiles(in0_cb_id, in1_cb_id, in0_tile_index + r * kt_dim, in1_tile_index + c,
                           idst + r * ct_dim + c, loc);
}

}  // namespace ckernel
