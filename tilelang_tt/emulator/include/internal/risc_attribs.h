// tt-metal 0.81.1 hw/inc/internal/risc_attribs.h: the RISC-V attributes and L1 helpers kernels name (the SDPA
// kernels' q_chunk_remapping.hpp includes it directly; the real dataflow and compute APIs include it too). On
// the host L1 is ordinary memory: the pointer attributes are empty.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernel_api.hpp"  // FORCE_INLINE

union tt_uint64_t {
  uint64_t v;
  struct {
    uint32_t hi;
    uint32_t lo;
  };
};

#define tt_l1_ptr
#define tt_reg_ptr

// A count of 32-bit words, distinct from a byte count at the type level.
enum class L1WordCount : int32_t {};

constexpr L1WordCount l1_word_count_from_bytes(size_t bytes) { return static_cast<L1WordCount>(bytes / 4); }
template <typename T>
constexpr L1WordCount l1_word_count_from_range(T* start, T* end) {
  static_assert(sizeof(T) == sizeof(uint32_t), "L1WordCount ranges must use 32-bit elements");
  return static_cast<L1WordCount>(end - start);
}

// Where an inline write lands.
enum class InlineWriteDst : uint8_t { DEFAULT = 0, L1 = 1, REG = 2 };

inline __attribute__((always_inline)) uint64_t tt_l1_load(tt_uint64_t tt_l1_ptr* p) {
  tt_uint64_t v;
  v.hi = p->hi;
  v.lo = p->lo;
  return v.v;
}

inline __attribute__((always_inline)) uint64_t tt_l1_load(volatile tt_uint64_t* tt_l1_ptr p) {
  tt_uint64_t v;
  v.hi = p->hi;
  v.lo = p->lo;
  return v.v;
}
