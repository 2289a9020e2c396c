// The reciprocal's SFPU init (tt-metal 0.81.1 llk_api/llk_sfpu/ckernel_sfpu_recip.h:131 sfpu_reciprocal_init): it
// loads the Newton-Raphson seed's constants into SFPU registers, which the emulator does not have; the
// reciprocal itself is the emulator's (runtime sfpu_recip.cpp, the LLK's sequence per arch and DST).
#pragma once

namespace ckernel::sfpu {
template <bool APPROXIMATE = false, bool round_to_bf16 = false>
inline void sfpu_reciprocal_init() {}
}  // namespace ckernel::sfpu
