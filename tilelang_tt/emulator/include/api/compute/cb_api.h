// Circular buffer calls of the compute kernel (tt-metal api/compute/cb_api.h): CB ids and tile
// counts are uint32_t here, where the dataflow API's are int32_t.
#pragma once

#include "api/compute/common.h"

namespace ckernel {

ALWI void cb_wait_front(uint32_t cbid, uint32_t ntiles, Loc loc = Loc::current()) {
  emu::k::cb_wait_front(static_cast<int32_t>(cbid), static_cast<int32_t>(ntiles), loc);
}
ALWI void cb_pop_front(uint32_t cbid, uint32_t ntiles, Loc loc = Loc::current()) {
  emu::k::cb_pop_front(static_cast<int32_t>(cbid), static_cast<int32_t>(ntiles), loc);
}
ALWI void cb_reserve_back(uint32_t cbid, uint32_t ntiles, Loc loc = Loc::current()) {
  emu::k::cb_reserve_back(static_cast<int32_t>(cbid), static_cast<int32_t>(ntiles), loc);
}
ALWI void cb_push_back(uint32_t cbid, uint32_t ntiles, Loc loc = Loc::current()) {
  emu::k::cb_push_back(static_cast<int32_t>(cbid), static_cast<int32_t>(ntiles), loc);
}
// The uint32_t word `element_offset` of tile `tile_index` of the CB's front pages, the same value on the unpack,
// math and pack threads (the unpacker reads it and hands it on through their mailboxes).
ALWI uint32_t read_tile_value(uint32_t cb_id, uint32_t tile_index, uint32_t element_offset, Loc loc = Loc::current()) {
  return emu::k::read_tile_value(cb_id, tile_index, element_offset, loc);
}

}  // namespace ckernel
