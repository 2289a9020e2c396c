// SFPU binary max/min on DST tiles (tt-metal api/compute/binary_max_min.h):
// DST[odst] = max / min(DST[idst0], DST[idst1]) on the faces the VectorMode selects; of floats, or of the 32-bit words of integer tiles
// compared as int32 (binary_max_int32_tile, ...) or uint32 (binary_max_uint32_tile, ...), which need
// fp32_dest_acc_en.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {
ALWI void binary_max_tile_init() {}
ALWI void binary_max_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, VectorMode vector_mode = VectorMode::RC,
                          Loc loc = Loc::current()) {
  emu::k::sfpu_binary_faces(emu::k::SfpuBinary::Max, idst0, idst1, odst,
                            emu::detail::faces_of(vector_mode, "binary_max_tile", loc), loc);
}
ALWI void binary_min_tile_init() {}
ALWI void binary_min_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, VectorMode vector_mode = VectorMode::RC,
                          Loc loc = Loc::current()) {
  emu::k::sfpu_binary_faces(emu::k::SfpuBinary::Min, idst0, idst1, odst,
                            emu::detail::faces_of(vector_mode, "binary_min_tile", loc), loc);
}

ALWI void binary_max_int32_tile_init() {}
ALWI void binary_max_int32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) {
  emu::k::sfpu_int_binary(emu::k::IntBinary::Max, emu::detail::format_id(DataFormat::Int32), idst0, idst1, odst, loc);
}
ALWI void binary_max_uint32_tile_init() {}
ALWI void binary_max_uint32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) {
  emu::k::sfpu_int_binary(emu::k::IntBinary::Max, emu::detail::format_id(DataFormat::UInt32), idst0, idst1, odst, loc);
}
ALWI void binary_min_int32_tile_init() {}
ALWI void binary_min_int32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) {
  emu::k::sfpu_int_binary(emu::k::IntBinary::Min, emu::detail::format_id(DataFormat::Int32), idst0, idst1, odst, loc);
}
ALWI void binary_min_uint32_tile_init() {}
ALWI void binary_min_uint32_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) {
  emu::k::sfpu_int_binary(emu::k::IntBinary::Min, emu::detail::format_id(DataFormat::UInt32), idst0, idst1, odst, loc);
}
}  // namespace ckernel
