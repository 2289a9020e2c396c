// What the compute kernel's translation units share: compute.cpp (the compute API: DST, unpack, FPU
// and SFPU ops, pack), tilize.cpp (the layout conversions), sfpu.cpp and sfpu_recip.cpp (the SFPU's arithmetic per
// datum) and costs.cpp (the timing model's cost of each tile op).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "internal.hpp"

namespace emu {

namespace k {

// ---- compute kernel internals (compute.cpp) ----
// The calling thread's context; errors unless it runs a compute kernel.
ThreadCtx& compute_ctx(const char* fn, Loc loc);
// DST tile `idst` of the half held by math; checks state and capacity.
float* math_dst(ThreadCtx& t, uint32_t idst, const char* fn, Loc loc);
// After a math op: DST holds bf16 unless fp32_dest_acc_en.
void settle(ThreadCtx& t, float* d);
// Unpacks tile `tile` (relative to the read pointer) of a CB the kernel has waited for; returns the
// CB's format. The op records what its unpackers read of the tile (t.unpacked.read) for its unpack time.
DataFormat unpack_waited(ThreadCtx& t, uint32_t cb, uint32_t tile, float* out, const char* fn, Loc loc);
// Timing of one op: the unpack TRISC's share (the bytes the op recorded in t.unpacked), then
// math's `math_cycles`, which start when the operands are unpacked (timing.hpp).
void unpack_then_math(ThreadCtx& t, uint64_t math_cycles, std::string_view call);
// Errors unless DST is 32 bits wide when `call` moves the 32-bit integer datums of CB `cb` (in `fmt`)
// between that CB and DST; a no-op for the other formats.
void check_int32_dst(const ThreadCtx& t, DataFormat fmt, uint32_t cb, const std::string& call, Loc loc);
// Errors unless unpacker `u` (SrcA, SrcB) / the packer is configured for a CB of `fmt`'s formats, as CB `cbi`
// (engine_formats.cpp): `fn` unpacks / packs that CB.
void check_unpack_format(ThreadCtx& t, Unpacker u, uint32_t cbi, DataFormat fmt, const char* fn, Loc loc);
void check_pack_format(ThreadCtx& t, uint32_t cbi, DataFormat fmt, const char* fn, Loc loc);
// Packs DST tile `idst` of the half held by the packer into a reserved page of `cb`: the next one
// in order, or page `out_index` of the reserved space when out_of_order.
void pack_dst(ThreadCtx& t, uint32_t idst, uint32_t cb, bool out_of_order, uint32_t out_index, const char* fn,
              Loc loc);

// ---- layout conversion modes (tilize.cpp) ----
// Errors when a layout-conversion init left the unpacker (tilize, untilize) or the packer
// (pack untilize) in its mode: the tile ops need tilize_uninit / untilize_uninit /
// pack_untilize_uninit first.
void check_unpacker_default(const ThreadCtx& t, const char* fn, Loc loc);
void check_packer_default(const ThreadCtx& t, const char* fn, Loc loc);

// ---- the SFPU's arithmetic (sfpu.cpp) ----
// A float op of the SFPU on one datum of DST, as tt-llk 0.81.1 computes it where the emulator models
// its approximations (sfpu.cpp gives each model's source), else in fp32 with the C library. `name` is
// the API call's stem: "exp" for exp_tile, "add" for add_binary_tile and add_unary_tile.
using SfpuUnaryFn = float (*)(float);
using SfpuBinaryFn = float (*)(float, float);
struct SfpuUnaryModel {
  const char* name;
  SfpuUnaryFn fn;
};
struct SfpuBinaryModel {
  const char* name;
  SfpuBinaryFn fn;
};
// An integer op on the raw 32-bit words of two DST datums, two's complement modulo 2^32 (signed: Int32
// tiles, else UInt32); `name` and `unsigned_name` are the API calls on Int32 and UInt32 tiles.
struct SfpuIntModel {
  const char* name;
  const char* unsigned_name;
  uint32_t (*fn)(uint32_t a, uint32_t b, bool is_signed);
};
const SfpuUnaryModel& sfpu_model(Unary op);
// What an LLK's sequence depends on besides its template arguments: the arch (Wormhole and Blackhole run different
// reciprocal sequences) and whether DST holds float32 (the LLK's is_fp32_dest_acc_en).
struct SfpuMode {
  bool blackhole;
  bool fp32_dest;
};
// The op's arithmetic in `mode`: the model's, but for recip_tile (Recip, RecipFast) and div_binary_tile (Div), which
// follow their LLK's sequence for the arch and DST (sfpu_recip.cpp).
SfpuUnaryFn sfpu_unary_fn(Unary op, SfpuMode mode);
SfpuBinaryFn sfpu_binary_fn(SfpuBinary op, SfpuMode mode);
// recip_tile's and div_binary_tile's sequences (sfpu_recip.cpp); `approximate`: APPROX or
// ReciprocalApproxMode::Approximate.
SfpuUnaryFn sfpu_recip_fn(bool approximate, SfpuMode mode);
SfpuBinaryFn sfpu_div_fn(SfpuMode mode);
// ttnn SDPA's calculate_recip_first_column: the arch's sfpu_reciprocal_iter, not recip_tile's sequence.
SfpuUnaryFn sfpu_sdpa_recip_fn(bool approximate, SfpuMode mode);
// Wormhole's sfpu_reciprocal_iter<max_iter> from sfpu_reciprocal_init's default seed (what sfpu_reciprocal runs).
float sfpu_reciprocal_wh(float x, int max_iter);
// One SFPMAD, a * b + c on FP32 words, as Wormhole's or Blackhole's hardware rounds it (sfpu_recip.cpp).
uint32_t sfpmad_model(uint32_t a, uint32_t b, uint32_t c, bool blackhole);
// op(x * scale) as the op with its init's scale computes it: the approximate exp folds the scale into its
// constants (exp_fast_scaled), the others scale their input.
float sfpu_unary_scaled(Unary op, float x, float scale);
const SfpuBinaryModel& sfpu_model(SfpuBinary op);
const SfpuIntModel& sfpu_model(IntBinary op);
// Whether `x` <op> `value` holds (compare_tile: SFPU comparisons of fp32 values).
bool sfpu_compare(Compare op, float x, float value);
// Whether `c` is below `d` with their FP32 words compared as sign-magnitude integers: the total order
// -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN of SFPSWAP's min and max (tt-isa-documentation WormholeB0
// SFPSWAP.md, SignMagIsSmaller) and GMPOOL's max (GMPOOL.md, AsComparable). A NaN is kept or dropped by its sign
// bit (torch keeps it either way).
bool sign_magnitude_smaller(float c, float d);

}  // namespace k

// ---- the cost of each compute tile op (costs.cpp) ----
// Cycles of one tile on the TRISC that runs the op: math (TRISC1) for the FPU, datacopy and SFPU ops,
// pack (TRISC2) for packing; the unpack TRISC's share comes from the bytes the op reads (timing.hpp,
// unpack_op_cycles). The constants and their sources are timing.hpp's; here each op picks its own.
namespace timing {
uint64_t fpu_binary_cycles(const ComputeOptions& o, k::BinaryOp op);  // add/sub/mul_tiles[_bcast_*], *_reuse_dest_tiles
uint64_t matmul_cycles(const ComputeOptions& o);  // matmul_tiles, and each tile product of matmul_block
uint64_t reduce_cycles(const ComputeOptions& o);  // reduce_tile
uint64_t datacopy_cycles();
// Reprogramming an unpacker's formats (on the unpack TRISC) with math's ALU format (on math), and the packer's
// (on the pack TRISC; `block_float`: into a block float format, which sets its exponent section sizes too).
uint64_t unpack_reconfig_cycles();
uint64_t math_reconfig_cycles();
uint64_t pack_reconfig_cycles(bool block_float);  // copy_tile, unary_bcast, transpose_wh_tile, a tile of tilize / untilize
uint64_t pack_cycles();      // a tile packed: pack_tile, tilize / untilize / pack_untilize
uint64_t sfpu_cycles(const ComputeOptions& o, k::Unary op);              // <op>_tile
uint64_t sfpu_exp_approx_unclamped_cycles();  // exp_tile<approx, .., InputClamping::None, 32>: a whole tile
uint64_t sfpu_first_column_cycles(const ComputeOptions& o, k::Unary op);  // ttnn SDPA's first-column exp / recip
uint64_t sfpu_cycles(const ComputeOptions& o, k::SfpuBinary op);         // <op>_binary_tile
uint64_t sfpu_scalar_cycles(const ComputeOptions& o, k::SfpuBinary op);  // <op>_unary_tile (a tile and a scalar)
uint64_t sfpu_cycles(k::IntBinary op);            // add_int_tile, ... (two DST tiles)
uint64_t sfpu_scalar_cycles(k::IntBinary op);     // add_unary_tile_int32, sub_unary_tile_int32
uint64_t sfpu_compare_cycles(k::Compare op, bool against_zero);  // eqz/nez/gtz/... or unary_eq/ne/gt/...
uint64_t sfpu_where_cycles(bool in_place);        // where_tile (in place: the output is the condition's tile)
uint64_t sfpu_fill_cycles();                      // fill_tile, fill_tile_bitcast, fill_tile_int
uint64_t sfpu_reduce_row_cycles(k::SfpuReduce pool, uint32_t ct_dim, uint32_t rt_dim);  // sfpu_reduce REDUCE_ROW
// Datums the unpacker reads of a broadcast operand: through SrcB (binary broadcasts, unary_bcast), or
// straight to DST (unary_bcast of a tile unpacked to DST).
uint32_t bcast_datums(k::Bcast b);
uint32_t bcast_to_dest_datums(k::Bcast b);
// What reduce_tile's unpackers read of its data tile (in `data`) and its scaler tile (in `scaler`).
void reduce_unpack(UnpackLoad& u, k::Pool pool, k::RDim dim, DataFormat data, DataFormat scaler);
}  // namespace timing

}  // namespace emu
