// SFPU comparisons of tt-metal api/compute/eltwise_unary/comp.h, on float DST tiles: each element
// becomes 1.0 where the comparison holds, else 0.0. unary_<op>_tile compares with the float whose
// bits are param0; <op>z_tile with zero. (The int32/uint16/uint32 variants are not emulated.)
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {
ALWI void unary_eq_tile_init() {}
ALWI void unary_eq_tile(uint32_t idst, uint32_t param0, Loc loc = Loc::current()) {
  emu::k::compare_tile(emu::k::Compare::Eq, idst, std::bit_cast<float>(param0), false, "unary_eq_tile", loc);
}
ALWI void unary_ne_tile_init() {}
ALWI void unary_ne_tile(uint32_t idst, uint32_t param0, Loc loc = Loc::current()) {
  emu::k::compare_tile(emu::k::Compare::Ne, idst, std::bit_cast<float>(param0), false, "unary_ne_tile", loc);
}
ALWI void unary_gt_tile_init() {}
ALWI void unary_gt_tile(uint32_t idst, uint32_t param0, Loc loc = Loc::current()) {
  emu::k::compare_tile(emu::k::Compare::Gt, idst, std::bit_cast<float>(param0), false, "unary_gt_tile", loc);
}
ALWI void unary_ge_tile_init() {}
ALWI void unary_ge_tile(uint32_t idst, uint32_t param0, Loc loc = Loc::current()) {
  emu::k::compare_tile(emu::k::Compare::Ge, idst, std::bit_cast<float>(param0), false, "unary_ge_tile", loc);
}
ALWI void unary_lt_tile_init() {}
ALWI void unary_lt_tile(uint32_t idst, uint32_t param0, Loc loc = Loc::current()) {
  emu::k::compare_tile(emu::k::Compare::Lt, idst, std::bit_cast<float>(param0), false, "unary_lt_tile", loc);
}
ALWI void unary_le_tile_init() {}
ALWI void unary_le_tile(uint32_t idst, uint32_t param0, Loc loc = Loc::current()) {
  emu::k::compare_tile(emu::k::Compare::Le, idst, std::bit_cast<float>(param0), false, "unary_le_tile", loc);
}
ALWI void eqz_tile_init() {}
ALWI void eqz_tile(uint32_t idst, Loc loc = Loc::current()) {
  emu::k::compare_tile(emu::k::Compare::Eq, idst, 0.0f, true, "eqz_tile", loc);
}
ALWI void nez_tile_init() {}
ALWI void nez_tile(uint32_t idst, Loc loc = Loc::current()) {
  emu::k::compare_tile(emu::k::Compare::Ne, idst, 0.0f, true, "nez_tile", loc);
}
ALWI void gtz_tile_init() {}
ALWI void gtz_tile(uint32_t idst, Loc loc = Loc::current()) {
  emu::k::compare_tile(emu::k::Compare::Gt, idst, 0.0f, true, "gtz_tile", loc);
}
ALWI void gez_tile_init() {}
ALWI void gez_tile(uint32_t idst, Loc loc = Loc::current()) {
  emu::k::compare_tile(emu::k::Compare::Ge, idst, 0.0f, true, "gez_tile", loc);
}
ALWI void ltz_tile_init() {}
ALWI void ltz_tile(uint32_t idst, Loc loc = Loc::current()) {
  emu::k::compare_tile(emu::k::Compare::Lt, idst, 0.0f, true, "ltz_tile", loc);
}
ALWI void lez_tile_init() {}
ALWI void lez_tile(uint32_t idst, Loc loc = Loc::current()) {
  emu::k::compare_tile(emu::k::Compare::Le, idst, 0.0f, true, "lez_tile", loc);
}
}  // namespace ckernel
