// Kernel-side runtime: arguments, circular buffers, NOC transfers and semaphores.
#include <cstdarg>
#include <cstdio>
#include <sstream>

#include "internal.hpp"

namespace emu::k {

namespace {

std::string cb_name(uint32_t cb) { return "CB " + std::to_string(cb); }

CB& get_cb(ThreadCtx& t, int32_t cb, const char* fn, Loc loc) {
  if (cb < 0 || static_cast<uint32_t>(cb) >= t.dev->arch.num_cbs || !t.core->cbs[cb].configured)
    protocol_error(loc, std::string(fn) + " on " + cb_name(static_cast<uint32_t>(cb)) +
                            ", which is not configured on this core");
  return t.core->cbs[cb];
}

// A count of 0 is valid (tt-metal 0.81.1 dataflow_api.h: "less or equal than the size of the CB"; ttnn's matmul
// writers wait for and pop 0 padded tiles): the call returns at once.
void check_count(CB& cb, int32_t n, const char* fn, Loc loc) {
  if (n < 0 || static_cast<uint32_t>(n) > cb.num_pages)
    protocol_error(loc, std::string(fn) + "(" + cb_name(cb.index) + ", " + std::to_string(n) + "): " + cb_name(cb.index) +
                            " holds " + std::to_string(cb.num_pages) + " page(s)");
}

bool overlaps(const Range& r, uint32_t lo, uint32_t hi) { return r.lo < hi && lo < r.hi; }

// L1 offset of a local L1 address of the calling core; errors when outside its L1.
uint32_t local_offset(ThreadCtx& t, uint32_t addr, uint32_t size, const char* fn, Loc loc) {
  const uint64_t base = t.core->l1_base_addr();
  if (addr < base || static_cast<uint64_t>(addr) + size > base + t.dev->arch.l1_size) {
    std::ostringstream os;
    os << fn << ": local L1 address 0x" << std::hex << addr << std::dec << " (+" << size
       << " bytes) is outside this core's L1";
    protocol_error(loc, os.str());
  }
  return addr - static_cast<uint32_t>(base);
}

// The x coordinate of a unicast NOC address: a DRAM bank's number (resolve).
uint32_t noc_x(uint64_t noc_addr) { return static_cast<uint32_t>(noc_addr >> kNocLocalBits) & 63; }

// Target of a unicast NOC address: pointer to `size` bytes; `dram` says whether it is DRAM.
uint8_t* resolve(ThreadCtx& t, uint64_t noc_addr, uint32_t size, bool& dram, Core*& core, const char* fn, Loc loc) {
  const uint32_t xy = static_cast<uint32_t>(noc_addr >> kNocLocalBits);
  const uint32_t x = xy & 63, y = (xy >> kNocCoordBits) & 63;
  const uint64_t offset = noc_addr & ((1ull << kNocLocalBits) - 1);
  DeviceImpl& d = *t.dev;
  if (Core* c = d.core_at_noc(x, y)) {
    dram = false;
    core = c;
    // Accept both L1 offsets and the sender's own local addresses (same offset on every core).
    uint64_t off = offset;
    const uint64_t my_base = t.core->l1_base_addr();
    if (off >= my_base && off < my_base + d.arch.l1_size) off -= my_base;
    if (off + size > d.arch.l1_size) {
      std::ostringstream os;
      os << fn << ": NOC address offset 0x" << std::hex << offset << std::dec << " (+" << size
         << " bytes) is outside the L1 of core (" << c->logical.x << "," << c->logical.y << ")";
      protocol_error(loc, os.str());
    }
    return c->l1 + off;
  }
  if (y == 0 && x < d.arch.dram_banks) {
    dram = true;
    core = nullptr;
    if (uint8_t* p = d.dram_ptr(x, offset, size)) return p;
    std::ostringstream os;
    os << fn << ": DRAM bank " << x << " address 0x" << std::hex << offset << std::dec << " (+" << size
       << " bytes) is outside every allocated buffer";
    protocol_error(loc, os.str());
  }
  std::ostringstream os;
  os << fn << ": NOC address 0x" << std::hex << noc_addr << std::dec << " targets NOC (" << x << "," << y
     << "), which is neither a worker core nor a DRAM bank";
  protocol_error(loc, os.str());
}

// A NOC transfer moves whole NOC words: a device's NOC reads and writes correctly only when the source and
// destination addresses are equal modulo the alignment of the transfer, DRAM_ALIGNMENT when DRAM is an end
// (32 B Wormhole, 64 B Blackhole) and L1_ALIGNMENT (16 B) from L1 to L1 (tt-metal 0.81.1 headers
// internal/tt-1xx/{wormhole,blackhole}/core_config.h, LOG_BASE_2_OF_DRAM_ALIGNMENT / LOG_BASE_2_OF_L1_ALIGNMENT).
// A misaligned transfer silently delivers wrong data on a device (tt-metal issue #6695; PRs #22061, #41849
// document and check it), so the emulator refuses it even though its memmove would copy the bytes right.
// `src` and `dst` are the byte addresses of the two ends (L1 offsets or DRAM bank addresses: the L1
// mapping's base is page aligned, so an L1 offset and its local address agree modulo either alignment).
void check_noc_alignment(ThreadCtx& t, const char* fn, uint64_t src, uint64_t dst, bool dram, Loc loc) {
  const uint32_t a = dram ? t.dev->arch.dram_alignment : t.dev->arch.l1_alignment;
  if (src % a == dst % a) return;
  std::ostringstream os;
  os << fn << ": source address 0x" << std::hex << src << " and destination address 0x" << dst << std::dec
     << " differ modulo " << a << " B (" << src % a << " vs " << dst % a << "); a NOC transfer "
     << (dram ? "touching DRAM needs them equal modulo DRAM_ALIGNMENT" : "from L1 to L1 needs them equal modulo L1_ALIGNMENT")
     << " (" << a << " B on this arch), or the device delivers wrong data";
  protocol_error(loc, os.str());
}

// Byte address of a NOC address's local part, for the alignment rule.
uint64_t noc_local_part(uint64_t noc_addr) { return noc_addr & ((1ull << kNocLocalBits) - 1); }

struct Rect {
  uint32_t x0, y0, x1, y1;
  uint64_t offset;
};

Rect decode_mcast(uint64_t a) {
  const uint32_t e = static_cast<uint32_t>(a >> kNocLocalBits);
  return {(e >> 12) & 63, (e >> 18) & 63, e & 63, (e >> 6) & 63, a & ((1ull << kNocLocalBits) - 1)};
}

// Cores along the longer side of a multicast's rectangle (its path reservation's reach, timing.hpp).
uint64_t mcast_extent(uint64_t a) {
  const Rect r = decode_mcast(a);
  return std::max(std::max(r.x0, r.x1) - std::min(r.x0, r.x1), std::max(r.y0, r.y1) - std::min(r.y0, r.y1)) + 1;
}

// Destination cores of a multicast on NOC `noc`; checks num_dests like the hardware requires, and that the
// rectangle runs along the NOC's data flow: NOC 0 flows rightwards and downwards, NOC 1 leftwards and upwards
// (tt-isa-documentation WormholeB0/NoC/RoutingPaths.md), and coordinate translation does not change the
// direction, so on NOC 1 software gives the rectangle from its far corner to its near one, start and end swapped
// (WormholeB0/NoC/Coordinates.md and BlackholeA0/NoC/Coordinates.md, "Coordinate Translation" (*)). A rectangle
// against the flow reaches round the torus to other cores (tt-metal's watcher lets a Tensix multicast do so,
// hw/inc/internal/debug/sanitize.h:562-564), which the emulator's coordinates do not model: an error.
std::vector<Core*> mcast_targets(ThreadCtx& t, uint64_t dst, uint32_t num_dests, bool loopback, uint8_t noc,
                                 const char* fn, Loc loc) {
  const Rect r = decode_mcast(dst);
  if (noc >= kNumNocs)
    protocol_error(loc, std::string(fn) + " on NOC " + std::to_string(noc) + ": a core has " + std::to_string(kNumNocs) +
                            " NOCs");
  const bool along = noc == 0 ? r.x0 <= r.x1 && r.y0 <= r.y1 : r.x0 >= r.x1 && r.y0 >= r.y1;
  if (!along) {
    protocol_error(loc, std::string(fn) + " on NOC " + std::to_string(noc) + ": the rectangle from (" +
                            std::to_string(r.x0) + "," + std::to_string(r.y0) + ") to (" + std::to_string(r.x1) + "," +
                            std::to_string(r.y1) + ") runs against the NOC's data flow (" +
                            (noc == 0 ? "NOC 0 takes start <= end" : "NOC 1 takes start >= end, the far corner first") +
                            "): on the device it would wrap around the torus, which the emulator does not model");
  }
  std::vector<Core*> out;
  for (uint32_t y = std::min(r.y0, r.y1); y <= std::max(r.y0, r.y1); ++y)
    for (uint32_t x = std::min(r.x0, r.x1); x <= std::max(r.x0, r.x1); ++x) {
      Core* c = t.dev->core_at_noc(x, y);
      if (c == nullptr) {
        protocol_error(loc, std::string(fn) + ": multicast rectangle includes NOC (" + std::to_string(x) + "," +
                                std::to_string(y) + "), which is not a worker core");
      }
      if (c == t.core && !loopback) continue;
      out.push_back(c);
    }
  if (out.size() != num_dests)
    protocol_error(loc, std::string(fn) + ": num_dests is " + std::to_string(num_dests) + " but the multicast reaches " +
                            std::to_string(out.size()) + " core(s)");
  return out;
}

uint64_t mcast_offset(ThreadCtx& t, uint64_t dst, uint32_t size, const char* fn, Loc loc) {
  uint64_t off = decode_mcast(dst).offset;
  const uint64_t my_base = t.core->l1_base_addr();
  if (off >= my_base && off < my_base + t.dev->arch.l1_size) off -= my_base;
  if (off + size > t.dev->arch.l1_size) protocol_error(loc, std::string(fn) + ": destination outside L1");
  return off;
}

// ---- semaphore timing (mu held) ----
// A set (any value, local or remote) starts a new epoch: the increments before it no longer count.
void sem_set(DeviceImpl& d, volatile void* sem, uint64_t when) {
  SemTiming& s = d.sem_timing[reinterpret_cast<uintptr_t>(sem)];
  s.set_time = when;
  s.incs.clear();
}

// Logical time at which the wait's condition became true: the semaphore's value is the value of its
// last set plus the increments since; the increments are applied in logical-time order (ties by value)
// until the condition holds, so with +1 increments a wait for k is the k-th smallest increment time,
// whatever order the OS threads ran them in.
uint64_t sem_condition_time(DeviceImpl& d, volatile uint32_t* sem, uint32_t val, bool at_least) {
  const auto it = d.sem_timing.find(reinterpret_cast<uintptr_t>(sem));
  if (it == d.sem_timing.end()) return 0;  // only the initial value (or untracked local stores)
  SemTiming& s = it->second;
  uint32_t v = *sem;
  for (const auto& inc : s.incs) v -= inc.second;  // the value after the last set
  auto holds = [&](uint32_t x) { return at_least ? x >= val : x == val; };
  if (holds(v)) return s.set_time;
  std::sort(s.incs.begin(), s.incs.end());
  uint64_t when = s.set_time;
  for (const auto& inc : s.incs) {
    v += inc.second;
    when = std::max(when, inc.first);
    if (holds(v)) return when;
  }
  return when;
}

}  // namespace

namespace {
const uint32_t& arg_word(uint32_t idx, bool common, const char* fn, Loc loc) {
  ThreadCtx& t = ctx(loc);
  const std::vector<uint32_t>& v = common ? t.kernel->common_args : *t.args;
  if (idx >= v.size())
    protocol_error(loc, std::string(fn) + "(" + std::to_string(idx) + "): only " + std::to_string(v.size()) +
                            (common ? " common" : "") + " runtime arg(s) were set");
  return v[idx];
}
}  // namespace

uint32_t arg(uint32_t idx, bool common, Loc loc) {
  return arg_word(idx, common, common ? "get_common_arg_val" : "get_arg_val", loc);
}

uintptr_t arg_addr(uint32_t idx, bool common, Loc loc) {
  return reinterpret_cast<uintptr_t>(&arg_word(idx, common, common ? "get_common_arg_addr" : "get_arg_addr", loc));
}

void api_error(const char* what, Loc loc) {
  ctx(loc);
  protocol_error(loc, what);
}

void api_errorf(Loc loc, const char* format, ...) {
  std::va_list args, size_args;
  va_start(args, format);
  va_copy(size_args, args);
  const int size = std::vsnprintf(nullptr, 0, format, size_args);
  va_end(size_args);
  std::string what(size > 0 ? static_cast<std::size_t>(size) : 0, '\0');
  std::vsnprintf(what.data(), what.size() + 1, format, args);
  va_end(args);
  api_error(what.c_str(), loc);
}

// ---------------------------------------------------------------- circular buffers
void cb_reserve_back(int32_t cbi, int32_t n, Loc loc) {
  ThreadCtx& t = ctx(loc);
  std::unique_lock lk(t.dev->mu);
  CB& cb = get_cb(t, cbi, "cb_reserve_back", loc);
  check_count(cb, n, "cb_reserve_back", loc);
  t.wait = {WaitState::CbBack, static_cast<uint32_t>(cbi), static_cast<uint32_t>(n), nullptr, false, loc};
  t.dev->block_until(lk, t, [&] { return cb.num_pages - (cb.pushed - cb.popped) >= static_cast<uint32_t>(n); });
  cb.reserved = std::max(cb.reserved, static_cast<uint32_t>(n));
  // Timing: the slots of pages pushed .. pushed+n-1 are free once their previous pages were popped.
  const Clock on = cb_clock(t, false);
  charge(t, on, timing::kCbCall, "cb_reserve_back");
  const uint64_t ready = clock_of(t, on).tm.clock;
  for (uint64_t s = cb.pushed; s < cb.pushed + static_cast<uint64_t>(n); ++s)
    if (s >= cb.num_pages) wait_until(t, on, cb.pop_time[s % cb.num_pages], nullptr, "cb_reserve_back", cbi);
  t.counters.cb_stall_events += clock_of(t, on).tm.clock > ready;
}

void cb_push_back(int32_t cbi, int32_t n, Loc loc) {
  ThreadCtx& t = ctx(loc);
  std::unique_lock lk(t.dev->mu);
  CB& cb = get_cb(t, cbi, "cb_push_back", loc);
  const std::string call = "cb_push_back(" + cb_name(cb.index) + ", " + std::to_string(n) + ")";
  // Pages past the reservation: a kernel file may push pages that are free (CB::free_unreserved)
  const bool own_free = n >= 0 && cb.free_unreserved(*t.kernel, static_cast<uint64_t>(n));
  if (n < 0 || (static_cast<uint32_t>(n) > cb.reserved && !own_free))
    protocol_error(loc, call + " pushes more pages than reserved (" + std::to_string(cb.reserved) +
                            " reserved by cb_reserve_back)");
  if (cb.wr_page + n > cb.num_pages)
    protocol_error(loc, call + " crosses the end of the " + std::to_string(cb.num_pages) +
                            "-page FIFO; the page count must divide the CB size");
  const uint32_t lo = cb.offset + cb.wr_page * cb.page_size, hi = lo + n * cb.page_size;
  for (const Range& r : t.pending_reads)
    if (overlaps(r, lo, hi))
      protocol_error(loc, call + ": pages filled by noc_async_read at line " + std::to_string(r.line) +
                              " are pushed before noc_async_read_barrier");
  const Clock on = cb_clock(t, false);
  charge(t, on, timing::kCbCall, "cb_push_back");
  const uint64_t now = clock_of(t, on).tm.clock;
  for (uint64_t s = cb.pushed; s < cb.pushed + static_cast<uint64_t>(n); ++s) cb.push_time[s % cb.num_pages] = now;
  cb.pushed += n;
  cb.wr_page = (cb.wr_page + n) % cb.num_pages;
  cb.reserved -= std::min(cb.reserved, static_cast<uint32_t>(n));
  cb.packed = 0;
  if (cb.producer.empty()) cb.producer = t.kernel->source_name;
  t.core->cv.notify_all();
}

void cb_wait_front(int32_t cbi, int32_t n, Loc loc) {
  ThreadCtx& t = ctx(loc);
  std::unique_lock lk(t.dev->mu);
  CB& cb = get_cb(t, cbi, "cb_wait_front", loc);
  check_count(cb, n, "cb_wait_front", loc);
  t.wait = {WaitState::CbFront, static_cast<uint32_t>(cbi), static_cast<uint32_t>(n), nullptr, false, loc};
  t.dev->block_until(lk, t, [&] { return cb.pushed - cb.popped >= static_cast<uint32_t>(n); });
  cb.waited = std::max(cb.waited, static_cast<uint32_t>(n));
  // Timing: pages popped .. popped+n-1 are there once their producer pushed them.
  const Clock on = cb_clock(t, true);
  charge(t, on, timing::kCbCall, "cb_wait_front");
  const uint64_t ready = clock_of(t, on).tm.clock;
  for (uint64_t s = cb.popped; s < cb.popped + static_cast<uint64_t>(n); ++s)
    wait_until(t, on, cb.push_time[s % cb.num_pages], nullptr, "cb_wait_front", cbi);
  t.counters.cb_stall_events += clock_of(t, on).tm.clock > ready;
}

void cb_pop_front(int32_t cbi, int32_t n, Loc loc) {
  ThreadCtx& t = ctx(loc);
  std::unique_lock lk(t.dev->mu);
  CB& cb = get_cb(t, cbi, "cb_pop_front", loc);
  const std::string call = "cb_pop_front(" + cb_name(cb.index) + ", " + std::to_string(n) + ")";
  // Pages not waited for: a kernel's own intermediate may pop pages it pushed (CB::own_intermediate)
  const bool own_pushed = cb.own_intermediate(*t.kernel) && n >= 0 &&
                          cb.pushed - cb.popped >= static_cast<uint64_t>(n);
  if (n < 0 || (static_cast<uint32_t>(n) > cb.waited && !own_pushed))
    protocol_error(loc, call + " pops more pages than waited for (" + std::to_string(cb.waited) +
                            " confirmed by cb_wait_front)");
  if (cb.rd_page + n > cb.num_pages)
    protocol_error(loc, call + " crosses the end of the " + std::to_string(cb.num_pages) +
                            "-page FIFO; the page count must divide the CB size");
  const uint32_t lo = cb.offset + cb.rd_page * cb.page_size, hi = lo + n * cb.page_size;
  for (const Range& r : t.pending_writes)
    if (overlaps(r, lo, hi))
      protocol_error(loc, call + ": pages sent by noc_async_write at line " + std::to_string(r.line) +
                              " are freed before noc_async_write_barrier / noc_async_writes_flushed");
  const Clock on = cb_clock(t, true);
  charge(t, on, timing::kCbCall, "cb_pop_front");
  const uint64_t now = clock_of(t, on).tm.clock;
  for (uint64_t s = cb.popped; s < cb.popped + static_cast<uint64_t>(n); ++s) cb.pop_time[s % cb.num_pages] = now;
  cb.popped += n;
  cb.rd_page = (cb.rd_page + n) % cb.num_pages;
  cb.waited -= std::min(cb.waited, static_cast<uint32_t>(n));
  if (cb.consumer.empty()) cb.consumer = t.kernel->source_name;
  t.core->cv.notify_all();
}

bool cb_pages_reservable_at_back(int32_t cbi, int32_t n, Loc loc) {
  ThreadCtx& t = ctx(loc);
  std::unique_lock lk(t.dev->mu);
  CB& cb = get_cb(t, cbi, "cb_pages_reservable_at_back", loc);
  return cb.num_pages - (cb.pushed - cb.popped) >= static_cast<uint32_t>(n);
}

bool cb_pages_available_at_front(int32_t cbi, int32_t n, Loc loc) {
  ThreadCtx& t = ctx(loc);
  std::unique_lock lk(t.dev->mu);
  CB& cb = get_cb(t, cbi, "cb_pages_available_at_front", loc);
  return cb.pushed - cb.popped >= static_cast<uint32_t>(n);
}

uint32_t get_write_ptr(uint32_t cbi, Loc loc) {
  ThreadCtx& t = ctx(loc);
  std::unique_lock lk(t.dev->mu);
  CB& cb = get_cb(t, static_cast<int32_t>(cbi), "get_write_ptr", loc);
  if (cb.reserved == 0)
    protocol_error(loc, "get_write_ptr(" + cb_name(cb.index) + ") outside cb_reserve_back/cb_push_back");
  charge(t, timing::kDataflowMisc, "get_write_ptr");
  return t.core->l1_base_addr() + cb.offset + cb.wr_page * cb.page_size;
}

uint32_t get_read_ptr(uint32_t cbi, Loc loc) {
  ThreadCtx& t = ctx(loc);
  std::unique_lock lk(t.dev->mu);
  CB& cb = get_cb(t, static_cast<int32_t>(cbi), "get_read_ptr", loc);
  charge(t, timing::kDataflowMisc, "get_read_ptr");
  return t.core->l1_base_addr() + cb.offset + cb.rd_page * cb.page_size;
}

void risc_l1_access(bool store, Loc loc) {
  ThreadCtx& t = ctx(loc);
  charge(t, store ? timing::kRiscL1Store : timing::kRiscL1Load, store ? "l1_store" : "l1_load");
}

uint32_t cb_page_size(uint32_t cbi, Loc loc) {
  ThreadCtx& t = ctx(loc);
  return get_cb(t, static_cast<int32_t>(cbi), "get_tile_size", loc).page_size;
}

CbState cb_state(uint32_t cbi, const char* fn, Loc loc) {
  ThreadCtx& t = ctx(loc);
  std::unique_lock lk(t.dev->mu);
  const CB& cb = get_cb(t, static_cast<int32_t>(cbi), fn, loc);
  const uint32_t base = t.core->l1_base_addr() + cb.offset;
  return {cb.size, base + cb.size, cb.page_size, cb.num_pages, base + cb.rd_page * cb.page_size,
          base + cb.wr_page * cb.page_size};
}

void cb_set_field(uint32_t cbi, CbField field, uint32_t value, Loc loc) {
  ThreadCtx& t = ctx(loc);
  std::unique_lock lk(t.dev->mu);
  CB& cb = const_cast<CB&>(get_cb(t, static_cast<int32_t>(cbi), "get_local_cb_interface", loc));
  if (field != CbField::RdPtr && field != CbField::WrPtr)
    protocol_error(loc, "get_local_cb_interface(" + std::to_string(cbi) +
                            "): the emulator lets a kernel write fifo_rd_ptr and fifo_wr_ptr only");
  const uint32_t base = t.core->l1_base_addr() + cb.offset;
  if (value < base || value >= base + cb.size || (value - base) % cb.page_size != 0)
    protocol_error(loc, "get_local_cb_interface(" + std::to_string(cbi) + ")." +
                            (field == CbField::RdPtr ? "fifo_rd_ptr" : "fifo_wr_ptr") + " = " + std::to_string(value) +
                            ": not a page of the CB's FIFO");
  (field == CbField::RdPtr ? cb.rd_page : cb.wr_page) = (value - base) / cb.page_size;
  charge(t, timing::kDataflowMisc, "get_local_cb_interface");
}

DataFormat cb_format(uint32_t cbi, Loc loc) {
  ThreadCtx& t = ctx(loc);
  return get_cb(t, static_cast<int32_t>(cbi), "get_dataformat", loc).fmt;
}

// ---------------------------------------------------------------- NOC
uint32_t num_dram_banks() { return tls_ctx->dev->arch.dram_banks; }
uint32_t dram_alignment() { return tls_ctx->dev->arch.dram_alignment; }

uint64_t noc_unicast_addr(uint32_t x, uint32_t y, uint32_t addr) {
  return (static_cast<uint64_t>((y << kNocCoordBits) | x) << kNocLocalBits) | addr;
}

uint64_t noc_multicast_addr(uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1, uint32_t addr) {
  const uint64_t enc = x1 | (y1 << 6) | (x0 << 12) | (y0 << 18);
  return (enc << kNocLocalBits) | addr;
}

uint64_t noc_self_addr(uint32_t addr, Loc loc) {
  ThreadCtx& t = ctx(loc);
  return noc_unicast_addr(t.core->logical.x + kWorkerNocOrigin, t.core->logical.y + kWorkerNocOrigin, addr);
}

uint32_t mem_zeros_base(Loc loc) {
  ThreadCtx& t = ctx(loc);
  return t.core->l1_base_addr() + zeros_offset(t.dev->arch);
}

uint64_t noc_dram_bank_addr(uint32_t bank, uint32_t addr) { return noc_unicast_addr(bank, 0, addr); }

uint64_t noc_dram_page_addr(uint32_t base, uint32_t page_size, uint32_t page, uint32_t offset) {
  const DeviceImpl& d = *tls_ctx->dev;
  const uint32_t a = d.arch.dram_alignment;
  const uint32_t aligned = (page_size + a - 1) / a * a;
  const uint32_t bank = page % d.arch.dram_banks;
  return noc_dram_bank_addr(bank, base + (page / d.arch.dram_banks) * aligned + offset);
}

namespace {
// A write issued: when it is acked (`done`) and sent, overall and for the transaction id it carries (NocIds), and its
// source range until a barrier.
void note_write(ThreadCtx& t, uint64_t done, uint32_t off, uint32_t size, Loc loc) {
  NocIds& ids = t.noc_ids;
  t.main.tm.writes_done = std::max(t.main.tm.writes_done, done);
  t.main.tm.writes_sent = std::max(t.main.tm.writes_sent, t.main.tm.write_port_free);
  ids.writes_done[ids.write_tag] = std::max(ids.writes_done[ids.write_tag], done);
  ids.writes_sent[ids.write_tag] = std::max(ids.writes_sent[ids.write_tag], t.main.tm.write_port_free);
  t.counters.noc_write_transactions += 1;
  t.pending_writes.push_back({off, off + size, loc.line(), ids.write_tag});
}

uint32_t checked_trid(uint32_t trid, const char* fn, Loc loc) {
  if (trid >= NocIds::kCount)
    api_errorf(loc, "%s: transaction id %u outside 0..0xF (NOC_MAX_TRANSACTION_ID, noc_parameters.h)", fn, trid);
  return trid;
}

void drop_trid(std::vector<Range>& pending, uint32_t trid) {
  std::erase_if(pending, [&](const Range& r) { return r.trid == trid; });
}
}  // namespace

void noc_read(uint64_t src, uint32_t dst_l1, uint32_t size, Loc loc) {
  ThreadCtx& t = ctx(loc);
  const uint32_t off = local_offset(t, dst_l1, size, "noc_async_read", loc);
  bool dram;
  Core* core;
  const uint8_t* p = resolve(t, src, size, dram, core, "noc_async_read", loc);
  check_noc_alignment(t, "noc_async_read", noc_local_part(src), dst_l1, dram, loc);
  {
    // The data lands in this core's L1, where a thread of the core may wait on one of its words (a
    // semaphore): written under mu and notified (DeviceImpl).
    std::unique_lock lk(t.dev->mu);
    std::memmove(t.core->l1 + off, p, size);
    t.core->cv.notify_all();
  }
  charge(t, t.dev->arch.noc_issue, "noc_async_read");
  if (dram) t.dram_transfers.push_back({t.main.tm.clock, size, noc_x(src)});
  const uint64_t done = noc_transfer(t, size, false, dram);
  NocIds& ids = t.noc_ids;
  t.main.tm.reads_done = std::max(t.main.tm.reads_done, done);
  ids.reads_done[ids.read_tag] = std::max(ids.reads_done[ids.read_tag], done);
  t.counters.noc_read_transactions += 1;
  if (dram) t.counters.dram_bytes_read += size;
  else if (core != t.core) t.counters.l1_bytes_read_remote += size;
  t.pending_reads.push_back({off, off + size, loc.line(), ids.read_tag});
}

void noc_write(uint32_t src_l1, uint64_t dst, uint32_t size, Loc loc) {
  ThreadCtx& t = ctx(loc);
  const uint32_t off = local_offset(t, src_l1, size, "noc_async_write", loc);
  bool dram;
  Core* core;
  uint8_t* p = resolve(t, dst, size, dram, core, "noc_async_write", loc);
  check_noc_alignment(t, "noc_async_write", src_l1, noc_local_part(dst), dram, loc);
  if (dram) {
    std::memmove(p, t.core->l1 + off, size);
    t.counters.dram_bytes_written += size;
  } else {
    std::unique_lock lk(t.dev->mu);
    std::memmove(p, t.core->l1 + off, size);
    core->cv.notify_all();
    if (core != t.core) t.counters.l1_bytes_written_remote += size;
  }
  charge(t, t.dev->arch.noc_issue, "noc_async_write");
  if (dram) t.dram_transfers.push_back({t.main.tm.clock, size, noc_x(dst)});
  note_write(t, noc_transfer(t, size, true, dram), off, size, loc);
}

void noc_write_multicast(uint32_t src_l1, uint64_t dst, uint32_t size, uint32_t num_dests, bool loopback, bool linked,
                         uint8_t noc, Loc loc) {
  ThreadCtx& t = ctx(loc);
  const char* fn = loopback ? "noc_async_write_multicast_loopback_src" : "noc_async_write_multicast";
  const uint32_t off = local_offset(t, src_l1, size, fn, loc);
  const uint64_t dst_off = mcast_offset(t, dst, size, fn, loc);
  check_noc_alignment(t, fn, src_l1, dst_off, false, loc);
  const auto targets = mcast_targets(t, dst, num_dests, loopback, noc, fn, loc);
  std::unique_lock lk(t.dev->mu);
  for (Core* c : targets) {
    std::memmove(c->l1 + dst_off, t.core->l1 + off, size);
    c->cv.notify_all();
    if (c != t.core) t.counters.l1_bytes_written_remote += size;
  }
  charge(t, t.dev->arch.noc_issue, fn);
  note_write(t, noc_multicast(t, size, mcast_extent(dst), linked), off, size, loc);
}

void noc_read_barrier(Loc loc) {
  ThreadCtx& t = ctx(loc);
  charge(t, timing::kDataflowMisc, "noc_async_read_barrier");
  wait_until(t, t.main.tm.reads_done, &ThreadTiming::noc_stall, "noc_async_read_barrier");
  t.pending_reads.clear();
  t.counters.read_barriers += 1;
}

void noc_write_barrier(Loc loc) {
  ThreadCtx& t = ctx(loc);
  charge(t, timing::kDataflowMisc, "noc_async_write_barrier");
  wait_until(t, t.main.tm.writes_done, &ThreadTiming::noc_stall, "noc_async_write_barrier");
  t.pending_writes.clear();
  t.counters.write_barriers += 1;
}

void noc_writes_flushed(Loc loc) {
  ThreadCtx& t = ctx(loc);
  charge(t, timing::kDataflowMisc, "noc_async_writes_flushed");
  wait_until(t, t.main.tm.writes_sent, &ThreadTiming::noc_stall, "noc_async_writes_flushed");
  t.pending_writes.clear();
  t.counters.write_barriers += 1;
}

void noc_set_trid(bool write, uint32_t trid, Loc loc) {
  ThreadCtx& t = ctx(loc);
  const char* fn = write ? "noc_async_write_set_trid" : "noc_async_read_set_trid";
  charge(t, timing::kDataflowMisc, fn);
  (write ? t.noc_ids.write_tag : t.noc_ids.read_tag) = checked_trid(trid, fn, loc);
}

void noc_read_barrier_trid(uint32_t trid, Loc loc) {
  ThreadCtx& t = ctx(loc);
  const char* fn = "noc_async_read_barrier_with_trid";
  charge(t, timing::kDataflowMisc, fn);
  wait_until(t, t.noc_ids.reads_done[checked_trid(trid, fn, loc)], &ThreadTiming::noc_stall, fn);
  drop_trid(t.pending_reads, trid);
  t.counters.read_barriers += 1;
}

void noc_write_barrier_trid(uint32_t trid, Loc loc) {
  ThreadCtx& t = ctx(loc);
  const char* fn = "noc_async_write_barrier_with_trid";
  charge(t, timing::kDataflowMisc, fn);
  wait_until(t, t.noc_ids.writes_done[checked_trid(trid, fn, loc)], &ThreadTiming::noc_stall, fn);
  drop_trid(t.pending_writes, trid);
  t.counters.write_barriers += 1;
}

void noc_writes_flushed_trid(uint32_t trid, Loc loc) {
  ThreadCtx& t = ctx(loc);
  const char* fn = "noc_async_write_flushed_with_trid";
  charge(t, timing::kDataflowMisc, fn);
  wait_until(t, t.noc_ids.writes_sent[checked_trid(trid, fn, loc)], &ThreadTiming::noc_stall, fn);
  drop_trid(t.pending_writes, trid);
  t.counters.write_barriers += 1;
}

// ---------------------------------------------------------------- semaphores
uint32_t semaphore_addr(uint32_t id, Loc loc) {
  ThreadCtx& t = ctx(loc);
  if (id >= t.core->num_semaphores)
    protocol_error(loc, "get_semaphore(" + std::to_string(id) + "): only " + std::to_string(t.core->num_semaphores) +
                            " semaphore(s) were created on this core");
  return t.core->l1_base_addr() + t.dev->arch.l1_unreserved_base - 16 * 16 + 16 * id;
}

// The word of this core's L1 a semaphore pointer names. A kernel has the address of a semaphore either from
// get_semaphore (a local address here) or from the host (GlobalSemaphore::address(), an L1 offset: on a device
// L1 addresses are the same on the host and in the kernel; here each core's L1 is mapped elsewhere, far above
// l1_size, so an address below l1_size is an offset).
volatile uint32_t* local_word(ThreadCtx& t, volatile uint32_t* sem, const char* fn, Loc loc) {
  const uint32_t addr = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(sem));
  if (addr < t.dev->arch.l1_size && t.core->l1_base_addr() >= t.dev->arch.l1_size) {
    if (addr + 4 > t.dev->arch.l1_size) protocol_error(loc, std::string(fn) + ": L1 offset past the end of L1");
    return reinterpret_cast<volatile uint32_t*>(t.core->l1 + addr);
  }
  local_offset(t, addr, 4, fn, loc);
  return sem;
}

void semaphore_wait(volatile uint32_t* sem_addr, uint32_t val, bool at_least, Loc loc) {
  ThreadCtx& t = ctx(loc);
  const char* fn = at_least ? "noc_semaphore_wait_min" : "noc_semaphore_wait";
  volatile uint32_t* sem = local_word(t, sem_addr, fn, loc);
  std::unique_lock lk(t.dev->mu);
  t.wait = {WaitState::Semaphore, 0, val, sem, at_least, loc};
  t.dev->block_until(lk, t, [&] { return at_least ? *sem >= val : *sem == val; });
  charge(t, timing::kCbCall, fn);
  wait_until(t, sem_condition_time(*t.dev, sem, val, at_least), &ThreadTiming::sem_stall, fn);
}

void semaphore_set(volatile uint32_t* sem_addr, uint32_t val, Loc loc) {
  ThreadCtx& t = ctx(loc);
  volatile uint32_t* sem = local_word(t, sem_addr, "noc_semaphore_set", loc);
  std::unique_lock lk(t.dev->mu);
  *sem = val;
  charge(t, timing::kDataflowMisc, "noc_semaphore_set");
  sem_set(*t.dev, sem, t.main.tm.clock);
  t.core->cv.notify_all();
}

void semaphore_inc(uint64_t dst, uint32_t incr, Loc loc) {
  ThreadCtx& t = ctx(loc);
  bool dram;
  Core* core;
  uint8_t* p = resolve(t, dst, 4, dram, core, "noc_semaphore_inc", loc);
  if (dram) protocol_error(loc, "noc_semaphore_inc: the target is DRAM, not a core's L1");
  std::unique_lock lk(t.dev->mu);
  uint32_t v;
  std::memcpy(&v, p, 4);
  v += incr;
  std::memcpy(p, &v, 4);
  charge(t, t.dev->arch.noc_issue, "noc_semaphore_inc");
  // A local increment lands at once; a remote one is a 4-byte NOC transfer.
  const uint64_t when = core == t.core ? t.main.tm.clock : noc_transfer(t, 4, true);
  t.dev->sem_timing[reinterpret_cast<uintptr_t>(p)].incs.emplace_back(when, incr);
  core->cv.notify_all();
}

void semaphore_set_multicast(uint32_t src_l1, uint64_t dst, uint32_t num_dests, bool loopback, bool linked, uint8_t noc,
                             Loc loc) {
  ThreadCtx& t = ctx(loc);
  const char* fn = loopback ? "noc_semaphore_set_multicast_loopback_src" : "noc_semaphore_set_multicast";
  const uint32_t off = local_offset(t, src_l1, 4, fn, loc);
  const uint64_t dst_off = mcast_offset(t, dst, 4, fn, loc);
  const auto targets = mcast_targets(t, dst, num_dests, loopback, noc, fn, loc);
  std::unique_lock lk(t.dev->mu);
  charge(t, t.dev->arch.noc_issue, fn);
  const uint64_t when = noc_multicast(t, 4, mcast_extent(dst), linked);
  for (Core* c : targets) {
    std::memcpy(c->l1 + dst_off, t.core->l1 + off, 4);
    sem_set(*t.dev, c->l1 + dst_off, c == t.core ? t.main.tm.clock : when);
    c->cv.notify_all();
  }
}

// The caller's ThreadId (ckernel_defs.h). A data movement kernel is BRISC's: the ThreadIds name one data
// movement RISC-V, and ttnn's matmul readers on NCRISC write the TRISCs as BriscThreadId too (the compute
// kernel reads mailbox_read(BriscThreadId): bmm_large_block_zm_fused_bias_activation.cpp). A compute kernel is
// the three TRISCs in one thread, which run their UNPACK(...), MATH(...), PACK(...) parts in that order: its
// reads are the unpacker's, the math thread's and the packer's in turn, its writes the unpacker's.
namespace {
constexpr uint8_t kBriscThread = 0, kUnpackThread = 1;
uint8_t mailbox_reader(ThreadCtx& t) {
  if (t.kernel->role != KernelRole::Compute) return kBriscThread;
  const uint8_t trisc = t.next_trisc;
  t.next_trisc = static_cast<uint8_t>((t.next_trisc + 1) % 3);
  return static_cast<uint8_t>(kUnpackThread + trisc);
}
void check_thread(uint8_t thread, const char* fn, Loc loc) {
  if (thread > 3) protocol_error(loc, std::string(fn) + "(" + std::to_string(thread) + "): a ThreadId is 0 to 3");
}
}  // namespace

void mailbox_write(uint8_t thread, uint32_t data, Loc loc) {
  ThreadCtx& t = ctx(loc);
  check_thread(thread, "mailbox_write", loc);
  const uint8_t sender = t.kernel->role == KernelRole::Compute ? kUnpackThread : kBriscThread;
  std::unique_lock lk(t.dev->mu);
  charge(t, timing::kDataflowMisc, "mailbox_write");
  t.core->mailbox[sender][thread].emplace_back(data, t.main.tm.clock);
  t.core->cv.notify_all();
}

uint32_t mailbox_read(uint8_t thread, Loc loc) {
  ThreadCtx& t = ctx(loc);
  check_thread(thread, "mailbox_read", loc);
  const uint8_t reader = mailbox_reader(t);
  std::unique_lock lk(t.dev->mu);
  auto& box = t.core->mailbox[thread][reader];
  t.wait = {WaitState::Mailbox, thread, reader, nullptr, false, loc};
  t.dev->block_until(lk, t, [&] { return !box.empty(); });
  const auto [data, when] = box.front();
  box.pop_front();
  charge(t, timing::kDataflowMisc, "mailbox_read");
  wait_until(t, when, &ThreadTiming::sem_stall, "mailbox_read");
  return data;
}

void semaphore_inc_multicast(uint64_t dst, uint32_t incr, uint32_t num_dests, uint8_t noc, Loc loc) {
  ThreadCtx& t = ctx(loc);
  const char* fn = "noc_semaphore_inc_multicast";
  const uint64_t dst_off = mcast_offset(t, dst, 4, fn, loc);
  const auto targets = mcast_targets(t, dst, num_dests, false, noc, fn, loc);
  std::unique_lock lk(t.dev->mu);
  charge(t, t.dev->arch.noc_issue, fn);
  const uint64_t when = noc_multicast(t, 4, mcast_extent(dst), false);
  for (Core* c : targets) {
    uint32_t v;
    std::memcpy(&v, c->l1 + dst_off, 4);
    v += incr;
    std::memcpy(c->l1 + dst_off, &v, 4);
    t.dev->sem_timing[reinterpret_cast<uintptr_t>(c->l1 + dst_off)].incs.emplace_back(when, incr);
    c->cv.notify_all();
  }
}

void semaphore_set_remote(uint32_t src_l1, uint64_t dst, Loc loc) {
  ThreadCtx& t = ctx(loc);
  const uint32_t off = local_offset(t, src_l1, 4, "noc_semaphore_set_remote", loc);
  bool dram;
  Core* core;
  uint8_t* p = resolve(t, dst, 4, dram, core, "noc_semaphore_set_remote", loc);
  if (dram) protocol_error(loc, "noc_semaphore_set_remote: the target is DRAM, not a core's L1");
  std::unique_lock lk(t.dev->mu);
  std::memcpy(p, t.core->l1 + off, 4);
  charge(t, t.dev->arch.noc_issue, "noc_semaphore_set_remote");
  const uint64_t when = noc_transfer(t, 4, true);
  sem_set(*t.dev, p, core == t.core ? t.main.tm.clock : when);
  core->cv.notify_all();
}

}  // namespace emu::k
