// TensorAccessor (tt-metal 0.81.1 api/tensor/tensor_accessor.h): page id -> NOC address of a
// buffer described by TensorAccessorArgs.
//  * interleaved (DRAM only): page i is in bank i % num_banks at
//    base + (i / num_banks) * align(page_size, DRAM alignment).
//  * sharded: emu::locate_shard_page gives the bank (index into the bank coordinates) and the page
//    slot in it; the bank coordinate packs (x << 8) | y, two per 32-bit word (low half first). L1:
//    the worker core at NOC (x, y), address base + page_in_bank * aligned page size + offset.
//    DRAM: x is the DRAM bank id.
// The distribution is read when the accessor is constructed (compile-time args, or common runtime
// args for the fields the ArgsConfig marks Runtime*). Members take a trailing source location,
// like the dataflow API, for the protocol errors they raise.
#pragma once

#include <cstddef>
#include <cstdint>

#include "api/emu/addrgen.h"
#include "api/tensor/tensor_accessor_args.h"
#include "api/tensor/tensor_binding_token.h"

namespace tensor_accessor {

// The distribution of a sharded tensor (tt-metal's DistributionSpec), every field held at run time.
class DistributionSpec {
 public:
  template <typename Args>
  DistributionSpec(const Args& args, emu::k::Loc loc)
      : rank_(args.get_rank()), num_banks_(args.get_num_banks()), shard_contiguous_(args.resolve_shard_contiguous()) {
    if (rank_ == 0 || rank_ > MAX_RANK)
      emu::k::api_errorf(loc, "TensorAccessor: rank %u is outside 1..%zu", rank_, MAX_RANK);
    if (num_banks_ == 0) emu::k::api_error("TensorAccessor: the sharded tensor has no banks", loc);
    if (num_banks_ > MAX_BANKS)
      emu::k::api_errorf(loc, "TensorAccessor: %u banks; the emulator holds at most %u", num_banks_, MAX_BANKS);
    for (uint32_t i = 0; i < rank_; ++i) {
      tensor_shape_[i] = Args::tensor_shape_is_crta ? crta(args.tensor_shape_crta_offset() + i, loc)
                                                    : kernel_compile_time_args[Args::TensorShapeCTAOffset + i];
      shard_shape_[i] = Args::shard_shape_is_crta ? crta(args.shard_shape_crta_offset() + i, loc)
                                                  : kernel_compile_time_args[Args::ShardShapeCTAOffset + i];
      if (tensor_shape_[i] == 0 || shard_shape_[i] == 0)
        emu::k::api_errorf(loc, "TensorAccessor: dimension %u of the tensor or shard shape is 0", i);
      shard_grid_[i] = (tensor_shape_[i] + shard_shape_[i] - 1) / shard_shape_[i];
      tensor_volume_ *= tensor_shape_[i];
      shard_volume_ *= shard_shape_[i];
      num_shards_ *= shard_grid_[i];
    }
    if (shard_contiguous_ && num_shards_ % num_banks_ != 0)
      emu::k::api_errorf(loc, "TensorAccessor: shard-contiguous distribution of %zu shards over %u banks is not uniform",
                         num_shards_, num_banks_);
    for (uint32_t i = 0; i < num_banks_; ++i) {
      const uint32_t word = Args::bank_coords_is_crta ? crta(args.bank_coords_crta_offset() + i / 2, loc)
                                                      : kernel_compile_time_args[Args::BankCoordsCTAOffset + i / 2];
      bank_coords_[i] = static_cast<uint16_t>(i % 2 == 0 ? word & 0xffff : word >> 16);
    }
  }

  uint32_t rank() const { return rank_; }
  uint32_t num_banks() const { return num_banks_; }
  bool resolve_shard_contiguous() const { return shard_contiguous_; }
  emu::View<uint32_t> tensor_shape() const { return {tensor_shape_, rank_}; }
  emu::View<uint32_t> shard_shape() const { return {shard_shape_, rank_}; }
  emu::View<uint32_t> shard_grid() const { return {shard_grid_, rank_}; }
  size_t tensor_volume() const { return tensor_volume_; }
  size_t shard_volume() const { return shard_volume_; }
  size_t num_shards() const { return num_shards_; }
  emu::View<uint16_t> packed_xy_coords() const { return {bank_coords_, num_banks_}; }

 private:
  static uint32_t crta(uint32_t index, emu::k::Loc loc) { return emu::k::arg(index, true, loc); }

  uint32_t rank_, num_banks_;
  bool shard_contiguous_;
  // Every bank of the largest grid (Blackhole's 140 workers) fits.
  static constexpr uint32_t MAX_BANKS = 256;

  uint32_t tensor_shape_[MAX_RANK]{}, shard_shape_[MAX_RANK]{}, shard_grid_[MAX_RANK]{};
  size_t tensor_volume_ = 1, shard_volume_ = 1, num_shards_ = 1;
  uint16_t bank_coords_[MAX_BANKS]{};
};

}  // namespace tensor_accessor

template <typename Args, bool Sharded = Args::is_sharded>
struct TensorAccessor;

// Interleaved: an InterleavedAddrGen (bank_base_address, page_size), as in tt-metal.
template <typename Args>
struct TensorAccessor<Args, false> : InterleavedAddrGen<Args::is_dram> {
  static constexpr bool is_dram = Args::is_dram;

  TensorAccessor(const Args& args_in, std::size_t bank_base_address_in, uint32_t page_size_in)
      : InterleavedAddrGen<Args::is_dram>{static_cast<uint32_t>(bank_base_address_in), page_size_in},
        args(args_in),
        aligned_page_size(page_size_in) {}
  TensorAccessor(const Args& args_in, std::size_t bank_base_address_in)
      : TensorAccessor(args_in, bank_base_address_in, args_in.get_aligned_page_size()) {}
  // From a Metal 2.0 binding token (its deduction guide below gives Args): the address is the common runtime
  // arg the token names, as tt-metal 0.81.1's constructor reads it.
  template <uint32_t CTA_OFFSET, uint32_t ADDR_CRTA_OFFSET>
  TensorAccessor(tensor_accessor::TensorBindingToken<CTA_OFFSET, ADDR_CRTA_OFFSET>,
                 emu::k::Loc loc = emu::k::Loc::current())
      : TensorAccessor(Args{}, emu::k::arg(ADDR_CRTA_OFFSET / sizeof(uint32_t), true, loc)) {}

  uint32_t get_aligned_page_size() const { return aligned_page_size; }
  uint64_t get_noc_addr(uint32_t page_id, uint32_t offset = 0, uint8_t /*noc*/ = noc_index,
                        emu::k::Loc loc = emu::k::Loc::current()) const {
    return emu::detail::dram_page_addr(is_dram, this->bank_base_address, aligned_page_size, page_id, offset, loc);
  }
  constexpr uint32_t get_bank_base_address() const { return this->bank_base_address; }

  Args args;
  uint32_t aligned_page_size;
};

template <typename Args>
struct TensorAccessor<Args, true> {
  static constexpr bool is_dram = Args::is_dram;

  struct PageMapping {
    size_t bank_id;
    size_t bank_page_offset;
  };

  TensorAccessor(const Args& args, std::size_t bank_base_address_in, uint32_t page_size_in = Args::AlignedPageSize,
                 emu::k::Loc loc = emu::k::Loc::current())
      : dspec_(args, loc), bank_base_address(static_cast<uint32_t>(bank_base_address_in)), aligned_page_size(page_size_in) {
    static_assert(Args::next_compile_time_args_offset() <= kernel_compile_time_args.size(),
                  "the kernel's compile-time args end before this TensorAccessorArgs do");
  }
  template <uint32_t CTA_OFFSET, uint32_t ADDR_CRTA_OFFSET>
  TensorAccessor(tensor_accessor::TensorBindingToken<CTA_OFFSET, ADDR_CRTA_OFFSET>,
                 emu::k::Loc loc = emu::k::Loc::current())
      : TensorAccessor(Args{}, emu::k::arg(ADDR_CRTA_OFFSET / sizeof(uint32_t), true, loc), Args::AlignedPageSize, loc) {}

  const tensor_accessor::DistributionSpec& dspec() const { return dspec_; }
  uint32_t get_aligned_page_size() const { return aligned_page_size; }
  constexpr uint32_t get_bank_base_address() const { return bank_base_address; }

  PageMapping get_bank_and_offset(uint32_t page_id, emu::k::Loc loc = emu::k::Loc::current()) const {
    if (page_id >= dspec_.tensor_volume())
      emu::k::api_errorf(loc, "TensorAccessor: page %u is outside the sharded tensor of %zu pages", page_id,
                         dspec_.tensor_volume());
    const emu::ShardPage placed = emu::locate_shard_page(dspec_.tensor_shape(), dspec_.shard_shape(), dspec_.num_banks(),
                                                         dspec_.resolve_shard_contiguous(), page_id);
    return {placed.bank, placed.page_in_bank};
  }

  uint64_t get_noc_addr(uint32_t page_id, uint32_t offset = 0, uint8_t /*noc*/ = noc_index,
                        emu::k::Loc loc = emu::k::Loc::current()) const {
    return bank_noc_addr(get_bank_and_offset(page_id, loc), offset);
  }

  uint64_t get_shard_noc_addr(uint32_t shard_id, uint32_t offset = 0, uint8_t /*noc*/ = noc_index,
                              emu::k::Loc loc = emu::k::Loc::current()) const {
    const emu::BankSlot placed = shard_bank(shard_id, loc);
    return bank_noc_addr({placed.bank, placed.slot * dspec_.shard_volume()}, offset);
  }

  bool is_local_bank(uint32_t virtual_x, uint32_t virtual_y, uint8_t /*noc*/ = noc_index,
                     emu::k::Loc loc = emu::k::Loc::current()) const {
    return !is_dram && emu::k::noc_unicast_addr(virtual_x, virtual_y, 0) == emu::k::noc_self_addr(0, loc);
  }
  bool is_local_page(uint32_t page_id, uint8_t noc = noc_index, emu::k::Loc loc = emu::k::Loc::current()) const {
    const uint16_t xy = dspec_.packed_xy_coords()[get_bank_and_offset(page_id, loc).bank_id];
    return is_local_bank(xy >> 8, xy & 0xff, noc, loc);
  }
  bool is_local_shard(uint32_t shard_id, uint8_t noc = noc_index, emu::k::Loc loc = emu::k::Loc::current()) const {
    const uint16_t xy = dspec_.packed_xy_coords()[shard_bank(shard_id, loc).bank];
    return is_local_bank(xy >> 8, xy & 0xff, noc, loc);
  }

 private:
  emu::BankSlot shard_bank(uint32_t shard_id, emu::k::Loc loc) const {
    if (shard_id >= dspec_.num_shards())
      emu::k::api_errorf(loc, "TensorAccessor: shard %u is outside the %zu shards of the tensor", shard_id,
                         dspec_.num_shards());
    return emu::shard_to_bank(shard_id, dspec_.num_shards(), dspec_.num_banks(), dspec_.resolve_shard_contiguous());
  }

  uint64_t bank_noc_addr(PageMapping mapping, uint32_t offset) const {
    const uint16_t xy = dspec_.packed_xy_coords()[mapping.bank_id];
    const uint32_t x = xy >> 8, y = xy & 0xff;
    const uint32_t addr = bank_base_address + static_cast<uint32_t>(mapping.bank_page_offset) * aligned_page_size + offset;
    return is_dram ? emu::k::noc_dram_bank_addr(x, addr) : emu::k::noc_unicast_addr(x, y, addr);
  }

  tensor_accessor::DistributionSpec dspec_;
  uint32_t bank_base_address;
  uint32_t aligned_page_size;
};

// tt-metal 0.81.1 has no get_noc_addr(id, addrgen) for a sharded TensorAccessor (api/emu/addrgen.h):
// the call does not compile there. Not a tt-metal declaration, so that it fails here with a message
// that says what to call instead (tests/compiler/test_against_headers.py lists it as intended).
template <typename Args>
uint64_t get_noc_addr(uint32_t /*id*/, const TensorAccessor<Args, true>& /*accessor*/, uint32_t /*offset*/ = 0,
                      uint8_t /*noc*/ = noc_index) {
  static_assert(sizeof(Args) == 0,
                "tt-metal 0.81.1 has no get_noc_addr(id, accessor) for a sharded TensorAccessor: "
                "use accessor.get_noc_addr(id, offset)");
  return 0;
}

template <typename Args>
TensorAccessor(const Args&, std::size_t) -> TensorAccessor<Args>;
template <typename Args>
TensorAccessor(const Args&, std::size_t, uint32_t) -> TensorAccessor<Args>;
// A binding's runtime accessor fields follow its address word (tt-metal 0.81.1: CRTA_OFFSET is the address's
// word + 1).
template <uint32_t CTA_OFFSET, uint32_t ADDR_CRTA_OFFSET>
TensorAccessor(tensor_accessor::TensorBindingToken<CTA_OFFSET, ADDR_CRTA_OFFSET>)
    -> TensorAccessor<TensorAccessorArgs<CTA_OFFSET, ADDR_CRTA_OFFSET / sizeof(uint32_t) + 1>>;
