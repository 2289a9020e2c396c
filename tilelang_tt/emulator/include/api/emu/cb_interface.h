// tt-metal's LocalCBInterface (internal/circular_buffer_interface.h): FIFO size, limit, page size and
// pointers in bytes (L1 addresses) as a data movement kernel sees it, in 16-byte units as a compute
// kernel (COMPILE_FOR_TRISC) does. The device model keeps the
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
#ifdef COMPILE_FOR_TRISC
  // A compute kernel's interface holds sizes and pointers in 16-byte units
  // (CIRCULAR_BUFFER_COMPUTE_ADDR_SHIFT = 4, tt-metalium/circular_buffer_constants.h).
  constexpr uint32_t shift = 4;
  return {s.size >> shift, s.limit >> shift, s.page_size >> shift, s.num_pages, s.rd_ptr >> shift, s.wr_ptr >> shift};
#else
  return {s.size, s.limit, s.page_size, s.num_pages, s.rd_ptr, s.wr_ptr};
#endif
}
