// Data movement kernel API (tt-metal 0.81.1 api/dataflow/dataflow_api.h) on the emulator.
// Signatures match tt-metal; each call takes an extra defaulted source location used in
// protocol error messages. NOC transfers complete immediately; the barriers only mark
// completion for the protocol checks (pushing pages before noc_async_read_barrier is an error).
#pragma once

#include <cstdint>
#include <type_traits>

#include "api/compile_time_args.h"
#include "api/emu/kernel_common.h"
#include "api/tensor/tensor_accessor.h"

using emu::k::Loc;

constexpr uint32_t NOC_MAX_BURST_SIZE = 8192;
constexpr uint32_t NOC_UNICAST_WRITE_VC = 1;
constexpr uint32_t NOC_MULTICAST_WRITE_VC = 4;

enum class ProgrammableCoreType : uint8_t { TENSIX = 0, ACTIVE_ETH = 1, IDLE_ETH = 2 };

// The core's zero region (tt-metal dev_mem_map.h): MEM_ZEROS_SIZE bytes that always read as zero.
#define MEM_ZEROS_SIZE 512
#define MEM_ZEROS_BASE (::emu::k::mem_zeros_base(Loc::current()))

// ---------------------------------------------------------------- addresses
FORCE_INLINE uint64_t get_noc_addr(uint32_t noc_x, uint32_t noc_y, uint32_t addr, uint8_t /*noc*/ = noc_index) {
  return emu::k::noc_unicast_addr(noc_x, noc_y, addr);
}

FORCE_INLINE uint64_t get_noc_addr(uint32_t addr, uint8_t /*noc*/ = noc_index, Loc loc = Loc::current()) {
  return emu::k::noc_self_addr(addr, loc);
}

FORCE_INLINE uint64_t get_noc_multicast_addr(uint32_t noc_x_start, uint32_t noc_y_start, uint32_t noc_x_end,
                                             uint32_t noc_y_end, uint32_t addr, uint8_t /*noc*/ = noc_index) {
  return emu::k::noc_multicast_addr(noc_x_start, noc_y_start, noc_x_end, noc_y_end, addr);
}

template <bool DRAM>
FORCE_INLINE uint64_t get_noc_addr_from_bank_id(uint32_t bank_id, uint32_t bank_address_offset,
                                                uint8_t /*noc*/ = noc_index) {
  static_assert(DRAM, "emulator: L1 banks are not supported");
  return emu::k::noc_dram_bank_addr(bank_id, bank_address_offset);
}

template <bool DRAM>
struct InterleavedAddrGen {
  static_assert(DRAM, "emulator: L1-interleaved buffers are not supported");
  static constexpr bool is_dram = DRAM;
  uint32_t bank_base_address;
  uint32_t page_size;
  uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0, uint8_t /*noc*/ = noc_index,
                        Loc /*loc*/ = Loc::current()) const {
    return emu::k::noc_dram_page_addr(bank_base_address, page_size, id, offset);
  }
};

template <bool DRAM, uint32_t tile_hw = 1024>
struct InterleavedAddrGenFast {
  static_assert(DRAM, "emulator: L1-interleaved buffers are not supported");
  static constexpr bool is_dram = DRAM;
  uint32_t bank_base_address;
  uint32_t page_size;
  DataFormat data_format;
  uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0, uint8_t /*noc*/ = noc_index,
                        Loc /*loc*/ = Loc::current()) const {
    return emu::k::noc_dram_page_addr(bank_base_address, page_size, id, offset);
  }
};

namespace emu::detail {
template <typename A, typename = void>
struct has_aligned_page_size : std::false_type {};
template <typename A>
struct has_aligned_page_size<A, std::void_t<decltype(std::declval<A>().get_aligned_page_size())>> : std::true_type {};

template <typename AddrGen>
uint32_t page_size_of(const AddrGen& g) {
  if constexpr (has_aligned_page_size<AddrGen>::value) return g.get_aligned_page_size();
  else return g.page_size;
}
}  // namespace emu::detail

template <typename AddrGen>
FORCE_INLINE uint64_t get_noc_addr(uint32_t id, const AddrGen& addrgen, uint32_t offset = 0,
                                   uint8_t noc = noc_index, decltype(addrgen.get_noc_addr(0))* = nullptr,
                                   Loc loc = Loc::current()) {
  return addrgen.get_noc_addr(id, offset, noc, loc);
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
FORCE_INLINE void noc_async_read_page(uint32_t id, const AddrGen& addrgen, uint32_t dst_local_l1_addr,
                                      uint32_t offset = 0, uint8_t /*noc*/ = noc_index, Loc loc = Loc::current()) {
  emu::k::noc_read(addrgen.get_noc_addr(id, offset, noc_index, loc), dst_local_l1_addr,
                   emu::detail::page_size_of(addrgen), loc);
}

template <typename AddrGen>
FORCE_INLINE void noc_async_read_tile(uint32_t id, const AddrGen& addrgen, uint32_t dst_local_l1_addr,
                                      uint32_t offset = 0, uint8_t /*noc*/ = noc_index, Loc loc = Loc::current()) {
  emu::k::noc_read(addrgen.get_noc_addr(id, offset, noc_index, loc), dst_local_l1_addr,
                   emu::detail::page_size_of(addrgen), loc);
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
FORCE_INLINE void noc_async_write_page(uint32_t id, const AddrGen& addrgen, uint32_t src_local_l1_addr,
                                       uint32_t size = 0, uint32_t offset = 0, uint8_t /*noc*/ = noc_index,
                                       Loc loc = Loc::current()) {
  const uint32_t bytes = size == 0 ? emu::detail::page_size_of(addrgen) : size;
  emu::k::noc_write(src_local_l1_addr, addrgen.get_noc_addr(id, offset, noc_index, loc), bytes, loc);
}

template <typename AddrGen>
FORCE_INLINE void noc_async_write_tile(uint32_t id, const AddrGen& addrgen, uint32_t src_local_l1_addr,
                                       uint8_t /*noc*/ = noc_index, Loc loc = Loc::current()) {
  emu::k::noc_write(src_local_l1_addr, addrgen.get_noc_addr(id, 0, noc_index, loc), emu::detail::page_size_of(addrgen),
                    loc);
}

template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1>
inline void noc_async_write_multicast(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast, uint32_t size,
                                      uint32_t num_dests, bool /*linked*/ = false, uint8_t /*noc*/ = noc_index,
                                      uint8_t /*vc*/ = NOC_MULTICAST_WRITE_VC, Loc loc = Loc::current()) {
  emu::k::noc_write_multicast(src_local_l1_addr, dst_noc_addr_multicast, size, num_dests, false, loc);
}

inline void noc_async_write_multicast_loopback_src(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast,
                                                   uint32_t size, uint32_t num_dests, bool /*linked*/ = false,
                                                   uint8_t /*noc*/ = noc_index, Loc loc = Loc::current()) {
  emu::k::noc_write_multicast(src_local_l1_addr, dst_noc_addr_multicast, size, num_dests, true, loc);
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

FORCE_INLINE void noc_semaphore_wait(volatile uint32_t* sem_addr, uint32_t val, Loc loc = Loc::current()) {
  emu::k::semaphore_wait(sem_addr, val, false, loc);
}
FORCE_INLINE void noc_semaphore_wait_min(volatile uint32_t* sem_addr, uint32_t val, Loc loc = Loc::current()) {
  emu::k::semaphore_wait(sem_addr, val, true, loc);
}
FORCE_INLINE void noc_semaphore_set(volatile uint32_t* sem_addr, uint32_t val, Loc loc = Loc::current()) {
  emu::k::semaphore_set(sem_addr, val, loc);
}
template <bool posted = false>
FORCE_INLINE void noc_semaphore_inc(uint64_t addr, uint32_t incr, uint8_t /*noc_id*/ = noc_index,
                                    uint8_t /*vc*/ = NOC_UNICAST_WRITE_VC, Loc loc = Loc::current()) {
  emu::k::semaphore_inc(addr, incr, loc);
}
inline void noc_semaphore_set_remote(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint8_t /*noc*/ = noc_index,
                                     Loc loc = Loc::current()) {
  emu::k::semaphore_set_remote(src_local_l1_addr, dst_noc_addr, loc);
}
inline void noc_semaphore_set_multicast(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast,
                                        uint32_t num_dests, bool /*linked*/ = false, uint8_t /*noc*/ = noc_index,
                                        uint8_t /*vc*/ = NOC_MULTICAST_WRITE_VC, Loc loc = Loc::current()) {
  emu::k::semaphore_set_multicast(src_local_l1_addr, dst_noc_addr_multicast, num_dests, false, loc);
}
inline void noc_semaphore_set_multicast_loopback_src(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast,
                                                     uint32_t num_dests, bool /*linked*/ = false,
                                                     uint8_t /*noc*/ = noc_index, Loc loc = Loc::current()) {
  emu::k::semaphore_set_multicast(src_local_l1_addr, dst_noc_addr_multicast, num_dests, true, loc);
}
