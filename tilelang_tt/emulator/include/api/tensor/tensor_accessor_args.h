// TensorAccessorArgs: a buffer's distribution read from compile-time args at CTA_OFFSET and common
// runtime args at CRTA_OFFSET, in the layout of tt-metal 0.81.1 api/tensor/tensor_accessor_args.h:
//   interleaved: [ArgsConfig, aligned page size]   ([ArgsConfig] with RuntimePageSize; the page
//                size is then the first common runtime arg)
//   sharded:     [ArgsConfig, aligned page size, rank, num_banks (top bit: shard-contiguous),
//                 tensor_shape[rank], shard_shape[rank], bank coords packed two per word]
// A sharded field whose ArgConfig Runtime* bit is set takes no compile-time slot; it is read from
// the common runtime args instead, in the same order starting at crta_offset().
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include <hostdevcommon/tensor_accessor/arg_config.hpp>

#include "api/compile_time_args.h"
#include "kernel_api.hpp"

namespace tensor_accessor {
constexpr std::size_t MAX_RANK = 8;
constexpr std::size_t UNKNOWN = std::numeric_limits<std::size_t>::max();
}  // namespace tensor_accessor

template <std::size_t CTA_OFFSET, std::size_t CRTA_OFFSET = tensor_accessor::UNKNOWN>
struct TensorAccessorArgs {
  static constexpr auto args_config = tensor_accessor::ArgsConfig(
      static_cast<tensor_accessor::ArgsConfig::Underlying>(get_compile_time_arg_val(CTA_OFFSET)));

  static constexpr bool is_sharded = args_config.test(tensor_accessor::ArgConfig::Sharded);
  static constexpr bool is_dram = args_config.test(tensor_accessor::ArgConfig::IsDram);
  static constexpr bool rank_is_crta = args_config.test(tensor_accessor::ArgConfig::RuntimeRank);
  static constexpr bool num_banks_is_crta = args_config.test(tensor_accessor::ArgConfig::RuntimeNumBanks);
  static constexpr bool tensor_shape_is_crta = args_config.test(tensor_accessor::ArgConfig::RuntimeTensorShape);
  static constexpr bool shard_shape_is_crta = args_config.test(tensor_accessor::ArgConfig::RuntimeShardShape);
  static constexpr bool bank_coords_is_crta = args_config.test(tensor_accessor::ArgConfig::RuntimeBankCoords);
  static constexpr bool page_size_is_crta = args_config.test(tensor_accessor::ArgConfig::RuntimePageSize);

  static_assert(!is_sharded || !rank_is_crta || (tensor_shape_is_crta && shard_shape_is_crta),
                "If rank is runtime, tensor_shape and shard_shape must also be runtime");
  static_assert(!is_sharded || !num_banks_is_crta || bank_coords_is_crta,
                "If num_banks is runtime, bank_coords must also be runtime");
  static_assert(!is_sharded || !page_size_is_crta,
                "RuntimePageSize (the runtime page-size relaxation) is not supported on sharded tensors");

  static constexpr uint32_t AlignedPageSizeCTAOffset = CTA_OFFSET + 1;
  static constexpr uint32_t AlignedPageSize = [] {
    if constexpr (page_size_is_crta) return 0u;
    else return get_compile_time_arg_val(AlignedPageSizeCTAOffset);
  }();

  static constexpr uint32_t RankCTAOffset = CTA_OFFSET + 2 - (page_size_is_crta ? 1 : 0);
  static constexpr uint32_t NumBanksCTAOffset = RankCTAOffset + (rank_is_crta ? 0 : 1);
  static constexpr uint32_t RankCT = [] {
    if constexpr (!is_sharded || rank_is_crta) return 0u;
    else return get_compile_time_arg_val(RankCTAOffset);
  }();
  static constexpr uint32_t NumBanksRawCT = [] {
    if constexpr (!is_sharded || num_banks_is_crta) return 0u;
    else return get_compile_time_arg_val(NumBanksCTAOffset);
  }();
  static constexpr uint32_t NumBanksCT = tensor_accessor::unpack_num_banks(NumBanksRawCT);
  static constexpr bool is_shard_contiguous = tensor_accessor::unpack_is_shard_contiguous(NumBanksRawCT);
  static constexpr uint32_t PhysicalNumBanksCT = (NumBanksCT + 1) / 2;

  static_assert(!is_sharded || rank_is_crta || RankCT > 0, "Rank must be greater than 0!");
  static_assert(!is_sharded || rank_is_crta || RankCT <= tensor_accessor::MAX_RANK, "Rank exceeds MAX_RANK");
  static_assert(!is_sharded || num_banks_is_crta || NumBanksCT > 0, "Number of banks must be greater than 0!");

  static constexpr uint32_t TensorShapeCTAOffset = NumBanksCTAOffset + (num_banks_is_crta ? 0 : 1);
  static constexpr uint32_t ShardShapeCTAOffset = TensorShapeCTAOffset + (tensor_shape_is_crta ? 0 : RankCT);
  static constexpr uint32_t BankCoordsCTAOffset = ShardShapeCTAOffset + (shard_shape_is_crta ? 0 : RankCT);

  static constexpr uint32_t NumArgsCT = [] {
    if constexpr (is_sharded) return BankCoordsCTAOffset + (bank_coords_is_crta ? 0 : PhysicalNumBanksCT) - CTA_OFFSET;
    else return page_size_is_crta ? 1u : 2u;
  }();

  constexpr TensorAccessorArgs() = default;
  constexpr explicit TensorAccessorArgs(uint32_t crta_offset) : crta_offset_rt_(crta_offset) {
    static_assert(CRTA_OFFSET == tensor_accessor::UNKNOWN, "Do not pass crta_offset when CRTA_OFFSET is known");
  }

  constexpr uint32_t crta_offset() const {
    if constexpr (CRTA_OFFSET != tensor_accessor::UNKNOWN) return static_cast<uint32_t>(CRTA_OFFSET);
    else return crta_offset_rt_;
  }
  constexpr uint32_t get_aligned_page_size() const {
    if constexpr (page_size_is_crta) return crta(crta_offset());
    else return AlignedPageSize;
  }

  constexpr uint32_t rank_crta_offset() const { return crta_offset(); }
  constexpr uint32_t num_banks_crta_offset() const { return crta_offset() + rank_is_crta; }
  constexpr uint32_t get_rank() const {
    if constexpr (!rank_is_crta) return RankCT;
    else return crta(rank_crta_offset());
  }
  constexpr uint32_t get_num_banks() const {
    if constexpr (!num_banks_is_crta) return NumBanksCT;
    else return tensor_accessor::unpack_num_banks(crta(num_banks_crta_offset()));
  }
  constexpr bool resolve_shard_contiguous() const {
    if constexpr (!num_banks_is_crta) return is_shard_contiguous;
    else
      return tensor_accessor::unpack_is_shard_contiguous(
          crta(num_banks_crta_offset()));
  }
  constexpr uint32_t get_physical_num_banks() const { return (get_num_banks() + 1) / 2; }
  constexpr uint32_t tensor_shape_crta_offset() const { return num_banks_crta_offset() + num_banks_is_crta; }
  constexpr uint32_t shard_shape_crta_offset() const {
    return tensor_shape_crta_offset() + (tensor_shape_is_crta ? get_rank() : 0);
  }
  constexpr uint32_t bank_coords_crta_offset() const {
    return shard_shape_crta_offset() + (shard_shape_is_crta ? get_rank() : 0);
  }

  static constexpr uint32_t num_compile_time_args() { return NumArgsCT; }
  static constexpr uint32_t next_compile_time_args_offset() { return CTA_OFFSET + num_compile_time_args(); }
  constexpr uint32_t num_common_runtime_args() const {
    if constexpr (!is_sharded) return page_size_is_crta ? 1 : 0;
    else return bank_coords_crta_offset() + (bank_coords_is_crta ? get_physical_num_banks() : 0) - crta_offset();
  }
  constexpr uint32_t next_common_runtime_args_offset() const { return crta_offset() + num_common_runtime_args(); }

 private:
  // Common runtime arg `index` (what tt-metal reads with get_common_arg_val, which this header only
  // forward-declares there).
  static uint32_t crta(uint32_t index) { return emu::k::arg(index, true, emu::k::Loc::current()); }

  uint32_t crta_offset_rt_ = 0;
};
