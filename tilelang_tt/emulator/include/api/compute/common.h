// Compute kernel API basics (tt-metal api/compute/common.h): args, CB calls, the ckernel enums.
// The compute API lives in namespace ckernel, which is made visible to kernel sources as in
// the tt-metal compute build.
#pragma once

#include <cstdint>

#include "api/emu/kernel_common.h"
#include "api/debug/assert.h"  // as tt-metal 0.81.1's api/compute/common.h does
#include "api/emu/cb_interface.h"  // get_local_cb_interface: common_globals.h -> llk_unpack_common_api.h -> llk_io.h there
#include "ckernel.h"  // mailbox_read / mailbox_write: common_globals.h reaches tt-llk's ckernel.h there
#include "api/emu/chlkc_descriptors.h"
#include "api/emu/llk_calls.h"
#include "llk_defs.h"

namespace ckernel {

using emu::k::Loc;

enum class SrcOrder : uint8_t { Regular = 0, Reverse = 1 };

// Tile geometry (tt-llk ckernel_defs.h).
constexpr std::uint32_t FACE_R_DIM = 16;
constexpr std::uint32_t FACE_C_DIM = 16;
constexpr std::uint32_t TILE_R_DIM = 32;
constexpr std::uint32_t TILE_C_DIM = 32;

// Per-kernel constants of tt-metal's JIT build (its generated chlkc_descriptors.h): DST_ACCUM_MODE in
// api/emu/chlkc_descriptors.h; APPROX, the kernel's ComputeConfig::math_approx_mode, which the emulator's
// builds pass as TT_EMU_MATH_APPROX_MODE (device_types.hpp; add_kernel checks that the program configures
// the same).
constexpr bool APPROX = TT_EMU_MATH_APPROX_MODE != 0;

namespace detail {
inline emu::k::Bcast bcast_of(BroadcastType b) {
  switch (b) {
    case BroadcastType::ROW: return emu::k::Bcast::Row;
    case BroadcastType::COL: return emu::k::Bcast::Col;
    case BroadcastType::SCALAR: return emu::k::Bcast::Scalar;
    case BroadcastType::NONE: break;
  }
  return emu::k::Bcast::None;
}
constexpr emu::k::BinaryOp binary_of(EltwiseBinaryType t) {
  return t == EltwiseBinaryType::ELWADD ? emu::k::BinaryOp::Add
         : t == EltwiseBinaryType::ELWSUB ? emu::k::BinaryOp::Sub
                                          : emu::k::BinaryOp::Mul;
}
template <EltwiseBinaryType t>
constexpr void check_fpu_binary() {
  static_assert(t == EltwiseBinaryType::ELWADD || t == EltwiseBinaryType::ELWSUB || t == EltwiseBinaryType::ELWMUL,
                "emulator: FPU binary op must be ELWADD, ELWSUB or ELWMUL");
}
}  // namespace detail

}  // namespace ckernel

using namespace ckernel;

// The address of runtime arg `arg_idx` (tt-metal: &rta_l1_base[arg_idx] in L1; here in the launch's copy of
// the args), which the kernel may read through; an index past the args set is an error (tt-metal's watcher
// assert DebugAssertRtaOutOfBounds).
static FORCE_INLINE uintptr_t get_arg_addr(int arg_idx, emu::k::Loc loc = emu::k::Loc::current()) {
  return emu::k::arg_addr(static_cast<uint32_t>(arg_idx), false, loc);
}

static FORCE_INLINE uintptr_t get_common_arg_addr(int arg_idx, emu::k::Loc loc = emu::k::Loc::current()) {
  return emu::k::arg_addr(static_cast<uint32_t>(arg_idx), true, loc);
}


// api/compute/common_globals.h: code for one TRISC (MATH(x) only in the math build ...). The emulator's
// compute kernel is all three TRISCs in one build: each runs its part, with the TRISC it runs on named for the
// calls that depend on it (the Tensix semaphores: emu::k::current_trisc). A block, as kernels pass statements
// (`PACK(x = y;)`, `PACK(ASSERT(...))`) and follow the macro with a semicolon or not.
#define MATH(...) { ::emu::k::OnTrisc emu_trisc_(::emu::k::Trisc::Math); __VA_ARGS__; }
#define PACK(...) { ::emu::k::OnTrisc emu_trisc_(::emu::k::Trisc::Pack); __VA_ARGS__; }
#define UNPACK(...) { ::emu::k::OnTrisc emu_trisc_(::emu::k::Trisc::Unpack); __VA_ARGS__; }

// What tt-metal's common.h includes. Each of these includes this header first; #pragma once makes
// that a no-op here, so they come after everything above, which they use.
#include "api/compute/reg_api.h"
#include "api/compute/pack.h"
#include "api/compute/reconfig_data_format.h"
#include "api/compute/cb_api.h"
#include "api/compute/compute_kernel_hw_startup.h"
