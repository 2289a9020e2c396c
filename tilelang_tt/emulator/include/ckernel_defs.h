// The pieces of tt-llk's ckernel_defs.h (tt_llk_wormhole_b0/common/inc/ckernel_defs.h:73) kernels name: the
// ThreadId of each RISC-V of a Tensix core, the mailboxes' addresses (ckernel.h mailbox_write / mailbox_read), and
// the tile's geometry.
#pragma once

#include <cstdint>

namespace ckernel {

enum ThreadId { BriscThreadId = 0, UnpackThreadId = 1, MathThreadId = 2, PackThreadId = 3 };

// The tile's geometry (ckernel_defs.h:113-116).
constexpr std::uint32_t FACE_HEIGHT = 16;
constexpr std::uint32_t FACE_WIDTH = 16;
constexpr std::uint32_t TILE_HEIGHT = 32;
constexpr std::uint32_t TILE_WIDTH = 32;

}  // namespace ckernel
