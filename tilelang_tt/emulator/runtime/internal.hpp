// Internal state of the device model shared by its translation units (device.cpp, dataflow.cpp, the
// compute kernel's: compute.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <mutex>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "device.hpp"
#include "kernel_api.hpp"
#include "timing.hpp"

namespace emu {

constexpr uint32_t kTileHW = 1024;
constexpr uint32_t kMaxCBs = 64;     // capacity: no arch has more CBs
constexpr uint32_t kDstTiles = 16;   // capacity: no arch has more DST tiles
constexpr uint32_t kNocCoordBits = 6;
constexpr uint32_t kNocLocalBits = 36;
constexpr uint32_t kWorkerNocOrigin = 18;  // logical (x, y) -> NOC (x + 18, y + 18)
constexpr uint32_t kNumNocs = 2;  // NUM_NOCS: tt-metal 0.81.1 hw/inc/internal/tt-1xx/wormhole/noc/noc_parameters.h:22, blackhole/...:12

// One row of the architecture table, tilelang_tt/contract/arch.py (ARCHS), which the driver passes
// to device.cpp as the TT_EMU_ARCHS define.
struct ArchSpec {
  std::string name;
  uint32_t grid_x, grid_y;
  uint64_t l1_size;
  uint32_t l1_unreserved_base, l1_alignment;
  uint32_t dram_banks;
  uint64_t dram_bank_size;
  uint32_t dram_alignment, num_cbs, dst_tiles;
  // the timing model's figures (sources in contract/arch.py)
  double clock_hz, noc_bytes_per_cycle;
  uint64_t noc_latency, noc_issue, noc_max_packet, mcast_reserve, noc_hop;
  double dram_bytes_per_cycle;
  uint64_t dram_read_latency, dram_write_latency;
  double dram_bytes_per_s;
  bool unpackers_share_l1;
  uint64_t cb_config, ncrisc_kernel_copy;  // a kernel's start: per CB index, NCRISC's IRAM copy (timing.hpp)
};

// The two unpackers (tt-isa-documentation WormholeB0 TensixCoprocessor/Unpackers/README.md): unpacker 0
// moves data from L1 to SrcA or DST, unpacker 1 to SrcB.
enum class Unpacker : uint8_t { A, B };

// The bytes each unpacker reads from L1 for the current op (timing.hpp), as the op's tt-llk MOP reads
// them: each op records its own reads (all 0: the op unpacks nothing).
struct UnpackLoad {
  std::array<uint64_t, 2> bytes{};  // by Unpacker
  void add(Unpacker u, uint64_t n) { bytes[static_cast<size_t>(u)] += n; }
  // `datums` of a tile of `fmt` (a multiple of 16: whole face rows). A BFP format's datums come with one
  // shared exponent byte per 16 (UNPACR_Regular.md's functional model: DatumSizeBytes, and ReadL1Bytes of
  // one exponent byte every 16 datums), which its tile size holds too (Bfp8_b: 1024 + 64 bytes), so a
  // share of the tile's bytes is exact for every format.
  void read(Unpacker u, DataFormat fmt, uint32_t datums) { add(u, uint64_t(tile_size_bytes(fmt)) * datums / kTileHW); }
  bool empty() const { return bytes[0] == 0 && bytes[1] == 0; }
};

namespace timing {
// Cycles a transfer of `bytes` occupies a NOC port.
inline uint64_t noc_occupancy(const ArchSpec& a, uint64_t bytes) {
  return static_cast<uint64_t>(std::ceil(static_cast<double>(bytes) / a.noc_bytes_per_cycle));
}

// Cycles a transfer of `bytes` from or to DRAM occupies a NOC port: the core's DRAM rate, when it is
// below the NOC's.
inline uint64_t dram_occupancy(const ArchSpec& a, uint64_t bytes) {
  return static_cast<uint64_t>(
      std::ceil(static_cast<double>(bytes) / std::min(a.noc_bytes_per_cycle, a.dram_bytes_per_cycle)));
}

// Cycles a multicast packet waits for its path reservation: every router of the broadcast tree
// answers before data leaves, so a hop out and back per core of the rectangle's extent.
inline uint64_t mcast_reservation(const ArchSpec& a, uint64_t extent) { return a.mcast_reserve + 2 * a.noc_hop * extent; }

// Cycles the unpackers take for an op: its operands come in on the two unpackers side by side, each at
// up to 64 B/cycle, so the unpacker reading more sets the time; where the two share one 64 B/cycle L1
// read (Wormhole), the bytes both read do.
inline uint64_t unpack_op_cycles(const ArchSpec& a, const UnpackLoad& u) {
  const auto [srca, srcb] = u.bytes;
  return unpack_tile_cycles(a.unpackers_share_l1 ? srca + srcb : std::max(srca, srcb));
}

// Cycles a packet of `bytes` holds a fabric link, and a hop's latency (timing.hpp, "Fabric").
inline uint64_t link_cycles(const ArchSpec& a, uint64_t bytes) {
  return static_cast<uint64_t>(std::ceil(static_cast<double>(bytes) * a.clock_hz / kLinkBytesPerSecond));
}
inline uint64_t link_latency(const ArchSpec& a) { return static_cast<uint64_t>(std::llround(kLinkHopSeconds * a.clock_hz)); }

inline uint64_t dram_cycles(const ArchSpec& a, uint64_t bytes) {
  return static_cast<uint64_t>(std::ceil(static_cast<double>(bytes) * a.clock_hz / a.dram_bytes_per_s));
}

// One DRAM read or write as its thread issued it: the thread's clock at the issue, the bytes, the bank.
struct DramTransfer {
  uint64_t at;
  uint64_t bytes;
  uint32_t bank;
};

// The earliest DRAM can have served `transfers` (sorted by `at`) at `bytes_per_cycle`: no transfer is
// served before its issue, so for every issue time t the bytes issued at or after it take at least their
// size / rate from t (timing.hpp: DRAM contention). With every transfer at 0 it is the aggregate floor.
inline uint64_t dram_served(const std::vector<DramTransfer>& transfers, double bytes_per_cycle) {
  double served = 0, later = 0;
  for (size_t i = transfers.size(); i-- > 0;) {
    later += static_cast<double>(transfers[i].bytes);
    served = std::max(served, static_cast<double>(transfers[i].at) + later / bytes_per_cycle);
  }
  return static_cast<uint64_t>(std::ceil(served));
}

}  // namespace timing

using timing::DramTransfer;

// Reserved L1 below the CB region: 16 semaphores of 16 bytes, and below them the zero region
// (tt-metal's MEM_ZEROS_BASE / MEM_ZEROS_SIZE) kernels read zeros from.
constexpr uint32_t kMemZerosSize = 512;
inline uint32_t zeros_offset(const ArchSpec& a) { return a.l1_unreserved_base - 16 * 16 - kMemZerosSize; }
// Below the zero region, the fabric's packet header pool (tt-metal's MEM_PACKET_HEADER_POOL_BASE): a header
// slot of PACKET_HEADER_MAX_SIZE bytes, 4 directions x 2 x 2 data movement RISC-Vs of them, half each RISC-V's
// (hw/inc/internal/tt-1xx/wormhole/dev_mem_map.h:149-155, blackhole/dev_mem_map.h:167-174: 2304 bytes).
constexpr uint32_t kPacketHeaderSlot = 144;
constexpr uint32_t kPacketHeaderPoolSize = kPacketHeaderSlot * 4 * 2 * 2;
inline uint32_t packet_header_pool_offset(const ArchSpec& a) { return zeros_offset(a) - kPacketHeaderPoolSize; }

struct KernelInstance;

struct CB {
  bool configured = false;
  uint32_t index = 0;
  uint32_t offset = 0;  // L1 offset of the FIFO
  uint32_t size = 0, page_size = 0, num_pages = 0;
  DataFormat fmt = DataFormat::Float16_b;
  // Run-time state, reset at launch. Counters are in pages.
  uint64_t pushed = 0, popped = 0;
  uint32_t wr_page = 0, rd_page = 0;
  uint32_t reserved = 0;   // pages the producer may still push (max of outstanding reserves)
  uint32_t waited = 0;     // pages the consumer may still read/pop
  uint32_t packed = 0;     // sequential pack_tile position since the last push
  std::string producer, consumer;  // kernel source names seen pushing / popping
  // Is this CB an intermediate of the kernel `source` alone (it pushed the CB's pages and no other kernel popped
  // them)? tt-metal 0.81.1's CB calls check nothing (cb_api.h: llk_push_tiles / llk_pop_tiles move the pointers),
  // so such a kernel may republish pages it holds without a matching reserve or wait: ttnn's SDPA compute kernel
  // pops, packs and pushes its statistics in place (compute_common.hpp matmul_reduce, mul_block_bcast_cols with
  // L1 accumulation). Between two kernels the emulator keeps the protocol's checks.
  // Kernel files only (KernelInstance::compiled_in).
  bool own_intermediate(const KernelInstance& kernel) const;
  // Are the first `pages` pages from the write pointer free (none pushed and not yet popped)? A kernel file may pack
  // and push into free pages it did not reserve, as silicon lets it: in tt-metal 0.81.1 a reserve only waits
  // (llk_io_pack.h llk_wait_for_free_tiles: polls tiles_acked, writes no CB state), pack_tile writes at the write
  // pointer whether reserved or not (llk_pack_common_api.h get_output_tile_address: fifo_wr_ptr + fifo_wr_tile_ptr)
  // and a push advances it (llk_io_pack.h llk_push_tiles). ttnn's layernorm_large_tensor.cpp:387 packs into its
  // empty dfb::ex2pe so (kernel_lib chain.inl: ReservePolicy::None with PushPolicy::AtEnd). A page still held by a
  // consumer would be overwritten on silicon: that stays an error. Kernel files only (KernelInstance::compiled_in).
  bool free_unreserved(const KernelInstance& kernel, uint64_t pages) const;
  // Timing (timing.hpp): logical time each page was pushed / popped, by page sequence number modulo
  // num_pages (a slot is reused only after its previous page was popped / its previous reservation
  // pushed, which the CB protocol orders). Sized at launch.
  std::vector<uint64_t> push_time, pop_time;
};

struct Counters {
  uint64_t dram_bytes_read = 0, dram_bytes_written = 0;
  uint64_t l1_bytes_read_remote = 0, l1_bytes_written_remote = 0;
  uint64_t noc_read_transactions = 0, noc_write_transactions = 0;
  uint64_t read_barriers = 0, write_barriers = 0;
  // cb_reserve_back / cb_wait_front calls that waited in logical time (timing.hpp) for a slot popped or a
  // page pushed after the caller's clock
  uint64_t cb_stall_events = 0, dst_acquires = 0;
  std::map<std::string, uint64_t> tile_ops;
  void add(const Counters& o);
};

// One span of a thread's timeline for the trace (Device::trace_json): [start, end) in cycles, the API
// call that was busy (`stall` false) or what the thread waited for (`stall` true, "wait <call>"), and
// how many consecutive calls of that name, back to back, the span merges.
struct TraceSpan {
  uint64_t start, end;
  std::string name;
  uint32_t calls;
  bool stall;
  bool init = false;  // the firmware's initialisation before the kernel (device.cpp start_kernel)
};

// Logical clock of one kernel thread (timing.hpp). All in cycles.
struct ThreadTiming {
  uint64_t clock = 0, busy = 0, stall = 0;
  uint64_t start = 0;  // when the kernel itself begins: the firmware's initialisation before it (timing.hpp)
  uint64_t noc_stall = 0, sem_stall = 0;  // parts of stall: NOC barriers, semaphore waits
  // when the thread's NOC port is free again, per direction: read data flows into the core, write
  // data out of it (timing.hpp)
  uint64_t read_port_free = 0, write_port_free = 0;
  bool path_reserved = false;  // the last multicast on the write port was linked: it holds its path
  uint64_t reads_done = 0, writes_done = 0, writes_sent = 0;  // latest completion of issued transfers
};

// The RISC-Vs of a core whose clocks the timing model keeps (timing.hpp), in report order: the two
// data-movement RISC-Vs, by the role of their kernel, and a compute kernel's three TRISCs.
enum class Risc : uint8_t { Reader, Writer, Math, Unpack, Pack };
inline constexpr size_t kRiscs = 5;
const char* risc_name(Risc r);

// One RISC-V's clock and, when a trace is asked for, its timeline (in clock order).
struct RiscClock {
  ThreadTiming tm;
  std::vector<TraceSpan> spans;
};

// Timing record of one semaphore (an L1 word): the last set and the increments since.
struct SemTiming {
  uint64_t set_time = 0;
  std::vector<std::pair<uint64_t, uint32_t>> incs;  // (logical arrival time, increment)
};

struct KernelInstance {
  const KernelInfo* info;
  std::string source_name;
  KernelRole role;
  std::vector<CoreXY> cores;
  ComputeOptions opts;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<uint32_t>> runtime_args;  // (x, y) -> args
  std::vector<uint32_t> common_args;
  // Compiled into the program by the driver (a plan's kernels: tilelang-tt's generated code and hand-written
  // test kernels), not a kernel file built at launch. Compiled-in kernels keep every CB protocol check, also
  // on a CB only they use (CB::own_intermediate): the compiler's output is held to the reserve / push / wait /
  // pop discipline, which keeps a compute kernel's three TRISC threads ordered on silicon.
  bool compiled_in = false;
};

inline bool CB::own_intermediate(const KernelInstance& kernel) const {
  return !kernel.compiled_in && producer == kernel.source_name &&
         (consumer.empty() || consumer == kernel.source_name);
}

inline bool CB::free_unreserved(const KernelInstance& kernel, uint64_t pages) const {
  return !kernel.compiled_in && pushed - popped + pages <= num_pages;
}

// A Tensix semaphore (kernel_api.hpp t6_semaphore_*): its tokens, each the time it was posted, oldest first.
struct T6Semaphore {
  uint32_t max = 0;
  std::deque<uint64_t> tokens;
};

struct Core {
  CoreXY logical{};
  uint8_t* l1 = nullptr;  // host mapping below 2 GiB
  uint32_t l1_top = 0;    // next free L1 offset for CBs
  uint32_t num_semaphores = 0;
  std::vector<uint32_t> semaphore_init;
  std::array<T6Semaphore, 8> t6_sems;  // ckernel_structs.h semaphore::NUM_SEMAPHORES
  std::array<CB, kMaxCBs> cbs{};
  std::array<int, 3> kernel_of_role{-1, -1, -1};
  // The mailboxes between the core's RISC-Vs (tt-llk ckernel.h mailbox_write / mailbox_read), by sender and
  // receiver ThreadId (ckernel_defs.h: 0 BRISC, 1-3 the TRISCs): each message with the time it was written.
  std::array<std::array<std::deque<std::pair<uint32_t, uint64_t>>, 4>, 4> mailbox{};
  std::condition_variable cv;
  uint32_t l1_base_addr() const { return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(l1)); }
};

struct Range {
  uint32_t lo, hi;  // L1 offsets [lo, hi)
  uint32_t line;
  uint32_t trid = 0;  // the NoC transaction id the transfer carried (NocIds)
};

// NoC transaction ids (tt-metal 0.81.1 dataflow_api.h:2505-2745, noc_nonblocking_api.h): a read or write carries
// the id in its command buffer's NOC_PACKET_TAG register, which stays set until the next id is set (sticky,
// noc_nonblocking_api.h:1090-1094) and is 0 at kernel start (the firmware clears it: :220-226, "kernels that do not
// explicitly set transaction IDs ... use transaction ID 0"); a barrier with an id waits for that id's transfers only
// (NIU_MST_REQS_OUTSTANDING_ID / NIU_MST_WRITE_REQS_OUTGOING_ID). Ids 0..NOC_MAX_TRANSACTION_ID (0xF). The hardware
// counts per NOC of the core; the emulator per data-movement thread (each of SDPA's kernels owns its NOC).
struct NocIds {
  static constexpr uint32_t kCount = 16;
  uint32_t read_tag = 0, write_tag = 0;  // the sticky packet tags
  std::array<uint64_t, kCount> reads_done{}, writes_done{}, writes_sent{};  // per id: as ThreadTiming's
};

// What a blocked thread waits for (for the deadlock check and report).
struct WaitState {
  enum Kind : uint8_t { None, CbFront, CbBack, Semaphore, Mailbox } kind = None;  // Mailbox: cb = sender, wanted = receiver
  uint32_t cb = 0, wanted = 0;
  volatile uint32_t* sem = nullptr;
  bool at_least = false;
  std::source_location loc;
};

struct DstHalf {
  enum State : uint8_t { Free, Math, Committed, Pack } state = Free;
};

// An unpacker or packer mode a layout-conversion init leaves set until its uninit (or
// compute_kernel_hw_startup): tilize_init (block), untilize_init, pack_untilize_init /
// pack_untilize_dest_init (block = block_ct_dim, full = full_ct_dim).
struct LayoutMode {
  bool on = false;
  uint32_t block = 0, full = 0;
  uint32_t line = 0;  // source line of the init
};

// The matmul configuration of the last matmul_init / matmul_block_init (tt-metal api/compute/matmul.h):
// B's tiles transposed, and the output block (ct x rt tiles over kt) the unpacker's and math's loops
// were programmed for (llk_unpack_AB_matmul_init, llk_math_matmul_init); matmul_init is the 1x1x1 block.
// Which CB's data formats an unpacker (SrcA, SrcB) or the packer was last configured for, and by which call
// (compute_kernel_hw_startup, reconfig_data_format*, pack_reconfig_data_format, the *_with_dt inits, pack untilize's
// init and uninit: engine_formats.cpp); cb < 0 before the kernel's first such call.
struct EngineFormat {
  int cb = -1;
  const char* by = "";
  uint32_t line = 0;
};
enum class Engine : uint8_t { SrcA, SrcB, Pack };

struct MatmulMode {
  bool transpose = false;
  uint32_t ct = 1, rt = 1, kt = 1;
  uint32_t line = 0;  // source line of the init
};

struct ThreadCtx {
  class DeviceImpl* dev = nullptr;
  Core* core = nullptr;
  const KernelInstance* kernel = nullptr;
  const std::vector<uint32_t>* args = nullptr;
  Counters counters;
  std::vector<Range> pending_reads;   // local destinations of NOC reads not yet barriered
  std::vector<Range> pending_writes;  // local sources of NOC writes not yet barriered/flushed
  NocIds noc_ids;
  std::vector<DramTransfer> dram_transfers;  // in issue order (the thread's clock never goes back)
  WaitState wait;
  uint8_t next_trisc = 0;
  // The fabric (fabric.cpp): bytes of the RISC-V's packet header pool allocated, and per connection (its
  // ethernet channel) when each packet in the router's sender slots leaves them.
  uint32_t packet_headers = 0;
  std::map<uint32_t, std::deque<uint64_t>> fabric_slots;  // a compute kernel's mailbox reads: the TRISC (0 unpack, 1 math, 2 pack) reading next
  bool finished = false;
  // For the launch's watchdog (DeviceImpl::supervise): bumped by the thread whenever one of its clocks moves;
  // whether it sleeps in block_until (guarded by mu); the kernel API call it made last (ctx).
  std::atomic<uint64_t> heartbeat{0};
  bool blocked = false;
  std::atomic<std::source_location> last_call{};
  // Timing (timing.hpp). A data-movement kernel runs on one RISC-V: `main`. A compute kernel runs on
  // three, each with its own clock: `main` is TRISC1 (math), `unpack` TRISC0 and `pack` TRISC2.
  RiscClock main, unpack, pack;
  bool tracing = false;  // record the clocks' spans (set at launch when a trace is asked for)
  // compute timing: per DST half, when math committed it and when pack released it; per source
  // register bank (SrcA/SrcB are double-buffered), when math finished with what the unpacker put there
  std::array<uint64_t, 2> dst_committed{}, dst_released{}, src_freed{};
  uint32_t src_bank = 0;
  UnpackLoad unpacked;  // what the current op unpacked
  // compute state
  std::array<std::array<float, kTileHW>, kDstTiles> dst{};
  std::array<bool, kDstTiles> dst_fresh{};  // not written since tile_regs_acquire
  std::array<DstHalf, 2> halves{};
  uint32_t math_half = 0, pack_half = 0;  // next half to acquire / to wait for
  int math_owned = -1, pack_owned = -1;   // half currently held by math / pack, -1 none
  bool whole_dst = false;                 // inside acquire_dst/release_dst
  k::BinaryOp binary_op = k::BinaryOp::Add;
  bool binary_acc = false;
  MatmulMode mm;
  bool pack_l1_acc = false;  // pack_reconfig_l1_acc: the packer adds to what L1 holds
  bool pack_relu = false;    // pack_relu_config(ReluConfig::zero()): the packer packs max(x, 0)
  std::optional<k::RDim> pack_reduce_mask;  // reduce_init's packer edge masks, until reduce_uninit
  LayoutMode tilize_mode, untilize_mode, pack_untilize_mode;
  std::array<EngineFormat, 3> engine_formats;  // by Engine
  uint32_t dst_half() const;      // DST tiles of one buffer: half the arch's DST (SyncHalf), or all of it (SyncFull)
  uint32_t dst_buffers() const;   // DST buffers math and pack take turns on: 2 (SyncHalf), 1 (dst_full_sync_en)
  uint32_t dst_capacity() const;  // tiles one tile_regs_acquire holds (half of that again with fp32)
};

extern thread_local ThreadCtx* tls_ctx;

// How long a launch may go without progress (no kernel thread's clock moves, none ends) before its watchdog
// stops it (DeviceImpl::supervise; Device::set_stall_limit): far above any one kernel API call, and above
// what a loaded machine withholds from every thread of a process at once.
inline constexpr double kStallLimitSeconds = 10.0;

// The state of a launch, guarded by mu. Every change the API makes that a blocked kernel thread may wait for
// (CB pages pushed and popped, semaphores, the L1 the NOC calls and the fabric write, `aborting`) is made under
// mu and notified on the core's cv while mu is held, so a thread that checks its condition under mu and waits
// without letting mu go cannot miss it (block_until). A kernel's own store to its L1, which no call notifies,
// check_deadlock_locked and supervise find. The devices of a mesh share one (Device::open_mesh): with the fabric
// on, a mesh launch runs every chip's kernels at once (Device::launch_mesh) and a thread of one chip may wait for
// what a thread of another writes over the fabric (runtime/fabric.cpp), so they block, wake and are checked for
// deadlock together.
struct LaunchState {
  std::mutex mu;
  std::vector<ThreadCtx*> threads;
  uint32_t live = 0, blocked = 0;
  uint32_t cores_used = 0, cores_finished = 0;  // cores of the launch, and those whose every thread ended
  std::condition_variable ended;                // the last kernel thread of the launch ended (live == 0)
  std::atomic<bool> aborting{false};            // set with the launch's first error (record_error)
  bool stranded = false;  // a launch left kernel threads running (supervise): the devices run no other
  std::mutex error_mu;    // guards error (record_error runs with mu held or not)
  std::string error;
};

class DeviceImpl {
 public:
  ArchSpec arch;
  std::vector<std::unique_ptr<Core>> cores;  // index y * grid_x + x
  std::vector<std::vector<uint8_t>> dram;    // per bank
  struct DramBuffer { uint64_t size; uint32_t page_size; };
  std::map<uint64_t, DramBuffer> dram_buffers;
  uint64_t dram_top = 0;
  uint32_t l1_buffers_bottom = 0;  // lowest L1 buffer address (l1_size when there is none)
  std::vector<std::unique_ptr<KernelInstance>> kernels;
  std::vector<Counters> last_counters;  // per core, after launch
  std::vector<CoreXY> last_cores;
  // Per used core (parallel to last_cores), per RISC-V (Risc order): its final timing, or nothing when
  // the core ran no kernel on it.
  std::vector<std::array<std::optional<ThreadTiming>, kRiscs>> last_timing;
  std::vector<DramTransfer> last_dram;  // every DRAM transfer of the last launch, sorted by issue time
  // The trace (Device::set_tracing): whether launches record each clock's spans, and the last
  // launch's, parallel to last_timing.
  bool tracing = false;
  std::vector<std::array<std::vector<TraceSpan>, kRiscs>> last_spans;
  std::vector<std::string> launch_counters;  // counters_json() of every launch so far, in order
  bool timing_only = false;  // Device::set_timing_only
  int progress_fd = -1;      // Device::set_progress_fd
  std::map<uintptr_t, SemTiming> sem_timing;  // by host address of the semaphore word; guarded by mu

  // Launch state (LaunchState), shared by the devices of a mesh: these name its fields.
  std::shared_ptr<LaunchState> launch_state;
  std::mutex& mu = launch_state->mu;
  std::vector<ThreadCtx*>& threads = launch_state->threads;
  uint32_t& live = launch_state->live;
  uint32_t& blocked = launch_state->blocked;
  uint32_t& cores_used = launch_state->cores_used;
  uint32_t& cores_finished = launch_state->cores_finished;
  std::condition_variable& ended = launch_state->ended;
  std::atomic<bool>& aborting = launch_state->aborting;
  bool& stranded = launch_state->stranded;
  std::mutex& error_mu = launch_state->error_mu;
  std::string& error = launch_state->error;
  std::chrono::duration<double> stall_limit{kStallLimitSeconds};  // Device::set_stall_limit
  uint32_t index = 0;  // the device's index in its mesh (row-major), named in messages when the mesh has several

  explicit DeviceImpl(std::shared_ptr<LaunchState> state) : launch_state(std::move(state)) {}

  Core& core(CoreXY c);
  Core* core_at_noc(uint32_t x, uint32_t y);
  uint8_t* dram_ptr(uint32_t bank, uint64_t addr, uint64_t size);

  // Error reporting: records the launch's error (record_error) and throws Aborted. It may run with mu
  // held or not, so it wakes no one: the Aborted unwinds the kernel thread to run_thread, which wakes every
  // thread under mu.
  [[noreturn]] void fail(const std::string& msg);
  // Keeps `msg` as the launch's error unless it has one, and sets `aborting`.
  void record_error(const std::string& msg);
  void wake_all();  // mu held
  // Blocks the calling thread (lock held) until pred() holds; runs the deadlock check.
  template <class Pred>
  void block_until(std::unique_lock<std::mutex>& lk, ThreadCtx& t, Pred pred);
  bool wait_satisfied(const ThreadCtx& t) const;
  void check_deadlock_locked();
  std::string describe(const ThreadCtx& t) const;
  std::string state_locked(const ThreadCtx& t) const;  // describe, or where a running thread is
  void run_thread(ThreadCtx& t);
  // The launch's watchdog, on the launching thread (lock held) while the kernel threads run (device.cpp).
  void supervise(std::unique_lock<std::mutex>& lk);
  void report_progress_locked() const;  // "<cores finished> <cores>\n" to progress_fd, if any
};

inline uint32_t ThreadCtx::dst_buffers() const { return kernel->opts.dst_full_sync_en ? 1 : 2; }
inline uint32_t ThreadCtx::dst_half() const { return dev->arch.dst_tiles / dst_buffers(); }
inline uint32_t ThreadCtx::dst_capacity() const {
  return kernel->opts.fp32_dest_acc_en ? dst_half() / 2 : dst_half();
}

// ---- timing (timing.hpp) ----
// Which of the thread's clocks a call charges: Main is the thread's RISC-V (a compute kernel's math
// TRISC), Unpack and Pack a compute kernel's other two TRISCs.
enum class Clock : uint8_t { Main, Unpack, Pack };
inline RiscClock& clock_of(ThreadCtx& t, Clock c) {
  return c == Clock::Unpack ? t.unpack : c == Clock::Pack ? t.pack : t.main;
}
// The clock a circular-buffer call runs on: a compute kernel waits for and pops input pages on its
// unpack TRISC and reserves and pushes output pages on its pack TRISC (tt-metal api/compute/cb_api.h:
// UNPACK(llk_wait_tiles / llk_pop_tiles), PACK(llk_wait_for_free_tiles / llk_push_tiles)).
inline Clock cb_clock(const ThreadCtx& t, bool consumer_side) {
  if (t.kernel->role != KernelRole::Compute) return Clock::Main;
  return consumer_side ? Clock::Unpack : Clock::Pack;
}
// Appends [clock, clock + cycles) to the clock's trace, merged into the last span when that one has
// the same name and kind and ends where this one starts.
inline void record_span(RiscClock& c, uint64_t cycles, std::string name, bool stall) {
  if (!c.spans.empty()) {
    TraceSpan& last = c.spans.back();
    if (last.end == c.tm.clock && last.stall == stall && last.name == name) {
      last.end += cycles;
      last.calls += 1;
      return;
    }
  }
  c.spans.push_back({c.tm.clock, c.tm.clock + cycles, std::move(name), 1, stall});
}
// Charges `cycles` of work to one of the thread's clocks; `call` is the API call (family) doing it,
// the span's name in the trace.
inline void charge(ThreadCtx& t, Clock which, uint64_t cycles, std::string_view call) {
  RiscClock& c = clock_of(t, which);
  t.heartbeat.store(t.heartbeat.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (t.tracing && cycles > 0) record_span(c, cycles, std::string(call), false);
  c.tm.clock += cycles;
  c.tm.busy += cycles;
}
inline void charge(ThreadCtx& t, uint64_t cycles, std::string_view call) { charge(t, Clock::Main, cycles, call); }
// Advances one of the thread's clocks to `when` (an event it waited for), charging the wait as stall
// (and to `kind`, when given). In the trace the stall is "wait <call>", with " c_<cb>" for a CB's pages.
inline void wait_until(ThreadCtx& t, Clock which, uint64_t when, uint64_t ThreadTiming::*kind, std::string_view call,
                       int cb = -1) {
  RiscClock& c = clock_of(t, which);
  if (when <= c.tm.clock) return;
  const uint64_t d = when - c.tm.clock;
  t.heartbeat.store(t.heartbeat.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (t.tracing)
    record_span(c, d, "wait " + std::string(call) + (cb >= 0 ? " c_" + std::to_string(cb) : std::string()), true);
  c.tm.stall += d;
  if (kind != nullptr) c.tm.*kind += d;
  c.tm.clock = when;
}
inline void wait_until(ThreadCtx& t, uint64_t when, uint64_t ThreadTiming::*kind, std::string_view call, int cb = -1) {
  wait_until(t, Clock::Main, when, kind, call, cb);
}
// Issues a NOC transfer of `bytes` on the thread's read or write port, from or to DRAM when `dram`;
// returns its completion time. A unicast write ends a linked multicast's hold on its path.
inline uint64_t noc_transfer(ThreadCtx& t, uint64_t bytes, bool write, bool dram = false) {
  const ArchSpec& a = t.dev->arch;
  uint64_t& port_free = write ? t.main.tm.write_port_free : t.main.tm.read_port_free;
  if (write) t.main.tm.path_reserved = false;
  port_free = std::max(t.main.tm.clock, port_free) + (dram ? timing::dram_occupancy(a, bytes) : timing::noc_occupancy(a, bytes));
  return port_free + (!dram ? a.noc_latency : write ? a.dram_write_latency : a.dram_read_latency);
}
// Issues a multicast of `bytes` to a rectangle `extent` cores long (its longer side) on the write
// port; returns its completion time. It leaves in packets of at most noc_max_packet bytes, each
// reserving its path first unless the thread's previous packet was linked (`linked`: the path stays
// reserved for the next packet or multicast, as tt-metal links a block's multicast to its flag's).
inline uint64_t noc_multicast(ThreadCtx& t, uint64_t bytes, uint64_t extent, bool linked) {
  const ArchSpec& a = t.dev->arch;
  uint64_t& port_free = t.main.tm.write_port_free;
  port_free = std::max(t.main.tm.clock, port_free);
  uint64_t left = bytes;
  do {
    const uint64_t packet = std::min(left, a.noc_max_packet);
    if (!t.main.tm.path_reserved) port_free += timing::mcast_reservation(a, extent);
    port_free += timing::noc_occupancy(a, packet);
    t.main.tm.path_reserved = linked;
    left -= packet;
  } while (left > 0);
  return port_free + a.noc_latency;
}

// Thrown in threads when another thread already reported an error; not an EmulatorError.
struct Aborted {};

// The open device of a mesh by its index (row-major), for the fabric's deliveries (device.cpp).
DeviceImpl& device_impl(uint32_t index);
// The fabric (fabric.cpp): a launch starts with its links free; the links leaving chip `chip` in the last launch
// as JSON, and when the last of them was done with its packets (`busiest`).
void fabric_begin_launch();
std::string fabric_links_json(uint32_t chip, uint64_t& busiest);
// The links leaving chip `chip` in the last launch, each with the intervals packets held it (the trace).
struct FabricLinkSpans {
  uint32_t direction;  // eth_chan_directions
  std::string name;    // "EAST link", ...
  std::vector<std::pair<uint64_t, uint64_t>> busy;
};
std::vector<FabricLinkSpans> fabric_link_spans(uint32_t chip);

// "core (x,y) reader 'reader.cpp'"
std::string who(const ThreadCtx& t);
std::string where(const std::source_location& loc);
std::string basename_of(const char* path);
[[noreturn]] void protocol_error(const std::source_location& loc, const std::string& what);
ThreadCtx& ctx(const std::source_location& loc);

// pred() and `aborting` are read with mu held, and mu is held until cv.wait lets it go and sleeps in one
// step: what changes them (under mu, then notified: DeviceImpl's comment) cannot slip in between.
template <class Pred>
void DeviceImpl::block_until(std::unique_lock<std::mutex>& lk, ThreadCtx& t, Pred pred) {
  bool waited = false;
  while (!pred()) {
    if (aborting.load()) throw Aborted{};
    ++blocked;
    check_deadlock_locked();
    t.blocked = true;
    t.core->cv.wait(lk);
    t.blocked = false;
    --blocked;
    waited = true;
  }
  t.wait.kind = WaitState::None;
  if (waited && aborting.load()) throw Aborted{};
}

// ---- tile formats ----
// Index permutation: tile element (row r, col c) -> position in face order.
uint32_t face_index(uint32_t r, uint32_t c);
uint16_t float_to_bf16_rne(float f);
float bf16_to_float(uint16_t b);
float round_to_bf16(float f);
// Unpack a tile in `fmt` (face order) into row-major DST words, and pack back. The float formats
// and UInt16/UInt8 convert by value; Int32 and UInt32 are bit copies (DST words hold the raw
// two's-complement bits, see is_int32_format).
void unpack_tile(const uint8_t* src, DataFormat fmt, float* out);
void pack_tile_data(const float* in, DataFormat fmt, uint8_t* dst);
// Row-major (untilized) data: bytes of one datum (0 for Bfp8_b, a tile-only format), and `n`
// consecutive datums in `fmt` <-> DST words (not Bfp8_b), converted as unpack_tile/pack_tile_data do.
uint32_t datum_size_bytes(DataFormat fmt);
// The 32-bit integer formats: unpacked straight to DST (SrcA/SrcB are 19 bits wide), which must then
// be 32 bits wide (fp32_dest_acc_en); DST words hold their bits, never rounded to bfloat16.
inline bool is_int32_format(DataFormat fmt) { return fmt == DataFormat::Int32 || fmt == DataFormat::UInt32; }
void load_datums(const uint8_t* src, DataFormat fmt, uint32_t n, float* out);
void store_datums(const float* in, uint32_t n, DataFormat fmt, uint8_t* dst);

namespace k {
// The runtime's own protocol errors compose their messages as strings.
[[noreturn]] inline void api_error(const std::string& what, Loc loc) { api_error(what.c_str(), loc); }
}  // namespace k

}  // namespace emu
