// tt-llk's llk_defs.h (tt_llk_wormhole_b0/llk_lib/llk_defs.h in the 0.81.1 wheel): the ckernel enums
// the compute API's templates take, which ttnn's kernel_lib also names from data movement kernels
// (reduce_helpers_common.hpp). The values are the real header's.
#pragma once

#include <cstdint>

#include "api/emu/kernel_common.h"  // DataFormat (tensix_types.h in tt-llk)

namespace ckernel {

enum class VectorMode : std::uint8_t { None = 0, R = 1, C = 2, RC = 4, RC_custom = 6, Invalid = 0xff };
enum class ReduceDim : std::uint8_t { REDUCE_ROW, REDUCE_COL, REDUCE_SCALAR };
enum class PoolType : std::uint8_t { SUM, AVG, MAX, MIN };
enum class EltwiseBinaryType : std::uint8_t { ELWMUL, ELWDIV, ELWADD, ELWSUB, ELWLESS };
enum class EltwiseBinaryReuseDestType { NONE = 0, DEST_TO_SRCA = 1, DEST_TO_SRCB = 2 };
enum class BroadcastType : std::uint8_t { NONE = 0, COL = 1, ROW = 2, SCALAR = 3 };
enum class DstSync : std::uint8_t { SyncHalf = 0, SyncFull = 1 };
enum class MathFidelity : std::uint8_t { LoFi = 0, HiFi2 = 2, HiFi3 = 3, HiFi4 = 4 };
enum class DataCopyType : std::uint8_t { A2D, B2D };
constexpr bool UnpackToDestEn = true;
// tt-llk common/inc/ckernel_defs.h
enum class PackMode : std::uint8_t { Default = 0, Untilize = 1, Tilize = 2 };
enum class ReluType : std::uint8_t { NO_RELU = 0, ZERO_RELU, MIN_THRESHOLD_RELU, MAX_THRESHOLD_RELU };

// The packer's ReLU: a mode and a 16-bit threshold.
struct ReluConfig {
  static constexpr ReluConfig none() { return {ReluType::NO_RELU}; }
  static constexpr ReluConfig zero() { return {ReluType::ZERO_RELU}; }
  static constexpr ReluConfig min_threshold(std::uint32_t t) { return {ReluType::MIN_THRESHOLD_RELU, t}; }
  static constexpr ReluConfig max_threshold(std::uint32_t t) { return {ReluType::MAX_THRESHOLD_RELU, t}; }
  constexpr ReluType get_mode() const { return mode; }
  constexpr std::uint32_t get_threshold() const { return threshold; }

  ReluType mode = ReluType::NO_RELU;
  std::uint32_t threshold = 0;
};

}  // namespace ckernel

// tt-llk llk_lib/llk_unpack_common.h (global, after its `using namespace ckernel`)
enum class p_dim_stride_target { IGNORE, FACE_ROW_MAJOR };
