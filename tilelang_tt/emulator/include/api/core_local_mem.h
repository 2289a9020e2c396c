// tt-metal 0.81.1 api/core_local_mem.h: CoreLocalMem<T>, a typed view of an address in this core's L1.
// Here its construction, address and element access, and (in a data movement build, as there) its NOC
// traits: a local-L1 source or destination at an offset; not the iterator arithmetic. An element read
// or written through operator[] is a load or a store of the calling RISC, charged its time
// (emu::k::risc_l1_access; there operator[] returns T&: here an element that charges as it is used).
#pragma once

#include <cstdint>
#include <type_traits>

#include "api/emu/kernel_common.h"

namespace emu::detail {
// An element of L1 as a RISC uses it: converting it to T loads it, assigning to it stores it.
template <typename T>
class L1Element {
 public:
  L1Element(T* ptr, emu::k::Loc loc) : ptr_(ptr), loc_(loc) {}
  operator T() const {
    emu::k::risc_l1_access(false, loc_);
    return *static_cast<volatile T*>(ptr_);
  }
  L1Element& operator=(T value) {
    emu::k::risc_l1_access(true, loc_);
    *static_cast<volatile T*>(ptr_) = value;
    return *this;
  }
  L1Element& operator=(const L1Element& other) { return *this = static_cast<T>(other); }

 private:
  T* ptr_;
  emu::k::Loc loc_;
};
}  // namespace emu::detail

template <typename T, typename AddressType = uintptr_t>
class CoreLocalMem {
  static_assert(std::is_integral<AddressType>::value, "AddressType must be an integral type");
  static_assert(std::is_unsigned<AddressType>::value, "AddressType must be unsigned for address representation");

 public:
  CoreLocalMem(AddressType address) : address_(address) {}
  CoreLocalMem(T* ptr) : address_(reinterpret_cast<AddressType>(ptr)) {}

  tt_l1_ptr T* get_unsafe_ptr() const { return reinterpret_cast<tt_l1_ptr T*>(address_); }
  AddressType get_address() const { return address_; }
  emu::detail::L1Element<T> operator[](uint32_t index) const { return {get_unsafe_ptr() + index, emu::k::Loc::current()}; }

 private:
  AddressType address_;
};

#if !defined(COMPILE_FOR_TRISC)
#include "api/dataflow/noc.h"

template <typename T, typename AddressType>
struct noc_traits_t<CoreLocalMem<T, AddressType>> {
  struct src_args_type {
    AddressType offset_bytes = 0;
  };
  struct dst_args_type {
    AddressType offset_bytes = 0;
  };
  template <Noc::AddressType address_type>
  static auto src_addr(const CoreLocalMem<T, AddressType>& src, const Noc&, const src_args_type& args, emu::k::Loc) {
    static_assert(address_type == Noc::AddressType::LOCAL_L1, "CoreLocalMem can only be used as local L1 source");
    return static_cast<uint32_t>(src.get_address() + args.offset_bytes);
  }
  template <Noc::AddressType address_type>
  static auto dst_addr(const CoreLocalMem<T, AddressType>& dst, const Noc&, const dst_args_type& args, emu::k::Loc) {
    static_assert(address_type == Noc::AddressType::LOCAL_L1, "CoreLocalMem can only be used as local L1 dest");
    return static_cast<uint32_t>(dst.get_address() + args.offset_bytes);
  }
};
#endif
