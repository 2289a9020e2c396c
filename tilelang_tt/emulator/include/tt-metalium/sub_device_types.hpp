// Emulated tt-metal host API: sub-device ids (the emulator has one sub-device).
#pragma once

#include <cstdint>

namespace tt::tt_metal {

struct SubDeviceId {
    uint8_t id = 0;
};

}  // namespace tt::tt_metal
