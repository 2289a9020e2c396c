// The pieces of tt-llk's ckernel.h (common/inc/ckernel.h) kernels reach on the emulator: load_blocking, the
// load that waits for the core's earlier stores to land (ttnn's pad_tile.hpp drains its padding stores with
// it; the emulator's stores land at once: a plain load), and the mailboxes between the core's RISC-Vs
// (ckernel.h:549-558): mailbox_write(thread, data) sends `data` to `thread` (a ckernel_defs.h ThreadId),
// mailbox_read(thread) waits for the next message from `thread` to the caller and returns it
// (runtime/dataflow.cpp says which thread a kernel is). Also the Tensix thread semaphores (ckernel_structs.h
// semaphore; t6_semaphore_*: ckernel.h:298-338, the runtime's t6_semaphore_*, on the clock of the TRISC whose
// UNPACK / MATH / PACK code issues them), the stall conditions (ckernel_instr_params.h p_stall, p_setrwc) and the two
// raw instructions ttnn's SDPA streaming kernel issues (ckernel_ops.h): TTI_STALLWAIT (a TRISC waits for its own
// engines: the emulator's clocks already run each TRISC's work in order, so it changes nothing) and TTI_SETRWC in its
// "DST row counter += n" form (CR_D with SET_D), which moves where a raw SFPU call works
// (llk_math_eltwise_unary_sfpu_macros.h emu::detail::sfpu_target).
#pragma once

#include <cstdint>
#include <type_traits>

#include "ckernel_defs.h"
#include "kernel_api.hpp"

namespace ckernel {

// The Tensix thread semaphores (ckernel_structs.h:13-31).
struct semaphore {
  constexpr static std::uint32_t FPU_SFPU = 0;
  constexpr static std::uint32_t MATH_PACK = 1;
  constexpr static std::uint32_t UNPACK_TO_DEST = 2;
  constexpr static std::uint32_t UNPACK_OPERAND_SYNC = 3;
  constexpr static std::uint32_t PACK_DONE = 4;
  constexpr static std::uint32_t UNPACK_SYNC = 5;
  constexpr static std::uint32_t UNPACK_MATH_DONE = 6;
  constexpr static std::uint32_t MATH_DONE = 7;
  constexpr static std::uint8_t NUM_SEMAPHORES = 8;
};

// What an instruction stalls on and what it stalls (ckernel_instr_params.h:214-255).
struct p_stall {
  constexpr static std::uint32_t NONE = 0x0;
  constexpr static std::uint32_t THCON = 0x1;
  constexpr static std::uint32_t UNPACK0 = 0x2;
  constexpr static std::uint32_t UNPACK1 = 0x4;
  constexpr static std::uint32_t UNPACK = UNPACK0 | UNPACK1;
  constexpr static std::uint32_t PACK0 = 0x8;
  constexpr static std::uint32_t PACK1 = 0x10;
  constexpr static std::uint32_t PACK2 = 0x20;
  constexpr static std::uint32_t PACK3 = 0x40;
  constexpr static std::uint32_t PACK = PACK0 | PACK1 | PACK2 | PACK3;
  constexpr static std::uint32_t MATH = 0x80;
  constexpr static std::uint32_t SRCA_CLR = 0x100;
  constexpr static std::uint32_t SRCB_CLR = 0x200;
  constexpr static std::uint32_t SRCA_VLD = 0x400;
  constexpr static std::uint32_t SRCB_VLD = 0x800;
  constexpr static std::uint32_t XMOV = 0x1000;
  constexpr static std::uint32_t TRISC_CFG = 0x2000;
  constexpr static std::uint32_t SFPU1 = 0x4000;
  constexpr static std::uint32_t WAIT_SFPU = 0x4000;
  constexpr static std::uint32_t ALL_THREAD_RES = THCON | UNPACK | PACK | MATH | XMOV;
  constexpr static std::uint32_t STALL_TDMA = 0x1;
  constexpr static std::uint32_t STALL_SYNC = 0x2;
  constexpr static std::uint32_t STALL_PACK = 0x4;
  constexpr static std::uint32_t STALL_UNPACK = 0x8;
  constexpr static std::uint32_t STALL_XMOV = 0x10;
  constexpr static std::uint32_t STALL_THCON = 0x20;
  constexpr static std::uint32_t STALL_MATH = 0x40;
  constexpr static std::uint32_t STALL_CFG = 0x80;
  constexpr static std::uint32_t STALL_SFPU = 0x100;
  constexpr static std::uint32_t STALL_THREAD = 0x1ff;
  constexpr static std::uint32_t STALL_ON_ZERO = 0x1;
  constexpr static std::uint32_t STALL_ON_MAX = 0x2;
};

// SETRWC's fields (ckernel_instr_params.h:16-50).
struct p_setrwc {
  constexpr static std::uint32_t CLR_A = 0x1;
  constexpr static std::uint32_t CLR_B = 0x2;
  constexpr static std::uint32_t CLR_AB = 0x3;
  constexpr static std::uint32_t CLR_NONE = 0x0;
  constexpr static std::uint32_t SET_A = 0x1;
  constexpr static std::uint32_t SET_B = 0x2;
  constexpr static std::uint32_t SET_AB = 0x3;
  constexpr static std::uint32_t SET_D = 0x4;
  constexpr static std::uint32_t SET_AD = 0x5;
  constexpr static std::uint32_t SET_BD = 0x6;
  constexpr static std::uint32_t SET_ABD = 0x7;
  constexpr static std::uint32_t SET_F = 0x8;
  constexpr static std::uint32_t CR_A = 0x1;
  constexpr static std::uint32_t CR_B = 0x2;
  constexpr static std::uint32_t CR_AB = 0x3;
  constexpr static std::uint32_t CR_D = 0x4;
  constexpr static std::uint32_t CR_AD = 0x5;
  constexpr static std::uint32_t CR_BD = 0x6;
  constexpr static std::uint32_t CR_ABD = 0x7;
};

template <std::uint32_t WaitRes = p_stall::NONE>
inline void t6_semaphore_post(const std::uint8_t index, emu::k::Loc loc = emu::k::Loc::current()) {
  emu::k::t6_semaphore_post(emu::k::current_trisc, index, loc);
}
template <std::uint32_t WaitRes = p_stall::NONE>
inline void t6_semaphore_get(const std::uint8_t index, emu::k::Loc loc = emu::k::Loc::current()) {
  emu::k::t6_semaphore_get(emu::k::current_trisc, index, loc);
}
template <std::uint32_t WaitRes>
inline void t6_semaphore_wait_on_zero(const std::uint8_t index, emu::k::Loc loc = emu::k::Loc::current()) {
  emu::k::t6_semaphore_wait(emu::k::current_trisc, index, false, loc);
}
template <std::uint32_t WaitRes>
inline void t6_semaphore_wait_on_max(const std::uint8_t index, emu::k::Loc loc = emu::k::Loc::current()) {
  emu::k::t6_semaphore_wait(emu::k::current_trisc, index, true, loc);
}
inline void t6_semaphore_init(const std::uint8_t index, const std::uint8_t min_value, const std::uint8_t max_value,
                              emu::k::Loc loc = emu::k::Loc::current()) {
  emu::k::t6_semaphore_init(emu::k::current_trisc, index, min_value, max_value, loc);
}

template <typename T, typename = std::enable_if_t<std::is_trivially_copyable_v<T>>>
inline T load_blocking(volatile T* ptr) {
  static_assert(sizeof(T) == sizeof(std::uint16_t) || sizeof(T) == sizeof(std::uint32_t),
                "load_blocking: operand must be 16-bit or 32-bit");
  return *ptr;
}

inline void mailbox_write(const std::uint8_t thread, const std::uint32_t data,
                          emu::k::Loc loc = emu::k::Loc::current()) {
  emu::k::mailbox_write(thread, data, loc);
}

[[nodiscard]] inline std::uint32_t mailbox_read(const std::uint8_t thread, emu::k::Loc loc = emu::k::Loc::current()) {
  return emu::k::mailbox_read(thread, loc);
}

}  // namespace ckernel

// Raw Tensix instructions (ckernel_ops.h), as the header comment says.
namespace emu::detail {
// The math thread's DST row counter, where a raw SFPU call works (a tile is 64 rows: 4 faces of 16). 0 after an SFPU
// call through _llk_math_eltwise_unary_sfpu_params_ (its _llk_math_eltwise_unary_sfpu_done_ clears the counter).
inline thread_local std::uint32_t sfpu_dst_row = 0;
inline void sfpu_dst_rows_forward(std::uint32_t clear_ab_vld, std::uint32_t rwc_cr, std::uint32_t rwc_d,
                                  std::uint32_t rwc_b, std::uint32_t rwc_a, std::uint32_t bit_mask, emu::k::Loc loc) {
  using ckernel::p_setrwc;
  if (clear_ab_vld != p_setrwc::CLR_NONE || rwc_cr != p_setrwc::CR_D || bit_mask != p_setrwc::SET_D || rwc_b || rwc_a)
    emu::k::api_errorf(loc, "TTI_SETRWC: only the DST counter step (CLR_NONE, CR_D, n, 0, 0, SET_D) is emulated");
  sfpu_dst_row += rwc_d;
}
}  // namespace emu::detail
#define TTI_STALLWAIT(stall_res, wait_res) static_cast<void>(0)
#define TTI_SETRWC(clear_ab_vld, rwc_cr, rwc_d, rwc_b, rwc_a, BitMask) \
  ::emu::detail::sfpu_dst_rows_forward(clear_ab_vld, rwc_cr, rwc_d, rwc_b, rwc_a, BitMask, ::emu::k::Loc::current())
