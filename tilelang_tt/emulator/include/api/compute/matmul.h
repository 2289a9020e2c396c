// Tile matmul accumulating into DST (tt-metal api/compute/matmul.h):
// matmul_tiles: DST[idst] += A[in0_tile_index] x B[in1_tile_index];
// matmul_block: one K step of an rt_dim x ct_dim output block, DST[idst + r*ct_dim + c] +=
// A[in0_tile_index + r*kt_dim] x B[in1_tile_index + c] (llk_unpack_AB_matmul, llk_math_matmul).
// B's tiles are transposed when the init's transpose is set; the init also programs the loops the
// calls run, which serve blocks of its reuse kind only (runtime/compute.cpp).
#pragma once

#include "api/compute/common.h"

namespace ckernel {

ALWI void matmul_init(std::uint32_t /*in0_cb_id*/, std::uint32_t /*in1_cb_id*/, const std::uint32_t transpose = 0,
                      std::uint32_t /*call_line*/ = __builtin_LINE(), Loc loc = Loc::current()) {
  emu::k::matmul_init("matmul_init", transpose, 1, 1, 1, loc);
}

ALWI void matmul_tiles(std::uint32_t in0_cb_id, std::uint32_t in1_cb_id, std::uint32_t in0_tile_index,
                       std::uint32_t in1_tile_index, std::uint32_t idst, Loc loc = Loc::current()) {
  emu::k::matmul_tiles(in0_cb_id, in1_cb_id, in0_tile_index, in1_tile_index, idst, loc);
}

ALWI void matmul_block_init(std::uint32_t /*in0_cb_id*/, std::uint32_t /*in1_cb_id*/,
                            const std::uint32_t transpose = 0, std::uint32_t ct_dim = 1, std::uint32_t rt_dim = 1,
                            std::uint32_t kt_dim = 1, std::uint32_t /*call_line*/ = __builtin_LINE(),
                            Loc loc = Loc::current()) {
  emu::k::matmul_init("matmul_block_init", transpose, ct_dim, rt_dim, kt_dim, loc);
}

ALWI void matmul_block(std::uint32_t in0_cb_id, std::uint32_t in1_cb_id, std::uint32_t in0_tile_index,
                       std::uint32_t in1_tile_index, std::uint32_t idst, const std::uint32_t transpose,
                       std::uint32_t ct_dim, std::uint32_t rt_dim, std::uint32_t kt_dim,
                       std::uint32_t /*call_line*/ = __builtin_LINE(), Loc loc = Loc::current()) {
  emu::k::matmul_block(in0_cb_id, in1_cb_id, in0_tile_index, in1_tile_index, idst, transpose, ct_dim, rt_dim, kt_dim,
                       loc);
}

}  // namespace ckernel
