// tt-metal 0.81.1 api/dataflow/endpoints.h: NOC endpoints given by coordinates and an address. Here the
// unicast one (UnicastEndpoint: noc_x, noc_y, addr; a local-L1 use takes the address alone) and the
// multicast one (MulticastEndpoint: a rectangle and an address, the destination of
// Noc::async_write_multicast). Not here: PrecomposedUnicastEndpoint and the allocator-bank endpoints.
#pragma once

#include <cstdint>

#include "api/dataflow/noc.h"

struct UnicastEndpoint {
  uint64_t get_noc_unicast_addr(uint32_t noc_x, uint32_t noc_y, uint32_t addr, uint8_t noc) const {
    return ::get_noc_addr(noc_x, noc_y, addr, noc);
  }
};

template <>
struct noc_traits_t<UnicastEndpoint> {
  // tt-metal's src_args_type and dst_args_type have the same fields; one type serves as both here.
  struct args_type {
    uint32_t noc_x{};
    uint32_t noc_y{};
    uint32_t addr{};
  };
  using src_args_type = args_type;
  using dst_args_type = args_type;

  // As the source or the destination alike: the address alone for a local-L1 use, else the NOC address.
  template <Noc::AddressType address_type>
  static auto src_addr(const UnicastEndpoint& src, const Noc& noc, const args_type& args, emu::k::Loc) {
    return address<address_type>(src, noc, args);
  }
  template <Noc::AddressType address_type>
  static auto dst_addr(const UnicastEndpoint& dst, const Noc& noc, const args_type& args, emu::k::Loc) {
    return address<address_type>(dst, noc, args);
  }

 private:
  template <Noc::AddressType address_type>
  static auto address(const UnicastEndpoint& endpoint, const Noc& noc, const args_type& args) {
    if constexpr (address_type == Noc::AddressType::LOCAL_L1) {
      return args.addr;
    } else {
      return endpoint.get_noc_unicast_addr(args.noc_x, args.noc_y, args.addr, noc.get_noc_id());
    }
  }
};

struct MulticastEndpoint {
  uint64_t get_noc_multicast_addr(uint32_t noc_x_start, uint32_t noc_y_start, uint32_t noc_x_end, uint32_t noc_y_end,
                                  uint32_t addr, uint8_t noc) const {
    return ::get_noc_multicast_addr(noc_x_start, noc_y_start, noc_x_end, noc_y_end, addr, noc);
  }
};

template <>
struct noc_traits_t<MulticastEndpoint> {
  struct dst_args_mcast_type {
    uint32_t noc_x_start{};
    uint32_t noc_y_start{};
    uint32_t noc_x_end{};
    uint32_t noc_y_end{};
    uint32_t addr{};
  };
  template <Noc::AddressType address_type>
  static uint64_t dst_addr_mcast(const MulticastEndpoint& dst, const Noc& noc, const dst_args_mcast_type& args,
                                 emu::k::Loc) {
    static_assert(address_type == Noc::AddressType::NOC);
    return dst.get_noc_multicast_addr(args.noc_x_start, args.noc_y_start, args.noc_x_end, args.noc_y_end, args.addr,
                                      noc.get_noc_id());
  }
};
