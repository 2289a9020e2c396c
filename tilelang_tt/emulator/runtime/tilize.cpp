// Layout conversions of the compute kernel (tt-metal api/compute/tilize.h, untilize.h,
// pack_untilize.h): row-major data in a CB <-> 32x32 tiles, through DST.
//
// Geometry as the 0.81.1 LLKs address L1 (tt_llk_wormhole_b0, llk_api/):
//  * tilize_block(icb, block, ocb, in, out) reads 32 rows of `block` tiles' width, row-major in
//    icb's format, linearly from icb's read pointer (llk_unpack_tilize_block): tile j takes
//    columns 32j..32j+31 of rows `block * 32` datums apart, starting at datum
//    (in / block) * block * 1024 + (in % block) * 32; it is packed to page out + j of the
//    reserved space (llk_pack out-of-order), face-ordered in ocb's format.
//  * untilize_block<bct>(icb, full, ocb) turns tiles 0..full-1 of icb into 32 rows of full*32
//    datums, packed in order into `full` pages of ocb, bct tiles per DST acquire.
//  * pack_untilize_block<bct, full>(icb, 1, ocb, c) / pack_untilize_dest<bct, full>(ocb, rows, c)
//    write bct tiles as 32 rows of bct*32 datums at column c*bct*32 of rows full*32 datums long,
//    from ocb's write pointer (llk_pack_untilize); tile row r at r * full * page_size bytes.
// tilize_block, untilize_block and pack_untilize_block acquire DST themselves; pack_untilize_dest
// packs the DST the caller filled and holds (after tile_regs_wait).
#include <algorithm>

#include "compute.hpp"

namespace emu::k {

namespace {

std::string cb_str(uint32_t cb) { return "CB " + std::to_string(cb); }
std::string at_line(const LayoutMode& m) { return " at line " + std::to_string(m.line); }

// A configured CB of this core; the caller holds the device lock.
CB& configured_cb(ThreadCtx& t, uint32_t cbi, const std::string& call, Loc loc) {
  if (cbi >= t.dev->arch.num_cbs || !t.core->cbs[cbi].configured)
    protocol_error(loc, call + " uses " + cb_str(cbi) + ", which is not configured on this core");
  return t.core->cbs[cbi];
}

// Bytes per datum of a CB holding row-major data.
uint32_t row_major_datum(const CB& cb, const std::string& call, Loc loc) {
  const uint32_t size = datum_size_bytes(cb.fmt);
  if (size == 0)
    protocol_error(loc, call + ": " + cb_str(cb.index) + " holds " + data_format_name(cb.fmt) +
                            ", a tile-only format; row-major data needs Float16_b, Float32, Int32, UInt32, UInt16 or UInt8");
  return size;
}

// L1 of bytes [begin, end) from the read pointer (front) or the write pointer of `cb`: inside the
// pages the kernel holds and before the end of the FIFO (the LLKs address L1 linearly).
uint8_t* held_bytes(ThreadCtx& t, CB& cb, bool front, uint64_t begin, uint64_t end, const std::string& call,
                    Loc loc) {
  const uint32_t held = front ? cb.waited : cb.reserved;
  const uint32_t page = front ? cb.rd_page : cb.wr_page;
  const std::string span = "bytes [" + std::to_string(begin) + ", " + std::to_string(end) + ") from the " +
                           (front ? "read" : "write") + " pointer of " + cb_str(cb.index);
  if (end > static_cast<uint64_t>(held) * cb.page_size)
    protocol_error(loc, call + (front ? " reads " : " writes ") + span + " but only " + std::to_string(held) +
                            " page(s) of " + std::to_string(cb.page_size) + " bytes were " +
                            (front ? "confirmed by cb_wait_front" : "reserved by cb_reserve_back"));
  if (static_cast<uint64_t>(page) * cb.page_size + end > cb.size)
    protocol_error(loc, call + (front ? " reads " : " writes ") + span + ", which is at byte " +
                            std::to_string(page * cb.page_size) + " of its " + std::to_string(cb.size) +
                            "-byte FIFO: past the end; make the CB size a multiple of the block");
  return t.core->l1 + cb.offset + page * cb.page_size;
}

// The calls that acquire DST themselves need it free: no half held or committed by the kernel.
void check_dst_free(const ThreadCtx& t, const std::string& call, Loc loc) {
  const bool busy = t.whole_dst || t.math_owned >= 0 || t.pack_owned >= 0 || t.halves[0].state != DstHalf::Free ||
                    t.halves[1].state != DstHalf::Free;
  if (busy)
    protocol_error(loc, call + " acquires DST itself but the kernel holds it; call it outside "
                               "tile_regs_acquire ... tile_regs_release (acquire_dst ... release_dst)");
}

void check_block_width(const ThreadCtx& t, uint32_t block_ct_dim, const std::string& call, Loc loc) {
  if (block_ct_dim == 0 || block_ct_dim > t.dst_capacity())
    protocol_error(loc, call + ": block_ct_dim " + std::to_string(block_ct_dim) + " must be 1 to the " +
                            std::to_string(t.dst_capacity()) + " tiles DST holds at once (fp32_dest_acc_en=" +
                            (t.kernel->opts.fp32_dest_acc_en ? "true" : "false") + ")");
}

// The pack untilize configuration a block call needs: the init's block_ct_dim and full_ct_dim.
void check_pack_untilize(const ThreadCtx& t, uint32_t bct, uint32_t full, uint32_t c_index,
                         const std::string& call, Loc loc) {
  const LayoutMode& m = t.pack_untilize_mode;
  if (!m.on)
    protocol_error(loc, call + " without pack_untilize_init / pack_untilize_dest_init: the packer is not in untilize "
                               "mode");
  if (m.block != bct || m.full != full)
    protocol_error(loc, call + " with block_ct_dim=" + std::to_string(bct) + ", full_ct_dim=" + std::to_string(full) +
                            " but the init" + at_line(m) + " programmed the packer for block_ct_dim=" +
                            std::to_string(m.block) + ", full_ct_dim=" + std::to_string(m.full) +
                            "; pass the same template arguments");
  check_block_width(t, bct, call, loc);
  if (c_index >= full / bct)
    protocol_error(loc, call + ": block_c_index " + std::to_string(c_index) + " is beyond the " +
                            std::to_string(full / bct) + " block(s) of " + std::to_string(bct) + " tile(s) in a row of " +
                            std::to_string(full) + " tile(s)");
}

// Writes DST tiles first..first+bct-1 of the packer's half as 32 rows of bct*32 datums at column
// c_index*bct*32 of rows full*32 datums long, the first row `row_block` bytes after ocb's write
// pointer.
void write_untilized(ThreadCtx& t, uint32_t first, uint32_t bct, uint32_t full, uint32_t ocb, uint32_t c_index,
                     uint64_t row_block, const std::string& call, Loc loc) {
  if (first + bct > t.dst_capacity())
    protocol_error(loc, call + ": DST tiles " + std::to_string(first) + ".." + std::to_string(first + bct - 1) +
                            " go beyond the " + std::to_string(t.dst_capacity()) + " tiles one tile_regs_acquire holds");
  std::unique_lock lk(t.dev->mu);
  CB& cb = configured_cb(t, ocb, call, loc);
  const uint64_t es = row_major_datum(cb, call, loc);
  const uint64_t row = uint64_t(full) * 32 * es, column = uint64_t(c_index) * bct * 32 * es;
  uint8_t* base = held_bytes(t, cb, false, row_block + column, row_block + 31 * row + column + bct * 32 * es, call, loc);
  const DataFormat fmt = cb.fmt;
  check_int32_dst(t, fmt, ocb, call, loc);
  check_pack_format(t, ocb, fmt, call.c_str(), loc);
  lk.unlock();
  for (uint32_t c = 0; c < bct; ++c) {
    const float* tile = t.dst[static_cast<uint32_t>(t.pack_owned) * t.dst_half() + first + c].data();
    for (uint32_t r = 0; r < 32; ++r)
      store_datums(tile + r * 32, 32, fmt, base + row_block + r * row + column + c * 32 * es);
  }
}

}  // namespace

void check_unpacker_default(const ThreadCtx& t, const char* fn, Loc loc) {
  if (t.tilize_mode.on)
    protocol_error(loc, std::string(fn) + " unpacks tiles while the unpacker is in tilize mode (tilize_init" +
                            at_line(t.tilize_mode) + "); call tilize_uninit first");
  if (t.untilize_mode.on)
    protocol_error(loc, std::string(fn) + " unpacks tiles while the unpacker is in untilize mode (untilize_init" +
                            at_line(t.untilize_mode) + "); call untilize_uninit first");
}

void check_packer_default(const ThreadCtx& t, const char* fn, Loc loc) {
  if (t.pack_untilize_mode.on)
    protocol_error(loc, std::string(fn) + " packs tiles while the packer is in untilize mode (pack untilize init" +
                            at_line(t.pack_untilize_mode) + "); call pack_untilize_uninit first");
}

// ---------------------------------------------------------------- tilize
void tilize_init(uint32_t icb, uint32_t block, uint32_t ocb, const char* fn, Loc loc) {
  ThreadCtx& t = compute_ctx(fn, loc);
  const std::string call = std::string(fn) + "(" + cb_str(icb) + ", " + std::to_string(block) + ", " + cb_str(ocb) + ")";
  if (block == 0) protocol_error(loc, call + ": block is the width of the row-major input in tiles, at least 1");
  {
    std::unique_lock lk(t.dev->mu);
    row_major_datum(configured_cb(t, icb, call, loc), call, loc);
    configured_cb(t, ocb, call, loc);
  }
  t.tilize_mode = {true, block, 0, loc.line()};
  charge(t, timing::kComputeInit, fn);
}

void tilize_uninit(uint32_t, uint32_t, Loc loc) { compute_ctx("tilize_uninit", loc).tilize_mode = {}; }

void tilize_block(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t in_index, uint32_t out_index, Loc loc) {
  ThreadCtx& t = compute_ctx("tilize_block", loc);
  const std::string call = "tilize_block(" + cb_str(icb) + ", " + std::to_string(block) + ", " + cb_str(ocb) + ", " +
                           std::to_string(in_index) + ", " + std::to_string(out_index) + ")";
  const LayoutMode& m = t.tilize_mode;
  if (!m.on) protocol_error(loc, call + " without tilize_init: the unpacker is not in tilize mode");
  if (block != m.block)
    protocol_error(loc, call + ": tilize_init" + at_line(m) + " set the unpacker's row stride for a block of " +
                            std::to_string(m.block) + " tile(s); call tilize_init with block " + std::to_string(block) +
                            " first");
  check_dst_free(t, call, loc);
  std::unique_lock lk(t.dev->mu);
  CB& in = configured_cb(t, icb, call, loc);
  const uint64_t es = row_major_datum(in, call, loc);
  const uint64_t first = (uint64_t(in_index / block) * block * kTileHW + (in_index % block) * 32) * es;
  const uint8_t* src = held_bytes(t, in, true, first, first + uint64_t(block) * kTileHW * es, call, loc) + first;
  const DataFormat fmt = in.fmt;
  check_int32_dst(t, fmt, icb, call, loc);
  check_unpack_format(t, Unpacker::A, icb, fmt, call.c_str(), loc);
  lk.unlock();
  for (uint32_t j = 0; j < block; ++j) {
    tile_regs_acquire(loc);
    float* d = math_dst(t, 0, "tilize_block", loc);
    for (uint32_t r = 0; r < 32; ++r) load_datums(src + (j * 32 + uint64_t(r) * block * 32) * es, fmt, 32, d + r * 32);
    settle(t, d);
    t.unpacked.add(Unpacker::A, kTileHW * es);  // unpacker A reads the tile's 32 rows of 32 datums
    unpack_then_math(t, timing::datacopy_cycles(), "tilize_block");
    tile_regs_commit(loc);
    tile_regs_wait(loc);
    pack_dst(t, 0, ocb, true, out_index + j, call.c_str(), loc);
    charge(t, Clock::Pack, timing::pack_cycles(), "tilize_block");
    tile_regs_release(loc);
    t.counters.tile_ops["tilize_block"] += 1;
  }
}

// ---------------------------------------------------------------- untilize (unpack-based)
void untilize_init(uint32_t icb, Loc loc) {
  ThreadCtx& t = compute_ctx("untilize_init", loc);
  {
    std::unique_lock lk(t.dev->mu);
    configured_cb(t, icb, "untilize_init(" + cb_str(icb) + ")", loc);
  }
  t.untilize_mode = {true, 0, 0, loc.line()};
  charge(t, timing::kComputeInit, "untilize_init");
}

void untilize_uninit(uint32_t, Loc loc) { compute_ctx("untilize_uninit", loc).untilize_mode = {}; }

void untilize_block(uint32_t bct, uint32_t icb, uint32_t full, uint32_t ocb, Loc loc) {
  ThreadCtx& t = compute_ctx("untilize_block", loc);
  const std::string call = "untilize_block<" + std::to_string(bct) + ">(" + cb_str(icb) + ", " + std::to_string(full) +
                           ", " + cb_str(ocb) + ")";
  if (!t.untilize_mode.on) protocol_error(loc, call + " without untilize_init: the unpacker is not in untilize mode");
  check_block_width(t, bct, call, loc);
  if (full == 0 || full % bct != 0)
    protocol_error(loc, call + ": full_ct_dim must be a positive multiple of block_ct_dim");
  check_dst_free(t, call, loc);
  {
    std::unique_lock lk(t.dev->mu);
    row_major_datum(configured_cb(t, ocb, call, loc), call, loc);
  }
  // The unpacker reads the row of tiles face row by face row: 32 rows of full*32 datums.
  std::vector<float> rows(size_t(full) * kTileHW);
  alignas(64) float tile[kTileHW];
  UnpackLoad tile_load;
  for (uint32_t i = 0; i < full; ++i) {
    const DataFormat fmt = unpack_waited(t, icb, i, tile, call.c_str(), loc);
    check_int32_dst(t, fmt, icb, call, loc);
    check_unpack_format(t, Unpacker::A, icb, fmt, call.c_str(), loc);
    tile_load = {};
    tile_load.read(Unpacker::A, fmt, kTileHW);
    for (uint32_t r = 0; r < 32; ++r) std::copy(tile + r * 32, tile + r * 32 + 32, rows.data() + (r * full + i) * 32);
  }
  // DST tile c of a block holds the 1024 datums the tile packer writes as the next page.
  for (uint32_t b = 0; b < full / bct; ++b) {
    tile_regs_acquire(loc);
    for (uint32_t c = 0; c < bct; ++c) {
      float* d = math_dst(t, c, "untilize_block", loc);
      const float* chunk = rows.data() + size_t(b * bct + c) * kTileHW;
      for (uint32_t i = 0; i < kTileHW; ++i) d[i] = chunk[face_index(i / 32, i % 32)];
      settle(t, d);
      t.unpacked = tile_load;
      unpack_then_math(t, timing::datacopy_cycles(), "untilize_block");
    }
    tile_regs_commit(loc);
    tile_regs_wait(loc);
    for (uint32_t c = 0; c < bct; ++c) pack_dst(t, c, ocb, false, 0, call.c_str(), loc);
    charge(t, Clock::Pack, timing::pack_cycles() * bct, "untilize_block");
    tile_regs_release(loc);
  }
  t.counters.tile_ops["untilize_block"] += full;
}

// ---------------------------------------------------------------- pack untilize
void pack_untilize_init(uint32_t bct, uint32_t full, uint32_t ocb, const char* fn, Loc loc) {
  ThreadCtx& t = compute_ctx(fn, loc);
  const std::string call = std::string(fn) + "<" + std::to_string(bct) + ", " + std::to_string(full) + ">(.., " +
                           cb_str(ocb) + ")";
  {
    std::unique_lock lk(t.dev->mu);
    row_major_datum(configured_cb(t, ocb, call, loc), call, loc);
  }
  t.pack_untilize_mode = {true, bct, full, loc.line()};
  charge(t, Clock::Pack, timing::kComputeInit, fn);
  reconfig_pack(-1, ocb, fn, loc);  // the packer to ocb's formats (0.81.1 pack_untilize.h:41)
}

void pack_untilize_uninit(uint32_t ocb, Loc loc) {
  compute_ctx("pack_untilize_uninit", loc).pack_untilize_mode = {};
  reconfig_pack(-1, ocb, "pack_untilize_uninit", loc);  // back to ocb's formats (0.81.1 pack_untilize.h:372)
}

void pack_untilize_block(uint32_t bct, uint32_t full, uint32_t icb, uint32_t block_rt_dim, uint32_t ocb,
                         uint32_t c_index, Loc loc) {
  ThreadCtx& t = compute_ctx("pack_untilize_block", loc);
  const std::string call = "pack_untilize_block<" + std::to_string(bct) + ", " + std::to_string(full) + ">(" +
                           cb_str(icb) + ", " + std::to_string(block_rt_dim) + ", " + cb_str(ocb) + ", " +
                           std::to_string(c_index) + ")";
  check_pack_untilize(t, bct, full, c_index, call, loc);
  if (block_rt_dim != 1)
    protocol_error(loc, call + ": tt-metal 0.81.1 unpacks tiles 0.." + std::to_string(bct - 1) +
                            " and packs at the write pointer for every tile row of the block (no row stride; "
                            "api/compute/experimental/2_0/pack_untilize.h rejects block_rt_dim > 1), so only "
                            "block_rt_dim=1 untilizes each row: call it once per tile row, with "
                            "cb_wait_front/cb_pop_front and cb_reserve_back/cb_push_back around each");
  check_unpacker_default(t, call.c_str(), loc);
  check_dst_free(t, call, loc);
  tile_regs_acquire(loc);
  for (uint32_t c = 0; c < bct; ++c) {
    float* d = math_dst(t, c, "pack_untilize_block", loc);
    const DataFormat fmt = unpack_waited(t, icb, c, d, call.c_str(), loc);
    check_int32_dst(t, fmt, icb, call, loc);
    check_unpack_format(t, Unpacker::A, icb, fmt, call.c_str(), loc);
    settle(t, d);
    t.unpacked.read(Unpacker::A, fmt, kTileHW);
    unpack_then_math(t, timing::datacopy_cycles(), "pack_untilize_block");
  }
  tile_regs_commit(loc);
  tile_regs_wait(loc);
  write_untilized(t, 0, bct, full, ocb, c_index, 0, call, loc);
  charge(t, Clock::Pack, timing::pack_cycles() * bct, "pack_untilize_block");
  tile_regs_release(loc);
  t.counters.tile_ops["pack_untilize_block"] += bct;
}

void pack_untilize_dest(uint32_t bct, uint32_t full, uint32_t ocb, uint32_t block_rt_dim, uint32_t c_index,
                        uint32_t dst_offset, Loc loc) {
  ThreadCtx& t = compute_ctx("pack_untilize_dest", loc);
  const std::string call = "pack_untilize_dest<" + std::to_string(bct) + ", " + std::to_string(full) + ">(" +
                           cb_str(ocb) + ", " + std::to_string(block_rt_dim) + ", " + std::to_string(c_index) + ")";
  check_pack_untilize(t, bct, full, c_index, call, loc);
  if (t.whole_dst && t.math_owned >= 0) {
    tile_regs_commit(loc);
    tile_regs_wait(loc);
  }
  if (t.pack_owned < 0) protocol_error(loc, call + " without tile_regs_wait: it packs the DST the kernel filled");
  uint32_t page_size;
  {
    std::unique_lock lk(t.dev->mu);
    page_size = configured_cb(t, ocb, call, loc).page_size;
  }
  for (uint32_t r = 0; r < block_rt_dim; ++r) {
    write_untilized(t, dst_offset + r * bct, bct, full, ocb, c_index, uint64_t(r) * full * page_size, call, loc);
    t.counters.tile_ops["pack_untilize_dest"] += bct;
    charge(t, Clock::Pack, timing::pack_cycles() * bct, "pack_untilize_dest");
  }
}

}  // namespace emu::k
