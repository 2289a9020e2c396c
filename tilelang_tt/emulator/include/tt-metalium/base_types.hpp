// Emulated tt-metal host API: enums shared by the host headers (tt-metal 0.81.1 names and values).
#pragma once

#include <cstdint>

namespace tt {

// The data formats the emulator models (tt-metal numbering).
enum class DataFormat : uint8_t {
    Float32 = 0,
    Float16_b = 5,
    Bfp8_b = 6,
    Bfp4_b = 7,
    Int32 = 8,
    UInt16 = 9,
    UInt32 = 24,
    UInt8 = 30,
    Invalid = 0xff,
};

enum class CoreType { WORKER, ETH, DRAM };

}  // namespace tt

namespace tt::tt_metal {

enum class MathFidelity : uint8_t { LoFi = 0, HiFi2 = 2, HiFi3 = 3, HiFi4 = 4, Invalid = 0xff };

enum class DataMovementProcessor { RISCV_0 = 0, RISCV_1 = 1 };

enum NOC : uint8_t { RISCV_0_default = 0, RISCV_1_default = 1, NOC_0 = 0, NOC_1 = 1 };

enum class NOC_MODE : uint8_t { DM_DEDICATED_NOC = 0, DM_DYNAMIC_NOC = 1 };

enum class UnpackToDestMode : uint8_t { Default, UnpackToDestFp32 };

using DeviceAddr = uint64_t;

}  // namespace tt::tt_metal
