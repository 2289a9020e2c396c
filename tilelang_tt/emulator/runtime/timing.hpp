// Timing model of the emulator (first version): Lamport-style logical clocks per kernel thread.
//
// Every RISC-V of a core keeps a logical clock in cycles of the arch's AICLK: the reader's and the
// writer's, and the three TRISCs a compute kernel runs on (tt-isa-documentation, WormholeB0
// TensixCoprocessor/README.md: the coprocessor executes three threads at once; TRISC0 pushes the
// unpackers' work, TRISC1 the matrix and vector units', TRISC2 the packers'). A compute kernel's call
// runs on the TRISC tt-metal's compute API gives it: cb_wait_front / cb_pop_front and the unpack of
// every op on TRISC0; the math of the op, tile_regs_acquire / commit on TRISC1; pack_tile,
// tile_regs_wait / release, cb_reserve_back / cb_push_back on TRISC2 (api/compute/cb_api.h, reg_api.h,
// the UNPACK / MATH / PACK macros). They synchronize as the hardware does: an op's math starts when
// its operands are unpacked, and the unpacker runs at most one unpacking op ahead of math (SrcA/SrcB are
// double-buffered between the unpackers and the matrix unit; an SFPU op works on DST and takes no
// bank: tt-isa-documentation SrcASrcB.md, SETDVALID.md, CLEARDVALID.md); tile_regs_wait waits for the commit of its DST half, tile_regs_acquire for the
// release of the half it takes (two halves: math fills one while pack drains the other). Each kernel API call charges its cost (the table below) to the
// thread's clock and `busy`; a call that waits (cb_wait_front, cb_reserve_back, semaphore waits,
// NOC barriers) advances the clock to the logical time of the event it waits for, charging the
// difference to `stall`. Those event times are recorded by the producing thread (CB page pushed /
// popped, indexed by page sequence number; semaphore set / increment; NOC transfer completion), so
// each clock depends only on causal predecessors and never on OS scheduling: the same program gives
// the same times on every run. Timing never affects numerics.
//
// Predicted kernel time = max(critical path = the largest final clock of any thread, aggregate DRAM
// time = DRAM bytes moved / measured DRAM bandwidth). DRAM bandwidth is shared by all cores; it is
// deliberately not modelled as shared mutable state updated in real time (that would depend on the
// OS scheduling), only as this aggregate floor.
//
// Cost table ("TR" = tenstorrent/tt-metal tech_reports/; "CE" = tenstorrent/tt-lang
// docs/development/CycleEstimator.md; "HF" = ../shared/reference/hardware-figures.md, which collects
// both; "NL" = tenstorrent/tt-metal tests/tt_metal/tt_metal/data_movement/noc_estimator/
// noc_latencies.yaml, the data-movement suite's measured cycles from first issue to barrier).
// "ASSUMPTION" marks a number no source gives; the reason is stated beside it.
// Which figure each compute tile op takes (and what its unpackers read of a partial operand): costs.cpp.
//
// | constant                         | Wormhole   | Blackhole  | source                                        |
// |----------------------------------|------------|------------|-----------------------------------------------|
// The per-arch figures (clock, NOC bandwidth and latency, DRAM bandwidth) are fields of the arch
// table, tilelang_tt/contract/arch.py (with their sources), which reaches this runtime as ArchSpec:
// | clock (AICLK)                    | 1.0 GHz    | 1.35 GHz   | docs.tenstorrent.com specs; TR/Blackhole bring-up guide (HF) |
// | matmul_tiles, per fidelity phase | 16 cyc     | 16 cyc     | TR/GEMM_FLOPS: LoFi 16, HiFi2 32, HiFi3 48, HiFi4 64 per 32x32x32 |
// | matmul_block, per tile product   | as matmul_tiles | as matmul_tiles | ASSUMPTION: no source gives a per-tile difference (GEMM_FLOPS measures ttnn's matmul_block kernels) |
// | fp32_dest_acc_en matmul factor   | 1.07       | 1.07       | CE: ~7% slower (1/68.5 vs 1/64 tiles/cycle)    |
// | SFPU op per tile                 | 4 faces x 8 rows x instructions per row | same | tt-llk 0.81.1 per op, stated by its source or counted from it (costs.cpp's tables; docs/timing-model.md, SFPU costs) |
// | FPU eltwise add/sub per tile     | 16 cyc     | 16 cyc     | ASSUMPTION: one pass of the matrix engine, = one LoFi matmul phase (TR/GEMM_FLOPS) |
// | FPU eltwise mul, reduce per tile | 16 x phases| 16 x phases| ASSUMPTION: as above, with the fidelity phases mul/pool run like matmul |
// | copy_tile/unary_bcast/transpose  | 16 cyc     | 16 cyc     | ASSUMPTION: one datacopy pass of math (as an FPU pass); the unpack is TRISC0's |
// | unpack, per op (TRISC0)          | 2 + both unpackers' bytes / 64 | 2 + the larger unpacker's bytes / 64 | tt-isa-documentation UNPACR_Regular.md "Performance": 2 cycles of address, then up to 64 B/cycle (x4 speed, which tt-llk's configure_unpack_AB sets: throttle_mode 2); a bf16 tile 34 cyc. The op's operands on the two unpackers side by side; on Wormhole "if both unpackers are active at once ... Unpacker 0 gets x2, and Unpacker 1 gets x2": together 64 B/cycle (two bf16 tiles 66 cyc). x4 is the only documented speed that fits TR/GEMM_FLOPS' BF16 HiFi2 85.3 TFLOPS (49 cyc per tile product on 64 cores; x2 would take 66). Blackhole: no source (arch.py: sharing would contradict TR's P150 85%) |
// | unpack bytes of reduce_tile      | SUM/AVG ROW: both tiles; else data tile + scaler 64 datums | same | tt-llk llk_unpack_AB_reduce.h _llk_unpack_AB_reduce_init_ lines 125-137 (X ends), _llk_unpack_AB_reduce_mop_config_ lines 57-71: SUM/AVG REDUCE_ROW swap the operands and read both whole tiles; MAX REDUCE_ROW, REDUCE_COL, REDUCE_SCALAR read the scaler's first row of each face (16 datums x 4) to SrcB (bf16 row reductions: 66 / 36 cycles on Wormhole) |
// | unpack bytes of a broadcast      | operand B: COL 512 datums, ROW 1024, SCALAR 256; to DST ROW 32, SCALAR 16, COL 512 | same | tt-llk llk_unpack_AB.h _llk_unpack_AB_mop_config_ lines 74-116, llk_unpack_A.h _llk_unpack_A_mop_config_ lines 126-189 (faces 0, 2 / faces 0, 1 once per row of faces / face 0; unpack-to-dest: rows of 16 datums); the other operand its whole tile (costs.cpp bcast_datums) |
// | unpack bytes of a partial tile   | datums x tile bytes / 1024 | same | UNPACR_Regular.md functional model: DatumSizeBytes per datum, a BFP exponent byte per 16 datums (in the tile size too) |
// | address cycles of later UNPACRs  | 0          | 0          | UNPACR_Regular.md "Performance": after 2 address cycles an UNPACR proceeds pipelined, the next may start; hidden by the fetch whenever an op's UNPACRs move >= 128 B (2 cycles at 64 B/cycle) each on average, as the reductions' and broadcasts' above do (a bf16 MAX row reduction: 2,176 B in 8), but for unary_bcast ROW of a 32-bit tile to DST, two 64 B rows, which by that pipelining take 2 + 2 address cycles and 1 of the last row's fetch = 5 and are charged 2 + 128 / 64 = 4 |
// | matmul operand unpacks           | in0 once per block row (ct_dim >= rt_dim), else in1 once per column | same | tt-llk llk_unpack_AB_matmul.h: the reused operand's tile is unpacked once for the ct_dim (rt_dim) products that use it; matmul_tiles unpacks both |
// | pack_tile per tile (TRISC2)      | 16 cyc     | 16 cyc     | ASSUMPTION: same order as one FPU pass (no source gives the packers' rate) |
// | tilize/untilize/pack_untilize    | unpack + 16 + 16 | same | the unpack above, a datacopy pass (math), a pack (TRISC2) per tile |
// | pack_untilize_dest per tile      | 16 cyc     | 16 cyc     | ASSUMPTION: one pack pass (TRISC2)             |
// | compute init / reconfig call     | 8 cyc      | 8 cyc      | ASSUMPTION: a few config-register writes        |
// | tile_regs_* / DST sync call      | 2 cyc      | 2 cyc      | ASSUMPTION: one semaphore post/wait between TRISCs |
// | CB call (reserve/push/wait/pop)  | 8 cyc      | 8 cyc      | ASSUMPTION: a few loads/stores of the CB interface |
// | NOC call issue (read/write/sem)  | 25 cyc     | 23 cyc     | NL: 256 transactions of 64 B, the median of their spacing for L1 reads, L1 writes, DRAM reads |
// | misc dataflow call (ptr, addr)   | 2 cyc      | 2 cyc      | ASSUMPTION: a handful of RISC-V instructions    |
// | NOC per-core bandwidth           | 28.7 B/cyc | 60.9 B/cyc | NL: 256 x 64 KB L1 reads, 2284 cycles apart (WH; the floor below is added once per transfer, so not CE's 25.3 = one 64 KB read's whole time); TR Blackhole DRAM report (BH) (HF; NL's 256 x 64 KB BH reads: 61.6) |
// | NOC latency (small transfer)     | 293 cyc    | 373 cyc    | CE / NL: one 64 B L1 read (WH 293, BH 373)    |
// | NOC packet (data flits)          | 8 KB       | 16 KB      | tt-isa-documentation NoC/README: a header flit and up to 256 data flits of 32 / 64 B; tt-metal 0.81.1 noc_parameters.h NOC_MAX_BURST_SIZE |
// | NOC router hop                   | 9 cyc      | 9 cyc      | tt-isa-documentation NoC/README "Performance" (router to neighbouring router) |
// | multicast path reservation       | 145 + 18 x extent | 224 + 18 x extent | ISA docs: a path-reserving broadcast waits for every router of its tree (a hop out and back per core of the rectangle's longer side); the base: NL's 256 x 64 B multicasts (2x2 ... 8x8 rectangles, rows, columns), their spacing less that, averaged |
// | DRAM per-core rate               | 22 B/cyc   | 22 B/cyc   | NL: 256 x 2 KB DRAM_INTERLEAVED reads and writes from one core (WH 22.4 / 22.1, BH 22.0 / 21.7) |
// | DRAM read / write floor          | 381 / 426  | 486 / 399  | NL: one 64 B DRAM read / write                 |
// | DRAM aggregate bandwidth         | 267 GB/s   | 500 GB/s   | TR/Saturating_DRAM_bandwidth (measured; spec 288 / 512) (HF) |
// | DRAM bank bandwidth              | 267 / 12 banks | 500 / 8 banks | the aggregate's share: 22.25 B/cycle (Wormhole; NL's one-core DRAM rate, 22, is the same), 46.3 (Blackhole; HF's ~47.4 B/cycle per bank, TR Blackhole DRAM report) |
// | kernel start: CB setup           | 25 cyc per CB index | 20 | OW "Worker Initialization: Circular Buffer (CB) Configurations" (~25 / ~20 cycles per CB config; cost grows with the indices' spacing: up to the highest configured index) |
// | kernel start: NCRISC IRAM copy   | 400 cyc    | 0          | OW "Worker Initialization: NCRISC (Wormhole Platform)": ~10 B/cycle, ~4 KB common-case binary (ASSUMPTION: the common case; the emulator has no RISC-V binary); Blackhole has no IRAM |
// | fabric link bandwidth            | 12.5 GB/s  | 12.5 GB/s  | TR/EthernetMultichip/BasicEthernetGuide.md "Ethernet Link": 100 Gbps per direction per link (Galaxy: "12.5 GB/s per direction per link"); Blackhole: ASSUMPTION, Wormhole's (no published per-link figure found) |
// | fabric hop latency               | 650 ns     | 650 ns     | same, "Ring Ping Latency": ~650 ns per hop, an 8-hop ring ~5.2 us (single link one way: 530-620 ns); Blackhole: ASSUMPTION, Wormhole's |
// | fabric sender slots              | 8          | 8          | ASSUMPTION: the router's buffer slots per worker connection (sized at run time by 0.81.1) |
// ("OW" = tenstorrent/tt-metal's tech report "Op Writer's Guide to Dispatch Overhead".)
//
// Kernel start. A launch's go signal reaches every core and each RISC-V's firmware sets up the kernel's
// CB interfaces (and, on Wormhole, NCRISC copies its binary to IRAM) before the kernel's first
// instruction: each clock starts there (ThreadTiming::start; device.cpp start_kernel), so the reader of
// a Wormhole core starts 400 cycles after its other RISC-Vs. Not charged: the host's dispatch before the
// go signal (TR/GEMM_FLOPS' "Device Based Utilization" times TRISC1's kernel zone, after it: the report's
// rows with and without trace, which removes host dispatch, agree within 0.2%), and the go signal's own
// skew between cores (OW: one multicast from dispatch_s, so cores differ by its router hops, at most
// ~16 x 9 cycles on an 8x8 grid: below the 1% the calibration resolves).
//
// DRAM contention. The aggregate floor above counts DRAM bytes over the whole kernel; a burst issued late
// (64 writers storing C at the end of a GEMM) can outlast the kernel's critical path by itself. With every
// transfer's issue time recorded (a thread's clock at the call: deterministic), dram_cycles is the
// earliest the DRAM can have served them: for every issue time t, t + the bytes issued at or after t /
// the bandwidth (device.cpp timing::dram_served), over all banks at the aggregate bandwidth and over
// each bank at its share, so several cores hitting one bank (a tensor sharded to few banks) is bound by
// that bank. A floor, like the aggregate one: it does not slow the transfers themselves, so a core whose
// reads the other cores' reads would delay on the device is not delayed here (NOT MODELLED: per-core
// rates falling when more than aggregate / 22 B/cycle cores read at once, and NOC link contention).
//
// Fabric (runtime/fabric.cpp). A packet a worker sends over the fabric: its payload and header go by the
// worker's NOC writes into the router's buffer slot (the write port above); then each link of its route in
// turn, each link a shared resource per direction: the packet holds it for (header + payload) bytes / the link
// bandwidth, from the earliest time the link is free that long at or after the packet reaches it, and reaches
// the next chip one hop latency after it starts on the link (the router forwards it as it comes in). Without
// contention a packet of b bytes over h hops arrives h x latency + b / bandwidth after it is in the router, then
// the destination router's NOC write (NOC occupancy + latency) lands its payload; its atomic increment lands a
// NOC latency after the arrival (a fused one after the write). Two packets on one link serialise. The order of
// two packets on one link is the order their sending threads reach it (a packet takes the earliest gap that fits,
// so one sent at an earlier logical time that comes second still goes first where the link is free); their last
// arrival is deterministic, which of two equal packets goes first is not. The links' busy time is in the
// counters (timing "links") and the trace.
//
// A NOC transfer of `b` bytes issued by a thread at clock c starts when the thread's NOC port is
// free (transfers of one thread are serialised on its port: per-core bandwidth), occupies it for
// b / bandwidth cycles and completes NOC latency later. A DRAM read or write moves at the core's
// DRAM rate instead (below the NOC's on both archs: the suite measures ~22 B/cycle whatever the
// arch) and completes the DRAM floor later. A multicast leaves in packets of at most 256 data
// flits, each with the call's `linked` flag (tt-metal 0.81.1 noc_nonblocking_api.h,
// ncrisc_noc_fast_write_any_len: a loop of NOC_MAX_BURST_SIZE writes); each first reserves its path
// (the multicast path reservation above, on the write port), unless the previous packet was linked
// (the path stays reserved for the next packet of the transaction, or for the flag multicast that
// follows a block). NL's linked multicasts (MULTICAST_LINKED) of 64 B to 2x2 cores are 24 cycles
// apart, its unlinked ones 169; of 64 KB to a row of 8, 2180 cycles apart linked (30.1 B/cycle, the
// unicast rate) and 4604 unlinked (575 per 8 KB packet: a reservation per packet); the suite's
// sender unlinks its last multicast "so the next one can ... do its own path reservation". A
// unicast write on the port ends the hold. A thread has a read port and a write port:
// read data flows into the core and write data out of it, over the two directions of its NOC
// links, through separate command buffers (tt-metal's dataflow_api issues reads and writes on
// different cmd bufs); ASSUMPTION: each direction sustains the measured per-core bandwidth (the
// noc_latencies figures are for reads or writes alone). noc_async_read_barrier / write_barrier wait
// for the latest completion of the thread's reads / writes; noc_async_writes_flushed for the time
// the data left the port. A remote semaphore write is a 4-byte transfer on the same port, so it
// arrives after the data the thread sent before it.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

namespace emu {

namespace timing {

inline constexpr uint64_t kMatmulPhase = 16;      // TR/GEMM_FLOPS: 16 cycles per fidelity phase per tile
inline constexpr double kFp32DestAccFactor = 1.07;  // tt-lang CycleEstimator: ~7% slower with fp32 DST
// SFPU ops, per face of a tile (llk_math_eltwise_unary_sfpu.h: VectorMode::RC calls the op's function
// once per face, 4 faces, each call ITERATIONS = 8 rows of 32 datums), one cycle per instruction
// issued. Each op's cycles, with a 16-bit and a 32-bit DST, stated by the LLK source or counted from it, are
// costs.cpp's tables (unary_cost, binary_cost, ...) with their sources; the constants it shares are here.
inline constexpr uint64_t kSfpuFaces = 4;
inline constexpr uint64_t kSfpuRows = 8;                       // rows per face (ITERATIONS)
inline constexpr uint64_t kSfpuFill = 1 * kSfpuRows;           // calculate_fill: the value loaded once, a store per row
inline constexpr uint64_t kFpuPass = 16;           // ASSUMPTION: one matrix-engine pass (= LoFi matmul phase)
inline constexpr uint64_t kPackTile = 16;          // ASSUMPTION: one pack pass per tile
inline constexpr uint64_t kUnpackAddress = 2;      // tt-isa-documentation UNPACR_Regular.md: address cycles
inline constexpr uint64_t kUnpackBytesPerCycle = 64;  // same: x4 speed, 64 B/cycle from L1
inline constexpr uint64_t kComputeInit = 8;        // ASSUMPTION: a few config-register writes
// reconfig_data_format_srca/_srcb, pack_reconfig_data_format: instructions counted (costs.cpp)
inline constexpr uint64_t kUnpackReconfig = 7;     // unpack TRISC, per source
inline constexpr uint64_t kMathReconfig = 4;       // math TRISC, per source
inline constexpr uint64_t kPackReconfig = 14;      // pack TRISC
inline constexpr uint64_t kPackReconfigBfp = 9;    // pack TRISC, into a block float format besides
inline constexpr uint64_t kDstSync = 2;            // ASSUMPTION: one TRISC semaphore op
inline constexpr uint64_t kCbCall = 8;             // ASSUMPTION: CB interface loads/stores
// read_tile_value (tt-metal 0.81.1 api/compute/cb_api.h): the unpack TRISC loads the word from L1 and writes
// it to the math and pack TRISCs' mailboxes (two mailbox_write), each of which reads its mailbox
inline constexpr uint64_t kTileValueRead = 6;      // ASSUMPTION: an L1 load and two mailbox writes
inline constexpr uint64_t kMailboxRead = 2;        // ASSUMPTION: one mailbox read
inline constexpr uint64_t kDataflowMisc = 2;       // ASSUMPTION: pointer / address arithmetic
// A baby RISC-V's own loads and stores of L1 (CoreLocalMem elements: a staged run's copy), tt-isa-documentation
// WormholeB0/TensixTile/BabyRISCV/README.md "Load/Store Unit": an L1 load's latency is >= 8 cycles and sustained
// loads go four every N - 1 = 7 cycles (2 each, rounded up); sustained stores to L1 at most one every five cycles.
inline constexpr uint64_t kRiscL1Load = 2;
inline constexpr uint64_t kRiscL1Store = 5;
// Fabric links (the table above).
inline constexpr double kLinkBytesPerSecond = 12.5e9;
inline constexpr double kLinkHopSeconds = 650e-9;

// Fidelity phases of tt-metal's MathFidelity value (LoFi 0 -> 1, HiFi2 2, HiFi3 3, HiFi4 4).
inline uint64_t fidelity_phases(int math_fidelity) { return math_fidelity <= 1 ? 1 : static_cast<uint64_t>(math_fidelity); }

inline uint64_t matmul_tile_cycles(int math_fidelity, bool fp32_dest_acc) {
  const uint64_t c = kMatmulPhase * fidelity_phases(math_fidelity);
  return fp32_dest_acc ? static_cast<uint64_t>(std::llround(static_cast<double>(c) * kFp32DestAccFactor)) : c;
}

// Cycles the unpackers take for an op that reads `bytes` from L1 on the unpacker that sets its time
// (internal.hpp unpack_op_cycles).
inline uint64_t unpack_tile_cycles(uint64_t bytes) {
  return kUnpackAddress + (bytes + kUnpackBytesPerCycle - 1) / kUnpackBytesPerCycle;
}

}  // namespace timing
}  // namespace emu
