// Device model of the functional Metalium emulator: the interface the emulated host API
// (tt-metalium/*.hpp) programs against.
//
// One Device per process. Addresses follow tt-metal conventions:
//  * DRAM buffers are page-interleaved: page i lives in bank i % num_dram_banks() at
//    byte offset base + (i / num_dram_banks()) * align(page_size, dram_alignment()).
//    allocate_dram() returns that base (the same in every bank).
//  * Each worker core owns an L1 byte array of l1_size() bytes; kernels see L1 addresses as
//    uint32_t offsets into it. Circular buffers and semaphores are allocated in L1 above
//    l1_unreserved_base(), bottom-up; L1 buffers are allocated top-down from l1_size() at the
//    same address on every core (tt-metal's allocator), and a CB reaching the lowest L1 buffer
//    is an L1 overflow.
//  * Sharded buffers place pages by locate_shard_page(); the host API copies each page to its
//    shard core's L1 (or DRAM bank) with the per-core / per-bank copies below.
//  * Kernels address other cores by NOC coordinates: worker_noc_coord(logical) gives the
//    coordinates the host passes in runtime args (tt-metal's worker_core_from_logical_core).
//
// Program construction is one program at a time: add_cb / add_semaphore / add_kernel /
// set_runtime_args, then launch(), then reset_program() before building the next one.
// Buffers (DRAM contents) survive reset_program().
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "device_types.hpp"

namespace emu {


// Bytes of one 32x32 tile in `fmt` (Bfp8_b: 64 shared exponents + 1024 datums = 1088; Bfp4_b: 576).

struct CoreXY {
  uint32_t x, y;
  friend bool operator==(const CoreXY&, const CoreXY&) = default;
};

enum class KernelRole { Reader /*RISCV_1/NCRISC*/, Writer /*RISCV_0/BRISC*/, Compute /*TRISCs*/ };
const char* kernel_role_name(KernelRole role);


struct KernelInfo {
  const char* source_name;  // as registered, e.g. "reader.cpp"
  KernelFn fn;
  std::vector<uint32_t> compile_args;
  bool math_approx_mode;  // the APPROX it was built with (TT_EMU_MATH_APPROX_MODE)
  uint8_t noc_index;      // the NOC it was built for (NOC_INDEX): a data-movement kernel's noc_index
};

// Called by the static registrar of each kernel translation unit (see kernel_registry.hpp).
// Looks a kernel up by the path it was registered under, both lexically normalised ("./a/k.cpp" and
// "a//k.cpp" find "a/k.cpp"; "b/k.cpp" and "k.cpp" do not). Returns nullptr when absent.
const KernelInfo* find_kernel(const std::string& source_name);
// A kernel path as find_kernel compares it: lexically normal, '/'-separated.
std::string kernel_key(const std::string& path);

struct ComputeOptions {
  bool fp32_dest_acc_en = false;
  bool math_approx_mode = false;
  int math_fidelity = 4;  // 0 LoFi, 2 HiFi2, 3 HiFi3, 4 HiFi4 (tt-metal MathFidelity values)
  // DstSync::SyncFull: tile_regs_acquire holds the whole DST (16 tiles, 8 with fp32_dest_acc_en) and math and
  // pack take turns on it, where SyncHalf double-buffers two halves (tt-llk ckernel.h get_dest_max_tiles,
  // llk_math_common.h _llk_math_pack_sync_init_: a MATH_PACK semaphore of 1 instead of 2).
  bool dst_full_sync_en = false;
  // ComputeConfig::unpack_to_dest_mode, by CB index: true = UnpackToDestFp32. Empty: every CB Default;
  // otherwise it needs an entry for each CB of the arch (add_kernel checks). tt-metal 0.81.1 reads it
  // for Float32 CBs only: UnpackToDestFp32 lets a datacopy (copy_tile, unary_bcast, transpose_wh_tile)
  // bring the tile to DST exactly; Default passes it through SrcA/SrcB, truncated to TF32 (fp32_dest_acc_en)
  // or bfloat16 (compute.cpp, to_source_register). FPU ops always read SrcA/SrcB. Int32/UInt32 tiles always
  // unpack straight to DST.
  std::vector<bool> unpack_to_dest_fp32;
};


// Every protocol violation, capacity overflow or deadlock. The message names core (x,y),
// kernel (source name and role), CB index and kernel source line where applicable.
struct EmulatorError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class DeviceImpl;

// The fabric between the chips of the open mesh (fabric.cpp): the host's fabric config (tt::tt_fabric::FabricConfig,
// SetFabricConfig), the mesh's shape, a worker's connection to the router toward another chip (the ethernet
// channel append_fabric_connection_rt_args gives; throws EmulatorError for one the mesh cannot make) and the
// defines tt-metal's JIT build gives a kernel under that config (ROUTING_MODE, FABRIC_2D).
void fabric_set_config(uint32_t config);
uint32_t fabric_config();
void fabric_set_mesh(uint32_t rows, uint32_t cols);
uint32_t fabric_connection(uint32_t src_chip, uint32_t dst_chip, uint32_t link);
std::vector<std::string> fabric_kernel_defines();

class Device {
 public:
  // arch: a name of the arch table (tilelang_tt/contract/arch.py: wormhole_b0, blackhole).
  // Throws EmulatorError for an unknown arch or when a device is already open.
  static Device& open(const std::string& arch);
  // A mesh of `count` devices of `arch`, each with its own L1, DRAM and counters; device 0 is current.
  static void open_mesh(const std::string& arch, uint32_t count);
  static uint32_t count();        // the open devices
  static void select(uint32_t i); // the device get() returns (host calls and launches go to it)
  static Device& get();  // the current device; throws EmulatorError when no device is open
  void close();          // after every device is closed, open() may be called again

  const std::string& arch() const;
  uint32_t grid_x() const;
  uint32_t grid_y() const;
  uint32_t num_dram_banks() const;
  uint64_t l1_size() const;
  // The arch's row of tilelang_tt/contract/arch.py (see ArchSpec).
  uint32_t l1_alignment() const;
  uint32_t dram_alignment() const;
  uint32_t l1_unreserved_base() const;
  uint32_t num_circular_buffers() const;
  // NOC coordinates of a logical worker core (what kernels pass to get_noc_addr(x, y, addr)).
  CoreXY worker_noc_coord(CoreXY logical) const;

  // Interleaved DRAM buffer of size_bytes split in pages of page_size; returns its base address.
  uint64_t allocate_dram(uint64_t size_bytes, uint32_t page_size);
  // Host <-> device copies of a whole buffer (or its first `bytes`), page-interleaved across
  // banks using the page size given at allocation. base must come from allocate_dram.
  void write_buffer(uint64_t base, const void* src, uint64_t bytes);
  void read_buffer(uint64_t base, void* dst, uint64_t bytes);
  // bytes_per_bank bytes at the same address in every DRAM bank (a sharded DRAM buffer); returns
  // that address.
  uint64_t allocate_dram_banks(uint64_t bytes_per_bank);
  // bytes_per_core bytes at the same L1 address on every core, below the L1 buffers allocated
  // so far (top-down from the end of L1); returns that address. Throws when it would reach the
  // unreserved L1 base.
  uint32_t allocate_l1(uint64_t bytes_per_core);
  // Host access to `bytes` bytes of one core's L1 or of one DRAM bank (the pages of sharded
  // buffers); throws when they are outside the L1 or outside every DRAM allocation.
  uint8_t* l1_data(CoreXY core, uint32_t addr, uint64_t bytes);
  uint8_t* dram_bank_data(uint32_t bank, uint64_t addr, uint64_t bytes);

  // ---- program construction ----
  // Allocates total_size bytes of `core`'s L1 (aligned to l1_alignment()); throws on L1
  // overflow (past the end of L1 or into the L1 buffers), a duplicate index, or total_size not
  // a multiple of page_size. With `shares_l1_of` (a CB index of the same core, configured before
  // with the same total size) the CB takes that CB's L1 instead: several indices of one tt-metal
  // CircularBufferConfig share one allocation, each index with its own FIFO pointers and format.
  void add_cb(CoreXY core, uint32_t cb_index, uint32_t total_size, uint32_t page_size, DataFormat fmt,
              int32_t shares_l1_of = -1);
  // Semaphore ids are allocated per core in call order; calling with a set of cores gives the
  // same id on each of them (tt-metal CreateSemaphore). get_semaphore(id) in a kernel gives its
  // L1 address.
  uint32_t add_semaphore(CoreXY core, uint32_t initial_value);
  uint32_t add_semaphore(const std::vector<CoreXY>& cores, uint32_t initial_value);
  // Registers a kernel instance on `cores`; throws when source_name is not registered, the compile args
  // differ from the ones it was compiled with, a data-movement kernel was built for another NOC than `noc`
  // (its DataMovementConfig::noc; ignored for compute), a compute kernel for another APPROX than opts', or a
  // core already has that role.
  uint32_t add_kernel(const std::string& source_name, KernelRole role, const std::vector<CoreXY>& cores,
                      const std::vector<uint32_t>& compile_args, uint8_t noc, ComputeOptions opts);
  // The same for a kernel the caller holds (one the host API built from a kernel file, jit.hpp), named
  // `source_name` in messages.
  uint32_t add_kernel(const KernelInfo& info, const std::string& source_name, KernelRole role,
                      const std::vector<CoreXY>& cores, const std::vector<uint32_t>& compile_args, uint8_t noc,
                      ComputeOptions opts);
  void set_runtime_args(uint32_t kernel_id, CoreXY core, std::vector<uint32_t> args);
  void set_common_runtime_args(uint32_t kernel_id, std::vector<uint32_t> args);

  // Runs every kernel on every core to completion (3 threads per core). Throws EmulatorError
  // on a protocol violation, deadlock, no progress (set_stall_limit), or CBs left with unconsumed pages.
  void launch();
  // Runs the programs of `devices` (of one mesh) at once: their kernel threads block, wake and are checked for
  // deadlock together (a chip waits for what another sends over the fabric). Each device's counters are its own.
  static void launch_mesh(const std::vector<Device*>& devices);
  // {"cores": [{"core": [x, y], "dram_bytes_read": ..., ..., "tile_ops": {...}}], "total": {...}}
  // dram_bytes_* count DRAM traffic only; l1_bytes_read_remote / l1_bytes_written_remote count
  // bytes a core's kernels move over the NOC from / to another core's L1 (a multicast counts
  // once per destination core other than the sender); copies within a core's own L1 count in
  // neither. "timing" is the timing model's prediction for the last launch (runtime/timing.hpp; its
  // schema is documented at timing_json in device.cpp): predicted cycles and seconds, the critical path,
  // the aggregate DRAM time, the bound, and per core and role busy / stall / end cycles.
  std::string counters_json() const;
  // The counters of the device's whole run: counters_json() after one launch; after several (a host
  // program running one program per launch of a kernel), {"launches": [counters_json() of each, in
  // order]}, which the driver sums (tilelang_tt/emulator/driver.py, launch_counters).
  std::string run_counters_json() const;
  // Whether the next launches record each kernel thread's timeline for trace_json (off by default:
  // recording costs time and memory).
  void set_tracing(bool on);
  // The last launch's timeline as Chrome trace-event JSON (Perfetto, chrome://tracing); its format is
  // documented in trace.cpp. Empty of spans unless set_tracing(true) preceded the launch.
  std::string trace_json() const;
  // The trace of the last launch of every device of a mesh, with the fabric's links (trace.cpp).
  static std::string mesh_trace_json(const std::vector<Device*>& devices);
  // Timing only (off by default): the next launches skip the arithmetic of matmul_tiles, where
  // emulation spends its time, so the outputs are meaningless; the protocol checks, the counters and
  // the timing model's prediction are those of a full run (no kernel's control flow reads what
  // compute produces).
  void set_timing_only(bool on);
  // The launch's watchdog: a launch whose kernel threads make no progress for `seconds` (no thread's logical
  // clock moves, none ends: every thread blocked or polling) stops with an EmulatorError naming each thread,
  // blocked in what or running since which kernel API call (10 s unless set). A thread that never calls the
  // API again (a loop on an L1 word) cannot be stopped: the error names it, it is left running, and the
  // device launches nothing more.
  void set_stall_limit(double seconds);
  // Progress (off by default, fd -1): each launch writes "<cores finished> <cores>\n" to the file
  // descriptor `fd` when it starts and whenever a core's last kernel thread ends (what a terminal
  // shows while a long run goes on; the emulator driver reads it from a pipe).
  void set_progress_fd(int fd);
  // Drops CBs, semaphores, kernels, runtime args and counters; keeps DRAM and L1 buffers.
  void reset_program();

  DeviceImpl& impl() { return *impl_; }

 private:
  explicit Device(std::unique_ptr<DeviceImpl> impl);
  std::unique_ptr<DeviceImpl> impl_;
};

}  // namespace emu
