// SFPU comparisons of tt-metal api/compute/eltwise_unary/comp.h, on float DST tiles: each element
// becomes 1.0 where the comparison holds, else 0.0. unary_<op>_tile compares with the float whose
// bits are param0; <op>z_tile with zero. (The int32/uint16/uint32 variants are not emulated.)
#pragma once

#include "api/emu/sfpu.h"

#define TT_EMU_COMPARE_WITH(op, code)                                                            \
  ALWI void unary_##op##_tile_init() {}                                                          \
  ALWI void unary_##op##_tile(uint32_t idst, uint32_t param0, Loc loc = Loc::current()) {        \
    emu::k::compare_tile(emu::k::Compare::code, idst, std::bit_cast<float>(param0), "unary_" #op "_tile", loc); \
  }
#define TT_EMU_COMPARE_ZERO(op, code)                                                            \
  ALWI void op##_tile_init() {}                                                                  \
  ALWI void op##_tile(uint32_t idst, Loc loc = Loc::current()) {                                 \
    emu::k::compare_tile(emu::k::Compare::code, idst, 0.0f, #op "_tile", loc);                    \
  }

namespace ckernel {
TT_EMU_COMPARE_WITH(eq, Eq)
TT_EMU_COMPARE_WITH(ne, Ne)
TT_EMU_COMPARE_WITH(gt, Gt)
TT_EMU_COMPARE_WITH(ge, Ge)
TT_EMU_COMPARE_WITH(lt, Lt)
TT_EMU_COMPARE_WITH(le, Le)
TT_EMU_COMPARE_ZERO(eqz, Eq)
TT_EMU_COMPARE_ZERO(nez, Ne)
TT_EMU_COMPARE_ZERO(gtz, Gt)
TT_EMU_COMPARE_ZERO(gez, Ge)
TT_EMU_COMPARE_ZERO(ltz, Lt)
TT_EMU_COMPARE_ZERO(lez, Le)
}  // namespace ckernel

#undef TT_EMU_COMPARE_WITH
#undef TT_EMU_COMPARE_ZERO
