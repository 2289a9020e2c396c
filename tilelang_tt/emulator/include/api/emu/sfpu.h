// Generators for SFPU API entry points. Template parameters of the tt-metal signatures
// (approximation modes, vector modes, fp32 accumulation) are accepted and ignored: the
// emulator computes every op in fp32 and rounds DST to bfloat16 unless fp32_dest_acc_en.
#pragma once

#include "api/compute/common.h"

#define TT_EMU_SFPU_UNARY(name, OP)                                                     \
  namespace ckernel {                                                                   \
  template <auto...>                                                                    \
  ALWI void name##_tile_init() {}                                                       \
  template <auto...>                                                                    \
  ALWI void name##_tile(uint32_t idst, Loc loc = Loc::current()) {                      \
    emu::k::sfpu_unary(emu::k::Unary::OP, idst, loc);                                   \
  }                                                                                     \
  }

#define TT_EMU_SFPU_BINARY(name, OP)                                                              \
  namespace ckernel {                                                                             \
  ALWI void name##_tile_init() {}                                                                 \
  template <auto...>                                                                              \
  ALWI void name##_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, Loc loc = Loc::current()) { \
    emu::k::sfpu_binary(emu::k::SfpuBinary::OP, idst0, idst1, odst, loc);                          \
  }                                                                                               \
  }

// Scalar operand passed as the bit pattern of an fp32 value (tt-metal binop_with_scalar.h).
#define TT_EMU_SFPU_SCALAR(name, OP)                                                     \
  namespace ckernel {                                                                    \
  template <auto...>                                                                     \
  ALWI void name##_tile(uint32_t idst, uint32_t param1, Loc loc = Loc::current()) {      \
    emu::k::sfpu_scalar(emu::k::SfpuBinary::OP, idst, std::bit_cast<float>(param1), loc); \
  }                                                                                      \
  }
