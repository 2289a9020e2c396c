// The compute kernel's API: the DST register file and its handshakes between math and pack, unpack
// (CB -> source registers or DST), the FPU ops with the FPU's arithmetic, the SFPU ops on DST (their
// arithmetic per datum: sfpu.cpp) and pack (DST -> CB). Each op charges the timing model what costs.cpp
// says it costs.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "compute.hpp"

namespace emu::k {

namespace {

constexpr const char* kBinaryName[] = {"add", "sub", "mul"};
constexpr const char* kBcastSuffix[] = {"", "_bcast_rows", "_bcast_cols", "_bcast_scalar"};

// Counts a tile op of `kind` and charges it to the timing model: the unpack TRISC's share (what the op
// recorded in t.unpacked), then `math_cycles` of math.
void count(ThreadCtx& t, const std::string& kind, uint64_t math_cycles) {
  t.counters.tile_ops[kind] += 1;
  unpack_then_math(t, math_cycles, kind);
}

}  // namespace

// The unpacker's share of an op (the bytes it recorded in t.unpacked), then math's: math starts
// once its operands are in the source registers; the unpacker waits for a source register bank math
// has finished with (two banks: it runs at most one unpacking op ahead of math). An op that unpacks nothing
// (an SFPU op, fill_tile) takes no bank: the SFPU works on DST through its LRegs and never touches
// SrcA/SrcB, which pass between the unpackers and the matrix unit alone (tt-isa-documentation,
// WormholeB0 TensixCoprocessor/SrcASrcB.md, SETDVALID.md, CLEARDVALID.md), so the unpacker fills
// the next banks while math runs SFPU ops.
void unpack_then_math(ThreadCtx& t, uint64_t math_cycles, std::string_view call) {
  if (t.unpacked.empty()) {
    charge(t, Clock::Main, math_cycles, call);
    return;
  }
  wait_until(t, Clock::Unpack, t.src_freed[t.src_bank], nullptr, "source registers");
  charge(t, Clock::Unpack, timing::unpack_op_cycles(t.dev->arch, t.unpacked), call);
  wait_until(t, Clock::Main, t.unpack.tm.clock, nullptr, "unpack");
  t.unpacked = {};
  charge(t, Clock::Main, math_cycles, call);
  t.src_freed[t.src_bank] = t.main.tm.clock;
  t.src_bank ^= 1;
}

// ---------------------------------------------------------------- helpers shared with tilize.cpp (compute.hpp)
ThreadCtx& compute_ctx(const char* fn, Loc loc) {
  ThreadCtx& t = ctx(loc);
  if (t.kernel->role != KernelRole::Compute)
    protocol_error(loc, std::string(fn) + " is a compute API but runs in a " + kernel_role_name(t.kernel->role) +
                            " kernel");
  return t;
}

float* math_dst(ThreadCtx& t, uint32_t idst, const char* fn, Loc loc) {
  if (t.math_owned < 0)
    protocol_error(loc, std::string(fn) + " writes DST outside tile_regs_acquire/tile_regs_commit");
  if (idst >= t.dst_capacity())
    protocol_error(loc, std::string(fn) + ": DST index " + std::to_string(idst) + " is beyond the " +
                            std::to_string(t.dst_capacity()) + " tiles one tile_regs_acquire holds (fp32_dest_acc_en=" +
                            (t.kernel->opts.fp32_dest_acc_en ? "true" : "false") + ")");
  const uint32_t phys = static_cast<uint32_t>(t.math_owned) * t.dst_half() + idst;
  t.dst_fresh[phys] = false;
  return t.dst[phys].data();
}

// The DST tile `idst` of the half the pack TRISC holds (between tile_regs_wait and tile_regs_release).
float* pack_held_dst(ThreadCtx& t, uint32_t idst, const char* fn, Loc loc) {
  if (t.pack_owned < 0) protocol_error(loc, std::string(fn) + " outside tile_regs_wait/tile_regs_release");
  if (idst >= t.dst_capacity())
    protocol_error(loc, std::string(fn) + ": DST index " + std::to_string(idst) + " is beyond the " +
                            std::to_string(t.dst_capacity()) + " tiles one tile_regs_wait holds");
  return t.dst[static_cast<uint32_t>(t.pack_owned) * t.dst_half() + idst].data();
}

void settle(ThreadCtx& t, float* d) {
  if (t.kernel->opts.fp32_dest_acc_en) return;
  for (uint32_t i = 0; i < kTileHW; ++i) d[i] = round_to_bf16(d[i]);
}

DataFormat unpack_waited(ThreadCtx& t, uint32_t cbi, uint32_t tile, float* out, const char* fn, Loc loc) {
  std::unique_lock lk(t.dev->mu);
  if (cbi >= t.dev->arch.num_cbs || !t.core->cbs[cbi].configured)
    protocol_error(loc, std::string(fn) + " reads CB " + std::to_string(cbi) + ", which is not configured on this core");
  const CB& cb = t.core->cbs[cbi];
  // A kernel's own intermediate (CB::own_intermediate) may read pages it pushed without waiting for them: its TRISCs
  // order themselves otherwise (ttnn's SDPA: reduce_block_max_row's respect_trigger, a Tensix semaphore the packer
  // posts after the push, reduce_custom.h's NOTE)
  const bool own_pushed = cb.own_intermediate(*t.kernel) && tile < cb.pushed - cb.popped;
  if (tile >= cb.waited && !own_pushed)
    protocol_error(loc, std::string(fn) + " reads tile " + std::to_string(tile) + " of CB " + std::to_string(cbi) +
                            " but only " + std::to_string(cb.waited) + " page(s) were confirmed by cb_wait_front");
  if (cb.page_size < tile_size_bytes(cb.fmt))
    protocol_error(loc, std::string(fn) + ": CB " + std::to_string(cbi) + " page size " + std::to_string(cb.page_size) +
                            " is smaller than a " + data_format_name(cb.fmt) + " tile");
  const uint32_t page = (cb.rd_page + tile) % cb.num_pages;
  const uint8_t* src = t.core->l1 + cb.offset + page * cb.page_size;
  const DataFormat fmt = cb.fmt;
  lk.unlock();
  unpack_tile(src, fmt, out);
  return fmt;
}

void check_int32_dst(const ThreadCtx& t, DataFormat fmt, uint32_t cbi, const std::string& call, Loc loc) {
  if (!is_int32_format(fmt) || t.kernel->opts.fp32_dest_acc_en) return;
  protocol_error(loc, call + ": CB " + std::to_string(cbi) + " holds " + data_format_name(fmt) +
                          " datums, which move between L1 and DST as 32-bit words: that needs a 32-bit DST "
                          "(ComputeConfig::fp32_dest_acc_en = true; DST holds 16-bit words without it)");
}

namespace {

// ---------------------------------------------------------------- FPU numerics
// Sources: the Tensix ISA documentation (github.com/jasondavies/tt-isa-documentation, WormholeB0/TensixTile/
// TensixCoprocessor/: SrcASrcB.md "Data types" and "Fidelity phases (floating-point)", ELWMUL.md's and
// MVMUL.md's functional models, Unpackers/FormatConversion.md, UNPACR_Regular.md's FormatConversion) and
// tt-llk 0.81.1 (tt_llk_wormhole_b0/llk_lib/llk_math_matmul.h, llk_math_eltwise_binary.h, llk_math_reduce.h).

float masked(float x, uint32_t mask) { return std::bit_cast<float>(std::bit_cast<uint32_t>(x) & mask); }

// The source registers hold 19-bit datums. A Float32 tile unpacked to SrcA/SrcB (not straight to DST) becomes
// the JIT build's "unpack_conditional_dst_format": TF32 when fp32_dest_acc_en, else Float16_b (tt-metal
// jit_build/genfiles.cpp compute_data_formats, data_format.cpp get_single_unpack_dst_format; UnpackToDestFp32
// CBs alone unpack as Float32, to DST). The unpacker truncates: FP32 -> TF32 keeps the top 10 mantissa bits
// (`DatumBits >> 13`), FP32 -> BF16 the top 7 (`DatumBits >>= 16`, denormals flushed to zero)
// (UNPACR_Regular.md, FormatConversion; 0.81.1 api/compute/reduce.h, reduce_uninit: "FP32 data from L1 that is
// unpacked to Src registers is reduced to Tf32"). Bfloat16 and the bfp formats reach SrcA/SrcB losslessly as BF16
// (Unpackers/FormatConversion.md); Float16 as FP16.
constexpr uint32_t kTf32 = 0xffffe000u, kBf16 = 0xffff0000u;  // the bits of an fp32 word each format keeps
uint32_t source_format(const ThreadCtx& t, DataFormat fmt) {
  return fmt == DataFormat::Float32 && t.kernel->opts.fp32_dest_acc_en ? kTf32 : kBf16;
}
float to_source(float x, uint32_t format) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  if (format == kBf16 && (bits & 0x7f800000u) == 0) return std::bit_cast<float>(bits & 0x80000000u);
  return std::bit_cast<float>(bits & format);
}
void to_source_register(const ThreadCtx& t, DataFormat fmt, float* x) {
  if (fmt != DataFormat::Float32) return;  // bfloat16 and bfp tiles are BF16 already
  const uint32_t format = source_format(t, fmt);
  for (uint32_t i = 0; i < kTileHW; ++i) x[i] = to_source(x[i], format);
}

// The FPU's multipliers take at most 5 bits of a SrcA significand (the implicit 1 and 4 mantissa bits) and 7 of
// a SrcB significand (the implicit 1 and 6 mantissa bits) per fidelity phase (SrcASrcB.md "Fidelity phases";
// MVMUL.md and ELWMUL.md summaries). Phase p multiplies SrcA's high part (p even) or its next 5 mantissa bits
// (p odd) by SrcB's high part (p < 2) or its remaining bits (p >= 2): ELWMUL.md's SrcAFidelityBits and
// SrcBFidelityBits masks. SrcA ignores the last TF32/FP16 mantissa bit in every phase (MVMUL.md, (†)).
constexpr uint32_t kSrcAHigh = 0xfff80000u;  // sign, exponent, 4 mantissa bits
constexpr uint32_t kSrcAUsed = 0xffffc000u;  // sign, exponent, 9 mantissa bits (what phases 0 and 1 consume)
constexpr uint32_t kSrcBHigh = 0xfffe0000u;  // sign, exponent, 6 mantissa bits

// The phases a multiply runs: tt-llk runs phase 0 alone for LoFi and phases 0 .. n-1 for HiFi<n> (the math MOP's
// inner loop is to_underlying(math_fidelity) long and each instruction's address mod increments the fidelity
// phase: llk_math_matmul.h matmul_configure_mop, llk_math_eltwise_binary.h, llk_math_reduce.h).
uint32_t multiply_phases(const ThreadCtx& t) {
  return static_cast<uint32_t>(timing::fidelity_phases(t.kernel->opts.math_fidelity));
}

float srca_part(float a, uint32_t phase) {
  const float high = masked(a, kSrcAHigh);
  return phase & 1 ? masked(a, kSrcAUsed) - high : high;
}
float srcb_part(float b, uint32_t phase) {
  const float high = masked(b, kSrcBHigh);
  return phase & 2 ? b - high : high;
}

// The FPU reads a datum of exponent 255 as the number +-(1 + mantissa / 2^23) * 2^128, not as Inf or NaN, writes
// Inf's pattern for a result of that magnitude or more, and never writes NaN (tt-isa-documentation WormholeB0
// FloatBitPatterns.md, the "Matrix Unit (FPU)" column; MVMUL.md: "handling of NaN/infinity does not conform to
// IEEE754"). So Inf - Inf and Inf * 0 are 0 rather than NaN, and a NaN operand counts as an Inf of its sign. Only
// operands of exponent 255 take this path (in double, where those numbers fit): finite arithmetic is unchanged.
bool fpu_special(float x) { return (std::bit_cast<uint32_t>(x) & 0x7f800000u) == 0x7f800000u; }
double fpu_value(float x) {
  if (!fpu_special(x)) return x;
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const double magnitude = std::ldexp(1.0 + (bits & 0x7fffffu) / 8388608.0, 128);
  return bits >> 31 ? -magnitude : magnitude;
}
float fpu_result(double v) {
  return std::fabs(v) >= 0x1p128 ? std::copysign(std::numeric_limits<float>::infinity(), v) : static_cast<float>(v);
}
float fpu_add(float a, float b) {
  return fpu_special(a) || fpu_special(b) ? fpu_result(fpu_value(a) + fpu_value(b)) : a + b;
}

// SrcA * SrcB as the multiplier computes it over `phases` fidelity phases, each phase's product added to the
// last (in DST, in fp32).
float fidelity_product(float a, float b, uint32_t phases) {
  if (fpu_special(a) || fpu_special(b)) {  // srca_part and srcb_part as the FPU's numbers (fpu_value)
    double sum = 0.0;
    for (uint32_t p = 0; p < phases; ++p) {
      const double a_high = fpu_value(masked(a, kSrcAHigh)), b_high = fpu_value(masked(b, kSrcBHigh));
      sum += (p & 1 ? fpu_value(masked(a, kSrcAUsed)) - a_high : a_high) * (p & 2 ? fpu_value(b) - b_high : b_high);
    }
    return fpu_result(sum);
  }
  float sum = 0.0f;
  for (uint32_t p = 0; p < phases; ++p) sum += srca_part(a, p) * srcb_part(b, p);
  return sum;
}

// An FPU element-wise op on source register values: SrcA `a`, SrcB `b`.
float fpu(BinaryOp op, float a, float b, uint32_t phases) {
  switch (op) {
    case BinaryOp::Add: return fpu_add(a, b);
    case BinaryOp::Sub: return fpu_add(a, -b);
    case BinaryOp::Mul: return fidelity_product(a, b, phases);
  }
  return 0.0f;
}

// How an op's unpacker feeds math. Fpu: through the source registers SrcA/SrcB (19 bits wide) to the
// FPU, which computes on floats only; 32-bit integer tiles cannot take that path. ToDest: a datacopy
// (copy_tile, unary_bcast, transpose_wh_tile), which unpacks Int32 and UInt32 tiles, and Float32 tiles of
// UnpackToDestFp32 CBs, straight to DST (tt-llk's UnpackToDestEn path, needing a 32-bit DST: 0.81.1
// tile_move_copy.h, bcast.h and transpose.h enable it when the CB's unpack format is 32-bit) and the others
// through SrcA.
enum class Path : uint8_t { Fpu, ToDest };

// Whether a datacopy unpacks a tile of CB `cbi` in `fmt` straight to DST: Int32 and UInt32 tiles, and Float32
// tiles of an UnpackToDestFp32 CB (tt-llk cunpack_common.h should_unpack_to_dest: the unpack_to_dest template
// argument and is_32bit_input of the CB's unpack formats, which are Float32 only in that mode); the others pass
// through a source register.
bool unpacks_to_dest(const ThreadCtx& t, uint32_t cbi, DataFormat fmt) {
  const std::vector<bool>& marked = t.kernel->opts.unpack_to_dest_fp32;
  return is_int32_format(fmt) || (fmt == DataFormat::Float32 && cbi < marked.size() && marked[cbi]);
}

// The ops that unpack CB tiles into DST: the unpacker must be in its default (tile) mode, and unpacker `u`, which
// reads the tile, configured for the CB's formats. Returns the CB's format. The op records the bytes its unpackers
// read (t.unpacked.read).
DataFormat unpack(ThreadCtx& t, Unpacker u, uint32_t cbi, uint32_t tile, float* out, const char* fn, Loc loc,
                  Path path) {
  check_unpacker_default(t, fn, loc);
  const DataFormat fmt = unpack_waited(t, cbi, tile, out, fn, loc);
  check_unpack_format(t, u, cbi, fmt, fn, loc);
  if (path == Path::Fpu && is_int32_format(fmt))
    protocol_error(loc, std::string(fn) + " reads CB " + std::to_string(cbi) + ", which holds " +
                            data_format_name(fmt) + " tiles: the FPU does not compute on 32-bit integers (its source "
                            "registers are 19 bits wide); copy_tile them to DST and use the SFPU integer ops "
                            "(add_int_tile, mul_int_tile, ...)");
  check_int32_dst(t, fmt, cbi, fn, loc);
  // A Float32 tile a datacopy does not unpack straight to DST passes through SrcA like an FPU operand.
  if (path == Path::ToDest && unpacks_to_dest(t, cbi, fmt)) return fmt;
  to_source_register(t, fmt, out);
  return fmt;
}

}  // namespace

// ---------------------------------------------------------------- DST state machine
void tile_regs_acquire(Loc loc) {
  ThreadCtx& t = compute_ctx("tile_regs_acquire", loc);
  if (t.math_owned >= 0) protocol_error(loc, "tile_regs_acquire while DST is already acquired (no tile_regs_commit)");
  DstHalf& h = t.halves[t.math_half];
  if (h.state != DstHalf::Free)
    protocol_error(loc, t.dst_buffers() == 2 ? "tile_regs_acquire: both DST halves are in use (missing "
                                               "tile_regs_wait/tile_regs_release)"
                                             : "tile_regs_acquire: the packer still holds DST (dst_full_sync_en: one "
                                               "buffer; missing tile_regs_wait/tile_regs_release)");
  h.state = DstHalf::Math;
  // math waits until pack released this half (its use before last)
  wait_until(t, Clock::Main, t.dst_released[t.math_half], nullptr, "tile_regs_acquire");
  charge(t, timing::kDstSync, "tile_regs_acquire");
  t.math_owned = static_cast<int>(t.math_half);
  t.math_half = (t.math_half + 1) % t.dst_buffers();
  for (uint32_t i = 0; i < t.dst_half(); ++i) {
    const uint32_t phys = static_cast<uint32_t>(t.math_owned) * t.dst_half() + i;
    t.dst[phys].fill(0.0f);
    t.dst_fresh[phys] = true;
  }
  t.counters.dst_acquires += 1;
}

void tile_regs_commit(Loc loc) {
  ThreadCtx& t = compute_ctx("tile_regs_commit", loc);
  if (t.math_owned < 0) protocol_error(loc, "tile_regs_commit without tile_regs_acquire");
  t.halves[t.math_owned].state = DstHalf::Committed;
  charge(t, timing::kDstSync, "tile_regs_commit");
  t.dst_committed[t.math_owned] = t.main.tm.clock;
  t.math_owned = -1;
}

void tile_regs_wait(Loc loc) {
  ThreadCtx& t = compute_ctx("tile_regs_wait", loc);
  if (t.pack_owned >= 0) protocol_error(loc, "tile_regs_wait while the packer already holds DST (no tile_regs_release)");
  DstHalf& h = t.halves[t.pack_half];
  if (h.state != DstHalf::Committed)
    protocol_error(loc, "tile_regs_wait without a preceding tile_regs_commit (would wait forever)");
  h.state = DstHalf::Pack;
  wait_until(t, Clock::Pack, t.dst_committed[t.pack_half], nullptr, "tile_regs_wait");
  charge(t, Clock::Pack, timing::kDstSync, "tile_regs_wait");
  t.pack_owned = static_cast<int>(t.pack_half);
  t.pack_half = (t.pack_half + 1) % t.dst_buffers();
}

void tile_regs_release(Loc loc) {
  ThreadCtx& t = compute_ctx("tile_regs_release", loc);
  if (t.pack_owned < 0) protocol_error(loc, "tile_regs_release without tile_regs_wait");
  t.halves[t.pack_owned].state = DstHalf::Free;
  charge(t, Clock::Pack, timing::kDstSync, "tile_regs_release");
  t.dst_released[t.pack_owned] = t.pack.tm.clock;
  t.pack_owned = -1;
}

void acquire_dst(Loc loc) {
  tile_regs_acquire(loc);
  tls_ctx->whole_dst = true;
}

void release_dst(Loc loc) {
  ThreadCtx& t = compute_ctx("release_dst", loc);
  if (!t.whole_dst) protocol_error(loc, "release_dst without acquire_dst");
  if (t.math_owned >= 0) {
    tile_regs_commit(loc);
    tile_regs_wait(loc);
  }
  tile_regs_release(loc);
  t.whole_dst = false;
}

void reduce_init(RDim dim, Loc loc) {
  ThreadCtx& t = compute_ctx("reduce_init", loc);
  t.pack_reduce_mask = dim;  // the timing model charges nothing for it (as before it was modelled)
}

void reduce_uninit(Loc loc) {
  ThreadCtx& t = compute_ctx("reduce_uninit", loc);
  t.pack_reduce_mask.reset();
}

void binary_init(BinaryOp op, bool acc_to_dest, Loc loc) {
  ThreadCtx& t = compute_ctx("binary init", loc);
  t.binary_op = op;
  t.binary_acc = acc_to_dest;
  charge(t, timing::kComputeInit, "binary_op_init");
}

void matmul_init(const char* fn, uint32_t transpose, uint32_t ct_dim, uint32_t rt_dim, uint32_t kt_dim, Loc loc) {
  ThreadCtx& t = compute_ctx(fn, loc);
  t.mm = {transpose != 0, ct_dim, rt_dim, kt_dim, loc.line()};
  charge(t, timing::kComputeInit, fn);
}

// ---------------------------------------------------------------- FPU ops
void binary_tiles(BinaryOp op, Bcast bcast, uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t idst,
                  uint32_t b_row, Loc loc) {
  const std::string name = std::string(kBinaryName[static_cast<int>(op)]) + "_tiles" +
                           kBcastSuffix[static_cast<int>(bcast)];
  ThreadCtx& t = compute_ctx(name.c_str(), loc);
  if (bcast == Bcast::Row && b_row >= 32)
    protocol_error(loc, name + ": bcast_row_idx " + std::to_string(b_row) + " is not a row of a 32x32 tile");
  alignas(64) float a[kTileHW], b[kTileHW];
  t.unpacked.read(Unpacker::A, unpack(t, Unpacker::A, cb0, t0, a, name.c_str(), loc, Path::Fpu), kTileHW);
  t.unpacked.read(Unpacker::B, unpack(t, Unpacker::B, cb1, t1, b, name.c_str(), loc, Path::Fpu),
                  timing::bcast_datums(bcast));
  float* d = math_dst(t, idst, name.c_str(), loc);
  const bool acc = t.binary_acc && bcast == Bcast::None;
  // in0 is SrcA, in1 SrcB (the broadcast operand: ELWMUL.md); mul_tiles[_bcast_*] runs the kernel's fidelity,
  // add and sub LoFi (0.81.1 api/compute/eltwise_binary.h and bcast.h pass MATH_FIDELITY for ELWMUL only; ELWADD
  // and ELWSUB multiply nothing)
  const uint32_t phases = multiply_phases(t);
  for (uint32_t r = 0; r < 32; ++r)
    for (uint32_t c = 0; c < 32; ++c) {
      const uint32_t bi =
          bcast == Bcast::Row ? b_row * 32 + c : bcast == Bcast::Col ? r * 32 : bcast == Bcast::Scalar ? 0 : r * 32 + c;
      const float v = fpu(op, a[r * 32 + c], b[bi], phases);
      d[r * 32 + c] = acc ? fpu_add(d[r * 32 + c], v) : v;
    }
  settle(t, d);
  count(t, name, timing::fpu_binary_cycles(t.kernel->opts, op));
}

void binary_reuse_dest(BinaryOp op, bool dest_is_a, uint32_t cb, uint32_t ti, uint32_t idst, Loc loc) {
  const std::string name = std::string(kBinaryName[static_cast<int>(op)]) + "_reuse_dest_tiles";
  ThreadCtx& t = compute_ctx(name.c_str(), loc);
  alignas(64) float x[kTileHW];
  // the CB operand's four faces to SrcB when DST becomes SrcA, else to SrcA (llk_unpack_A.h _llk_unpack_A_init_,
  // lines 316-324: "acc_to_dest DEST_TO_SRCA -> SrcB only", "DEST_TO_SRCB -> SrcA only")
  const Unpacker u = dest_is_a ? Unpacker::B : Unpacker::A;
  const DataFormat fmt = unpack(t, u, cb, ti, x, name.c_str(), loc, Path::Fpu);
  t.unpacked.read(u, fmt, kTileHW);
  float* d = math_dst(t, idst, name.c_str(), loc);
  // The DST operand moves to SrcA (DEST_TO_SRCA) or SrcB with MOVD2A / MOVD2B, which truncate an fp32 DST datum
  // to the source register's format (MOVD2A.md: "truncate to tf32" / "truncate to bf16"); the emulator takes
  // that format to be the CB operand's (an assumption: the math init configures the ALU formats from it).
  // The multiply runs the kernel's fidelity (0.81.1 eltwise_binary.h binary_dest_reuse_tiles: MATH_FIDELITY for
  // ELWMUL, LoFi otherwise).
  const uint32_t format = source_format(t, fmt), phases = multiply_phases(t);
  const bool wide = t.kernel->opts.fp32_dest_acc_en;
  for (uint32_t i = 0; i < kTileHW; ++i) {
    const float dv = wide ? to_source(d[i], format) : d[i];
    d[i] = dest_is_a ? fpu(op, dv, x[i], phases) : fpu(op, x[i], dv, phases);
  }
  settle(t, d);
  count(t, name, timing::fpu_binary_cycles(t.kernel->opts, op));
}

namespace {
// d += a @ b for 32x32 row-major tiles: the emulator's hottest loop. Built for AVX2 and for the
// baseline ISA, picked at load time (GCC function multiversioning); the same arithmetic either way
// (a multiply then an add per term, in the same order: no FMA contraction, AVX2 implies no FMA).
__attribute__((target_clones("avx2", "default"))) void tile_matmul(const float* __restrict a,
                                                                   const float* __restrict b,
                                                                   float* __restrict d) {
  for (uint32_t i = 0; i < 32; ++i) {
    float* __restrict row = d + i * 32;
    for (uint32_t k = 0; k < 32; ++k) {
      const float av = a[i * 32 + k];
      const float* __restrict brow = b + k * 32;
      for (uint32_t j = 0; j < 32; ++j) row[j] += av * brow[j];
    }
  }
}

// d += a @ b over `phases` fidelity phases. MVMUL computes Dst += SrcB @ SrcA with in0 (`a`) in SrcB and in1
// (`b`) in SrcA (llk_unpack_AB_matmul.h: "in0/inA - loaded to SrcB, in1/inB - loaded to SrcA"). The phases'
// products sum to: LoFi (phase 0) high(a) @ high(b); HiFi2 (phases 0, 1) high(a) @ used(b); HiFi3 adds phase 2,
// low(a) @ high(b); HiFi4 (all four) a @ used(b), where high and low are SrcB's or SrcA's parts (srcb_part,
// srca_part) and used(b) drops the SrcA bit no phase reads. Each product is exact in fp32; the sums are taken
// per phase group rather than per phase and 16-term block, the order the ISA's functional model leaves open
// ("operations might be performed in a different order", MVMUL.md).
void fidelity_matmul(uint32_t phases, const float* a, const float* b, float* d) {
  alignas(64) float ap[kTileHW], bp[kTileHW];
  for (uint32_t i = 0; i < kTileHW; ++i) {
    ap[i] = phases >= 4 ? a[i] : masked(a[i], kSrcBHigh);
    bp[i] = masked(b[i], phases >= 2 ? kSrcAUsed : kSrcAHigh);
  }
  tile_matmul(ap, bp, d);
  if (phases != 3) return;
  for (uint32_t i = 0; i < kTileHW; ++i) {
    ap[i] = a[i] - masked(a[i], kSrcBHigh);
    bp[i] = masked(b[i], kSrcAHigh);
  }
  tile_matmul(ap, bp, d);
}

// DST[idst] += A[t0] x B[t1], B's tile transposed when the init's transpose is set (the unpacker
// transposes each face of in1 and math reads faces 1 and 2 swapped: llk_unpack_AB_matmul_init's
// haloize mode, matmul_configure_addrmod), counted as a tile op of `fn`. Timing: the unpackers move
// in0's tile (to SrcB) only where `in0_moves`, in1's (to SrcA) only where `in1_moves`: a block reuses
// one operand (llk_unpack_AB_matmul.h: with ct_dim >= rt_dim one in0 tile per block row, in1 streamed;
// else one in1 tile per column, in0 streamed).
void tile_product(ThreadCtx& t, const char* fn, uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t idst,
                  bool in0_moves, bool in1_moves, Loc loc) {
  alignas(64) float a[kTileHW], b[kTileHW];
  const DataFormat f0 = unpack(t, Unpacker::B, cb0, t0, a, fn, loc, Path::Fpu);
  const DataFormat f1 = unpack(t, Unpacker::A, cb1, t1, b, fn, loc, Path::Fpu);
  if (in0_moves) t.unpacked.read(Unpacker::B, f0, kTileHW);  // in0 to SrcB, in1 to SrcA (llk_unpack_AB_matmul.h)
  if (in1_moves) t.unpacked.read(Unpacker::A, f1, kTileHW);
  if (t.mm.transpose)
    for (uint32_t r = 0; r < 32; ++r)
      for (uint32_t c = r + 1; c < 32; ++c) std::swap(b[r * 32 + c], b[c * 32 + r]);
  float* __restrict d = math_dst(t, idst, fn, loc);
  if (!t.dev->timing_only) fidelity_matmul(multiply_phases(t), a, b, d);
  settle(t, d);
  count(t, fn, timing::matmul_cycles(t.kernel->opts));
}

std::string block_dims(uint32_t ct, uint32_t rt, uint32_t kt) {
  return "ct_dim=" + std::to_string(ct) + ", rt_dim=" + std::to_string(rt) + ", kt_dim=" + std::to_string(kt);
}

// How the init programmed the unpacker's and math's loops for a block (llk_unpack_AB_matmul_init's
// MOP, llk_math_matmul_init's MOP and source-valid handling): ct_dim >= rt_dim reuses each in0 tile
// along its row (in1 streamed), else each in1 tile down its column; and whether the other operand
// takes more than one tile (t_dim > 1).
std::string reuse_kind(uint32_t ct, uint32_t rt) {
  const bool reuse_a = ct >= rt;
  const uint32_t t_dim = reuse_a ? rt : ct;
  return std::string(reuse_a ? "in0 reused along rows" : "in1 reused down columns") + ", " +
         (t_dim > 1 ? "several " : "one ") + (reuse_a ? "row" : "column") + (t_dim > 1 ? "s" : "");
}

// A matmul call of a ct_dim x rt_dim block over kt_dim (matmul_tiles: 1x1x1) against the configuration
// of the last init: the call may name a block of another size only where the init's loops serve it (the
// same reuse_kind). Returns in0's row step: the call's kt_dim where in0 is reused, else the init's
// (llk_unpack_AB_matmul steps in0 by the KT_DIM register llk_unpack_AB_matmul_init wrote).
uint32_t in0_row_step(const ThreadCtx& t, const char* fn, uint32_t ct_dim, uint32_t rt_dim, uint32_t kt_dim,
                      Loc loc) {
  const MatmulMode& m = t.mm;
  if (reuse_kind(ct_dim, rt_dim) != reuse_kind(m.ct, m.rt))
    protocol_error(loc, std::string(fn) + " of a block with " + block_dims(ct_dim, rt_dim, kt_dim) + " (" +
                            reuse_kind(ct_dim, rt_dim) + ") but the matmul init at line " + std::to_string(m.line) +
                            " programmed the unpacker and math for " + block_dims(m.ct, m.rt, m.kt) + " (" +
                            reuse_kind(m.ct, m.rt) + "); call matmul_block_init with this block first");
  return ct_dim >= rt_dim ? kt_dim : m.kt;
}
}  // namespace

void matmul_tiles(uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t idst, Loc loc) {
  ThreadCtx& t = compute_ctx("matmul_tiles", loc);
  in0_row_step(t, "matmul_tiles", 1, 1, 1, loc);
  tile_product(t, "matmul_tiles", cb0, cb1, t0, t1, idst, true, true, loc);
}

// The real matmul_block (tt-metal 0.81.1 api/compute/matmul.h over tt-llk's llk_unpack_AB_matmul.h and
// llk_math_matmul.h): row r of the block reads in0 tile in0_tile_index + r * kt_dim, column c in1 tile
// in1_tile_index + c, into DST tile idst + r * ct_dim + c. B's tiles are transposed as the init said:
// the unpacker ignores the call's `transpose` (on Blackhole the dynamic throttle re-inits math with
// it, whose face order then disagrees with the unpacker's), so a call must repeat the init's.
void matmul_block(uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t idst, uint32_t transpose,
                  uint32_t ct_dim, uint32_t rt_dim, uint32_t kt_dim, Loc loc) {
  ThreadCtx& t = compute_ctx("matmul_block", loc);
  const uint32_t row_step = in0_row_step(t, "matmul_block", ct_dim, rt_dim, kt_dim, loc);
  if ((transpose != 0) != t.mm.transpose)
    protocol_error(loc, "matmul_block(transpose=" + std::to_string(transpose) + ") but the matmul init at line " +
                            std::to_string(t.mm.line) + " set transpose=" + std::to_string(int(t.mm.transpose)) +
                            ": the unpacker transposes B's tiles as the init said");
  const bool reuse_in0 = ct_dim >= rt_dim;
  for (uint32_t r = 0; r < rt_dim; ++r)
    for (uint32_t c = 0; c < ct_dim; ++c)
      tile_product(t, "matmul_block", cb0, cb1, t0 + r * row_step, t1 + c, idst + r * ct_dim + c,
                   !reuse_in0 || c == 0, reuse_in0 || r == 0, loc);
}

uint32_t read_tile_value(uint32_t cbi, uint32_t tile, uint32_t offset, Loc loc) {
  ThreadCtx& t = compute_ctx("read_tile_value", loc);
  std::unique_lock lk(t.dev->mu);
  if (cbi >= t.dev->arch.num_cbs || !t.core->cbs[cbi].configured)
    protocol_error(loc, "read_tile_value reads CB " + std::to_string(cbi) + ", which is not configured on this core");
  const CB& cb = t.core->cbs[cbi];
  if (tile >= cb.waited)
    protocol_error(loc, "read_tile_value reads tile " + std::to_string(tile) + " of CB " + std::to_string(cbi) +
                            " but only " + std::to_string(cb.waited) + " page(s) were confirmed by cb_wait_front");
  if ((static_cast<uint64_t>(offset) + 1) * sizeof(uint32_t) > cb.page_size)
    protocol_error(loc, "read_tile_value reads word " + std::to_string(offset) + " of CB " + std::to_string(cbi) +
                            ", past its " + std::to_string(cb.page_size) + "-byte page");
  uint32_t value;
  std::memcpy(&value, t.core->l1 + cb.offset + ((cb.rd_page + tile) % cb.num_pages) * cb.page_size +
                          offset * sizeof(uint32_t), sizeof(value));
  lk.unlock();
  // the unpacker reads and sends; math and pack wait for their mailbox and read it (cb_api.h, UNPACK/MATH/PACK)
  charge(t, Clock::Unpack, timing::kTileValueRead, "read_tile_value");
  const uint64_t sent = t.unpack.tm.clock;
  for (Clock c : {Clock::Main, Clock::Pack}) {
    wait_until(t, c, sent, nullptr, "read_tile_value");
    charge(t, c, timing::kMailboxRead, "read_tile_value");
  }
  return value;
}

void copy_tile(uint32_t cb, uint32_t ti, uint32_t idst, Loc loc) {
  ThreadCtx& t = compute_ctx("copy_tile", loc);
  alignas(64) float x[kTileHW];
  // the four faces, to SrcA or DST (llk_unpack_A.h _llk_unpack_A_mop_config_: num_faces UNPACRs either way)
  t.unpacked.read(Unpacker::A, unpack(t, Unpacker::A, cb, ti, x, "copy_tile", loc, Path::ToDest), kTileHW);
  float* d = math_dst(t, idst, "copy_tile", loc);
  std::copy(x, x + kTileHW, d);
  settle(t, d);
  count(t, "copy_tile", timing::datacopy_cycles());
}

void unary_bcast(Bcast bcast, uint32_t cb, uint32_t ti, uint32_t idst, Loc loc) {
  const std::string name = std::string("unary_bcast") + kBcastSuffix[static_cast<int>(bcast)];
  ThreadCtx& t = compute_ctx(name.c_str(), loc);
  alignas(64) float x[kTileHW];
  // through SrcB unless straight to DST (api/compute/bcast.h unary_bcast; llk_unpack_A.h _llk_unpack_A_init_,
  // lines 316-324: "broadcast -> SrcB"; NONE is a plain datacopy, to SrcA), read by the unpacker that holds its
  // address (llk_unpack_A.h:39-65: unpacker A for a plain datacopy or to DST, else B)
  DataFormat cb_fmt = DataFormat::Float16_b;  // an unconfigured CB: unpack_waited stops
  {
    std::unique_lock lk(t.dev->mu);
    if (cb < t.dev->arch.num_cbs && t.core->cbs[cb].configured) cb_fmt = t.core->cbs[cb].fmt;
  }
  const bool to_dest = unpacks_to_dest(t, cb, cb_fmt);
  const Unpacker u = to_dest || bcast == Bcast::None ? Unpacker::A : Unpacker::B;
  const DataFormat fmt = unpack(t, u, cb, ti, x, name.c_str(), loc, Path::ToDest);
  t.unpacked.read(u, fmt, to_dest ? timing::bcast_to_dest_datums(bcast) : timing::bcast_datums(bcast));
  float* d = math_dst(t, idst, name.c_str(), loc);
  for (uint32_t r = 0; r < 32; ++r)
    for (uint32_t c = 0; c < 32; ++c)
      d[r * 32 + c] = x[bcast == Bcast::Row ? c : bcast == Bcast::Col ? r * 32 : bcast == Bcast::Scalar ? 0 : r * 32 + c];
  settle(t, d);
  count(t, name, timing::datacopy_cycles());
}

// GMPOOL's max (GMPOOL.md, AsComparable: sign and magnitude bits, sign_magnitude_smaller): a +NaN is above every
// number and kept, a -NaN below every one and dropped (torch keeps either); between numbers std::max.
namespace {
float pool_max(float acc, float v) {
  if (std::isnan(acc) || std::isnan(v)) return sign_magnitude_smaller(v, acc) ? acc : v;
  return std::max(acc, v);
}
}  // namespace

// reduce_tile (0.81.1 api/compute/reduce.h over tt-llk llk_unpack_AB_reduce.h and llk_math_reduce.h). The scaler
// is read from the first row of each face of its tile ("populate first row of each face", reduce.h): data face f
// pools against the first row of scaler face f, element k weighting the k-th datum along the reduced direction.
// SUM/AVG multiply on the FPU at the kernel's fidelity: REDUCE_COL and REDUCE_SCALAR pool with GAPOOL, the data
// in SrcA and the scaler row in SrcB (Dst row 0 += scaler row @ face: GAPOOL.md, MVMUL.md); REDUCE_ROW swaps
// them (reduce.h: "MVMUL with swapped operands (scaler->SrcA, data->SrcB)", the scaler face transposed by the
// unpacker's haloize mode). REDUCE_SCALAR pools the four faces into one row, moves it through SrcB (MOVD2B,
// truncating an fp32 DST row to the source format) into a SrcA column and pools that against the last scaler
// row again: the scaler applies twice (hence reduce.h's 1/sqrt(N) for an average). MAX pools with GMPOOL, which
// scales each datum by the exponent alone of its scaler datum (GMPOOL.md: exp2(floor(log2(s)))), no multiplier
// phases. Only the result positions are written here; reduce_init's packer edge masks zero the rest at pack
// time (pack_dst).
void reduce_tile(Pool pool, RDim dim, uint32_t cb, uint32_t cb_scaler, uint32_t ti, uint32_t ts, uint32_t idst,
                 Loc loc) {
  ThreadCtx& t = compute_ctx("reduce_tile", loc);
  alignas(64) float x[kTileHW], s[kTileHW];
  // SUM/AVG REDUCE_ROW swaps the operands: the scaler through unpacker A, the data through B
  // (llk_unpack_AB_reduce_api.h:47-51)
  const bool swap = dim == RDim::Row && pool != Pool::Max;
  const DataFormat x_fmt = unpack(t, swap ? Unpacker::B : Unpacker::A, cb, ti, x, "reduce_tile", loc, Path::Fpu);
  const DataFormat s_fmt =
      unpack(t, swap ? Unpacker::A : Unpacker::B, cb_scaler, ts, s, "reduce_tile", loc, Path::Fpu);
  timing::reduce_unpack(t.unpacked, pool, dim, x_fmt, s_fmt);
  const float ninf = -std::numeric_limits<float>::infinity();
  if (t.math_owned >= 0 && idst < t.dst_capacity()) {
    // First write since acquire: MAX starts from -inf, SUM from the zeroed register.
    const uint32_t phys = static_cast<uint32_t>(t.math_owned) * t.dst_half() + idst;
    if (t.dst_fresh[phys] && pool == Pool::Max) {
      for (uint32_t r = 0; r < 32; ++r) {
        if (dim == RDim::Row || dim == RDim::Scalar) t.dst[phys][r * 32] = ninf;
        if (dim == RDim::Col || (dim == RDim::Scalar && r == 0))
          for (uint32_t c = 0; c < 32; ++c) t.dst[phys][c] = ninf;
      }
    }
  }
  float* d = math_dst(t, idst, "reduce_tile", loc);
  // element k of the first row of scaler face f (faces: 0 top left, 1 top right, 2 bottom left, 3 bottom right)
  const auto scaler = [&](uint32_t f, uint32_t k) { return s[(f >> 1) * 16 * 32 + (f & 1) * 16 + k]; };
  // datum (row k, column j) of face f
  const auto datum = [&](uint32_t f, uint32_t k, uint32_t j) { return x[((f >> 1) * 16 + k) * 32 + (f & 1) * 16 + j]; };
  const auto exponent = [](float v) { return masked(v, 0x7f800000u); };
  const uint32_t phases = multiply_phases(t);
  const bool max = pool == Pool::Max;
  // one face's pool into the 16 values of its result row (COL, SCALAR) or column (ROW): GAPOOL / MVMUL's 16-term
  // dot products, or GMPOOL's scaled maximum
  const auto pool_face = [&](uint32_t f, bool rows, float* acc) {
    for (uint32_t j = 0; j < 16; ++j)
      for (uint32_t k = 0; k < 16; ++k) {
        const float v = rows ? datum(f, j, k) : datum(f, k, j);
        if (max) acc[j] = pool_max(acc[j], v * exponent(scaler(f, k)));
        else acc[j] = fpu_add(acc[j], rows ? fidelity_product(scaler(f, k), v, phases)
                                           : fidelity_product(v, scaler(f, k), phases));
      }
  };
  const auto combine = [&](float& out, float v) { out = max ? pool_max(out, v) : fpu_add(out, v); };
  for (uint32_t f = 0; f < 4 && dim != RDim::Scalar; ++f) {
    float acc[16];
    std::fill(acc, acc + 16, max ? ninf : 0.0f);
    pool_face(f, dim == RDim::Row, acc);
    for (uint32_t j = 0; j < 16; ++j)
      combine(dim == RDim::Row ? d[((f >> 1) * 16 + j) * 32] : d[(f & 1) * 16 + j], acc[j]);
  }
  if (dim == RDim::Scalar) {
    float row[16];
    std::fill(row, row + 16, max ? ninf : 0.0f);
    for (uint32_t f = 0; f < 4; ++f) {
      pool_face(f, false, row);
      if (!t.kernel->opts.fp32_dest_acc_en)
        for (float& v : row) v = round_to_bf16(v);  // each pool writes the 16-bit DST row
    }
    // MOVD2B: SrcB's style follows the SrcA format (MOVD2B.md), here the data's
    const uint32_t format = source_format(t, x_fmt);
    float total = max ? ninf : 0.0f;
    for (uint32_t j = 0; j < 16; ++j) {
      const float v = t.kernel->opts.fp32_dest_acc_en ? to_source(row[j], format) : row[j];
      combine(total, max ? v * exponent(scaler(3, j)) : fidelity_product(v, scaler(3, j), phases));
    }
    combine(d[0], total);
  }
  settle(t, d);
  count(t, "reduce_tile", timing::reduce_cycles(t.kernel->opts));
}

void transpose_tile(uint32_t cb, uint32_t ti, uint32_t idst, Loc loc) {
  ThreadCtx& t = compute_ctx("transpose_wh_tile", loc);
  alignas(64) float x[kTileHW];
  // the four faces to SrcA or DST (llk_unpack_A.h _llk_unpack_A_mop_config_, transpose_of_faces)
  t.unpacked.read(Unpacker::A, unpack(t, Unpacker::A, cb, ti, x, "transpose_wh_tile", loc, Path::ToDest), kTileHW);
  float* d = math_dst(t, idst, "transpose_wh_tile", loc);
  for (uint32_t r = 0; r < 32; ++r)
    for (uint32_t c = 0; c < 32; ++c) d[r * 32 + c] = x[c * 32 + r];
  settle(t, d);
  count(t, "transpose_wh_tile", timing::datacopy_cycles());
}

// ---------------------------------------------------------------- SFPU ops
namespace {
SfpuMode sfpu_mode(const ThreadCtx& t, bool fp32_dest) { return {t.dev->arch.name == "blackhole", fp32_dest}; }
SfpuMode sfpu_mode(const ThreadCtx& t) { return sfpu_mode(t, t.kernel->opts.fp32_dest_acc_en); }

// `fn` on the faces of DST[idst] bit f of `faces` selects, charged their share of op's cycles
void unary_on_faces(ThreadCtx& t, const std::string& name, Unary op, SfpuUnaryFn fn, uint32_t idst, uint8_t faces,
                    Loc loc) {
  float* d = math_dst(t, idst, name.c_str(), loc);
  uint32_t count_faces = 0;
  for (uint32_t f = 0; f < 4; ++f) {
    if (!(faces >> f & 1)) continue;
    ++count_faces;
    for (uint32_t r = 16 * (f / 2); r < 16 * (f / 2) + 16; ++r)
      for (uint32_t c = 16 * (f % 2); c < 16 * (f % 2) + 16; ++c) d[r * 32 + c] = fn(d[r * 32 + c]);
  }
  settle(t, d);
  const uint64_t cycles = timing::sfpu_cycles(t.kernel->opts, op);
  count(t, name, count_faces == 4 ? cycles : cycles / 4 * count_faces);
}
}  // namespace

void sfpu_unary(Unary op, uint32_t idst, Loc loc) {
  const SfpuUnaryModel& row = sfpu_model(op);
  const std::string name = std::string(row.name) + "_tile";
  ThreadCtx& t = compute_ctx(name.c_str(), loc);
  const SfpuUnaryFn fn = sfpu_unary_fn(op, sfpu_mode(t));
  float* d = math_dst(t, idst, name.c_str(), loc);
  for (uint32_t i = 0; i < kTileHW; ++i) d[i] = fn(d[i]);
  settle(t, d);
  count(t, name, timing::sfpu_cycles(t.kernel->opts, op));
}

void sfpu_unary_faces(Unary op, uint32_t idst, uint8_t faces, Loc loc) {
  const std::string name = std::string(sfpu_model(op).name) + "_tile";
  ThreadCtx& t = compute_ctx(name.c_str(), loc);
  unary_on_faces(t, name, op, sfpu_unary_fn(op, sfpu_mode(t)), idst, faces, loc);
}

void sfpu_recip(uint32_t idst, uint8_t faces, bool approximate, bool fp32_dest, Loc loc) {
  const std::string name = "recip_tile";
  ThreadCtx& t = compute_ctx(name.c_str(), loc);
  unary_on_faces(t, name, approximate ? Unary::RecipFast : Unary::Recip,
                 sfpu_recip_fn(approximate, sfpu_mode(t, fp32_dest)), idst, faces, loc);
}

void sfpu_binary(SfpuBinary op, uint32_t i0, uint32_t i1, uint32_t io, Loc loc) {
  const SfpuBinaryModel& row = sfpu_model(op);
  const std::string name = std::string(row.name) + "_binary_tile";
  ThreadCtx& t = compute_ctx(name.c_str(), loc);
  const SfpuBinaryFn fn = sfpu_binary_fn(op, sfpu_mode(t));
  const float* a = math_dst(t, i0, name.c_str(), loc);
  const float* b = math_dst(t, i1, name.c_str(), loc);
  float* d = math_dst(t, io, name.c_str(), loc);
  for (uint32_t i = 0; i < kTileHW; ++i) d[i] = fn(a[i], b[i]);
  settle(t, d);
  count(t, name, timing::sfpu_cycles(t.kernel->opts, op));
}

void sfpu_binary_faces(SfpuBinary op, uint32_t i0, uint32_t i1, uint32_t io, uint8_t faces, Loc loc) {
  const SfpuBinaryModel& row = sfpu_model(op);
  const std::string name = std::string(row.name) + "_binary_tile";
  ThreadCtx& t = compute_ctx(name.c_str(), loc);
  const SfpuBinaryFn fn = sfpu_binary_fn(op, sfpu_mode(t));
  const float* a = math_dst(t, i0, name.c_str(), loc);
  const float* b = math_dst(t, i1, name.c_str(), loc);
  float* d = math_dst(t, io, name.c_str(), loc);
  uint32_t n = 0;
  for (uint32_t f = 0; f < 4; ++f) {
    if (!(faces >> f & 1)) continue;
    ++n;
    for (uint32_t r = 0; r < 16; ++r)
      for (uint32_t c = 0; c < 16; ++c) {
        const uint32_t i = ((f >> 1) * 16 + r) * 32 + (f & 1) * 16 + c;
        d[i] = fn(a[i], b[i]);
      }
  }
  settle(t, d);
  count(t, name, timing::sfpu_cycles(t.kernel->opts, op) * n / timing::kSfpuFaces);
}

void sfpu_unary_first_column(Unary op, uint32_t idst, uint8_t faces, float scale, bool on_pack, const char* fn,
                             Loc loc) {
  ThreadCtx& t = compute_ctx(fn, loc);
  const bool recip = op == Unary::Recip || op == Unary::RecipFast;
  const SfpuUnaryFn op_fn =
      recip ? sfpu_sdpa_recip_fn(op == Unary::RecipFast, sfpu_mode(t)) : sfpu_unary_fn(op, sfpu_mode(t));
  float* d = on_pack ? pack_held_dst(t, idst, fn, loc) : math_dst(t, idst, fn, loc);
  // Column 0 of the tile lies in faces 0 (rows 0-15) and 2 (rows 16-31); faces 1 and 3 hold none of it.
  uint32_t left = 0;
  for (uint32_t face : {0u, 2u}) {
    if (!(faces >> face & 1)) continue;
    ++left;
    for (uint32_t r = face * 8; r < face * 8 + 16; ++r) d[r * 32] = op_fn(d[r * 32] * scale);
  }
  settle(t, d);
  // the sequence's cycles on VectorMode::C's two faces (costs.cpp), half of them a face
  const uint64_t cycles = timing::sfpu_first_column_cycles(t.kernel->opts, op) * left / 2;
  if (on_pack) {
    t.counters.tile_ops[fn] += 1;
    charge(t, Clock::Pack, cycles, fn);
  } else {
    count(t, fn, cycles);
  }
}

// The SFPU's row reduction (Wormhole llk_sfpu/ckernel_sfpu_reduce.h, line numbers below). An SFPLOAD at a tile's
// row r takes rows r..r+3 of one face into the 4 x 8 lanes of an LREG: the even columns of the face, or (address + 2)
// its odd ones. Per 4 rows, perform_reduce_row_sum_tile (:603) / perform_reduce_row_max_tile (:539) load face 0's (2's)
// even and odd columns and face 1's (3's) into LREG0-3 and combine them lane by lane (LREG2 += LREG3, LREG1 += LREG2,
// LREG0 += LREG1; MAX: SFPSWAPs 0/2, 1/3, 0/1), then fold each row's 8 lanes (horizontal_reduce :345,
// horizontal_reduce_max :451: the lanes rotated right by 4, 2 and 1 (SFPSHFT2 SUBVEC_SHFLROR1) and combined with
// their rotation, MAX then rotated once more) and store LREG0 back to the even columns of face 0 (2): every lane
// holds the row's result (the sum in its lane's order of additions). With several tiles a row, the partial results
// of tiles 1.. are combined into tile 0 in tile order (sum_first_columns_across_tiles :711,
// max_first_columns_across_tiles :801). SFPSWAP orders floats by sign and magnitude: +0 above -0.
namespace {
float sfpu_reduce_combine(SfpuReduce pool, float a, float b) {
  if (pool == SfpuReduce::Sum) return a + b;
  const bool b_above = b > a || (b == a && std::signbit(a) && !std::signbit(b));
  return (pool == SfpuReduce::Max) == b_above ? b : a;
}
}  // namespace

void sfpu_reduce_row(SfpuReduce pool, uint32_t idst, uint32_t ct_dim, uint32_t rt_dim, Loc loc) {
  const char* fn = "sfpu_reduce";
  ThreadCtx& t = compute_ctx(fn, loc);
  if (ct_dim == 0 || rt_dim == 0) api_errorf(loc, "sfpu_reduce: ct_dim and rt_dim must be at least 1");
  auto op = [pool](float a, float b) { return sfpu_reduce_combine(pool, a, b); };
  for (uint32_t i = 0; i < rt_dim; ++i) {
    std::vector<float*> tiles;
    for (uint32_t j = 0; j < ct_dim; ++j) tiles.push_back(math_dst(t, idst + i * ct_dim + j, fn, loc));
    float* first = tiles[0];
    for (float* d : tiles) {
      for (uint32_t r = 0; r < 32; ++r) {
        float* row = d + r * 32;
        float lane[8];
        for (uint32_t k = 0; k < 8; ++k)
          lane[k] = op(row[2 * k], op(row[2 * k + 1], op(row[16 + 2 * k], row[17 + 2 * k])));
        for (uint32_t shift : {4u, 2u, 1u}) {
          float rotated[8];
          for (uint32_t k = 0; k < 8; ++k) rotated[k] = lane[(k + 8 - shift) % 8];
          for (uint32_t k = 0; k < 8; ++k) lane[k] = op(lane[k], rotated[k]);
        }
        for (uint32_t k = 0; k < 8; ++k) row[2 * k] = pool == SfpuReduce::Sum ? lane[k] : lane[(k + 7) % 8];
      }
      settle(t, d);  // the per-tile SFPSTOREs, in DST's format
    }
    if (ct_dim == 1) continue;
    for (uint32_t r = 0; r < 32; ++r)
      for (uint32_t k = 0; k < 8; ++k) {
        float acc = first[r * 32 + 2 * k];
        for (uint32_t j = 1; j < ct_dim; ++j) acc = op(acc, tiles[j][r * 32 + 2 * k]);
        first[r * 32 + 2 * k] = acc;
      }
    settle(t, first);
  }
  count(t, fn, timing::sfpu_reduce_row_cycles(pool, ct_dim, rt_dim));
}

// ---------------------------------------------------------------- Tensix semaphores
namespace {
// SEMINIT / SEMPOST / SEMGET / SEMWAIT: one Tensix instruction each (ckernel.h:298-338). ASSUMPTION: one cycle of
// the issuing TRISC's clock, as timing.hpp's other single instructions.
constexpr uint64_t kT6SemInstr = 1;
constexpr uint32_t kT6SemCap = 15;  // ckernel.h:266-268, 276-279: the value saturates at 15

Clock trisc_clock(Trisc who, const char* fn, Loc loc) {
  switch (who) {
    case Trisc::Unpack: return Clock::Unpack;
    case Trisc::Math: return Clock::Main;
    case Trisc::Pack: return Clock::Pack;
    case Trisc::None: break;
  }
  api_errorf(loc, "%s outside UNPACK(...), MATH(...) or PACK(...): which TRISC issues it is unknown", fn);
}

T6Semaphore& t6_sem(ThreadCtx& t, uint8_t index, const char* fn, Loc loc) {
  if (index >= t.core->t6_sems.size())
    api_errorf(loc, "%s: semaphore %u outside 0..%zu (ckernel_structs.h semaphore::NUM_SEMAPHORES)", fn, index,
               t.core->t6_sems.size() - 1);
  return t.core->t6_sems[index];
}
}  // namespace

void t6_semaphore_init(Trisc who, uint8_t index, uint8_t min_value, uint8_t max_value, Loc loc) {
  const char* fn = "t6_semaphore_init";
  ThreadCtx& t = compute_ctx(fn, loc);
  const Clock on = trisc_clock(who, fn, loc);
  T6Semaphore& s = t6_sem(t, index, fn, loc);
  charge(t, on, kT6SemInstr, fn);
  s.max = max_value;
  s.tokens.assign(min_value, clock_of(t, on).tm.clock);
}

void t6_semaphore_post(Trisc who, uint8_t index, Loc loc) {
  const char* fn = "t6_semaphore_post";
  ThreadCtx& t = compute_ctx(fn, loc);
  const Clock on = trisc_clock(who, fn, loc);
  T6Semaphore& s = t6_sem(t, index, fn, loc);
  charge(t, on, kT6SemInstr, fn);
  if (s.tokens.size() < kT6SemCap) s.tokens.push_back(clock_of(t, on).tm.clock);
}

void t6_semaphore_get(Trisc who, uint8_t index, Loc loc) {
  const char* fn = "t6_semaphore_get";
  ThreadCtx& t = compute_ctx(fn, loc);
  const Clock on = trisc_clock(who, fn, loc);
  T6Semaphore& s = t6_sem(t, index, fn, loc);
  charge(t, on, kT6SemInstr, fn);
  // A get at 0 does nothing on silicon (ckernel.h:287-296 asserts against it): here it is a kernel error
  if (s.tokens.empty())
    protocol_error(loc, std::string(fn) + "(" + std::to_string(index) +
                            "): the semaphore is 0 (no post before it in program order)");
  wait_until(t, on, s.tokens.front(), &ThreadTiming::sem_stall, fn);
  s.tokens.pop_front();
}

void t6_semaphore_wait(Trisc who, uint8_t index, bool on_max, Loc loc) {
  const char* fn = on_max ? "t6_semaphore_wait_on_max" : "t6_semaphore_wait_on_zero";
  ThreadCtx& t = compute_ctx(fn, loc);
  const Clock on = trisc_clock(who, fn, loc);
  T6Semaphore& s = t6_sem(t, index, fn, loc);
  charge(t, on, kT6SemInstr, fn);
  // The TRISCs run in program order: a wait whose condition holds here would wait forever for an instruction that
  // comes later in the kernel, or on another TRISC's code the emulator has already run
  if (on_max ? s.tokens.size() >= s.max : s.tokens.empty())
    protocol_error(loc, std::string(fn) + "(" + std::to_string(index) +
                            "): the semaphore is " + std::to_string(s.tokens.size()) +
                            " and nothing earlier in program order releases it");
  // Waiting on zero: until the oldest token held arrived. (Waiting on max releases on the last get, in the past.)
  if (!on_max) wait_until(t, on, s.tokens.front(), &ThreadTiming::sem_stall, fn);
}

void sfpu_unary_ex(Unary op, uint32_t idst, float scale, uint64_t cycles, bool on_pack, const char* fn, Loc loc) {
  ThreadCtx& t = compute_ctx(fn, loc);
  float* d = on_pack ? pack_held_dst(t, idst, fn, loc) : math_dst(t, idst, fn, loc);
  for (uint32_t i = 0; i < kTileHW; ++i) d[i] = sfpu_unary_scaled(op, d[i], scale);
  settle(t, d);
  const uint64_t c = cycles ? cycles : timing::sfpu_cycles(t.kernel->opts, op);
  if (on_pack) {
    t.counters.tile_ops[fn] += 1;
    charge(t, Clock::Pack, c, fn);
  } else {
    count(t, fn, c);
  }
}

uint64_t exp_approx_unclamped_tile_cycles() { return timing::sfpu_exp_approx_unclamped_cycles(); }

void pack_relu(bool zero, Loc loc) {
  ThreadCtx& t = compute_ctx("pack_relu_config", loc);
  t.pack_relu = zero;
  charge(t, Clock::Pack, timing::kComputeInit, "pack_relu_config");
}

void sfpu_scalar(SfpuBinary op, uint32_t idst, float scalar, Loc loc) {
  const SfpuBinaryModel& row = sfpu_model(op);
  const std::string name = std::string(row.name) + "_unary_tile";
  ThreadCtx& t = compute_ctx(name.c_str(), loc);
  float* d = math_dst(t, idst, name.c_str(), loc);
  for (uint32_t i = 0; i < kTileHW; ++i) d[i] = row.fn(d[i], scalar);
  settle(t, d);
  count(t, name, timing::sfpu_scalar_cycles(t.kernel->opts, op));
}

void where_tile(uint8_t format, uint32_t ic, uint32_t ia, uint32_t ib, uint32_t io, Loc loc) {
  ThreadCtx& t = compute_ctx("where_tile", loc);
  constexpr uint8_t kFloat32 = 0, kFloat16_b = 5;  // tensix_types.h ids
  const bool fp32 = t.kernel->opts.fp32_dest_acc_en;
  if (format != (fp32 ? kFloat32 : kFloat16_b)) {
    api_error(std::string("where_tile<DataFormat ") + std::to_string(format) + ">: DST holds " +
                  (fp32 ? "Float32 (fp32_dest_acc_en)" : "Float16_b") + " tiles; the template argument names "
                  "the format of DST (integer formats are not emulated)", loc);
  }
  const float* c = math_dst(t, ic, "where_tile", loc);
  const float* a = math_dst(t, ia, "where_tile", loc);
  const float* b = math_dst(t, ib, "where_tile", loc);
  float* d = math_dst(t, io, "where_tile", loc);
  for (uint32_t i = 0; i < kTileHW; ++i) d[i] = c[i] != 0.0f ? a[i] : b[i];
  settle(t, d);
  count(t, "where_tile", timing::sfpu_where_cycles(io == ic));
}

void compare_tile(Compare op, uint32_t idst, float value, bool against_zero, const char* fn, Loc loc) {
  ThreadCtx& t = compute_ctx(fn, loc);
  float* d = math_dst(t, idst, fn, loc);
  for (uint32_t i = 0; i < kTileHW; ++i) d[i] = sfpu_compare(op, d[i], value) ? 1.0f : 0.0f;
  settle(t, d);
  count(t, fn, timing::sfpu_compare_cycles(op, against_zero));
}

void fill_tile(uint32_t idst, float value, Loc loc) {
  ThreadCtx& t = compute_ctx("fill_tile", loc);
  float* d = math_dst(t, idst, "fill_tile", loc);
  std::fill(d, d + kTileHW, value);
  settle(t, d);
  count(t, "fill_tile", timing::sfpu_fill_cycles());
}

void fill_tile_bitcast(uint32_t idst, uint32_t bits, Loc loc) {
  ThreadCtx& t = compute_ctx("fill_tile_bitcast", loc);
  float* d = math_dst(t, idst, "fill_tile_bitcast", loc);
  std::fill(d, d + kTileHW, std::bit_cast<float>(bits));
  settle(t, d);
  count(t, "fill_tile_bitcast", timing::sfpu_fill_cycles());
}

// ---------------------------------------------------------------- SFPU integer ops
// On the raw 32-bit words of DST tiles (unpacked straight from Int32/UInt32 CBs), two's complement,
// wrapping modulo 2^32. They need a 32-bit DST (fp32_dest_acc_en); the results are integers, so
// nothing rounds them to bfloat16.
namespace {

constexpr uint8_t kInt32Id = 8, kUInt16Id = 9, kUInt32Id = 24;  // kernel-side DataFormat ids (tensix_types.h)

// Whether an integer op's format is signed (Int32) or not (UInt32); errors for UInt16 (the SFPU's
// LO16 mode on 16-bit words, not emulated), an id that is no integer format, and a 16-bit DST.
bool int_signed(const ThreadCtx& t, uint8_t format, const std::string& name, Loc loc) {
  if (format == kUInt16Id)
    api_error(name + "<DataFormat::UInt16>: the SFPU's 16-bit integer mode (LO16) is not emulated; compute on Int32 "
                     "or UInt32 tiles", loc);
  if (format != kInt32Id && format != kUInt32Id)
    api_error(name + ": DataFormat " + std::to_string(format) + " is not an integer format (Int32, UInt32)", loc);
  if (!t.kernel->opts.fp32_dest_acc_en)
    api_error(name + ": 32-bit integers need a 32-bit DST (ComputeConfig::fp32_dest_acc_en = true); DST holds 16-bit "
                     "words without it", loc);
  return format == kInt32Id;
}

uint32_t word(float f) { return std::bit_cast<uint32_t>(f); }
float as_word(uint32_t x) { return std::bit_cast<float>(x); }

}  // namespace

void sfpu_int_binary(IntBinary op, uint8_t format, uint32_t i0, uint32_t i1, uint32_t io, Loc loc) {
  const SfpuIntModel& row = sfpu_model(op);
  const char* name = format == kUInt32Id ? row.unsigned_name : row.name;
  ThreadCtx& t = compute_ctx(name, loc);
  const bool sg = int_signed(t, format, name, loc);
  const float* a = math_dst(t, i0, name, loc);
  const float* b = math_dst(t, i1, name, loc);
  float* d = math_dst(t, io, name, loc);
  if (op == IntBinary::FloorDiv || op == IntBinary::TruncDiv || op == IntBinary::FloorMod) {
    for (uint32_t i = 0; i < kTileHW; ++i)
      if (word(b[i]) == 0)
        api_error(std::string(name) + ": element " + std::to_string(i) + " of the divisor (DST tile " +
                      std::to_string(i1) + ") is 0", loc);
  }
  for (uint32_t i = 0; i < kTileHW; ++i) d[i] = as_word(row.fn(word(a[i]), word(b[i]), sg));
  count(t, name, timing::sfpu_cycles(op));
}

void sfpu_int_scalar(IntBinary op, uint32_t idst, uint32_t param, Loc loc) {
  const SfpuIntModel& row = sfpu_model(op);
  const std::string name = op == IntBinary::Add ? "add_unary_tile_int32" : op == IntBinary::Sub ? "sub_unary_tile_int32"
                                                                                                   : "";
  if (name.empty()) api_error(std::string("sfpu_int_scalar: ") + row.name + " has no tile-scalar form", loc);
  ThreadCtx& t = compute_ctx(name.c_str(), loc);
  const bool sg = int_signed(t, kInt32Id, name, loc);
  float* d = math_dst(t, idst, name.c_str(), loc);
  for (uint32_t i = 0; i < kTileHW; ++i) d[i] = as_word(row.fn(word(d[i]), param, sg));
  count(t, name, timing::sfpu_scalar_cycles(op));
}

void fill_tile_int(uint8_t format, uint32_t idst, uint32_t value, Loc loc) {
  ThreadCtx& t = compute_ctx("fill_tile_int", loc);
  int_signed(t, format, "fill_tile_int", loc);
  float* d = math_dst(t, idst, "fill_tile_int", loc);
  std::fill(d, d + kTileHW, as_word(value));
  count(t, "fill_tile_int", timing::sfpu_fill_cycles());
}

// ---------------------------------------------------------------- pack
void pack_dst(ThreadCtx& t, uint32_t idst, uint32_t cbi, bool out_of_order, uint32_t out_index, const char* fn,
              Loc loc) {
  if (t.whole_dst && t.math_owned >= 0) {
    tile_regs_commit(loc);
    tile_regs_wait(loc);
  }
  if (t.pack_owned < 0) protocol_error(loc, std::string(fn) + "(" + std::to_string(idst) + ", CB " + std::to_string(cbi) +
                                                ") without tile_regs_wait");
  if (idst >= t.dst_capacity())
    protocol_error(loc, std::string(fn) + ": DST index " + std::to_string(idst) + " is beyond the " +
                            std::to_string(t.dst_capacity()) + " tiles one tile_regs_acquire holds");
  std::unique_lock lk(t.dev->mu);
  if (cbi >= t.dev->arch.num_cbs || !t.core->cbs[cbi].configured)
    protocol_error(loc, std::string(fn) + " to CB " + std::to_string(cbi) + ", which is not configured on this core");
  CB& cb = t.core->cbs[cbi];
  const uint32_t pos = out_of_order ? out_index : cb.packed;
  // Past the reservation, a kernel's own intermediate (CB::own_intermediate) may take any page of its FIFO, from the
  // write pointer: a free one, or one it pushed, which it overwrites or (L1 accumulation) adds onto in place before
  // republishing it (compute_common.hpp add_block_inplace, matmul_reduce, mul_block_bcast_cols<.., true>).
  // A kernel file may also pack unreserved into a free page (CB::free_unreserved).
  const bool own = (cb.own_intermediate(*t.kernel) && pos < cb.num_pages) || cb.free_unreserved(*t.kernel, pos + 1);
  if (pos >= cb.reserved && !own)
    protocol_error(loc, std::string(fn) + " to CB " + std::to_string(cbi) + " page " + std::to_string(pos) +
                            " beyond the " + std::to_string(cb.reserved) + " page(s) reserved by cb_reserve_back");
  if (cb.page_size < tile_size_bytes(cb.fmt))
    protocol_error(loc, std::string(fn) + ": CB " + std::to_string(cbi) + " page size " + std::to_string(cb.page_size) +
                            " is smaller than a " + data_format_name(cb.fmt) + " tile");
  check_int32_dst(t, cb.fmt, cbi, fn, loc);
  check_pack_format(t, cbi, cb.fmt, fn, loc);
  if (!out_of_order) cb.packed += 1;
  uint8_t* dst = t.core->l1 + cb.offset + ((cb.wr_page + pos) % cb.num_pages) * cb.page_size;
  const DataFormat fmt = cb.fmt;
  lk.unlock();
  const float* value = t.dst[static_cast<uint32_t>(t.pack_owned) * t.dst_half() + idst].data();
  alignas(64) float masked_value[kTileHW];
  if (t.pack_reduce_mask) {
    // reduce.h's packer-zeroing contract: REDUCE_ROW keeps column 0, REDUCE_COL row 0, REDUCE_SCALAR [0, 0]
    const RDim dim = *t.pack_reduce_mask;
    for (uint32_t r = 0; r < 32; ++r)
      for (uint32_t c = 0; c < 32; ++c) {
        const bool kept = dim == RDim::Row ? c == 0 : dim == RDim::Col ? r == 0 : r == 0 && c == 0;
        masked_value[r * 32 + c] = kept ? value[r * 32 + c] : 0.0f;
      }
    value = masked_value;
  }
  alignas(64) float relu_value[kTileHW];
  if (t.pack_relu) {
    // ReluType::ZERO_RELU on the datums leaving DST (ASSUMPTION: before the L1 accumulation's add)
    for (uint32_t i = 0; i < kTileHW; ++i) relu_value[i] = value[i] > 0.0f ? value[i] : 0.0f;
    value = relu_value;
  }
  if (!t.pack_l1_acc) {
    pack_tile_data(value, fmt, dst);
    return;
  }
  // L1 accumulation: the tile in L1 plus DST's, added in fp32 and packed as pack_tile packs (an
  // assumption: the 0.81.1 API documents the accumulation, not its arithmetic)
  if (is_int32_format(fmt))
    protocol_error(loc, std::string(fn) + " with pack_reconfig_l1_acc(1) into CB " + std::to_string(cbi) + " of " +
                            data_format_name(fmt) + " tiles: L1 accumulation of integer tiles is not modelled");
  alignas(64) float sum[kTileHW];
  unpack_tile(dst, fmt, sum);
  for (uint32_t i = 0; i < kTileHW; ++i) sum[i] += value[i];
  pack_tile_data(sum, fmt, dst);
}

void pack_reconfig_l1_acc(uint32_t l1_acc_en, Loc loc) {
  ThreadCtx& t = compute_ctx("pack_reconfig_l1_acc", loc);
  if (l1_acc_en > 1)
    protocol_error(loc, "pack_reconfig_l1_acc(" + std::to_string(l1_acc_en) + "): the flag is 0 or 1");
  t.pack_l1_acc = l1_acc_en != 0;
  charge(t, Clock::Pack, timing::kComputeInit, "pack_reconfig_l1_acc");
}

void pack_tile(uint32_t idst, uint32_t cbi, bool out_of_order, uint32_t out_index, Loc loc) {
  ThreadCtx& t = compute_ctx("pack_tile", loc);
  check_packer_default(t, "pack_tile", loc);
  pack_dst(t, idst, cbi, out_of_order, out_index, "pack_tile", loc);
  t.counters.tile_ops["pack_tile"] += 1;
  charge(t, Clock::Pack, timing::pack_cycles(), "pack_tile");
}

}  // namespace emu::k