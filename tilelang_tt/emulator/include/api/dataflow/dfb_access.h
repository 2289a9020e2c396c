// tt-metal 0.81.1 api/dataflow/dfb_access.h: a DataflowBuffer's access patterns (Quasar's; on wormhole / blackhole
// a DataflowBuffer is not a template) and the names a kernel spells it by: DataflowBufferAnyPattern,
// is_dataflow_buffer_v, DFB_TEMPLATE_DECL / DFB_CLASS.
#pragma once

#include <cstdint>

namespace dfb {
enum AccessPattern : uint8_t {
  STRIDED,
  ALL,
  BLOCKED,
  UNKNOWN,
};
}  // namespace dfb

class DataflowBuffer;
#define DFB_TEMPLATE_DECL
#define DFB_CLASS DataflowBuffer
using DataflowBufferAnyPattern = DataflowBuffer;

template <typename T>
inline constexpr bool is_dataflow_buffer_v = false;
template <>
inline constexpr bool is_dataflow_buffer_v<DataflowBuffer> = true;
