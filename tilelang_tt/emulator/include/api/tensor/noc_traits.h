// A TensorAccessor page as a Noc endpoint (tt-metal 0.81.1 api/tensor/noc_traits.h): the NOC
// address of page `page_id` plus `offset_bytes`, interleaved or sharded (api/tensor/tensor_accessor.h).
// Not emulated: the PageView / ShardView / Page endpoints.
#pragma once

#include "api/dataflow/noc.h"
#include "api/tensor/tensor_accessor.h"

template <typename DSpecT, bool Sharded>
struct noc_traits_t<TensorAccessor<DSpecT, Sharded>> {
  struct src_args_type {
    uint32_t page_id{};
    uint32_t offset_bytes = 0;
  };
  struct dst_args_type {
    uint32_t page_id{};
    uint32_t offset_bytes = 0;
  };
  template <Noc::AddressType address_type>
  static uint64_t src_addr(const TensorAccessor<DSpecT, Sharded>& src, const Noc& noc, const src_args_type& args,
                           emu::k::Loc loc) {
    static_assert(address_type == Noc::AddressType::NOC, "emulator: a TensorAccessor page is read through the NOC");
    return src.get_noc_addr(args.page_id, args.offset_bytes, noc.get_noc_id(), loc);
  }
  template <Noc::AddressType address_type>
  static uint64_t dst_addr(const TensorAccessor<DSpecT, Sharded>& dst, const Noc& noc, const dst_args_type& args,
                           emu::k::Loc loc) {
    static_assert(address_type == Noc::AddressType::NOC, "emulator: a TensorAccessor page is written through the NOC");
    return dst.get_noc_addr(args.page_id, args.offset_bytes, noc.get_noc_id(), loc);
  }
};
