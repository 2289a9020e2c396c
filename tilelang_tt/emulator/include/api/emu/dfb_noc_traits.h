// A DataflowBuffer as a Noc endpoint (tt-metal 0.81.1 api/dataflow/dataflow_buffer.h's
// noc_traits_t<DataflowBuffer>): a read lands at the FIFO's write pointer, a write leaves from its
// read pointer, each plus DataflowBufferArgs::offset_bytes; the buffer is this core's L1 only.
// Included by api/dataflow/noc.h and api/dataflow/dataflow_buffer.h, whichever comes second.
#pragma once

#include "api/dataflow/dataflow_buffer.h"
#include "api/dataflow/noc.h"

template <>
struct noc_traits_t<DataflowBuffer> {
  using src_args_type = DataflowBufferArgs;
  using dst_args_type = DataflowBufferArgs;

  template <Noc::AddressType address_type>
  static uint32_t src_addr(const DataflowBuffer& src, const Noc&, const src_args_type& args, emu::k::Loc loc) {
    static_assert(address_type == Noc::AddressType::LOCAL_L1,
                  "DataflowBuffer without mcast range can only be used as L1 source");
    return src.get_read_ptr(loc) + args.offset_bytes;
  }
  template <Noc::AddressType address_type>
  static uint32_t dst_addr(const DataflowBuffer& dst, const Noc&, const dst_args_type& args, emu::k::Loc loc) {
    static_assert(address_type == Noc::AddressType::LOCAL_L1,
                  "DataflowBuffer without mcast range can only be used as L1 destination");
    return dst.get_write_ptr(loc) + args.offset_bytes;
  }
};

template <>
inline constexpr bool noc_zero_l1_endpoint_v<DataflowBuffer> = true;
