// Data movement kernel API (tt-metal 0.81.1 api/dataflow/dataflow_api.h) on the emulator.
// Signatures match tt-metal; each call takes an extra defaulted source location used in
// protocol error messages. NOC transfers complete immediately; the barriers only mark
// completion for the protocol checks (pushing pages before noc_async_read_barrier is an error).
#pragma once

#include <cstdint>
#include <type_traits>

#include "api/compile_time_args.h"
#include "api/debug/assert.h"  // as tt-metal 0.81.1's does
#include "api/emu/addrgen.h"
#include "api/emu/cb_descriptors.h"
#include "api/emu/cb_interface.h"
#include "api/emu/kernel_common.h"
#include "api/tensor/tensor_accessor.h"
#include "hostdevcommon/common_values.hpp"  // INVALID, VALID: as tt-metal 0.81.1's does

using emu::k::Loc;

// The address of runtime arg `arg_idx` (tt-metal: &rta_l1_base[arg_idx] in L1; here in the launch's copy of
// the args), which the kernel may read through; an index past the args set is an error (tt-metal's watcher
// assert DebugAssertRtaOutOfBounds).
static FORCE_INLINE uintptr_t get_arg_addr(int arg_idx, emu::k::Loc loc = emu::k::Loc::current()) {
  return emu::k::arg_addr(static_cast<uint32_t>(arg_idx), false, loc);
}

static FORCE_INLINE uintptr_t get_common_arg_addr(int arg_idx, emu::k::Loc loc = emu::k::Loc::current()) {
  return emu::k::arg_addr(static_cast<uint32_t>(arg_idx), true, loc);
}


constexpr uint32_t NOC_MAX_BURST_SIZE = 8192;
constexpr uint32_t NOC_UNICAST_WRITE_VC = 1;
constexpr uint32_t NOC_MULTICAST_WRITE_VC = 4;

enum class ProgrammableCoreType : uint8_t { TENSIX = 0, ACTIVE_ETH = 1, IDLE_ETH = 2 };

// The DRAM alignment of the kernel's arch, a constant as there (tt-metal 0.81.1 internal/tt-1xx/<arch>/noc/
// noc_parameters.h: the larger of NOC_DRAM_READ_ALIGNMENT_BYTES and NOC_DRAM_WRITE_ALIGNMENT_BYTES, 32 on
// Wormhole, 64 on Blackhole); defined for the kernels built with their arch's define (runtime/jit.cpp).
#if defined(ARCH_WORMHOLE)
#define DRAM_ALIGNMENT 32u
#elif defined(ARCH_BLACKHOLE)
#define DRAM_ALIGNMENT 64u
#endif

// The core's zero region (tt-metal dev_mem_map.h): MEM_ZEROS_SIZE bytes that always read as zero.
#define MEM_ZEROS_SIZE 512
#define MEM_ZEROS_BASE (::emu::k::mem_zeros_base(Loc::current()))

// ---------------------------------------------------------------- circular buffers
FORCE_INLINE void cb_reserve_back(int32_t operand, int32_t num_pages, Loc loc = Loc::current()) {
  emu::k::cb_reserve_back(operand, num_pages, loc);
}
FORCE_INLINE void cb_push_back(const int32_t operand, const int32_t num_pages, Loc loc = Loc::current()) {
  emu::k::cb_push_back(operand, num_pages, loc);
}
FORCE_INLINE void cb_wait_front(int32_t operand, int32_t num_pages, Loc loc = Loc::current()) {
  emu::k::cb_wait_front(operand, num_pages, loc);
}
FORCE_INLINE void cb_pop_front(int32_t operand, int32_t num_pages, Loc loc = Loc::current()) {
  emu::k::cb_pop_front(operand, num_pages, loc);
}
FORCE_INLINE bool cb_pages_reservable_at_back(int32_t operand, int32_t num_pages, Loc loc = Loc::current()) {
  return emu::k::cb_pages_reservable_at_back(operand, num_pages, loc);
}
FORCE_INLINE bool cb_pages_available_at_front(int32_t operand, int32_t num_pages, Loc loc = Loc::current()) {
  return emu::k::cb_pages_available_at_front(operand, num_pages, loc);
}
FORCE_INLINE uint32_t get_write_ptr(uint32_t operand, Loc loc = Loc::current()) {
  return emu::k::get_write_ptr(operand, loc);
}
FORCE_INLINE uint32_t get_read_ptr(uint32_t operand, Loc loc = Loc::current()) {
  return emu::k::get_read_ptr(operand, loc);
}
// Bytes of one tile in the CB's data format; constant expressions when the build describes the
// program's CBs (api/emu/cb_descriptors.h).
TT_EMU_CB_CONSTEXPR inline int32_t get_tile_size(const int32_t operand, Loc loc = Loc::current()) {
  const ::DataFormat format = emu::detail::cb_dataformat(static_cast<uint32_t>(operand), loc);
  return static_cast<int32_t>(emu::detail::kernel_tile_bytes(format));
}
TT_EMU_CB_CONSTEXPR inline DataFormat get_dataformat(const int32_t operand, Loc loc = Loc::current()) {
  return emu::detail::cb_dataformat(static_cast<uint32_t>(operand), loc);
}

// ---------------------------------------------------------------- reads
template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, bool enable_noc_tracing = true>
inline void noc_async_read(uint64_t src_noc_addr, uint32_t dst_local_l1_addr, uint32_t size,
                           uint8_t /*noc*/ = noc_index, uint32_t /*vc*/ = NOC_UNICAST_WRITE_VC,
                           Loc loc = Loc::current()) {
  emu::k::noc_read(src_noc_addr, dst_local_l1_addr, size, loc);
}

template <bool enable_noc_tracing = true>
FORCE_INLINE void noc_async_read_one_packet(uint64_t src_noc_addr, uint32_t dst_local_l1_addr, uint32_t size,
                                            uint8_t /*noc*/ = noc_index, uint32_t /*vc*/ = NOC_UNICAST_WRITE_VC,
                                            Loc loc = Loc::current()) {
  emu::k::noc_read(src_noc_addr, dst_local_l1_addr, size, loc);
}

template <typename AddrGen, bool enable_noc_tracing = true>
FORCE_INLINE void noc_async_read_page(const uint32_t id, const AddrGen& addrgen, uint32_t dst_local_l1_addr,
                                      uint32_t offset = 0, uint8_t /*noc*/ = noc_index, Loc loc = Loc::current()) {
  emu::k::noc_read(addrgen.get_noc_addr(id, offset, noc_index, loc), dst_local_l1_addr,
                   emu::detail::page_size_of(addrgen), loc);
}

// tt-metal 0.81.1's deprecated forms (a warning, as there), for the generators the emulator has.
template <bool DRAM>
[[deprecated("Use <typename AddrGen> noc_async_read_page instead.")]]
FORCE_INLINE void noc_async_read_page(const uint32_t id, const InterleavedAddrGen<DRAM>& addrgen,
                                      uint32_t dst_local_l1_addr, uint32_t offset = 0, uint8_t noc = noc_index,
                                      Loc loc = Loc::current()) {
  noc_async_read_page<InterleavedAddrGen<DRAM>, false>(id, addrgen, dst_local_l1_addr, offset, noc, loc);
}
template <bool DRAM>
[[deprecated("Use <typename AddrGen> noc_async_read_page instead.")]]
FORCE_INLINE void noc_async_read_tile(const uint32_t id, const InterleavedAddrGen<DRAM>& addrgen,
                                      uint32_t dst_local_l1_addr, uint32_t offset = 0, uint8_t noc = noc_index,
                                      Loc loc = Loc::current()) {
  noc_async_read_page<InterleavedAddrGen<DRAM>, false>(id, addrgen, dst_local_l1_addr, offset, noc, loc);
}
template <typename DSpec>
[[deprecated("Use <typename AddrGen> noc_async_read_page instead.")]]
FORCE_INLINE void noc_async_read_tile(const uint32_t id, const TensorAccessor<DSpec>& addrgen,
                                      uint32_t dst_local_l1_addr, uint32_t offset = 0, uint8_t noc = noc_index,
                                      Loc loc = Loc::current()) {
  noc_async_read_page<TensorAccessor<DSpec>, false>(id, addrgen, dst_local_l1_addr, offset, noc, loc);
}
template <bool DRAM, uint32_t tile_hw>
[[deprecated("Use <typename AddrGen> noc_async_read_page instead.")]]
FORCE_INLINE void noc_async_read_tile(const uint32_t id, const InterleavedAddrGenFast<DRAM, tile_hw>& addrgen,
                                      uint32_t dst_local_l1_addr, uint32_t offset = 0, uint8_t noc = noc_index,
                                      Loc loc = Loc::current()) {
  noc_async_read_page<InterleavedAddrGenFast<DRAM, tile_hw>, false>(id, addrgen, dst_local_l1_addr, offset, noc, loc);
}

FORCE_INLINE void noc_async_read_barrier(uint8_t /*noc*/ = noc_index, Loc loc = Loc::current()) {
  emu::k::noc_read_barrier(loc);
}

// ---------------------------------------------------------------- writes
template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, bool enable_noc_tracing = true, bool posted = false>
inline void noc_async_write(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint32_t size,
                            uint8_t /*noc*/ = noc_index, uint32_t /*vc*/ = NOC_UNICAST_WRITE_VC,
                            Loc loc = Loc::current()) {
  emu::k::noc_write(src_local_l1_addr, dst_noc_addr, size, loc);
}

template <bool enable_noc_tracing = true, bool posted = false>
FORCE_INLINE void noc_async_write_one_packet(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint32_t size,
                                             uint8_t /*noc*/ = noc_index, uint32_t /*vc*/ = NOC_UNICAST_WRITE_VC,
                                             Loc loc = Loc::current()) {
  emu::k::noc_write(src_local_l1_addr, dst_noc_addr, size, loc);
}

template <typename AddrGen, bool enable_noc_tracing = true, bool posted = false>
FORCE_INLINE void noc_async_write_page(const uint32_t id, const AddrGen& addrgen, uint32_t src_local_l1_addr,
                                       uint32_t size = 0, uint32_t offset = 0, uint8_t /*noc*/ = noc_index,
                                       Loc loc = Loc::current()) {
  const uint32_t bytes = size == 0 ? emu::detail::page_size_of(addrgen) : size;
  emu::k::noc_write(src_local_l1_addr, addrgen.get_noc_addr(id, offset, noc_index, loc), bytes, loc);
}

// tt-metal 0.81.1's deprecated forms (a warning, as there), for the generators the emulator has.
template <bool DRAM>
[[deprecated("Use <typename AddrGen> noc_async_write_page instead.")]]
FORCE_INLINE void noc_async_write_page(const uint32_t id, const InterleavedAddrGen<DRAM>& addrgen,
                                       uint32_t src_local_l1_addr, const uint32_t write_size_bytes,
                                       const uint32_t offset = 0, uint8_t noc = noc_index, Loc loc = Loc::current()) {
  noc_async_write_page<InterleavedAddrGen<DRAM>, false>(id, addrgen, src_local_l1_addr, write_size_bytes, offset, noc,
                                                        loc);
}
template <bool DRAM>
[[deprecated("Use <typename AddrGen> noc_async_write_page instead.")]]
FORCE_INLINE void noc_async_write_tile(const uint32_t id, const InterleavedAddrGen<DRAM>& addrgen,
                                       uint32_t src_local_l1_addr, uint8_t noc = noc_index, Loc loc = Loc::current()) {
  noc_async_write_page<InterleavedAddrGen<DRAM>, false>(id, addrgen, src_local_l1_addr, addrgen.page_size, 0, noc,
                                                        loc);
}
template <bool DRAM, uint32_t tile_hw>
[[deprecated("Use <typename AddrGen> noc_async_write_page instead.")]]
FORCE_INLINE void noc_async_write_tile(const uint32_t id, const InterleavedAddrGenFast<DRAM, tile_hw>& addrgen,
                                       uint32_t src_local_l1_addr, uint8_t noc = noc_index, Loc loc = Loc::current()) {
  noc_async_write_page<InterleavedAddrGenFast<DRAM, tile_hw>, false>(id, addrgen, src_local_l1_addr,
                                                                     addrgen.page_size, 0, noc, loc);
}
template <typename DSpec>
[[deprecated("Use <typename AddrGen> noc_async_write_page instead.")]]
FORCE_INLINE void noc_async_write_tile(const uint32_t id, const TensorAccessor<DSpec>& addrgen,
                                       uint32_t src_local_l1_addr, uint8_t noc = noc_index, Loc loc = Loc::current()) {
  noc_async_write_page<TensorAccessor<DSpec>, false>(id, addrgen, src_local_l1_addr, addrgen.get_aligned_page_size(), 0,
                                                     noc, loc);
}

template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1>
inline void noc_async_write_multicast(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast, uint32_t size,
                                      uint32_t num_dests, bool linked = false, uint8_t noc = noc_index,
                                      uint8_t /*vc*/ = NOC_MULTICAST_WRITE_VC, Loc loc = Loc::current()) {
  emu::k::noc_write_multicast(src_local_l1_addr, dst_noc_addr_multicast, size, num_dests, false, linked, noc, loc);
}

inline void noc_async_write_multicast_loopback_src(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast,
                                                   uint32_t size, uint32_t num_dests, bool linked = false,
                                                   uint8_t noc = noc_index, Loc loc = Loc::current()) {
  emu::k::noc_write_multicast(src_local_l1_addr, dst_noc_addr_multicast, size, num_dests, true, linked, noc, loc);
}

FORCE_INLINE void noc_async_write_barrier(uint8_t /*noc*/ = noc_index, Loc loc = Loc::current()) {
  emu::k::noc_write_barrier(loc);
}
FORCE_INLINE void noc_async_writes_flushed(uint8_t /*noc*/ = noc_index, Loc loc = Loc::current()) {
  emu::k::noc_writes_flushed(loc);
}
FORCE_INLINE void noc_async_posted_writes_flushed(uint8_t /*noc*/ = noc_index, Loc loc = Loc::current()) {
  emu::k::noc_writes_flushed(loc);
}
// Transaction ids (dataflow_api.h:2505-2745): set the sticky id of the following reads or writes; wait for the
// reads (writes acked, writes sent) that carried `trid`.
FORCE_INLINE void noc_async_read_set_trid(uint32_t trid = 0, uint8_t /*noc*/ = noc_index, Loc loc = Loc::current()) {
  emu::k::noc_set_trid(false, trid, loc);
}
FORCE_INLINE void noc_async_write_set_trid(uint32_t trid = 0, uint8_t /*noc*/ = noc_index, Loc loc = Loc::current()) {
  emu::k::noc_set_trid(true, trid, loc);
}
FORCE_INLINE void noc_async_read_barrier_with_trid(uint32_t trid, uint8_t /*noc*/ = noc_index,
                                                   Loc loc = Loc::current()) {
  emu::k::noc_read_barrier_trid(trid, loc);
}
FORCE_INLINE void noc_async_write_barrier_with_trid(uint32_t trid, uint8_t /*noc*/ = noc_index,
                                                    Loc loc = Loc::current()) {
  emu::k::noc_write_barrier_trid(trid, loc);
}
FORCE_INLINE void noc_async_write_flushed_with_trid(uint32_t trid, uint8_t /*noc*/ = noc_index,
                                                    Loc loc = Loc::current()) {
  emu::k::noc_writes_flushed_trid(trid, loc);
}
FORCE_INLINE void noc_async_atomic_barrier(uint8_t /*noc*/ = noc_index) {}
FORCE_INLINE void noc_async_full_barrier(uint8_t /*noc*/ = noc_index, Loc loc = Loc::current()) {
  emu::k::noc_read_barrier(loc);
  emu::k::noc_write_barrier(loc);
}

// ---------------------------------------------------------------- semaphores
template <ProgrammableCoreType type = ProgrammableCoreType::TENSIX>
FORCE_INLINE uintptr_t get_semaphore(uint32_t semaphore_id, Loc loc = Loc::current()) {
  static_assert(type == ProgrammableCoreType::TENSIX, "emulator: only Tensix semaphores are supported");
  return emu::k::semaphore_addr(semaphore_id, loc);
}

FORCE_INLINE void noc_semaphore_wait(volatile tt_l1_ptr uint32_t* sem_addr, uint32_t val,
                                     Loc loc = Loc::current()) {
  emu::k::semaphore_wait(sem_addr, val, false, loc);
}
FORCE_INLINE void noc_semaphore_wait_min(volatile tt_l1_ptr uint32_t* sem_addr, uint32_t val,
                                         Loc loc = Loc::current()) {
  emu::k::semaphore_wait(sem_addr, val, true, loc);
}
FORCE_INLINE void noc_semaphore_set(volatile tt_l1_ptr uint32_t* sem_addr, uint32_t val,
                                    Loc loc = Loc::current()) {
  emu::k::semaphore_set(sem_addr, val, loc);
}
template <bool posted = false>
FORCE_INLINE void noc_semaphore_inc(uint64_t addr, uint32_t incr, uint8_t /*noc_id*/ = noc_index,
                                    uint8_t /*vc*/ = NOC_UNICAST_WRITE_VC, Loc loc = Loc::current()) {
  emu::k::semaphore_inc(addr, incr, loc);
}
template <bool posted = false>
FORCE_INLINE void noc_semaphore_inc_multicast(uint64_t addr, uint32_t incr, uint32_t num_dests,
                                              uint8_t noc_id = noc_index, uint8_t /*vc*/ = NOC_MULTICAST_WRITE_VC,
                                              Loc loc = Loc::current()) {
  emu::k::semaphore_inc_multicast(addr, incr, num_dests, noc_id, loc);
}
inline void noc_semaphore_set_remote(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint8_t /*noc*/ = noc_index,
                                     Loc loc = Loc::current()) {
  emu::k::semaphore_set_remote(src_local_l1_addr, dst_noc_addr, loc);
}
inline void noc_semaphore_set_multicast(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast,
                                        uint32_t num_dests, bool linked = false, uint8_t noc = noc_index,
                                        uint8_t /*vc*/ = NOC_MULTICAST_WRITE_VC, Loc loc = Loc::current()) {
  emu::k::semaphore_set_multicast(src_local_l1_addr, dst_noc_addr_multicast, num_dests, false, linked, noc, loc);
}
inline void noc_semaphore_set_multicast_loopback_src(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast,
                                                     uint32_t num_dests, bool linked = false,
                                                     uint8_t noc = noc_index, Loc loc = Loc::current()) {
  emu::k::semaphore_set_multicast(src_local_l1_addr, dst_noc_addr_multicast, num_dests, true, linked, noc, loc);
}
