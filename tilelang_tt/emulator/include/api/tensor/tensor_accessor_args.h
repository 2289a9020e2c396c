// TensorAccessorArgs: reads a buffer's distribution from compile-time args at CTA_OFFSET, in the
// layout of tt-metal 0.81.1: [ArgsConfig bits, aligned page size] for interleaved buffers;
// sharded buffers add rank, num_banks, tensor shape, shard shape and packed bank coordinates
// (each omitted when passed as common runtime args instead).
#pragma once

#include <cstddef>
#include <cstdint>

#include "api/emu/kernel_common.h"

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
};

constexpr std::size_t UNKNOWN = static_cast<std::size_t>(-1);
constexpr uint32_t kShardContiguousBit = 1u << 31;

}  // namespace tensor_accessor

template <std::size_t CTA_OFFSET, std::size_t CRTA_OFFSET = tensor_accessor::UNKNOWN>
struct TensorAccessorArgs {
  static constexpr uint32_t config = get_compile_time_arg_val(CTA_OFFSET);
  static constexpr bool has(tensor_accessor::ArgConfig bit) { return (config & static_cast<uint32_t>(bit)) != 0; }

  static constexpr bool is_sharded = has(tensor_accessor::ArgConfig::Sharded);
  static constexpr bool is_dram = has(tensor_accessor::ArgConfig::IsDram);
  static constexpr bool rank_is_crta = has(tensor_accessor::ArgConfig::RuntimeRank);
  static constexpr bool num_banks_is_crta = has(tensor_accessor::ArgConfig::RuntimeNumBanks);
  static constexpr bool tensor_shape_is_crta = has(tensor_accessor::ArgConfig::RuntimeTensorShape);
  static constexpr bool shard_shape_is_crta = has(tensor_accessor::ArgConfig::RuntimeShardShape);
  static constexpr bool bank_coords_is_crta = has(tensor_accessor::ArgConfig::RuntimeBankCoords);
  static constexpr bool page_size_is_crta = has(tensor_accessor::ArgConfig::RuntimePageSize);

  static constexpr uint32_t AlignedPageSize = [] {
    if constexpr (page_size_is_crta) return 0u;
    else return get_compile_time_arg_val(CTA_OFFSET + 1);
  }();

  // Sharded layout: offsets of each compile-time field (a field passed at run time takes no slot).
  static constexpr std::size_t RankOffset = CTA_OFFSET + (page_size_is_crta ? 1 : 2);
  static constexpr uint32_t Rank = [] {
    if constexpr (!is_sharded || rank_is_crta) return 0u;
    else return get_compile_time_arg_val(RankOffset);
  }();
  static constexpr std::size_t NumBanksOffset = RankOffset + (rank_is_crta ? 0 : 1);
  static constexpr uint32_t NumBanks = [] {
    if constexpr (!is_sharded || num_banks_is_crta) return 0u;
    else return get_compile_time_arg_val(NumBanksOffset) & ~tensor_accessor::kShardContiguousBit;
  }();
  static constexpr std::size_t TensorShapeOffset = NumBanksOffset + (num_banks_is_crta ? 0 : 1);
  static constexpr std::size_t ShardShapeOffset = TensorShapeOffset + (tensor_shape_is_crta ? 0 : Rank);
  static constexpr std::size_t BankCoordsOffset = ShardShapeOffset + (shard_shape_is_crta ? 0 : Rank);
  static constexpr std::size_t End =
      is_sharded ? BankCoordsOffset + (bank_coords_is_crta ? 0 : (NumBanks + 1) / 2)
                 : CTA_OFFSET + (page_size_is_crta ? 1 : 2);

  constexpr TensorAccessorArgs() = default;
  constexpr explicit TensorAccessorArgs(uint32_t crta_offset) : crta_offset_rt(crta_offset) {}

  constexpr uint32_t crta_offset() const {
    return CRTA_OFFSET != tensor_accessor::UNKNOWN ? static_cast<uint32_t>(CRTA_OFFSET) : crta_offset_rt;
  }
  uint32_t get_aligned_page_size() const {
    if constexpr (page_size_is_crta) return get_common_arg_val<uint32_t>(static_cast<int>(crta_offset()));
    else return AlignedPageSize;
  }
  static constexpr uint32_t num_compile_time_args() { return static_cast<uint32_t>(End - CTA_OFFSET); }
  static constexpr uint32_t next_compile_time_args_offset() { return static_cast<uint32_t>(End); }
  constexpr uint32_t num_common_runtime_args() const {
    static_assert(!is_sharded, "emulator: sharded TensorAccessor common runtime args are not supported");
    return page_size_is_crta ? 1 : 0;
  }
  constexpr uint32_t next_common_runtime_args_offset() const { return crta_offset() + num_common_runtime_args(); }

  uint32_t crta_offset_rt = 0;
};
