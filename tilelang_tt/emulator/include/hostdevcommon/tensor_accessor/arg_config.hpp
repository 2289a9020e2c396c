// Which TensorAccessor arguments a kernel receives as compile-time args and which as common
// runtime args (tt-metal hostdevcommon/tensor_accessor/arg_config.hpp, shared by host and kernels).
#pragma once

#include <cstdint>

#include <hostdevcommon/flags.hpp>

namespace tensor_accessor {

enum class ArgConfig : uint8_t {
    None = 0,
    Sharded = 1 << 0,
    IsDram = 1 << 1,
    RuntimeRank = 1 << 2,
    RuntimeNumBanks = 1 << 3,
    RuntimeTensorShape = 1 << 4,
    RuntimeShardShape = 1 << 5,
    RuntimeBankCoords = 1 << 6,
    RuntimePageSize = 1 << 7,
    Runtime = RuntimeRank | RuntimeNumBanks | RuntimeTensorShape | RuntimeShardShape | RuntimeBankCoords | RuntimePageSize
};

using ArgsConfig = Flags<ArgConfig>;
constexpr ArgsConfig operator|(ArgConfig a, ArgConfig b) noexcept { return ArgsConfig(a) | b; }
constexpr ArgsConfig operator|(ArgConfig a, ArgsConfig b) noexcept { return ArgsConfig(a) | b; }

// The num_banks word carries the shard-contiguous distribution (CONTIGUOUS_1D) in its top bit.
inline constexpr uint32_t ShardContiguousBit = 1u << 31;
constexpr uint32_t pack_num_banks(uint32_t num_banks, bool is_shard_contiguous) {
    return num_banks | (is_shard_contiguous ? ShardContiguousBit : 0u);
}
constexpr uint32_t unpack_num_banks(uint32_t packed_num_banks) { return packed_num_banks & ~ShardContiguousBit; }
constexpr bool unpack_is_shard_contiguous(uint32_t packed_num_banks) {
    return (packed_num_banks & ShardContiguousBit) != 0;
}

}  // namespace tensor_accessor
