// The data formats the unpackers and the packer are configured for, and the check of every unpack and pack
// against them (tt-metal 0.81.1 as the wheel ships it; "llk_api/" is hw/ckernels/wormhole_b0/metal/llk_api,
// "tt-llk/" tt-llk/tt_llk_wormhole_b0).
//
// The formats of a CB. tt-metal's JIT build gives every CB four (tt_metal/jit_build/data_format.cpp, written into
// the kernel's chlkc_unpack_data_format.h / chlkc_pack_data_format.h): the unpacker reads the CB's tiles in
// unpack_src_format (the CB's format) and writes them to SrcA/SrcB (or DST) in unpack_dst_format
// (get_single_unpack_dst_format: Float32 becomes the build's conditional format, Tf32 with fp32_dest_acc_en and
// Float16_b without, Float32 itself for an UnpackToDestFp32 CB; a block float format becomes Bfp8_b; the others
// stay); the packer reads DST in pack_src_format and writes the CB in pack_dst_format (the CB's format;
// get_single_pack_src_format: with fp32_dest_acc_en Float32, Float16_b and the integers stay and a block float
// format is Bfp8_b; without it a Float32 CB packs from Float16_b).
//
// The configuration. compute_kernel_hw_startup programs unpacker A (SrcA) and unpacker B (SrcB) from two CBs
// (SrcOrder::Reverse, matmul's, swaps them) and the packer from a third (api/compute/compute_kernel_hw_startup.h:
// 68-77; llk_unpack_common_api.h:41 llk_unpack_hw_configure, llk_pack_common_api.h:44 llk_pack_hw_configure). The
// reconfig_data_format family (api/compute/reconfig_data_format.h) reprograms one source or both
// (llk_unpack_common_api.h:134, :164: the CB's two unpack formats into the unpacker's tile descriptor and output
// format registers, tt-llk/llk_lib/llk_unpack_common.h:215 _llk_unpack_reconfig_data_format_srca_impl_; math's ALU
// format from the same CB, llk_math_common_api.h:71), pack_reconfig_data_format the packer (llk_pack_common_api.h:
// 188). Their (old, new) forms reprogram only where the two CBs' formats differ (llk_unpack_common_api.h:117
// should_reconfigure_cbs: either unpack format; llk_pack_common_api.h:228: the pack_dst_format), the old CB being
// the caller's claim, not the hardware's state: a wrong claim leaves the configuration as it was. No op init
// reprograms a format (api/compute/tile_move_copy.h copy_init: "does not reconfigure the unpacker data types"; the
// others' state_configure is tt-metal's compute kernel sentinel, compute_kernel_sentinel.h, off unless a build
// defines TT_METAL_COMPUTE_KERNEL_SENTINEL_ENABLED, which tt-metal's JIT build does not), except those that say so:
// tilize_init_short_with_dt (SrcA, conditional: api/compute/tilize.h:131), the pack untilize inits and
// pack_untilize_uninit (the packer, to their ocb: pack_untilize.h:41, :372).
//
// The check. The unpacker reads L1 as the format its tile descriptor holds and converts to the format its output
// register holds; the packer reads DST and writes L1 likewise (tt-isa-documentation WormholeB0
// TensixCoprocessor/Unpackers/FormatConversion.md, Packers/FormatConversion.md). A tile of another format comes
// out as garbage on silicon (a Float32 tile read as Float16_b is its high and low halves as separate datums), so
// the emulator stops. What matches is what the LLK's own asserts accept: the CB's two formats equal the
// configured ones in their low four bits, which are what the registers hold (tt-llk/common/inc/cunpack_common.h:
// 1085 is_unpacker_A_configured_correctly, :1204 are_unpackers_AB_configured_correctly, called before each unpack
// by llk_unpack_A_api.h:84 and llk_unpack_AB_api.h; tt-llk/common/inc/cpack_common.h:1083
// are_packers_configured_correctly, llk_pack_tile_api.h:82; masked_data_format, ckernel_defs.h:144-160). So Int32
// and UInt32 are one configuration (8 and 24: "both int32 and uint32 are stored the same way in DEST",
// ckernel_defs.h:135), while Float32 read through SrcA (Tf32) and Float32 unpacked to DST (Float32) are two.
#include "compute.hpp"

namespace emu::k {

namespace {

// tt-metal's DataFormat ids (hw/inc/internal/tt-1xx/wormhole/wormhole_b0_defines/tensix_types.h:214).
enum class Id : uint8_t {
  Float32 = 0, Tf32 = 4, Float16_b = 5, Bfp8_b = 6, Bfp4_b = 7, Int32 = 8, UInt16 = 9, UInt32 = 24, UInt8 = 30
};
constexpr uint8_t kConfigMask = 0x0f;  // DATA_FORMAT_CONFIG_MASK (ckernel_defs.h:144)

struct Pair {
  Id in, out;
  bool operator==(const Pair&) const = default;
};

Id id_of(DataFormat f) {
  switch (f) {
    case DataFormat::Float32: return Id::Float32;
    case DataFormat::Float16_b: return Id::Float16_b;
    case DataFormat::Bfp8_b: return Id::Bfp8_b;
    case DataFormat::Bfp4_b: return Id::Bfp4_b;
    case DataFormat::UInt32: return Id::UInt32;
    case DataFormat::Int32: return Id::Int32;
    case DataFormat::UInt16: return Id::UInt16;
    case DataFormat::UInt8: return Id::UInt8;
  }
  return Id::Float16_b;
}

const char* id_name(Id f) {
  switch (f) {
    case Id::Float32: return "Float32";
    case Id::Tf32: return "Tf32";
    case Id::Float16_b: return "Float16_b";
    case Id::Bfp8_b: return "Bfp8_b";
    case Id::Bfp4_b: return "Bfp4_b";
    case Id::Int32: return "Int32";
    case Id::UInt16: return "UInt16";
    case Id::UInt32: return "UInt32";
    case Id::UInt8: return "UInt8";
  }
  return "?";
}

bool block_float(DataFormat f) { return f == DataFormat::Bfp8_b || f == DataFormat::Bfp4_b; }

// unpack_src_format, unpack_dst_format of CB `cbi` in `fmt` (get_single_unpack_dst_format).
Pair unpack_pair(const ThreadCtx& t, uint32_t cbi, DataFormat fmt) {
  const Id in = id_of(fmt);
  if (fmt == DataFormat::Float32) {
    const std::vector<bool>& marked = t.kernel->opts.unpack_to_dest_fp32;
    if (cbi < marked.size() && marked[cbi]) return {in, Id::Float32};
    return {in, t.kernel->opts.fp32_dest_acc_en ? Id::Tf32 : Id::Float16_b};
  }
  if (block_float(fmt)) return {in, Id::Bfp8_b};
  return {in, in};
}

// pack_src_format, pack_dst_format of a CB in `fmt` (get_single_pack_src_format, bfp8_pack_precise off).
Pair pack_pair(const ThreadCtx& t, DataFormat fmt) {
  const Id out = id_of(fmt);
  if (block_float(fmt)) return {Id::Bfp8_b, out};
  if (fmt == DataFormat::Float32 && !t.kernel->opts.fp32_dest_acc_en) return {Id::Float16_b, out};
  return {out, out};
}

bool same_registers(Pair a, Pair b) {
  const auto low = [](Id f) { return static_cast<uint8_t>(f) & kConfigMask; };
  return low(a.in) == low(b.in) && low(a.out) == low(b.out);
}

std::string pair_str(Pair p) { return std::string(id_name(p.in)) + " -> " + id_name(p.out); }

const char* engine_name(Engine e) {
  return e == Engine::SrcA ? "unpacker A (SrcA)" : e == Engine::SrcB ? "unpacker B (SrcB)" : "the packer";
}

// The format of configured CB `cbi`; `call` names the call in the error.
DataFormat cb_format(ThreadCtx& t, uint32_t cbi, const std::string& call, Loc loc) {
  std::unique_lock lk(t.dev->mu);
  if (cbi >= t.dev->arch.num_cbs || !t.core->cbs[cbi].configured)
    protocol_error(loc, call + " names CB " + std::to_string(cbi) + ", which is not configured on this core");
  return t.core->cbs[cbi].fmt;
}

Pair engine_pair(const ThreadCtx& t, Engine e, uint32_t cbi, DataFormat fmt) {
  return e == Engine::Pack ? pack_pair(t, fmt) : unpack_pair(t, cbi, fmt);
}

// Timing: the reprogramming's instructions on the TRISC that issues them (costs.cpp).
void charge_reconfig(ThreadCtx& t, Engine e, DataFormat fmt, const char* fn) {
  if (e == Engine::Pack) {
    charge(t, Clock::Pack, timing::pack_reconfig_cycles(block_float(fmt)), fn);
    return;
  }
  charge(t, Clock::Unpack, timing::unpack_reconfig_cycles(), fn);
  charge(t, Clock::Main, timing::math_reconfig_cycles(), fn);
}

void configure(ThreadCtx& t, Engine e, uint32_t cbi, const char* fn, Loc loc) {
  const DataFormat fmt = cb_format(t, cbi, fn, loc);
  t.engine_formats[static_cast<int>(e)] = {static_cast<int>(cbi), fn, loc.line()};
  charge_reconfig(t, e, fmt, fn);
}

// The (old, new) forms: reprogram only where the two CBs' formats differ (unpack: either format; pack: the
// pack_dst_format, llk_pack_common_api.h:228).
void reconfigure(ThreadCtx& t, Engine e, uint32_t old_cb, uint32_t new_cb, const char* fn, Loc loc) {
  const DataFormat old_fmt = cb_format(t, old_cb, fn, loc), new_fmt = cb_format(t, new_cb, fn, loc);
  const Pair was = engine_pair(t, e, old_cb, old_fmt), now = engine_pair(t, e, new_cb, new_fmt);
  const bool differ = e == Engine::Pack ? was.out != now.out : was != now;
  if (differ) configure(t, e, new_cb, fn, loc);
}

void check(ThreadCtx& t, Engine e, uint32_t cbi, DataFormat fmt, const char* fn, Loc loc) {
  const EngineFormat& c = t.engine_formats[static_cast<int>(e)];
  const Pair want = engine_pair(t, e, cbi, fmt);
  const std::string what = std::string(fn) + (e == Engine::Pack ? " packs into CB " : " unpacks CB ") +
                           std::to_string(cbi) + " (" + data_format_name(fmt) + ": " + pair_str(want) + ") through " +
                           engine_name(e);
  const char* fix = e == Engine::SrcA   ? "reconfig_data_format_srca"
                    : e == Engine::SrcB ? "reconfig_data_format_srcb"
                                        : "pack_reconfig_data_format";
  if (c.cb < 0)
    protocol_error(loc, what + ", which no call has configured yet: call compute_kernel_hw_startup first");
  const uint32_t have_cb = static_cast<uint32_t>(c.cb);
  if (have_cb >= t.dev->arch.num_cbs || !t.core->cbs[have_cb].configured)
    protocol_error(loc, what + ", which " + c.by + " at line " + std::to_string(c.line) + " configured for CB " +
                            std::to_string(have_cb) + ", not configured on this core: its formats are undefined");
  const DataFormat have_fmt = t.core->cbs[have_cb].fmt;  // configured at program creation, read-only since
  const Pair have = engine_pair(t, e, have_cb, have_fmt);
  if (same_registers(want, have)) return;
  protocol_error(loc, what + ", which " + c.by + " at line " + std::to_string(c.line) + " configured for CB " +
                          std::to_string(have_cb) + " (" + data_format_name(have_fmt) + ": " + pair_str(have) +
                          "): on the device it reads the tile as " + id_name(have.in) + ", garbage; call " + fix +
                          "(" + std::to_string(cbi) + ") before it");
}

}  // namespace

// ---------------------------------------------------------------- configuring calls (kernel_api.hpp)
// Configures unpacker, math and packer from scratch: every layout-conversion mode left, the formats set.
void hw_startup(uint32_t icb0, uint32_t icb1, uint32_t ocb, bool reverse, Loc loc) {
  const char* fn = "compute_kernel_hw_startup";
  ThreadCtx& t = compute_ctx(fn, loc);
  t.tilize_mode = t.untilize_mode = t.pack_untilize_mode = {};
  t.pack_reduce_mask.reset();
  const uint32_t a = reverse ? icb1 : icb0, b = reverse ? icb0 : icb1;
  // The CBs need not be configured here (a kernel of DST-only SFPU ops names some): their formats are read when an
  // unpack or pack is checked against them.
  t.engine_formats[static_cast<int>(Engine::SrcA)] = {static_cast<int>(a), fn, loc.line()};
  t.engine_formats[static_cast<int>(Engine::SrcB)] = {static_cast<int>(b), fn, loc.line()};
  t.engine_formats[static_cast<int>(Engine::Pack)] = {static_cast<int>(ocb), fn, loc.line()};
  charge(t, timing::kComputeInit, fn);
}

void reconfig_source(bool srcb, int old_cb, uint32_t new_cb, const char* fn, Loc loc) {
  ThreadCtx& t = compute_ctx(fn, loc);
  const Engine e = srcb ? Engine::SrcB : Engine::SrcA;
  if (old_cb < 0) configure(t, e, new_cb, fn, loc);
  else reconfigure(t, e, static_cast<uint32_t>(old_cb), new_cb, fn, loc);
}

void reconfig_pack(int old_cb, uint32_t new_cb, const char* fn, Loc loc) {
  ThreadCtx& t = compute_ctx(fn, loc);
  if (old_cb < 0) configure(t, Engine::Pack, new_cb, fn, loc);
  else reconfigure(t, Engine::Pack, static_cast<uint32_t>(old_cb), new_cb, fn, loc);
}

// ---------------------------------------------------------------- checks (compute.hpp)
void check_unpack_format(ThreadCtx& t, Unpacker u, uint32_t cbi, DataFormat fmt, const char* fn, Loc loc) {
  check(t, u == Unpacker::A ? Engine::SrcA : Engine::SrcB, cbi, fmt, fn, loc);
}

void check_pack_format(ThreadCtx& t, uint32_t cbi, DataFormat fmt, const char* fn, Loc loc) {
  check(t, Engine::Pack, cbi, fmt, fn, loc);
}

}  // namespace emu::k
