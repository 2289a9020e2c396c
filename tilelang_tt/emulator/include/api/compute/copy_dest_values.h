// tt-metal 0.81.1 api/compute/copy_dest_values.h: copy_dest_values<FORMAT>(in, out) copies DST tile `in` to DST
// tile `out` on the SFPU. Declared for ttnn's kernel_lib (eltwise/unary/misc.inl, CopyDest); not emulated: a
// kernel that calls it stops, naming the call.
#pragma once

#include "api/compute/common.h"
#include "api/emu/not_emulated.h"

namespace ckernel {
template <DataFormat DATA_FORMAT>
ALWI void copy_dest_values(uint32_t /*idst_in*/, uint32_t /*idst_out*/, Loc loc = Loc::current()) {
  emu::detail::llk_not_emulated("copy_dest_values", loc);
}
ALWI void copy_dest_values_init(Loc loc = Loc::current()) { emu::detail::llk_not_emulated("copy_dest_values_init", loc); }
}  // namespace ckernel
