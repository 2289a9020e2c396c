// A CircularBuffer as a Noc endpoint (tt-metal 0.81.1 api/dataflow/circular_buffer.h, data-movement kernels
// only): noc_traits_t<CircularBuffer> reads from its read pointer and writes at its write pointer, each plus
// offset_bytes, this core's L1 only, or multicasts to its write pointer on the cores of a rectangle; a
// CircularBufferView (use<AddrSel>(cb), circular_buffer.h) names the pointer explicitly. Included by
// api/dataflow/noc.h and api/dataflow/circular_buffer.h, whichever comes second.
#pragma once

#include "api/dataflow/circular_buffer.h"
#include "api/dataflow/noc.h"

namespace emu::detail {
// The L1 addresses a CircularBuffer names: tt-metal's traits read from its read pointer and write at its
// write pointer; a view names the one it selects either way.
inline uint32_t cb_read_ptr(const CircularBuffer& cb, emu::k::Loc loc) { return cb.get_read_ptr(loc); }
inline uint32_t cb_write_ptr(const CircularBuffer& cb, emu::k::Loc loc) { return cb.get_write_ptr(loc); }
template <CircularBuffer::AddrSelector AddrSel>
uint32_t view_ptr(const CircularBufferView<AddrSel>& view, emu::k::Loc loc) {
  return AddrSel == CircularBuffer::AddrSelector::READ_PTR ? view.cb.get_read_ptr(loc) : view.cb.get_write_ptr(loc);
}

// noc_traits_t of a CircularBuffer endpoint whose source address is `src_ptr`'s and destination `dst_ptr`'s.
template <typename Endpoint, uint32_t (*src_ptr)(const Endpoint&, emu::k::Loc),
          uint32_t (*dst_ptr)(const Endpoint&, emu::k::Loc)>
struct CbNocTraits {
  struct src_args_type {
    uint32_t offset_bytes{};
  };
  struct dst_args_type {
    uint32_t offset_bytes{};
  };
  struct dst_args_mcast_type {
    uint32_t noc_x_start{};
    uint32_t noc_y_start{};
    uint32_t noc_x_end{};
    uint32_t noc_y_end{};
    uint32_t offset_bytes{};
  };
  template <Noc::AddressType address_type>
  static uint32_t src_addr(const Endpoint& src, const Noc&, const src_args_type& args, emu::k::Loc loc) {
    static_assert(address_type == Noc::AddressType::LOCAL_L1,
                  "CircularBuffer without mcast range can only be used as L1 source");
    return src_ptr(src, loc) + args.offset_bytes;
  }
  template <Noc::AddressType address_type>
  static uint32_t dst_addr(const Endpoint& dst, const Noc&, const dst_args_type& args, emu::k::Loc loc) {
    static_assert(address_type == Noc::AddressType::LOCAL_L1,
                  "CircularBuffer without mcast range can only be used as L1 source");
    return dst_ptr(dst, loc) + args.offset_bytes;
  }
  template <Noc::AddressType address_type>
  static uint64_t dst_addr_mcast(const Endpoint& dst, const Noc& noc, const dst_args_mcast_type& args,
                                 emu::k::Loc loc) {
    static_assert(address_type == Noc::AddressType::NOC, "CircularBuffer with mcast range cannot be used as L1 source");
    return ::get_noc_multicast_addr(args.noc_x_start, args.noc_y_start, args.noc_x_end, args.noc_y_end,
                                    dst_ptr(dst, loc) + args.offset_bytes, noc.get_noc_id());
  }
};
}  // namespace emu::detail

template <>
struct noc_traits_t<CircularBuffer>
    : emu::detail::CbNocTraits<CircularBuffer, &emu::detail::cb_read_ptr, &emu::detail::cb_write_ptr> {};

template <CircularBuffer::AddrSelector AddrSel>
struct noc_traits_t<CircularBufferView<AddrSel>>
    : emu::detail::CbNocTraits<CircularBufferView<AddrSel>, &emu::detail::view_ptr<AddrSel>,
                               &emu::detail::view_ptr<AddrSel>> {};

template <>
inline constexpr bool noc_zero_l1_endpoint_v<CircularBuffer> = true;
