// Emulated tt-metal host API: kernel configurations (same fields, order and defaults as tt-metal).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <tt-metalium/base_types.hpp>

namespace tt::tt_metal {

using KernelHandle = std::uint32_t;

enum class KernelBuildOptLevel : uint8_t { O1, O2, O3, O0, Os, Ofast, Oz };

struct DataMovementConfig {
    DataMovementProcessor processor = DataMovementProcessor::RISCV_0;
    NOC noc = NOC::RISCV_0_default;
    NOC_MODE noc_mode = NOC_MODE::DM_DEDICATED_NOC;
    std::vector<uint32_t> compile_args;
    std::map<std::string, std::string> defines;
    std::unordered_map<std::string, uint32_t> named_compile_args;
    KernelBuildOptLevel opt_level = KernelBuildOptLevel::O2;
};

// A data movement config with tt-metal's choices for a reader (RISCV_1, the NOC
// detail::preferred_noc_for_dram_read gives: NOC_0) and a writer (RISCV_0, preferred_noc_for_dram_write:
// NOC_1) (tt-metal tt_metal/impl/kernels/kernel_types.cpp, api/tt-metalium/kernel_types.hpp). The
// parameters are libtt_metal.so 0.81.1's (its exported constructors' signature); the last one, paths
// the wheel's headers do not document, is refused unless empty.
#define TT_EMU_DATA_MOVEMENT_CONFIG(Config)                                   \
    struct Config : public DataMovementConfig {                               \
        Config(std::vector<uint32_t> compile_args = {},                       \
               std::map<std::string, std::string> defines = {},               \
               std::unordered_map<std::string, uint32_t> named_compile_args = {}, \
               KernelBuildOptLevel opt_level = KernelBuildOptLevel::O2,       \
               std::vector<std::filesystem::path> paths = {});                \
    };
TT_EMU_DATA_MOVEMENT_CONFIG(ReaderDataMovementConfig)
TT_EMU_DATA_MOVEMENT_CONFIG(WriterDataMovementConfig)
#undef TT_EMU_DATA_MOVEMENT_CONFIG

struct ComputeConfig {
    MathFidelity math_fidelity = MathFidelity::HiFi4;
    bool fp32_dest_acc_en = false;
    bool dst_full_sync_en = false;
    std::vector<UnpackToDestMode> unpack_to_dest_mode;
    bool bfp8_pack_precise = false;
    bool math_approx_mode = false;
    std::vector<uint32_t> compile_args;
    std::map<std::string, std::string> defines;
    std::unordered_map<std::string, uint32_t> named_compile_args;
    KernelBuildOptLevel opt_level = KernelBuildOptLevel::O3;
};

}  // namespace tt::tt_metal
