// The handle of a DataflowBuffer binding (tt-metal 0.81.1 api/dataflow/dfb_binding_token.h), declared
// per kernel in the generated kernel_bindings_generated.h as `constexpr DFBBindingToken name{id};`.
// On wormhole / blackhole (tt-1xx) the id is the circular buffer's index: the token converts to it
// (for the Gen1 compute API that takes a CB id) and a DataflowBuffer is built from it. Not emulated:
// the access-pattern template arguments and the LLK metadata (Quasar's).
#pragma once

#include <cstdint>

struct DFBBindingToken {
  explicit constexpr DFBBindingToken(uint16_t id) noexcept : id_(id) {}
  constexpr operator uint32_t() const noexcept { return id_; }

 private:
  uint16_t id_;
};
