// Emulated tt-metal host API: tt-metalium/circular_buffer_constants.h as the host sees it.
// NUM_CIRCULAR_BUFFERS sizes the host's per-CB tables (e.g. ComputeConfig::unpack_to_dest_mode) for
// the arch with the most CBs; a device's own count is smaller on some archs (wormhole_b0: 32).
#pragma once

#include <cstdint>

inline constexpr std::uint32_t NUM_CIRCULAR_BUFFERS = 64;
