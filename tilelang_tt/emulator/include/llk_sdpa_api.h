// LLK calls of ttnn's SDPA compute kernel, with the signatures of tt-metal 0.81.1's llk_api (hw/ckernels/wormhole_b0/
// metal/llk_api/llk_unpack_A_api.h:24, llk_math_unary_datacopy_api.h:67, llk_pack_tile_api.h:30 and :69), which its
// compute kernel reaches through api/compute/tile_move_copy.h and pack.h there (under TRISC_UNPACK / TRISC_MATH /
// TRISC_PACK). llk_pack_init programs the packer's MOP for `num_tiles` tiles, and llk_pack packs that many DST tiles
// from tile_index to consecutive places from output_tile_index (llk_pack_tile_api.h:30-99; the width stays until the
// next llk_pack_init; the compute API's pack_tile, which the kernel reaches after configure_single_tile_pack, packs
// one). llk_unpack_A_init and llk_math_eltwise_unary_datacopy_init are the two halves of a copy_tile init: nothing,
// as copy_init (api/compute/tile_move_copy.h): the emulator's copy_tile copies the tile as the compute API
// documents. SDPA's form with the within-face transpose (compute_common.hpp:35-45) loads the previous row maxima
// where the device's reduce_block_max_row accumulates (its in-DST layout, compute_common.hpp:208-211); the emulator's
// reduce accumulates in the tile's own layout, where a plain copy puts them.
#pragma once

#include <cstdint>

#include "api/compute/common.h"  // the ckernel enums, visible unqualified as in tt-metal's compute build

template <BroadcastType BType = BroadcastType::NONE, bool acc_to_dest = false,
          EltwiseBinaryReuseDestType binary_reuse_dest = EltwiseBinaryReuseDestType::NONE,
          bool unpack_to_dest = false>
inline void llk_unpack_A_init(const std::uint32_t /*transpose_of_faces*/,
                              const std::uint32_t /*within_face_16x16_transpose*/, const std::uint32_t /*operand*/) {
  static_assert(BType == BroadcastType::NONE && !acc_to_dest && binary_reuse_dest == EltwiseBinaryReuseDestType::NONE,
                "emulator: llk_unpack_A_init models the plain copy (no broadcast, accumulation or DST reuse)");
}

template <DataCopyType type, bool is_fp32_dest_acc_en,
          BroadcastType src_b_bcast_type = BroadcastType::NONE, bool is_int_fpu_en = false,
          PackMode pack_mode = PackMode::Default>
inline void llk_math_eltwise_unary_datacopy_init(const std::uint32_t /*operand*/) {
  static_assert(type == DataCopyType::A2D && src_b_bcast_type == BroadcastType::NONE && !is_int_fpu_en,
                "emulator: llk_math_eltwise_unary_datacopy_init models the A2D copy");
}

namespace emu::detail {
inline thread_local std::uint32_t llk_pack_width = 1;  // the tiles the packer's MOP packs (llk_pack_init)
}

template <PackMode pack_mode = PackMode::Default, bool zero_output = false,
          bool skip_addrmod_config = false, bool skip_packer_strides = false>
inline void llk_pack_init(const std::uint32_t /*pack_output*/, std::uint32_t num_tiles = 1,
                          emu::k::Loc loc = emu::k::Loc::current()) {
  static_assert(pack_mode == PackMode::Default, "emulator: llk_pack_init models PackMode::Default");
  static_assert(!zero_output, "emulator: llk_pack_init's zero_output is not emulated");
  if (num_tiles == 0) emu::k::api_errorf(loc, "llk_pack_init: num_tiles must be at least 1");
  emu::detail::llk_pack_width = num_tiles;
}

template <bool is_fp32_dest_acc_en, bool out_of_order_output = false,
          PackMode pack_mode = PackMode::Default>
inline void llk_pack(std::uint32_t tile_index, std::uint32_t output, std::uint32_t output_tile_index = 0,
                     emu::k::Loc loc = emu::k::Loc::current()) {
  static_assert(pack_mode == PackMode::Default, "emulator: llk_pack models PackMode::Default");
  for (std::uint32_t i = 0; i < emu::detail::llk_pack_width; ++i)
    emu::k::pack_tile(tile_index + i, output, out_of_order_output, output_tile_index + (out_of_order_output ? i : 0),
                      loc);
}
