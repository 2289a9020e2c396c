// Reductions (tt-metal api/compute/reduce.h). reduce_tile accumulates into DST:
// REDUCE_ROW -> column 0, REDUCE_COL -> row 0, REDUCE_SCALAR -> element (0,0); the result is
// scaled by element (0,0) of the scaler tile. MAX starts from -inf on a freshly acquired tile.
#pragma once

#include "api/compute/common.h"

namespace ckernel {

namespace detail {
template <PoolType t>
constexpr emu::k::Pool pool_of() {
  static_assert(t != PoolType::MIN, "emulator: PoolType::MIN is not supported");
  return t == PoolType::SUM ? emu::k::Pool::Sum : t == PoolType::AVG ? emu::k::Pool::Avg : emu::k::Pool::Max;
}
template <ReduceDim d>
constexpr emu::k::RDim rdim_of() {
  return d == ReduceDim::REDUCE_ROW ? emu::k::RDim::Row
         : d == ReduceDim::REDUCE_COL ? emu::k::RDim::Col
                                      : emu::k::RDim::Scalar;
}
}  // namespace detail

// reduce_init programs the packer's edge masks (llk_pack_reduce_mask_config<reduce_dim>): every datum of a packed
// tile outside the reduction result is written as zero until reduce_uninit.
template <PoolType reduce_type, ReduceDim reduce_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void reduce_init(std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t = __builtin_LINE(),
                      Loc loc = Loc::current()) {
  emu::k::reduce_init(detail::rdim_of<reduce_dim>(), loc);
}

ALWI void reduce_uninit(std::uint32_t = 0, Loc loc = Loc::current()) { emu::k::reduce_uninit(loc); }

template <PoolType reduce_type, ReduceDim reduce_dim, bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void reduce_tile(std::uint32_t icb, std::uint32_t icb_scaler, std::uint32_t itile, std::uint32_t itile_scaler,
                      std::uint32_t idst, Loc loc = Loc::current()) {
  emu::k::reduce_tile(detail::pool_of<reduce_type>(), detail::rdim_of<reduce_dim>(), icb, icb_scaler, itile,
                      itile_scaler, idst, loc);
}

}  // namespace ckernel

// tt-metal 0.81.1's reduce.h includes llk_pack_reduce_api.h (the packer's reduce masks, which ttnn's
// kernel_lib sets itself on its SFPU reduce path); the emulator models the compute API's reduce only.
template <ReduceDim dim, PackMode pack_mode = PackMode::Default>
inline void llk_pack_reduce_mask_config(std::uint32_t /*ocb*/, Loc loc = Loc::current()) {
  emu::detail::llk_not_emulated("llk_pack_reduce_mask_config", loc);
}

inline void llk_pack_reduce_mask_clear(Loc loc = Loc::current()) {
  emu::detail::llk_not_emulated("llk_pack_reduce_mask_clear", loc);
}
