// The DataflowBuffer class of tt-metal 0.81.1 (api/dataflow/dataflow_buffer.h) on the emulator, as
// wormhole / blackhole (tt-1xx) have it: a handle on circular buffer `logical_dfb_id`, every entry
// one CB page, the sync calls the cb_* calls of the kernel's role (the CB protocol checks are the
// device model's). One header for compute and data movement kernels, as in tt-metal; with
// api/dataflow/noc.h a DataflowBuffer is also a Noc endpoint (api/emu/dfb_noc_traits.h).
// Members take a trailing source location for their errors. A Metal 2.0 kernel builds one from its binding
// token (api/dataflow/dfb_binding_token.h: the token converts to the CB index). Not emulated: the scoped
// locks, the compute-side tile address reads.
#pragma once

#include <cstdint>

#include "api/dataflow/dfb_access.h"
#include "api/dataflow/dfb_binding_token.h"
#include "api/debug/assert.h"  // as tt-metal 0.81.1's does
#include "api/emu/cb_descriptors.h"
#include "api/emu/cb_interface.h"
#include "api/emu/kernel_common.h"

class DataflowBuffer {
 public:
  constexpr DataflowBuffer(uint16_t logical_dfb_id) : logical_dfb_id_(logical_dfb_id) {}

  uint16_t get_id() const { return logical_dfb_id_; }

  uint32_t get_entry_size(emu::k::Loc loc = emu::k::Loc::current()) const { return state(loc).page_size; }
  uint32_t get_stride_size(emu::k::Loc loc = emu::k::Loc::current()) const { return state(loc).page_size; }
  uint32_t get_total_num_entries(emu::k::Loc loc = emu::k::Loc::current()) const { return state(loc).num_pages; }
  uint32_t get_total_size_bytes(emu::k::Loc loc = emu::k::Loc::current()) const { return state(loc).size; }
  // tt-1xx has no per-tile-counter view: these alias the totals, as there.
  uint32_t get_local_num_entries(emu::k::Loc loc = emu::k::Loc::current()) const { return get_total_num_entries(loc); }
  uint32_t get_local_size_bytes(emu::k::Loc loc = emu::k::Loc::current()) const { return get_total_size_bytes(loc); }
  uint32_t get_ring_span_bytes(emu::k::Loc loc = emu::k::Loc::current()) const { return get_total_size_bytes(loc); }
  uint32_t get_ring_span_num_entries(emu::k::Loc loc = emu::k::Loc::current()) const {
    return get_total_num_entries(loc);
  }
  uint16_t get_producer_share() const { return 1; }
  uint16_t get_consumer_share() const { return 1; }
  uint16_t get_producer_stride_tiles() const { return 1; }
  uint16_t get_consumer_stride_tiles() const { return 1; }

  void reserve_back(uint16_t num_entries, emu::k::Loc loc = emu::k::Loc::current()) {
    emu::k::cb_reserve_back(logical_dfb_id_, num_entries, loc);
  }
  void push_back(uint16_t num_entries, emu::k::Loc loc = emu::k::Loc::current()) {
    emu::k::cb_push_back(logical_dfb_id_, num_entries, loc);
  }
  void wait_front(uint16_t num_entries, emu::k::Loc loc = emu::k::Loc::current()) {
    emu::k::cb_wait_front(logical_dfb_id_, num_entries, loc);
  }
  void pop_front(uint16_t num_entries, emu::k::Loc loc = emu::k::Loc::current()) {
    emu::k::cb_pop_front(logical_dfb_id_, num_entries, loc);
  }
  bool pages_reservable_at_back(int32_t num_pages, emu::k::Loc loc = emu::k::Loc::current()) const {
    return emu::k::cb_pages_reservable_at_back(logical_dfb_id_, num_pages, loc);
  }
  bool pages_available_at_front(int32_t num_pages, emu::k::Loc loc = emu::k::Loc::current()) const {
    return emu::k::cb_pages_available_at_front(logical_dfb_id_, num_pages, loc);
  }

  // The CB's tile size and data format (tt-metal's chlkc_descriptors.h values; see api/emu/cb_descriptors.h).
  TT_EMU_CB_CONSTEXPR uint32_t get_tile_size(emu::k::Loc loc = emu::k::Loc::current()) const {
    return emu::detail::kernel_tile_bytes(get_dataformat(loc));
  }
  TT_EMU_CB_CONSTEXPR DataFormat get_dataformat(emu::k::Loc loc = emu::k::Loc::current()) const {
    return emu::detail::cb_dataformat(logical_dfb_id_, loc);
  }

  // Deprecated no-op in tt-metal (nothing to drain on tt-1xx).
  void finish() {}

  // The FIFO's write pointer (inside a reserve_back / push_back pair: the device model checks it)
  // and read pointer, as L1 addresses.
  uint32_t get_write_ptr(emu::k::Loc loc = emu::k::Loc::current()) const {
    return emu::k::get_write_ptr(logical_dfb_id_, loc);
  }
  uint32_t get_read_ptr(emu::k::Loc loc = emu::k::Loc::current()) const {
    return emu::k::get_read_ptr(logical_dfb_id_, loc);
  }

 private:
  emu::k::CbState state(emu::k::Loc loc) const { return emu::k::cb_state(logical_dfb_id_, "DataflowBuffer", loc); }

  uint16_t logical_dfb_id_;
};

#define TT_EMU_DATAFLOW_BUFFER_DEFINED
#ifdef TT_EMU_NOC_H_DEFINED
#include "api/emu/dfb_noc_traits.h"
#endif
