// tt-metal 0.81.1 api/dataflow/circular_buffer.h: CircularBuffer, an object over one CB id whose calls
// are the CB API's (cb_reserve_back ... in a data movement kernel, the same handshakes on the TRISCs in
// a compute kernel). ttnn's kernels include it beside dataflow_buffer.h. In a data-movement kernel a CircularBuffer
// is also a Noc endpoint (api/emu/cb_noc_traits.h). Not here: the TRISC-only get_tile_address / read_tile_value
// (mailbox reads of the unpacker's L1 pointer): a kernel using them does not compile.
#pragma once

#include <cstdint>

#include "api/emu/cb_descriptors.h"
#include "api/emu/cb_interface.h"
#include "api/emu/kernel_common.h"

class CircularBuffer {
 public:
  enum class AddrSelector { WRITE_PTR, READ_PTR };

  explicit CircularBuffer(uint32_t cb_id) : cb_id_(cb_id) {}

  uint32_t get_cb_id() const { return cb_id_; }

  void reserve_back(int32_t num_pages, emu::k::Loc loc = emu::k::Loc::current()) {
    emu::k::cb_reserve_back(static_cast<int32_t>(cb_id_), num_pages, loc);
  }
  void push_back(int32_t num_pages, emu::k::Loc loc = emu::k::Loc::current()) {
    emu::k::cb_push_back(static_cast<int32_t>(cb_id_), num_pages, loc);
  }
  void wait_front(int32_t num_pages, emu::k::Loc loc = emu::k::Loc::current()) {
    emu::k::cb_wait_front(static_cast<int32_t>(cb_id_), num_pages, loc);
  }
  void pop_front(int32_t num_pages, emu::k::Loc loc = emu::k::Loc::current()) {
    emu::k::cb_pop_front(static_cast<int32_t>(cb_id_), num_pages, loc);
  }

  uint32_t get_tile_size(emu::k::Loc loc = emu::k::Loc::current()) const {
    return emu::detail::kernel_tile_bytes(get_dataformat(loc));
  }
  DataFormat get_dataformat(emu::k::Loc loc = emu::k::Loc::current()) const {
    return emu::detail::cb_dataformat(cb_id_, loc);
  }
  bool pages_reservable_at_back(int32_t num_pages, emu::k::Loc loc = emu::k::Loc::current()) const {
    return emu::k::cb_pages_reservable_at_back(static_cast<int32_t>(cb_id_), num_pages, loc);
  }
  bool pages_available_at_front(int32_t num_pages, emu::k::Loc loc = emu::k::Loc::current()) const {
    return emu::k::cb_pages_available_at_front(static_cast<int32_t>(cb_id_), num_pages, loc);
  }
  uint32_t get_write_ptr(emu::k::Loc loc = emu::k::Loc::current()) const {
    return emu::k::get_write_ptr(cb_id_, loc);
  }
  uint32_t get_read_ptr(emu::k::Loc loc = emu::k::Loc::current()) const {
    return emu::k::get_read_ptr(cb_id_, loc);
  }

 private:
  uint32_t cb_id_;
};

#ifndef COMPILE_FOR_TRISC
// A CircularBuffer's read or write pointer as a Noc endpoint, chosen explicitly (circular_buffer.h:154-167).
template <CircularBuffer::AddrSelector AddrSel>
struct CircularBufferView {
  const CircularBuffer& cb;
  explicit constexpr CircularBufferView(const CircularBuffer& c) : cb(c) {}
};

template <CircularBuffer::AddrSelector AddrSel>
constexpr auto use(const CircularBuffer& cb) {
  return CircularBufferView<AddrSel>(cb);
}
#endif

#define TT_EMU_CIRCULAR_BUFFER_DEFINED
#if defined(TT_EMU_NOC_H_DEFINED) && !defined(COMPILE_FOR_TRISC)
#include "api/emu/cb_noc_traits.h"
#endif
