// SFPU ops declared in tt-metal api/compute/compute_kernel_api.h.
#pragma once

#include "api/emu/sfpu.h"

namespace ckernel {

template <bool fast_and_approx = false>
ALWI void sigmoid_tile_init() {}
template <VectorMode vec_mode = VectorMode::RC, bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sigmoid_tile(uint32_t idst, Loc loc = Loc::current()) {
  static_assert(vec_mode == VectorMode::RC, "emulator: SFPU ops run on whole tiles only (VectorMode::RC)");
  // fast_and_approx: tt-metal's lookup table (compute.cpp, sigmoid_lut); otherwise exact in fp32
  emu::k::sfpu_unary(fast_and_approx ? emu::k::Unary::SigmoidLut : emu::k::Unary::Sigmoid, idst, loc);
}

ALWI void silu_tile_init() {}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void silu_tile(uint32_t idst, Loc loc = Loc::current()) {
  emu::k::sfpu_unary(emu::k::Unary::Silu, idst, loc);
}

template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tanh_tile_init() {}
template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tanh_tile(uint32_t idst, Loc loc = Loc::current()) {
  // fast_and_approx: tt-metal's lookup table (compute.cpp, tanh_lut); otherwise exact in fp32
  emu::k::sfpu_unary(fast_and_approx ? emu::k::Unary::TanhLut : emu::k::Unary::Tanh, idst, loc);
}

ALWI void square_tile_init() {}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void square_tile(uint32_t idst, Loc loc = Loc::current()) {
  emu::k::sfpu_unary(emu::k::Unary::Square, idst, loc);
}

template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void log_tile_init() {}
template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void log_tile(uint32_t idst, Loc loc = Loc::current()) {
  emu::k::sfpu_unary(emu::k::Unary::Log, idst, loc);
}

ALWI void abs_tile_init() {}
ALWI void abs_tile(uint32_t idst, Loc loc = Loc::current()) { emu::k::sfpu_unary(emu::k::Unary::Abs, idst, loc); }

ALWI void sign_tile_init() {}
ALWI void sign_tile(uint32_t idst, Loc loc = Loc::current()) { emu::k::sfpu_unary(emu::k::Unary::Sign, idst, loc); }

template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void exp2_tile_init() {}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void exp2_tile(uint32_t idst, Loc loc = Loc::current()) {
  emu::k::sfpu_unary(emu::k::Unary::Exp2, idst, loc);
}

template <bool approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void expm1_tile_init() {}
template <bool approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void expm1_tile(uint32_t idst, Loc loc = Loc::current()) {
  emu::k::sfpu_unary(emu::k::Unary::Expm1, idst, loc);
}

// log(x) * base_scale: base_scale is the bits of the fp32 1/ln(base) (0x3fb8aa3b: log2). base_is_two
// selects tt-llk's exact log2 path (a power of two gives its exponent exactly); the emulator's
// log(x) * base_scale is computed in fp32.
template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void log_with_base_tile_init() {}
template <bool fast_and_approx = false, bool base_is_two = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void log_with_base_tile(uint32_t idst, uint32_t base_scale, Loc loc = Loc::current()) {
  emu::k::sfpu_scalar(emu::k::SfpuBinary::LogBase, idst, std::bit_cast<float>(base_scale), loc);
}

// x ^ exponent, the exponent given as fp32 bits; 0 ^ (negative) is NaN.
ALWI void power_tile_init() {}
template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void power_tile(uint32_t idst, uint32_t param0, Loc loc = Loc::current()) {
  emu::k::sfpu_scalar(emu::k::SfpuBinary::Pow, idst, std::bit_cast<float>(param0), loc);
}

// tt-metal 0.81.1 power_iterative_tile (x^n by repeated products, n a positive integer): declared for ttnn's
// kernel_lib (eltwise/unary/math.inl, PowerIterative); not emulated.
ALWI void power_iterative_tile_init(Loc loc = Loc::current()) {
  emu::k::api_errorf(loc, "power_iterative_tile_init is not emulated");
}
ALWI void power_iterative_tile(uint32_t /*idst*/, uint32_t /*param0*/, Loc loc = Loc::current()) {
  emu::k::api_errorf(loc, "power_iterative_tile is not emulated");
}

// The SFPU reduce (tt-metal 0.81.1 compute_kernel_api.h sfpu_reduce / sfpu_reduce_init): the emulator models the
// row reduction of float tiles (REDUCE_ROW, SUM, MAX or MIN of Float32 or Float16_b tiles, the pools the API allows
// along rows) over the rt_dim x ct_dim block of DST tiles from idst: each row's result in the even columns of its
// row of the block row's first tile (column 0 the one read), the LLK's partial results in the other tiles' (runtime
// sfpu_reduce_row). The column reduction and the integer formats stop naming the call. The init charges nothing, as
// the emulator's other SFPU inits.
template <PoolType pool_type, DataFormat format, ReduceDim reduce_dim = ReduceDim::REDUCE_COL,
          bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sfpu_reduce(uint32_t idst, uint32_t ct_dim = 1, uint32_t rt_dim = 1, Loc loc = Loc::current()) {
  static_assert(reduce_dim == ReduceDim::REDUCE_COL ||
                    (reduce_dim == ReduceDim::REDUCE_ROW &&
                     (pool_type == PoolType::SUM || pool_type == PoolType::MAX || pool_type == PoolType::MIN)),
                "Only column reduction (REDUCE_COL) is supported for all pool types; row reduction (REDUCE_ROW) is "
                "only supported for SUM, MAX and MIN");
  if constexpr (reduce_dim == ReduceDim::REDUCE_ROW &&
                (format == DataFormat::Float32 || format == DataFormat::Float16_b)) {
    constexpr auto pool = pool_type == PoolType::SUM   ? emu::k::SfpuReduce::Sum
                          : pool_type == PoolType::MAX ? emu::k::SfpuReduce::Max
                                                       : emu::k::SfpuReduce::Min;
    emu::k::sfpu_reduce_row(pool, idst, ct_dim, rt_dim, loc);
  } else {
    emu::k::api_errorf(loc, "sfpu_reduce: the emulator models REDUCE_ROW of Float32 or Float16_b tiles only");
  }
}

template <PoolType pool_type, DataFormat format, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sfpu_reduce_init(Loc /*loc*/ = Loc::current()) {
  static_assert(pool_type == PoolType::SUM || pool_type == PoolType::AVG || pool_type == PoolType::MAX ||
                    pool_type == PoolType::MIN,
                "Unsupported pool type. Supported pool types: SUM, AVG, MAX, MIN");
}

}  // namespace ckernel
