// TensorAccessor: page id -> NOC address for a buffer described by TensorAccessorArgs.
// Interleaved DRAM buffers only: page i is in bank i % num_banks at
// base + (i / num_banks) * align(page_size, DRAM alignment).
#pragma once

#include <cstddef>
#include <cstdint>

#include "api/tensor/tensor_accessor_args.h"

template <typename Args>
struct TensorAccessor {
  static_assert(!Args::is_sharded, "emulator: sharded TensorAccessor is not supported");
  static_assert(Args::is_dram, "emulator: TensorAccessor over L1-interleaved buffers is not supported");
  static constexpr bool is_dram = Args::is_dram;

  TensorAccessor(const Args& args_in, std::size_t bank_base_address_in, uint32_t page_size_in)
      : args(args_in), bank_base_address(static_cast<uint32_t>(bank_base_address_in)), aligned_page_size(page_size_in) {}
  TensorAccessor(const Args& args_in, std::size_t bank_base_address_in)
      : TensorAccessor(args_in, bank_base_address_in, args_in.get_aligned_page_size()) {}

  uint32_t get_aligned_page_size() const { return aligned_page_size; }
  uint64_t get_noc_addr(uint32_t page_id, uint32_t offset = 0, uint8_t /*noc*/ = noc_index) const {
    return emu::k::noc_dram_page_addr(bank_base_address, aligned_page_size, page_id, offset);
  }

  Args args;
  uint32_t bank_base_address;
  uint32_t aligned_page_size;
};
