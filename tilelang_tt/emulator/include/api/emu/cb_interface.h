// tt-metal's LocalCBInterface (internal/circular_buffer_interface.h) as a data movement kernel sees
// it: FIFO size, limit, page size and pointers in bytes (L1 addresses). The device model keeps the
// FIFO state, so get_local_cb_interface returns a snapshot by value where tt-metal returns a
// reference into the core's interface table: reading a field works as there, a kernel that writes one
// (moving a FIFO pointer by hand) does not compile.
#pragma once

#include <cstdint>

#include "api/emu/kernel_common.h"

struct LocalCBInterface {
  uint32_t fifo_size;
  uint32_t fifo_limit;
  uint32_t fifo_page_size;
  uint32_t fifo_num_pages;
  uint32_t fifo_rd_ptr;
  uint32_t fifo_wr_ptr;
};

FORCE_INLINE const LocalCBInterface get_local_cb_interface(uint32_t cb_id, emu::k::Loc loc = emu::k::Loc::current()) {
  const emu::k::CbState s = emu::k::cb_state(cb_id, "get_local_cb_interface", loc);
  return {s.size, s.limit, s.page_size, s.num_pages, s.rd_ptr, s.wr_ptr};
}
