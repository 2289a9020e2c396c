// Device model: architecture, L1/DRAM memory, program construction, launch and counters.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <thread>

#include "internal.hpp"

namespace emu {

thread_local ThreadCtx* tls_ctx = nullptr;

// ---------------------------------------------------------------- kernel registry
namespace {
std::vector<KernelInfo>& registry() {
  static std::vector<KernelInfo> r;
  return r;
}

Device* g_device = nullptr;           // the current device of g_devices
std::vector<Device*> g_devices;      // the open devices (a mesh's, in row-major order)

#ifndef TT_EMU_ARCHS
#error "TT_EMU_ARCHS (the arch table of tilelang_tt/contract/arch.py) is defined by tilelang_tt/emulator/driver.py"
#endif

ArchSpec arch_spec(const std::string& name) {
  static const ArchSpec archs[] = {TT_EMU_ARCHS};
  std::string known;
  for (const ArchSpec& a : archs) {
    if (a.name == name) {
      if (a.num_cbs > kMaxCBs || a.dst_tiles > kDstTiles)
        throw EmulatorError("arch '" + name + "' has more CBs or DST tiles than the emulator holds");
      return a;
    }
    known += (known.empty() ? "" : ", ") + a.name;
  }
  throw EmulatorError("unknown arch '" + name + "' (the arch table has " + known + ")");
}

constexpr uint64_t kDramUnreservedBase = 0x10000;

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
}  // namespace

void register_kernel(const char* source_name, KernelFn fn, std::initializer_list<uint32_t> compile_args,
                     bool math_approx_mode, uint8_t noc_index) {
  registry().push_back(KernelInfo{source_name, fn, std::vector<uint32_t>(compile_args), math_approx_mode, noc_index});
}

std::string basename_of(const char* path) {
  std::string p(path);
  const auto slash = p.find_last_of('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

std::string kernel_key(const std::string& path) {
  return std::filesystem::path(path).lexically_normal().generic_string();
}

// tt-metal keys a kernel's build by the path the program gave and its configuration (tt_metal/impl/kernels/
// kernel.cpp, Kernel::compute_hash: ComputeKernelOriginalPathHash of the source as given, the compile-time args,
// defines, named args and config): two files of one name in two directories are two kernels.
const KernelInfo* find_kernel(const std::string& source_name) {
  const std::string want = kernel_key(source_name);
  for (const auto& k : registry())
    if (kernel_key(k.source_name) == want) return &k;
  return nullptr;
}

const char* kernel_role_name(KernelRole role) {
  switch (role) {
    case KernelRole::Reader: return "reader";
    case KernelRole::Writer: return "writer";
    case KernelRole::Compute: return "compute";
  }
  return "?";
}

const char* risc_name(Risc r) {
  switch (r) {
    case Risc::Reader: return "reader";
    case Risc::Writer: return "writer";
    case Risc::Math: return "math";
    case Risc::Unpack: return "unpack";
    case Risc::Pack: return "pack";
  }
  return "?";
}

// ---------------------------------------------------------------- errors
std::string who(const ThreadCtx& t) {
  std::ostringstream os;
  if (g_devices.size() > 1) os << "chip " << t.dev->index << " ";
  os << "core (" << t.core->logical.x << "," << t.core->logical.y << ") " << kernel_role_name(t.kernel->role)
     << " kernel '" << t.kernel->source_name << "'";
  return os.str();
}

std::string where(const std::source_location& loc) {
  return basename_of(loc.file_name()) + ":" + std::to_string(loc.line());
}

void protocol_error(const std::source_location& loc, const std::string& what) {
  ThreadCtx& t = *tls_ctx;
  t.dev->fail(who(t) + ": " + what + " at " + where(loc));
}

ThreadCtx& ctx(const std::source_location& loc) {
  ThreadCtx* t = tls_ctx;
  if (t == nullptr)
    throw EmulatorError("kernel API called outside a launched kernel at " + where(loc));
  t->last_call.store(loc, std::memory_order_relaxed);
  if (t->dev->aborting.load(std::memory_order_relaxed)) throw Aborted{};
  return *t;
}

void DeviceImpl::wake_all() {
  for (auto& c : cores) c->cv.notify_all();
}

void DeviceImpl::record_error(const std::string& msg) {
  std::lock_guard g(error_mu);
  if (error.empty()) error = msg;
  aborting = true;
}

void DeviceImpl::fail(const std::string& msg) {
  record_error(msg);
  throw Aborted{};
}

// ---------------------------------------------------------------- deadlock detection
bool DeviceImpl::wait_satisfied(const ThreadCtx& t) const {
  const CB& cb = t.core->cbs[t.wait.cb];
  switch (t.wait.kind) {
    case WaitState::None: return true;
    case WaitState::CbFront: return cb.pushed - cb.popped >= t.wait.wanted;
    case WaitState::CbBack: return cb.num_pages - (cb.pushed - cb.popped) >= t.wait.wanted;
    case WaitState::Semaphore: return t.wait.at_least ? *t.wait.sem >= t.wait.wanted : *t.wait.sem == t.wait.wanted;
    case WaitState::Mailbox: return !t.core->mailbox[t.wait.cb][t.wait.wanted].empty();
  }
  return true;
}

std::string DeviceImpl::describe(const ThreadCtx& t) const {
  std::ostringstream os;
  os << "  " << who(t) << " blocked in ";
  const CB& cb = t.core->cbs[t.wait.cb];
  const uint64_t used = cb.pushed - cb.popped;
  switch (t.wait.kind) {
    case WaitState::CbFront:
      os << "cb_wait_front(CB " << t.wait.cb << ", " << t.wait.wanted << ") at " << where(t.wait.loc) << ": " << used
         << " page(s) available of " << cb.num_pages;
      break;
    case WaitState::CbBack:
      os << "cb_reserve_back(CB " << t.wait.cb << ", " << t.wait.wanted << ") at " << where(t.wait.loc) << ": "
         << cb.num_pages - used << " page(s) free of " << cb.num_pages;
      break;
    case WaitState::Semaphore:
      os << (t.wait.at_least ? "noc_semaphore_wait_min" : "noc_semaphore_wait") << "(semaphore at L1 offset 0x"
         << std::hex
         << (static_cast<uint32_t>(reinterpret_cast<uintptr_t>(t.wait.sem)) - t.core->l1_base_addr()) << std::dec
         << ", " << t.wait.wanted << ") at " << where(t.wait.loc) << ": value " << *t.wait.sem;
      break;
    case WaitState::Mailbox:
      os << "mailbox_read(" << t.wait.cb << ") at " << where(t.wait.loc) << ": no message from thread " << t.wait.cb
         << " to thread " << t.wait.wanted;
      break;
    case WaitState::None: os << "nothing"; break;
  }
  return os.str();
}

void DeviceImpl::check_deadlock_locked() {
  if (live == 0 || blocked < live) return;
  std::vector<const ThreadCtx*> waiting;
  for (const ThreadCtx* t : threads) {
    if (t->finished) continue;
    if (wait_satisfied(*t)) {  // a kernel's own store to L1 (no API call notified it): wake its core
      t->core->cv.notify_all();
      return;
    }
    waiting.push_back(t);
  }
  std::ostringstream os;
  os << "deadlock: all " << waiting.size() << " running kernel threads are blocked\n";
  for (const ThreadCtx* t : waiting) os << describe(*t) << "\n";
  std::string msg = os.str();
  msg.pop_back();
  fail(msg);
}

std::string DeviceImpl::state_locked(const ThreadCtx& t) const {
  if (t.blocked) return describe(t);
  const std::source_location call = t.last_call.load(std::memory_order_relaxed);
  return "  " + who(t) + " running, " +
         (call.line() == 0 ? std::string("before any kernel API call") : "its last kernel API call at " + where(call));
}

// The firmware's work between the go signal and a kernel's first instruction (timing.hpp): every RISC-V
// sets up the CB interface of each CB index up to the highest the core configures, and on Wormhole NCRISC
// (RISCV_1, the reader) first copies its kernel binary to its IRAM. Each of the kernel's clocks starts
// there (`start`); the kernel's busy and stall cycles count from it, and the trace shows the span as
// "firmware init" (cat "init").
void start_kernel(ThreadCtx& t) {
  const ArchSpec& a = t.dev->arch;
  uint64_t cb_indices = 0;
  for (size_t i = 0; i < t.core->cbs.size(); ++i)
    if (t.core->cbs[i].configured) cb_indices = i + 1;
  const uint64_t init = a.cb_config * cb_indices;
  const auto begin = [&](Clock which, uint64_t cycles) {
    RiscClock& c = clock_of(t, which);
    if (t.tracing && cycles > 0) c.spans.push_back({0, cycles, "firmware init", 1, false, true});
    c.tm.clock = c.tm.start = cycles;
  };
  if (t.kernel->role == KernelRole::Compute) {
    for (Clock which : {Clock::Unpack, Clock::Main, Clock::Pack}) begin(which, init);
  } else {
    begin(Clock::Main, init + (t.kernel->role == KernelRole::Reader ? a.ncrisc_kernel_copy : 0));
  }
}

void DeviceImpl::run_thread(ThreadCtx& t) {
  tls_ctx = &t;
  try {
    t.kernel->info->fn();
  } catch (const Aborted&) {
  } catch (const EmulatorError& e) {
    record_error(e.what());
  } catch (const std::exception& e) {
    record_error(who(t) + ": exception: " + e.what());
  }
  tls_ctx = nullptr;
  std::unique_lock lk(mu);
  t.finished = true;
  --live;
  const auto core_done = [&](const ThreadCtx* o) { return o->core != t.core || o->finished; };
  if (std::all_of(threads.begin(), threads.end(), core_done)) {
    ++cores_finished;
    report_progress_locked();
  }
  if (!aborting.load()) {
    try {
      check_deadlock_locked();
    } catch (const Aborted&) {
    }
  }
  // An error (this thread's, or the one that aborted it) was recorded without mu: wake every waiting thread
  // now that mu is held, so none can have read `aborting` before it was set and sleep through the wake-up.
  if (aborting.load()) wake_all();
  if (live == 0) ended.notify_all();
}

namespace {
constexpr std::chrono::milliseconds kWatchdogTick{100};
}  // namespace

// The launch's watchdog, on the launching thread while the kernel threads run (lk holds mu; cv waits let it
// go). Returns when every kernel thread of the launch has ended, or when those left run without calling the
// kernel API.
//  * Every tick it wakes the blocked threads whose condition holds: a kernel's own store to its L1 (a
//    semaphore set through a pointer) notifies no one.
//  * Progress is a kernel thread's clock moving (every API call that moves data, computes or waits charges
//    its clock) or a thread ending. After stall_limit without progress the launch stops with an error
//    naming each thread, blocked in what or running since which API call (a loop polling for what no
//    thread will do: cb_pages_available_at_front, an L1 word): its blocked threads wake and its running
//    ones stop at their next API call.
//  * An aborted launch (the stall, or a kernel's error) that then goes stall_limit without progress has
//    threads running without calling the API at all: it leaves them running (`stranded`), its error names
//    them, and the device runs no further launch.
void DeviceImpl::supervise(std::unique_lock<std::mutex>& lk) {
  const auto progress = [&] {
    uint64_t p = threads.size() - live;
    for (const ThreadCtx* t : threads) p += t->heartbeat.load(std::memory_order_relaxed);
    return p;
  };
  uint64_t seen = progress();
  auto since = std::chrono::steady_clock::now();
  while (live > 0) {
    ended.wait_for(lk, kWatchdogTick);
    if (live == 0) return;
    for (const ThreadCtx* t : threads)
      if (t->blocked && wait_satisfied(*t)) t->core->cv.notify_all();
    const auto now = std::chrono::steady_clock::now();
    if (const uint64_t p = progress(); p != seen) {
      seen = p;
      since = now;
      continue;
    }
    if (now - since < stall_limit) continue;
    since = now;
    const bool stopping = aborting.load();
    std::ostringstream os;
    if (!stopping)
      os << "no progress for " << stall_limit.count() << " s: no kernel thread's logical clock moved and none "
         << "ended (a loop polls for what no thread will do, or waits for it); the " << live
         << " running kernel thread(s):";
    else
      os << "\n" << live << " kernel thread(s) did not stop after that, running without calling the kernel API; "
         << "the launch leaves them running:";
    for (const ThreadCtx* t : threads)
      if (!t->finished) os << "\n" << state_locked(*t);
    if (!stopping) {
      record_error(os.str());
      wake_all();
      continue;
    }
    std::lock_guard g(error_mu);
    error += os.str();
    stranded = true;
    return;
  }
}

void DeviceImpl::report_progress_locked() const {
  if (progress_fd < 0) return;
  const std::string line = std::to_string(cores_finished) + " " + std::to_string(cores_used) + "\n";
  [[maybe_unused]] const ssize_t written = ::write(progress_fd, line.data(), line.size());  // best effort
}

// ---------------------------------------------------------------- memory
Core& DeviceImpl::core(CoreXY c) {
  if (c.x >= arch.grid_x || c.y >= arch.grid_y)
    throw EmulatorError("core (" + std::to_string(c.x) + "," + std::to_string(c.y) + ") is outside the " +
                        std::to_string(arch.grid_x) + "x" + std::to_string(arch.grid_y) + " worker grid of " +
                        arch.name);
  return *cores[c.y * arch.grid_x + c.x];
}

Core* DeviceImpl::core_at_noc(uint32_t x, uint32_t y) {
  if (x < kWorkerNocOrigin || y < kWorkerNocOrigin) return nullptr;
  x -= kWorkerNocOrigin;
  y -= kWorkerNocOrigin;
  if (x >= arch.grid_x || y >= arch.grid_y) return nullptr;
  return cores[y * arch.grid_x + x].get();
}

uint8_t* DeviceImpl::dram_ptr(uint32_t bank, uint64_t addr, uint64_t size) {
  if (bank >= dram.size() || addr + size > dram[bank].size()) return nullptr;
  return dram[bank].data() + addr;
}

// ---------------------------------------------------------------- sharded page placement
ShardPage locate_shard_page(View<uint32_t> tensor_shape, View<uint32_t> shard_shape, uint32_t num_banks,
                            bool shard_contiguous, uint32_t page_id) {
  uint64_t shard_id = 0, in_shard = 0, shard_volume = 1, num_shards = 1;
  uint64_t grid_stride = 1, shard_stride = 1;
  for (uint32_t i = tensor_shape.size(); i-- > 0;) {
    const uint32_t coord = page_id % tensor_shape[i];
    page_id /= tensor_shape[i];
    const uint32_t grid = (tensor_shape[i] + shard_shape[i] - 1) / shard_shape[i];
    shard_id += (coord / shard_shape[i]) * grid_stride;
    in_shard += (coord % shard_shape[i]) * shard_stride;
    grid_stride *= grid;
    shard_stride *= shard_shape[i];
    shard_volume *= shard_shape[i];
    num_shards *= grid;
  }
  const BankSlot placed = shard_to_bank(shard_id, num_shards, num_banks, shard_contiguous);
  return {placed.bank, static_cast<uint32_t>(placed.slot * shard_volume + in_shard)};
}

BankSlot shard_to_bank(uint64_t shard_id, uint64_t num_shards, uint32_t num_banks, bool shard_contiguous) {
  if (shard_contiguous) {
    const uint64_t shards_per_bank = num_shards / num_banks;
    return {static_cast<uint32_t>(shard_id / shards_per_bank), static_cast<uint32_t>(shard_id % shards_per_bank)};
  }
  return {static_cast<uint32_t>(shard_id % num_banks), static_cast<uint32_t>(shard_id / num_banks)};
}

// ---------------------------------------------------------------- counters
void Counters::add(const Counters& o) {
  dram_bytes_read += o.dram_bytes_read;
  dram_bytes_written += o.dram_bytes_written;
  l1_bytes_read_remote += o.l1_bytes_read_remote;
  l1_bytes_written_remote += o.l1_bytes_written_remote;
  noc_read_transactions += o.noc_read_transactions;
  noc_write_transactions += o.noc_write_transactions;
  read_barriers += o.read_barriers;
  write_barriers += o.write_barriers;
  cb_stall_events += o.cb_stall_events;
  dst_acquires += o.dst_acquires;
  for (const auto& [k, v] : o.tile_ops) tile_ops[k] += v;
}

namespace {
void counters_fields(std::ostringstream& os, const Counters& c) {
  os << "\"dram_bytes_read\": " << c.dram_bytes_read << ", \"dram_bytes_written\": " << c.dram_bytes_written
     << ", \"l1_bytes_read_remote\": " << c.l1_bytes_read_remote
     << ", \"l1_bytes_written_remote\": " << c.l1_bytes_written_remote
     << ", \"noc_read_transactions\": " << c.noc_read_transactions
     << ", \"noc_write_transactions\": " << c.noc_write_transactions << ", \"read_barriers\": " << c.read_barriers
     << ", \"write_barriers\": " << c.write_barriers << ", \"cb_stall_events\": " << c.cb_stall_events
     << ", \"dst_acquires\": " << c.dst_acquires << ", \"tile_ops\": {";
  bool first = true;
  for (const auto& [k, v] : c.tile_ops) {
    os << (first ? "" : ", ") << "\"" << k << "\": " << v;
    first = false;
  }
  os << "}";
}
// The "timing" object of counters_json (timing.hpp):
//   {"arch", "clock_hz", "cycles", "seconds", "critical_path_cycles", "dram_cycles", "bound",
//    "critical_thread": {"core": [x, y], "role"} (the RISC-V with the largest final clock: "reader",
//                       "writer", "unpack", "math" or "pack"),
//    "cores": [{"core": [x, y], "reader": {"busy", "stall", "end", "start"}, "unpack": {...}, "math": {...},
//               "pack": {...}, "writer": {...}, "compute": {...}}]}
// start: when the kernel began on that RISC-V (after the firmware's initialisation: start_kernel), so
// end = start + busy + stall. "compute" sums up a compute kernel's three TRISCs: busy = the busiest one's
// busy cycles, end = the last one's final clock, stall = end - start - busy.
// cycles = max(critical_path_cycles, dram_cycles): the critical path is the largest final clock of
// any RISC-V; dram_cycles = the earliest the DRAM can have served every transfer of the launch, all banks
// together at the arch's measured bandwidth or each bank at its share of it (dram_bank_cycles; timing::
// dram_served: a transfer is served no earlier than its issue).
// A RISC-V without a kernel on a core reports zeros.
// bound: "dram" when dram_cycles >= critical_path_cycles. Otherwise, on the critical core (the core of
// the RISC-V with the largest final clock; first in core order on a tie), the largest of
//   compute = the busiest TRISC's busy cycles,
//   noc     = max over reader / writer of busy + NOC-barrier stall (moving data),
//   sync    = the largest semaphore-wait stall of its RISC-Vs (waiting for other cores),
// first in that order on a tie. CB stalls are not a class of their own: they are the time a RISC-V
// waits for a neighbour on its core, which the neighbour's class accounts for.
void timing_json(std::ostringstream& os, const DeviceImpl& d, const Counters& total) {
  const ArchSpec& a = d.arch;
  constexpr Risc kTriscs[] = {Risc::Unpack, Risc::Math, Risc::Pack};
  const auto at = [](const auto& tms, Risc r) -> const std::optional<ThreadTiming>& { return tms[static_cast<size_t>(r)]; };
  uint64_t critical = 0;
  size_t critical_core = 0;
  Risc critical_risc = Risc::Math;
  for (size_t i = 0; i < d.last_timing.size(); ++i)
    for (size_t r = 0; r < kRiscs; ++r) {
      const auto& tm = d.last_timing[i][r];
      if (tm && tm->clock > critical) {
        critical = tm->clock;
        critical_core = i;
        critical_risc = static_cast<Risc>(r);
      }
    }
  // DRAM: all banks together at the measured bandwidth, and each bank at its share of it (timing.hpp)
  const double dram_rate = a.dram_bytes_per_s / a.clock_hz;
  std::vector<std::vector<DramTransfer>> by_bank(a.dram_banks);
  for (const DramTransfer& x : d.last_dram) by_bank[x.bank % a.dram_banks].push_back(x);
  uint64_t bank_cycles = 0;
  for (const auto& transfers : by_bank)
    bank_cycles = std::max(bank_cycles, timing::dram_served(transfers, dram_rate / a.dram_banks));
  const uint64_t dram = std::max({timing::dram_cycles(a, total.dram_bytes_read + total.dram_bytes_written),
                                  timing::dram_served(d.last_dram, dram_rate), bank_cycles});
  const uint64_t cycles = std::max(critical, dram);
  const auto trisc_busy = [&](const auto& tms) {
    uint64_t busy = 0;
    for (Risc r : kTriscs)
      if (at(tms, r)) busy = std::max(busy, at(tms, r)->busy);
    return busy;
  };
  const char* bound = "compute";
  if (d.last_timing.empty()) {
    bound = "compute";
  } else if (dram >= critical) {
    bound = "dram";
  } else {
    const auto& tms = d.last_timing[critical_core];
    const uint64_t compute = trisc_busy(tms);
    uint64_t noc = 0, sync = 0;
    for (const auto& tm : tms) {
      if (!tm) continue;
      sync = std::max(sync, tm->sem_stall);
    }
    for (Risc r : {Risc::Reader, Risc::Writer}) {
      const auto& tm = at(tms, r);
      if (tm) noc = std::max(noc, tm->busy + tm->noc_stall);
    }
    bound = compute >= noc && compute >= sync ? "compute" : noc >= sync ? "noc" : "sync";
  }
  char secs[64];
  std::snprintf(secs, sizeof secs, "%.9g", static_cast<double>(cycles) / a.clock_hz);
  os << "{\"arch\": \"" << d.arch.name << "\", \"clock_hz\": " << static_cast<uint64_t>(a.clock_hz)
     << ", \"cycles\": " << cycles << ", \"seconds\": " << secs << ", \"critical_path_cycles\": " << critical
     << ", \"dram_cycles\": " << dram << ", \"dram_bank_cycles\": " << bank_cycles << ", \"bound\": \"" << bound
     << "\"";
  if (fabric_config() != 0) {
    // The fabric links leaving this chip in the launch (fabric.cpp): each one's packets, bytes, busy cycles and
    // when it finished its last packet.
    uint64_t links_end = 0;
    const std::string links = fabric_links_json(d.index, links_end);
    os << ", \"links\": " << links << ", \"links_end\": " << links_end;
  }
  if (!d.last_timing.empty())
    os << ", \"critical_thread\": {\"core\": [" << d.last_cores[critical_core].x << ", "
       << d.last_cores[critical_core].y << "], \"role\": \"" << risc_name(critical_risc) << "\"}";
  const auto entry = [&os](const char* name, uint64_t busy, uint64_t stall, uint64_t end, uint64_t start) {
    os << ", \"" << name << "\": {\"busy\": " << busy << ", \"stall\": " << stall << ", \"end\": " << end
       << ", \"start\": " << start << "}";
  };
  os << ", \"cores\": [";
  for (size_t i = 0; i < d.last_timing.size(); ++i) {
    const auto& tms = d.last_timing[i];
    os << (i ? ", " : "") << "{\"core\": [" << d.last_cores[i].x << ", " << d.last_cores[i].y << "]";
    for (Risc r : {Risc::Reader, Risc::Unpack, Risc::Math, Risc::Pack, Risc::Writer}) {
      const auto& tm = at(tms, r);
      entry(risc_name(r), tm ? tm->busy : 0, tm ? tm->stall : 0, tm ? tm->clock : 0, tm ? tm->start : 0);
    }
    uint64_t end = 0;
    for (Risc r : kTriscs)
      if (at(tms, r)) end = std::max(end, at(tms, r)->clock);
    const uint64_t busy = trisc_busy(tms);
    uint64_t start = 0;
    for (Risc r : kTriscs)
      if (at(tms, r)) start = at(tms, r)->start;
    entry("compute", busy, end - start - busy, end, start);
    os << "}";
  }
  os << "]}";
}

}  // namespace

// ---------------------------------------------------------------- Device
Device::Device(std::unique_ptr<DeviceImpl> impl) : impl_(std::move(impl)) {}

Device& Device::open(const std::string& arch) {
  open_mesh(arch, 1);
  return *g_device;
}

void Device::open_mesh(const std::string& arch, uint32_t count) {
  if (!g_devices.empty()) throw EmulatorError("a device is already open");
  if (count == 0) throw EmulatorError("a mesh of no devices");
  const auto state = std::make_shared<LaunchState>();  // the mesh's devices block, wake and launch together
  for (uint32_t i = 0; i < count; ++i) {
    auto impl = std::make_unique<DeviceImpl>(state);
    impl->index = i;
    impl->arch = arch_spec(arch);
    const ArchSpec& a = impl->arch;
    const size_t n = static_cast<size_t>(a.grid_x) * a.grid_y;
    // One mapping below 2 GiB for all L1s so kernel L1 addresses fit in uint32_t.
    void* mem = mmap(nullptr, n * a.l1_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
    if (mem == MAP_FAILED) {
      throw EmulatorError("cannot map the L1 memory of device " + std::to_string(i) + " below 2 GiB");
    }
    for (uint32_t y = 0; y < a.grid_y; ++y)
      for (uint32_t x = 0; x < a.grid_x; ++x) {
        auto c = std::make_unique<Core>();
        c->logical = {x, y};
        c->l1 = static_cast<uint8_t*>(mem) + (static_cast<size_t>(y) * a.grid_x + x) * a.l1_size;
        c->l1_top = a.l1_unreserved_base;
        impl->cores.push_back(std::move(c));
      }
    impl->dram.resize(a.dram_banks);
    impl->dram_top = kDramUnreservedBase;
    impl->l1_buffers_bottom = static_cast<uint32_t>(a.l1_size);
    g_devices.push_back(new Device(std::move(impl)));
  }
  g_device = g_devices.front();
}

DeviceImpl& device_impl(uint32_t index) {
  if (index >= g_devices.size())
    throw EmulatorError("chip " + std::to_string(index) + " of a mesh of " + std::to_string(g_devices.size()));
  return g_devices[index]->impl();
}

uint32_t Device::count() { return static_cast<uint32_t>(g_devices.size()); }

void Device::select(uint32_t i) {
  if (i >= g_devices.size()) {
    throw EmulatorError("device " + std::to_string(i) + " of a mesh of " + std::to_string(g_devices.size()));
  }
  g_device = g_devices[i];
}

Device& Device::get() {
  if (g_device == nullptr) throw EmulatorError("no device is open (call Device::open first)");
  return *g_device;
}

void Device::close() {
  g_devices.erase(std::find(g_devices.begin(), g_devices.end(), this));
  g_device = g_devices.empty() ? nullptr : g_devices.front();
  if (impl_->stranded) {
    (void)impl_.release();  // kernel threads a launch left running still use the device's state and L1
  } else {
    const ArchSpec& a = impl_->arch;
    munmap(impl_->cores.front()->l1, static_cast<size_t>(a.grid_x) * a.grid_y * a.l1_size);
  }
  delete this;
}

const std::string& Device::arch() const { return impl_->arch.name; }
uint32_t Device::grid_x() const { return impl_->arch.grid_x; }
uint32_t Device::grid_y() const { return impl_->arch.grid_y; }
uint32_t Device::num_dram_banks() const { return impl_->arch.dram_banks; }
uint64_t Device::l1_size() const { return impl_->arch.l1_size; }
uint32_t Device::l1_alignment() const { return impl_->arch.l1_alignment; }
uint32_t Device::dram_alignment() const { return impl_->arch.dram_alignment; }
uint32_t Device::l1_unreserved_base() const { return impl_->arch.l1_unreserved_base; }
uint32_t Device::num_circular_buffers() const { return impl_->arch.num_cbs; }

CoreXY Device::worker_noc_coord(CoreXY logical) const {
  impl_->core(logical);
  return {logical.x + kWorkerNocOrigin, logical.y + kWorkerNocOrigin};
}

uint64_t Device::allocate_dram(uint64_t size_bytes, uint32_t page_size) {
  if (page_size == 0) throw EmulatorError("allocate_dram: page_size must be positive");
  DeviceImpl& d = *impl_;
  const uint64_t aligned = align_up(page_size, d.arch.dram_alignment);
  const uint64_t pages = (size_bytes + page_size - 1) / page_size;
  const uint64_t per_bank = (pages + d.arch.dram_banks - 1) / d.arch.dram_banks * aligned;
  const uint64_t base = d.dram_top;
  if (base + per_bank > d.arch.dram_bank_size)
    throw EmulatorError("allocate_dram: out of DRAM (" + std::to_string(size_bytes) + " bytes requested)");
  d.dram_top = align_up(base + per_bank, d.arch.dram_alignment);
  for (auto& bank : d.dram) bank.resize(d.dram_top);
  d.dram_buffers[base] = {size_bytes, page_size};
  return base;
}

namespace {
template <class Copy>
void for_each_page(DeviceImpl& d, uint64_t base, uint64_t bytes, const char* what, Copy copy) {
  const auto it = d.dram_buffers.find(base);
  if (it == d.dram_buffers.end()) throw EmulatorError(std::string(what) + ": no DRAM buffer at this address");
  if (bytes > it->second.size) throw EmulatorError(std::string(what) + ": more bytes than the buffer holds");
  const uint32_t page = it->second.page_size;
  const uint64_t aligned = align_up(page, d.arch.dram_alignment);
  for (uint64_t off = 0, i = 0; off < bytes; off += page, ++i) {
    const uint64_t n = std::min<uint64_t>(page, bytes - off);
    copy(d.dram[i % d.arch.dram_banks].data() + base + (i / d.arch.dram_banks) * aligned, off, n);
  }
}
}  // namespace

void Device::write_buffer(uint64_t base, const void* src, uint64_t bytes) {
  const auto* s = static_cast<const uint8_t*>(src);
  for_each_page(*impl_, base, bytes, "write_buffer",
                [&](uint8_t* bank, uint64_t off, uint64_t n) { std::memcpy(bank, s + off, n); });
}

void Device::read_buffer(uint64_t base, void* dst, uint64_t bytes) {
  auto* d = static_cast<uint8_t*>(dst);
  for_each_page(*impl_, base, bytes, "read_buffer",
                [&](uint8_t* bank, uint64_t off, uint64_t n) { std::memcpy(d + off, bank, n); });
}

uint64_t Device::allocate_dram_banks(uint64_t bytes_per_bank) {
  DeviceImpl& d = *impl_;
  const uint64_t base = d.dram_top;
  if (bytes_per_bank == 0 || base + bytes_per_bank > d.arch.dram_bank_size)
    throw EmulatorError("allocate_dram_banks: cannot allocate " + std::to_string(bytes_per_bank) +
                        " bytes in every DRAM bank");
  d.dram_top = align_up(base + bytes_per_bank, d.arch.dram_alignment);
  for (auto& bank : d.dram) bank.resize(d.dram_top);
  return base;
}

uint32_t Device::allocate_l1(uint64_t bytes_per_core) {
  DeviceImpl& d = *impl_;
  const uint64_t size = align_up(bytes_per_core, l1_alignment());
  if (bytes_per_core == 0 || size > d.l1_buffers_bottom - d.arch.l1_unreserved_base)
    throw EmulatorError("allocate_l1: L1 overflow: " + std::to_string(bytes_per_core) +
                        " bytes per core do not fit between the unreserved L1 base " +
                        std::to_string(d.arch.l1_unreserved_base) + " and the L1 buffers at L1 offset " +
                        std::to_string(d.l1_buffers_bottom));
  d.l1_buffers_bottom -= static_cast<uint32_t>(size);
  return d.l1_buffers_bottom;
}

uint8_t* Device::l1_data(CoreXY core, uint32_t addr, uint64_t bytes) {
  DeviceImpl& d = *impl_;
  Core& c = d.core(core);
  if (addr + bytes > d.arch.l1_size)
    throw EmulatorError(std::to_string(bytes) + " bytes at L1 offset " + std::to_string(addr) +
                        " exceed the L1 of core (" + std::to_string(core.x) + "," + std::to_string(core.y) + ")");
  return c.l1 + addr;
}

uint8_t* Device::dram_bank_data(uint32_t bank, uint64_t addr, uint64_t bytes) {
  if (uint8_t* p = impl_->dram_ptr(bank, addr, bytes)) return p;
  throw EmulatorError(std::to_string(bytes) + " bytes at address " + std::to_string(addr) + " of DRAM bank " +
                      std::to_string(bank) + " are outside every allocated buffer");
}

void Device::add_cb(CoreXY core, uint32_t cb_index, uint32_t total_size, uint32_t page_size, DataFormat fmt,
                    int32_t shares_l1_of) {
  DeviceImpl& d = *impl_;
  Core& c = d.core(core);
  const std::string at = "core (" + std::to_string(core.x) + "," + std::to_string(core.y) + ") CB " +
                         std::to_string(cb_index);
  if (cb_index >= d.arch.num_cbs)
    throw EmulatorError(at + ": index out of range (" + d.arch.name + " has " + std::to_string(d.arch.num_cbs) +
                        " CBs)");
  CB& cb = c.cbs[cb_index];
  if (cb.configured) throw EmulatorError(at + ": configured twice");
  if (page_size == 0 || total_size == 0 || total_size % page_size != 0)
    throw EmulatorError(at + ": total size " + std::to_string(total_size) + " is not a positive multiple of page size " +
                        std::to_string(page_size));
  if (shares_l1_of >= 0) {
    const CB* owner = static_cast<uint32_t>(shares_l1_of) < d.arch.num_cbs ? &c.cbs[shares_l1_of] : nullptr;
    if (owner == nullptr || !owner->configured || owner->size != total_size)
      throw EmulatorError(at + ": shares the L1 of CB " + std::to_string(shares_l1_of) +
                          ", which is not a configured CB of the same total size on this core");
  }
  // A CB starts at a multiple of the DRAM alignment, so that its pages can be read from and written to DRAM
  // (tt-metal 0.81.1 tt_metal/impl/program/program.cpp, ProgramImpl::allocate_circular_buffers:
  // computed_addr = align(computed_addr, allocator()->get_alignment(BufferType::DRAM))).
  const uint64_t offset = shares_l1_of >= 0 ? c.cbs[shares_l1_of].offset
                                            : align_up(c.l1_top, std::max(d.arch.l1_alignment, d.arch.dram_alignment));
  if (offset + total_size > d.l1_buffers_bottom) {
    const bool buffers = d.l1_buffers_bottom < d.arch.l1_size;
    throw EmulatorError(at + ": L1 overflow: " + std::to_string(total_size) + " bytes at L1 offset " +
                        std::to_string(offset) + " reach " +
                        (buffers ? "the L1 buffers allocated top-down from L1 offset " +
                                       std::to_string(d.l1_buffers_bottom)
                                 : "the end of the " + std::to_string(d.arch.l1_size) + "-byte L1") +
                        " (" + std::to_string(offset < d.l1_buffers_bottom ? d.l1_buffers_bottom - offset : 0) +
                        " bytes left)");
  }
  cb.configured = true;
  cb.index = cb_index;
  cb.offset = static_cast<uint32_t>(offset);
  cb.size = total_size;
  cb.page_size = page_size;
  cb.num_pages = total_size / page_size;
  cb.fmt = fmt;
  if (shares_l1_of < 0) c.l1_top = static_cast<uint32_t>(offset + total_size);
}

uint32_t Device::add_semaphore(CoreXY core, uint32_t initial_value) {
  return add_semaphore(std::vector<CoreXY>{core}, initial_value);
}

uint32_t Device::add_semaphore(const std::vector<CoreXY>& cores, uint32_t initial_value) {
  DeviceImpl& d = *impl_;
  uint32_t id = 0;
  for (const CoreXY& xy : cores) id = std::max(id, d.core(xy).num_semaphores);
  if (id >= 16) throw EmulatorError("add_semaphore: more than 16 semaphores on a core");
  for (const CoreXY& xy : cores) {
    Core& c = d.core(xy);
    c.semaphore_init.resize(id + 1, 0);
    c.semaphore_init[id] = initial_value;
    c.num_semaphores = id + 1;
  }
  return id;
}

uint32_t Device::add_kernel(const std::string& source_name, KernelRole role, const std::vector<CoreXY>& cores,
                            const std::vector<uint32_t>& compile_args, uint8_t noc, ComputeOptions opts) {
  const KernelInfo* info = find_kernel(source_name);
  if (info == nullptr) throw EmulatorError("add_kernel: no kernel registered for '" + source_name + "'");
  const uint32_t id = add_kernel(*info, source_name, role, cores, compile_args, noc, std::move(opts));
  impl_->kernels[id]->compiled_in = true;
  return id;
}

uint32_t Device::add_kernel(const KernelInfo& kernel_info, const std::string& source_name, KernelRole role,
                            const std::vector<CoreXY>& cores, const std::vector<uint32_t>& compile_args, uint8_t noc,
                            ComputeOptions opts) {
  DeviceImpl& d = *impl_;
  const KernelInfo* info = &kernel_info;
  if (info->compile_args != compile_args) {
    auto join = [](const std::vector<uint32_t>& v) {
      std::string s = "[";
      for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
      return s + "]";
    };
    throw EmulatorError("add_kernel: '" + source_name + "' was compiled with compile-time args " +
                        join(info->compile_args) + " but the program passes " + join(compile_args));
  }
  // APPROX is a constant of the compute kernel's build (tt-metal's JIT writes ComputeConfig::math_approx_mode into
  // its chlkc_descriptors.h): a build for the other value computes the other SFPU approximations.
  if (role == KernelRole::Compute && info->math_approx_mode != opts.math_approx_mode) {
    auto name = [](bool b) { return std::string(b ? "true" : "false"); };
    throw EmulatorError("add_kernel: '" + source_name + "' was compiled with APPROX = " + name(info->math_approx_mode) +
                        " (-DTT_EMU_MATH_APPROX_MODE) but the program's ComputeConfig::math_approx_mode is " +
                        name(opts.math_approx_mode));
  }
  // noc_index is a constant of a data-movement kernel's build (NOC_INDEX, device_types.hpp): a build for the
  // other NOC sees the other noc_index.
  if (role != KernelRole::Compute && info->noc_index != noc) {
    throw EmulatorError("add_kernel: '" + source_name + "' was compiled with NOC_INDEX = " +
                        std::to_string(info->noc_index) + " (its noc_index) but the program's DataMovementConfig::noc is " +
                        std::to_string(noc));
  }
  // tt-metal's JIT build indexes unpack_to_dest_mode by every CB id of the arch (get_unpack_dst_formats:
  // unpack_to_dest_mode.size() >= the number of CBs); longer vectors (NUM_CIRCULAR_BUFFERS = 64 on the
  // host) are fine.
  const size_t modes = opts.unpack_to_dest_fp32.size();
  if (modes != 0 && modes < d.arch.num_cbs)
    throw EmulatorError("add_kernel: '" + source_name + "': ComputeConfig::unpack_to_dest_mode has " +
                        std::to_string(modes) + " entries but " + d.arch.name + " has " +
                        std::to_string(d.arch.num_cbs) +
                        " circular buffers: give it one entry per CB index (size NUM_CIRCULAR_BUFFERS), or none "
                        "for all Default");
  const uint32_t id = static_cast<uint32_t>(d.kernels.size());
  for (const CoreXY& xy : cores) {
    Core& c = d.core(xy);
    int& slot = c.kernel_of_role[static_cast<int>(role)];
    if (slot >= 0)
      throw EmulatorError("add_kernel: core (" + std::to_string(xy.x) + "," + std::to_string(xy.y) +
                          ") already has a " + kernel_role_name(role) + " kernel");
    slot = static_cast<int>(id);
  }
  auto k = std::make_unique<KernelInstance>();
  k->info = info;
  k->source_name = basename_of(source_name.c_str());
  k->role = role;
  k->cores = cores;
  k->opts = opts;
  d.kernels.push_back(std::move(k));
  return id;
}

void Device::set_runtime_args(uint32_t kernel_id, CoreXY core, std::vector<uint32_t> args) {
  DeviceImpl& d = *impl_;
  if (kernel_id >= d.kernels.size()) throw EmulatorError("set_runtime_args: unknown kernel id");
  KernelInstance& k = *d.kernels[kernel_id];
  if (std::find(k.cores.begin(), k.cores.end(), core) == k.cores.end())
    throw EmulatorError("set_runtime_args: kernel '" + k.source_name + "' does not run on core (" +
                        std::to_string(core.x) + "," + std::to_string(core.y) + ")");
  k.runtime_args[{core.x, core.y}] = std::move(args);
}

void Device::set_common_runtime_args(uint32_t kernel_id, std::vector<uint32_t> args) {
  DeviceImpl& d = *impl_;
  if (kernel_id >= d.kernels.size()) throw EmulatorError("set_common_runtime_args: unknown kernel id");
  d.kernels[kernel_id]->common_args = std::move(args);
}

void Device::launch() { launch_mesh({this}); }

namespace {
// One device's part of a launch: its kernel threads, made ready to run (prepare_launch), and the cores they use.
struct DeviceLaunch {
  Device* device;
  DeviceImpl* dev;
  std::vector<std::unique_ptr<ThreadCtx>> ctxs;
  std::vector<Core*> used;
};

void prepare_launch(DeviceLaunch& l) {
  DeviceImpl& d = *l.dev;
  auto& ctxs = l.ctxs;
  auto& used = l.used;
  const uint32_t sem_base = d.arch.l1_unreserved_base - 16 * 16;  // 16 semaphores below the CB region
  for (auto& cp : d.cores) {
    Core& c = *cp;
    bool any = false;
    for (int r = 0; r < 3; ++r) {
      if (c.kernel_of_role[r] < 0) continue;
      any = true;
      const KernelInstance& k = *d.kernels[c.kernel_of_role[r]];
      auto t = std::make_unique<ThreadCtx>();
      t->dev = &d;
      t->core = &c;
      t->kernel = &k;
      t->tracing = d.tracing;
      const auto it = k.runtime_args.find({c.logical.x, c.logical.y});
      static const std::vector<uint32_t> kNoArgs;
      t->args = it == k.runtime_args.end() ? &kNoArgs : &it->second;
      start_kernel(*t);
      ctxs.push_back(std::move(t));
    }
    if (!any) continue;
    used.push_back(&c);
    for (auto& cb : c.cbs) {
      cb.pushed = cb.popped = 0;
      cb.wr_page = cb.rd_page = cb.reserved = cb.waited = cb.packed = 0;
      cb.producer.clear();
      cb.consumer.clear();
      cb.push_time.assign(cb.num_pages, 0);
      cb.pop_time.assign(cb.num_pages, 0);
    }
    for (uint32_t i = 0; i < c.num_semaphores; ++i)
      std::memcpy(c.l1 + sem_base + 16 * i, &c.semaphore_init[i], 4);
    std::memset(c.l1 + zeros_offset(d.arch), 0, kMemZerosSize);
  }
  d.sem_timing.clear();
}

// Counters, timing and trace of one device's part of a launch that ran, and its end-of-program checks.
void collect_launch(DeviceLaunch& l) {
  DeviceImpl& d = *l.dev;
  auto& ctxs = l.ctxs;
  auto& used = l.used;
  // Counters per used core.
  d.last_cores.clear();
  d.last_counters.clear();
  d.last_timing.clear();
  d.last_spans.clear();
  d.last_dram.clear();
  for (auto& t : ctxs) d.last_dram.insert(d.last_dram.end(), t->dram_transfers.begin(), t->dram_transfers.end());
  std::stable_sort(d.last_dram.begin(), d.last_dram.end(),
                   [](const DramTransfer& x, const DramTransfer& y) { return x.at < y.at; });
  for (Core* c : used) {
    Counters sum;
    std::array<std::optional<ThreadTiming>, kRiscs> tm;
    std::array<std::vector<TraceSpan>, kRiscs> spans;
    const auto keep = [&](Risc r, RiscClock& clock) {
      tm[static_cast<size_t>(r)] = clock.tm;
      spans[static_cast<size_t>(r)] = std::move(clock.spans);
    };
    for (auto& t : ctxs)
      if (t->core == c) {
        sum.add(t->counters);
        switch (t->kernel->role) {
          case KernelRole::Reader: keep(Risc::Reader, t->main); break;
          case KernelRole::Writer: keep(Risc::Writer, t->main); break;
          case KernelRole::Compute:
            keep(Risc::Unpack, t->unpack);
            keep(Risc::Math, t->main);
            keep(Risc::Pack, t->pack);
            break;
        }
      }
    d.last_cores.push_back(c->logical);
    d.last_counters.push_back(std::move(sum));
    d.last_timing.push_back(tm);
    d.last_spans.push_back(std::move(spans));
  }
  if (d.aborting) throw EmulatorError(d.error);
  // Leaks: unconsumed pages, reservations never pushed, NOC transactions never barriered.
  std::ostringstream leaks;
  for (Core* c : used)
    for (const CB& cb : c->cbs) {
      if (!cb.configured) continue;
      const std::string at = "core (" + std::to_string(c->logical.x) + "," + std::to_string(c->logical.y) + ") CB " +
                             std::to_string(cb.index);
      // Pages the consumer waited for and kept are consumed (ttnn's SDPA compute kernel waits for its scaler tiles
      // once and reads them to the end: tt-metal requires no pop); pages its consumer did not wait for leak. A CB no
      // kernel of the core ever read (no wait, no pop) is not reported: a core without work whose writer still
      // pushed its constant tiles (ttnn's causal SDPA leaves half the grid idle) leaves them as tt-metal does.
      const bool read = !cb.consumer.empty() || cb.waited > 0;
      if (read && cb.pushed - cb.popped > cb.waited)
        leaks << "  " << at << ": " << (cb.pushed - cb.popped - cb.waited) << " page(s) pushed"
              << (cb.producer.empty() ? "" : " by '" + cb.producer + "'") << " were never popped\n";
    }
  for (auto& t : ctxs) {
    if (!t->pending_reads.empty())
      leaks << "  " << who(*t) << ": " << t->pending_reads.size()
            << " NOC read(s) never completed by noc_async_read_barrier (first at line "
            << t->pending_reads.front().line << ")\n";
    if (!t->pending_writes.empty())
      leaks << "  " << who(*t) << ": " << t->pending_writes.size()
            << " NOC write(s) never completed by noc_async_write_barrier (first at line "
            << t->pending_writes.front().line << ")\n";
  }
  const std::string leaked = leaks.str();
  if (!leaked.empty()) throw EmulatorError("leak at end of program:\n" + leaked.substr(0, leaked.size() - 1));
  d.launch_counters.push_back(l.device->counters_json());
}
}  // namespace

void Device::launch_mesh(const std::vector<Device*>& devices) {
  if (devices.empty()) return;
  DeviceImpl& first = *devices.front()->impl_;
  std::vector<DeviceLaunch> parts;
  for (Device* device : devices) {
    DeviceImpl& d = *device->impl_;
    if (d.launch_state != first.launch_state)
      throw EmulatorError("devices launched together must be of one mesh (Device::open_mesh)");
    if (d.stranded)
      throw EmulatorError("the device cannot launch again: kernel threads of an earlier launch are still running "
                          "(its error named them)");
    parts.push_back({device, &d, {}, {}});
    prepare_launch(parts.back());
  }
  LaunchState& s = *first.launch_state;
  s.threads.clear();
  s.cores_used = 0;
  for (DeviceLaunch& l : parts) {
    for (auto& t : l.ctxs) s.threads.push_back(t.get());
    s.cores_used += static_cast<uint32_t>(l.used.size());
  }
  s.live = static_cast<uint32_t>(s.threads.size());
  s.blocked = 0;
  s.cores_finished = 0;
  first.report_progress_locked();  // no kernel thread runs yet
  s.aborting = false;
  s.error.clear();
  fabric_begin_launch();
  {
    std::vector<std::thread> pool;
    pool.reserve(s.threads.size());
    for (ThreadCtx* tp : s.threads) pool.emplace_back([tp] { tp->dev->run_thread(*tp); });
    std::vector<bool> left(s.threads.size());
    {
      std::unique_lock lk(s.mu);
      first.supervise(lk);
      for (size_t i = 0; i < s.threads.size(); ++i) left[i] = !s.threads[i]->finished;
    }
    for (size_t i = 0; i < pool.size(); ++i) {
      if (left[i]) pool[i].detach();  // supervise stranded it
      else pool[i].join();
    }
    if (s.stranded) {
      // The threads left running use their contexts, the launch's thread list (s.threads) and the devices:
      // none of them is freed.
      for (DeviceLaunch& l : parts)
        for (auto& t : l.ctxs) (void)t.release();
      std::lock_guard g(s.error_mu);
      throw EmulatorError(s.error);
    }
  }
  for (DeviceLaunch& l : parts) collect_launch(l);
}

void Device::set_timing_only(bool on) { impl_->timing_only = on; }

void Device::set_stall_limit(double seconds) { impl_->stall_limit = std::chrono::duration<double>(seconds); }

void Device::set_progress_fd(int fd) { impl_->progress_fd = fd; }

std::string Device::counters_json() const {
  const DeviceImpl& d = *impl_;
  std::ostringstream os;
  os << "{\"cores\": [";
  Counters total;
  for (size_t i = 0; i < d.last_cores.size(); ++i) {
    os << (i ? ", " : "") << "{\"core\": [" << d.last_cores[i].x << ", " << d.last_cores[i].y << "], ";
    counters_fields(os, d.last_counters[i]);
    os << "}";
    total.add(d.last_counters[i]);
  }
  os << "], \"total\": {";
  counters_fields(os, total);
  os << "}, \"timing\": ";
  timing_json(os, d, total);
  os << "}";
  return os.str();
}

std::string Device::run_counters_json() const {
  const DeviceImpl& d = *impl_;
  if (d.launch_counters.size() < 2) return counters_json();
  std::string json = "{\"launches\": [";
  for (size_t i = 0; i < d.launch_counters.size(); ++i) json += (i ? ", " : "") + d.launch_counters[i];
  return json + "]}";
}

void Device::reset_program() {
  DeviceImpl& d = *impl_;
  for (auto& c : d.cores) {
    c->cbs = {};
    c->l1_top = d.arch.l1_unreserved_base;
    c->num_semaphores = 0;
    c->semaphore_init.clear();
    c->kernel_of_role = {-1, -1, -1};
  }
  d.kernels.clear();
  d.last_cores.clear();
  d.last_counters.clear();
  d.last_timing.clear();
  d.last_spans.clear();
}

namespace k {

// tt-metal 0.81.1 addresses workers in virtual (translated) coordinates, one system for both NOCs: the
// firmware sets my_x[n] / my_y[n] from NOC n's NOC_ID_LOGICAL register, "Virtual X coordinate"
// (hw/inc/internal/tt-1xx/risc_common.h:40-44, 184-189; wormhole/noc/noc_parameters.h:150), and
// get_noc_addr(x, y, addr, noc) / the multicast descriptor pass x and y through DYNAMIC_NOC_X(noc, x) =
// NOC_0_X(noc, noc_size_x, x) = x on Wormhole and Blackhole alike (risc_common.h:23-24,
// wormhole/noc_nonblocking_api.h:27-28, blackhole/noc_nonblocking_api.h:45-46;
// internal/dataflow/noc_address_backend_xy.h:23-29): only the physical coordinates mirror per NOC
// (NOC_0_X_PHYS_COORD). The NIUs' translation tables map one coordinate to the same tile from either NOC
// (tt-isa-documentation WormholeB0/NoC/Coordinates.md, BlackholeA0/NoC/Coordinates.md, "Coordinate Translation":
// "Uniform coordinate system for both NoC #0 and NoC #1").
namespace {
uint32_t my_noc_coord(uint32_t noc, uint32_t logical, const char* array, Loc loc) {
  if (noc >= kNumNocs)
    protocol_error(loc, std::string(array) + "[" + std::to_string(noc) + "]: a core has " + std::to_string(kNumNocs) +
                            " NOCs (NUM_NOCS, my_x / my_y have an entry each)");
  return logical + kWorkerNocOrigin;
}
}  // namespace

uint32_t my_noc_x(uint32_t noc, Loc loc) { return my_noc_coord(noc, ctx(loc).core->logical.x, "my_x", loc); }
uint32_t my_noc_y(uint32_t noc, Loc loc) { return my_noc_coord(noc, ctx(loc).core->logical.y, "my_y", loc); }

}  // namespace k

}  // namespace emu
