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

}  // namespace ckernel
