// The handle of a tensor binding (tt-metal 0.81.1 api/tensor/tensor_binding_token.h), declared per kernel in
// the generated kernel_bindings_generated.h as `constexpr <name>_t <name>{};` with
// `using <name>_t = ::tensor_accessor::TensorBindingToken<CTA_OFFSET, ADDR_CRTA_OFFSET>;`: the tensor's
// TensorAccessorArgs start at compile-time arg CTA_OFFSET, its base address is the common runtime arg at
// byte offset ADDR_CRTA_OFFSET (api/tensor/tensor_accessor.h builds a TensorAccessor from it).
#pragma once

#include <cstdint>

#include "api/tensor/tensor_accessor_args.h"

namespace tensor_accessor {

template <uint32_t CTA_OFFSET, uint32_t ADDR_CRTA_OFFSET>
struct TensorBindingToken {
  using args_t = TensorAccessorArgs<CTA_OFFSET>;
  static constexpr uint32_t addr_crta_offset = ADDR_CRTA_OFFSET;  // in bytes
  static_assert(ADDR_CRTA_OFFSET % sizeof(uint32_t) == 0, "TensorBindingToken: ADDR_CRTA_OFFSET must be 4-byte aligned");
};

}  // namespace tensor_accessor
