// NOC addresses and the address generators of tt-metal 0.81.1 internal/dataflow/dataflow_api_addrgen.h
// (interleaved DRAM buffers only), included by api/dataflow/dataflow_api.h and, as in tt-metal, by
// api/tensor/tensor_accessor.h, whose interleaved TensorAccessor is an InterleavedAddrGen.
//
// get_noc_addr(id, addrgen): tt-metal's generic form takes any generator with a get_noc_addr()
// callable without arguments, which none has (theirs and these take the page id), so the call
// resolves to the deprecated InterleavedAddrGen / InterleavedAddrGenFast forms, an interleaved
// TensorAccessor through its base; a sharded TensorAccessor has none (accessor.get_noc_addr(id)).
#pragma once

#include <cstdint>
#include <type_traits>

#include "api/emu/kernel_common.h"

// Worker coordinates as NOC `noc` takes them: tt-metal 0.81.1 hw/inc/internal/tt-1xx/risc_common.h:21-24 over
// NOC_0_X / NOC_0_Y, the identity on Wormhole and Blackhole (wormhole/noc_nonblocking_api.h:27-28,
// blackhole/noc_nonblocking_api.h:45-46): virtual coordinates are one system for both NOCs (runtime/device.cpp,
// my_noc_coord). As there, get_noc_addr(x, y, addr, noc) and get_noc_multicast_addr pass them through unchanged.
#define NOC_0_X(noc_index, noc_size_x, x) x
#define NOC_0_Y(noc_index, noc_size_y, y) y
#define NOC_X(x) NOC_0_X(noc_index, noc_size_x, (x))
#define NOC_Y(y) NOC_0_Y(noc_index, noc_size_y, (y))
#define DYNAMIC_NOC_X(noc, x) NOC_0_X(noc, noc_size_x, (x))
#define DYNAMIC_NOC_Y(noc, y) NOC_0_Y(noc, noc_size_y, (y))

// Does an address generator have get_aligned_page_size()? (dataflow_api_addrgen.h:146-151; ttnn's SDPA kernels
// test it to size a page: dataflow_common.hpp.)
template <typename, typename = void>
inline constexpr bool has_get_aligned_page_size_v = false;

template <typename T>
inline constexpr bool has_get_aligned_page_size_v<T, std::void_t<decltype(std::declval<T>().get_aligned_page_size())>> =
    true;

FORCE_INLINE uint64_t get_noc_multicast_addr(uint32_t noc_x_start, uint32_t noc_y_start, uint32_t noc_x_end,
                                             uint32_t noc_y_end, uint32_t addr, uint8_t /*noc*/ = noc_index) {
  return emu::k::noc_multicast_addr(noc_x_start, noc_y_start, noc_x_end, noc_y_end, addr);
}

FORCE_INLINE uint64_t get_noc_addr(uint32_t noc_x, uint32_t noc_y, uint32_t addr, uint8_t /*noc*/ = noc_index) {
  return emu::k::noc_unicast_addr(noc_x, noc_y, addr);
}

FORCE_INLINE uint64_t get_noc_addr(uint32_t addr, uint8_t /*noc*/ = noc_index,
                                   emu::k::Loc loc = emu::k::Loc::current()) {
  return emu::k::noc_self_addr(addr, loc);
}

namespace emu::detail {
// L1-interleaved pages are not emulated: a generator of them may be built (ttnn's matmul readers build one
// over the placeholder accessor of an absent sparsity tensor and never read it), not addressed.
inline uint64_t dram_page_addr(bool dram, uint32_t base, uint32_t page_size, uint32_t id, uint32_t offset,
                               emu::k::Loc loc) {
  if (!dram) emu::k::api_error("emulator: L1-interleaved buffers are not supported (a page address of one)", loc);
  return emu::k::noc_dram_page_addr(base, page_size, id, offset);
}
}  // namespace emu::detail

template <bool DRAM>
struct InterleavedAddrGen {
  static constexpr bool is_dram = DRAM;
  uint32_t bank_base_address;
  uint32_t page_size;
  uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0, uint8_t /*noc*/ = noc_index,
                        emu::k::Loc loc = emu::k::Loc::current()) const {
    return emu::detail::dram_page_addr(DRAM, bank_base_address, page_size, id, offset, loc);
  }
};

template <bool DRAM, uint32_t tile_hw = 1024>
struct InterleavedAddrGenFast {
  static constexpr bool is_dram = DRAM;
  uint32_t bank_base_address;
  uint32_t page_size;
  DataFormat data_format;
  uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0, uint8_t /*noc*/ = noc_index,
                        emu::k::Loc loc = emu::k::Loc::current()) const {
    return emu::detail::dram_page_addr(DRAM, bank_base_address, page_size, id, offset, loc);
  }
};

namespace emu::detail {
template <typename A, typename = void>
struct has_aligned_page_size : std::false_type {};
template <typename A>
struct has_aligned_page_size<A, std::void_t<decltype(std::declval<A>().get_aligned_page_size())>> : std::true_type {};

// The page size a transfer of one page moves (tt-metal: get_aligned_page_size(), else page_size).
template <typename AddrGen>
uint32_t page_size_of(const AddrGen& g) {
  if constexpr (has_aligned_page_size<AddrGen>::value) return g.get_aligned_page_size();
  else return g.page_size;
}
}  // namespace emu::detail

template <typename AddrGen>
FORCE_INLINE uint64_t get_noc_addr(const uint32_t id, const AddrGen& addrgen, uint32_t offset = 0,
                                   uint8_t noc = noc_index, decltype(addrgen.get_noc_addr())* = nullptr,
                                   emu::k::Loc loc = emu::k::Loc::current()) {
  return addrgen.get_noc_addr(id, offset, noc, loc);
}

template <bool DRAM>
[[deprecated("Use <typename AddrGen> get_noc_addr instead.")]]
FORCE_INLINE uint64_t get_noc_addr(const uint32_t id, const InterleavedAddrGen<DRAM>& addrgen, uint32_t offset = 0,
                                   uint8_t noc = noc_index, emu::k::Loc loc = emu::k::Loc::current()) {
  return addrgen.get_noc_addr(id, offset, noc, loc);
}

template <bool DRAM, uint32_t tile_hw>
[[deprecated("Use <typename AddrGen> get_noc_addr instead.")]]
FORCE_INLINE uint64_t get_noc_addr(const uint32_t id, const InterleavedAddrGenFast<DRAM, tile_hw>& addrgen,
                                   uint32_t offset = 0, uint8_t noc = noc_index,
                                   emu::k::Loc loc = emu::k::Loc::current()) {
  return addrgen.get_noc_addr(id, offset, noc, loc);
}

template <bool DRAM>
FORCE_INLINE uint64_t get_noc_addr_from_bank_id(uint32_t bank_id, uint32_t bank_address_offset,
                                                uint8_t /*noc*/ = noc_index) {
  static_assert(DRAM, "emulator: L1 banks are not supported");
  return emu::k::noc_dram_bank_addr(bank_id, bank_address_offset);
}
