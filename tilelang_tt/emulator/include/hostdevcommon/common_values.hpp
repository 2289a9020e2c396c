// tt-metal 0.81.1 hostdevcommon/api/hostdevcommon/common_values.hpp: the values host and device code
// share. Here the semaphore states the multicast kernels flag (a receiver sets INVALID before it asks
// for a block, the sender multicasts VALID after the block).
#pragma once

#include <cstdint>

constexpr static std::uint32_t INVALID = 0;
constexpr static std::uint32_t VALID = 1;
