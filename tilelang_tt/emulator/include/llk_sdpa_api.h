// LLK calls of ttnn's SDPA compute kernel that the emulator declares and does not emulate (a kernel that calls one
// stops, naming it), with the signatures of tt-metal 0.81.1's llk_api (hw/ckernels/wormhole_b0/metal/llk_api/
// llk_unpack_A_api.h:24, llk_math_unary_datacopy_api.h:67, llk_pack_tile_api.h:30 and :69), which its compute
// kernel reaches through api/compute/tile_move_copy.h and pack.h there (under TRISC_UNPACK / TRISC_MATH /
// TRISC_PACK).
#pragma once

#include <cstdint>

#include "api/compute/common.h"  // the ckernel enums, visible unqualified as in tt-metal's compute build
#include "api/emu/not_emulated.h"

template <BroadcastType BType = BroadcastType::NONE, bool acc_to_dest = false,
          EltwiseBinaryReuseDestType binary_reuse_dest = EltwiseBinaryReuseDestType::NONE,
          bool unpack_to_dest = false>
inline void llk_unpack_A_init(const std::uint32_t /*transpose_of_faces*/,
                              const std::uint32_t /*within_face_16x16_transpose*/, const std::uint32_t /*operand*/,
                              emu::k::Loc loc = emu::k::Loc::current()) {
  emu::detail::llk_not_emulated("llk_unpack_A_init", loc);
}

template <DataCopyType type, bool is_fp32_dest_acc_en,
          BroadcastType src_b_bcast_type = BroadcastType::NONE, bool is_int_fpu_en = false,
          PackMode pack_mode = PackMode::Default>
inline void llk_math_eltwise_unary_datacopy_init(const std::uint32_t /*operand*/,
                                                 emu::k::Loc loc = emu::k::Loc::current()) {
  emu::detail::llk_not_emulated("llk_math_eltwise_unary_datacopy_init", loc);
}

template <PackMode pack_mode = PackMode::Default, bool zero_output = false,
          bool skip_addrmod_config = false, bool skip_packer_strides = false>
inline void llk_pack_init(const std::uint32_t /*pack_output*/, std::uint32_t /*num_tiles*/ = 1,
                          emu::k::Loc loc = emu::k::Loc::current()) {
  emu::detail::llk_not_emulated("llk_pack_init", loc);
}

template <bool is_fp32_dest_acc_en, bool out_of_order_output = false,
          PackMode pack_mode = PackMode::Default>
inline void llk_pack(std::uint32_t /*tile_index*/, std::uint32_t /*output*/, std::uint32_t /*output_tile_index*/ = 0,
                     emu::k::Loc loc = emu::k::Loc::current()) {
  emu::detail::llk_not_emulated("llk_pack", loc);
}
