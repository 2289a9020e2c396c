// tt-metal 0.81.1 api/core_local_mem.h: CoreLocalMem<T>, a typed view of an address in this core's L1.
// Here its construction, address and element access; not the iterator arithmetic or the NOC traits.
#pragma once

#include <cstdint>
#include <type_traits>

#include "api/emu/kernel_common.h"

template <typename T, typename AddressType = uintptr_t>
class CoreLocalMem {
  static_assert(std::is_integral<AddressType>::value, "AddressType must be an integral type");
  static_assert(std::is_unsigned<AddressType>::value, "AddressType must be unsigned for address representation");

 public:
  CoreLocalMem(AddressType address) : address_(address) {}
  CoreLocalMem(T* ptr) : address_(reinterpret_cast<AddressType>(ptr)) {}

  tt_l1_ptr T* get_unsafe_ptr() const { return reinterpret_cast<tt_l1_ptr T*>(address_); }
  AddressType get_address() const { return address_; }
  T& operator[](uint32_t index) const { return get_unsafe_ptr()[index]; }

 private:
  AddressType address_;
};
