"""Architecture facts: the one table the compiler, the plan, its readers and the emulator use.

The emulator's runtime gets the same rows: its driver compiles ``ARCHS`` into the runtime as the
``TT_EMU_ARCHS`` define (``tilelang_tt.emulator.driver.arch_table_define``).
"""

from __future__ import annotations

from dataclasses import dataclass

# CB ids the host's per-CB tables cover on every arch: NUM_CIRCULAR_BUFFERS outside device code
# (tt-metalium/circular_buffer_constants.h), e.g. ComputeConfig::unpack_to_dest_mode.
HOST_CB_IDS = 64


@dataclass(frozen=True)
class Arch:
    """One Tenstorrent architecture (tt-metal 0.81.1: dev_mem_map.h, core_config.h, hal, soc descriptors)."""

    name: str
    grid: tuple[int, int]  # worker cores (x = columns, y = rows)
    l1_total: int  # L1 per worker core
    l1_unreserved_base: int  # first byte after the firmware's map (MEM_MAP_END) and the kernel config buffer
    l1_alignment: int  # of L1 buffer pages and circular buffers
    num_dram_banks: int
    dram_bank_size: int  # bytes per DRAM bank
    dram_alignment: int  # of DRAM buffer pages
    num_cbs: int  # circular buffer ids per core
    dst_tiles: int  # DST register capacity in 32x32 fp16/bf16 tiles (full sync)
    # The timing model's figures (../shared/reference/hardware-figures.md collects their sources):
    clock_hz: float  # AICLK
    noc_bytes_per_cycle: float  # one core's sustained NOC bandwidth
    noc_latency_cycles: int  # a small transfer's floor
    noc_issue_cycles: int  # a RISC's cycles per NOC transaction it issues (small transactions' rate)
    noc_max_packet_bytes: int  # data flits of one NOC packet (a header flit and up to 256 data flits)
    mcast_reserve_cycles: int  # a multicast packet's path reservation, before the per-hop part
    noc_hop_cycles: int  # a router to its neighbour (tt-isa-documentation NoC); a multicast reserves each, out and back
    dram_bytes_per_cycle: float  # one core's DRAM reads or writes
    dram_read_latency_cycles: int  # a small DRAM read's floor
    dram_write_latency_cycles: int  # a small DRAM write's floor
    dram_bytes_per_s: float  # all banks together, measured
    unpackers_share_l1: bool  # an op's two unpackers share one 64 B/cycle L1 read (both streaming: x2 each)
    # A kernel's start after the go signal (firmware initialisation, every RISC-V of the core):
    cb_config_cycles: int  # per CB index up to the highest the core configures
    ncrisc_kernel_copy_cycles: int  # NCRISC's kernel binary copied from L1 to its IRAM before it runs

    @property
    def l1_bytes(self) -> int:
        """L1 per core usable for CBs and L1 buffers: from the first CB's address, the unreserved base
        rounded up to the DRAM alignment (contract/l1.py)."""
        step = max(self.l1_alignment, self.dram_alignment)
        return self.l1_total - -(-self.l1_unreserved_base // step) * step

    def dst_budget(self, fp32_dest_acc: bool) -> int:
        """Tiles one acquire may use: half of DST (double-buffered), halved again for fp32."""
        half = self.dst_tiles // 2
        return half // 2 if fp32_dest_acc else half


ARCHS: dict[str, Arch] = {
    # clock: docs.tenstorrent.com specs; DRAM: 267 GB/s measured of 288 spec (tt-metal
    # tech_reports/Saturating_DRAM_bandwidth). "NL" below = tt-metal
    # tests/tt_metal/tt_metal/data_movement/noc_estimator/noc_latencies.yaml (measured cycles from the
    # first issue to the barrier): NOC 28.7 B/cycle = NL's 256 L1 reads of 64 KB, 584644 cycles (2284
    # per 64 KB; its writes: 31.1, its linked multicasts to a row of 8: 30.1), the rate at which a
    # core's transfers follow each other; the 293-cycle floor (one 64 B L1 read) is added once per
    # transfer on top, so the rate is not the one-transaction 64 KB figure (65536 B / 2597 cycles =
    # 25.3, which tt-lang's CycleEstimator.md quotes: that time includes the floor); issue 25 = its
    # 256 x 64 B transactions, 25 cycles apart (L1 reads 25.0, L1 writes 22.0, DRAM reads 27.0; the
    # median); packet: 256 data flits of 32 B (tt-isa-documentation WormholeB0/NoC; tt-metal 0.81.1
    # wormhole/noc/noc_parameters.h NOC_MAX_BURST_SIZE = 256 words of 32 B); multicast reservation 145 = NL's 256 x 64 B multicasts
    # (ONE_TO_ALL 2x2, 3x3, 5x5, ONE_TO_ROW and ONE_TO_COLUMN of 8: 169, 183, 247, 311, 297 cycles
    # apart) less the 64 B and 18 cycles per core of the rectangle's extent (the ISA documentation's
    # 9-cycle router hop, out and back: a path-reserving broadcast waits for every router of its tree
    # before data leaves), averaged; DRAM per core 22 B/cycle = NL's 256 x 2 KB DRAM_INTERLEAVED
    # reads / writes (22.4 / 22.1), floors = NL's one 64 B DRAM read / write (381 / 426); unpackers:
    # tt-isa-documentation WormholeB0 UNPACR_Regular.md "Performance": each unpacker fetches up to 64
    # B/cycle from L1 at x4 speed, and when both want x4 at once "Unpacker 0 gets x2, and Unpacker 1
    # gets x2" (32 B/cycle each); tt-llk 0.81.1 configures both at x4 (cunpack_common.h
    # configure_unpack_AB: throttle_mode = 2); kernel start ("OW" = tt-metal's tech report "Op Writer's Guide to
    # Dispatch Overhead"): "Worker Initialization: Circular Buffer (CB) Configurations", ~25 cycles per CB
    # config on Wormhole (~20 Blackhole), and "unnecessary spacing [of CB indices] increases setup cost";
    # "Worker Initialization: NCRISC (Wormhole Platform)": NCRISC copies its kernel binary from L1 to IRAM
    # at ~10 B/cycle before it runs, ~400 cycles for the common ~4 KB binary (the emulator has no RISC-V
    # binary to measure), then initialises its CBs; Blackhole has no IRAM copy
    "wormhole_b0": Arch(name="wormhole_b0", grid=(8, 8), l1_total=1464 * 1024, l1_unreserved_base=0x19D70,
                        l1_alignment=16, num_dram_banks=12, dram_bank_size=1 << 30, dram_alignment=32, num_cbs=32,
                        dst_tiles=16, clock_hz=1.0e9, noc_bytes_per_cycle=28.7, noc_latency_cycles=293,
                        noc_issue_cycles=25, noc_max_packet_bytes=8192, mcast_reserve_cycles=145, noc_hop_cycles=9,
                        dram_bytes_per_cycle=22.0, dram_read_latency_cycles=381, dram_write_latency_cycles=426,
                        dram_bytes_per_s=267.0e9, unpackers_share_l1=True, cb_config_cycles=25,
                        ncrisc_kernel_copy_cycles=400),
    # clock: tech_reports Blackhole bring-up guide; NOC 60.9 B/cycle: the tech reports' Blackhole DRAM
    # report; latency 373: NL's one 64 B L1 read on Blackhole; DRAM: 500 GB/s measured of 512 spec,
    # readers next to their banks (Saturating_DRAM_bandwidth). NL as above: issue 23 (256 x 64 B: L1
    # reads 34.9, writes 23.0, DRAM reads 22.2 cycles apart; the median); packet: 256 data flits of
    # 64 B (tt-isa-documentation BlackholeA0/NoC; noc_parameters.h NOC_MAX_BURST_SIZE); multicast reservation 224 (ONE_TO_ALL 2x2, 3x3,
    # 5x5, 8x8, ONE_TO_ROW of 13, ONE_TO_COLUMN of 10: 278, 296, 328, 374, 406, 406 cycles apart, less
    # 18 cycles per core of extent, averaged); DRAM per core 22 B/cycle (256 x 2 KB reads / writes:
    # 22.0 / 21.7), floors 486 / 399 (one 64 B DRAM read / write); unpackers: no source documents
    # Blackhole's (tt-isa-documentation has no Blackhole UNPACR page), and sharing as on Wormhole would
    # cap a bfloat16 HiFi2 matmul of 1x4 sub-blocks at 32 / 42 = 76% of the matrix engine where
    # TR/GEMM_FLOPS measures 85% on P150 (2560x2816x2816 out of box, whose 8x8-tile blocks ttnn runs in
    # 1x4 sub-blocks), so each unpacker keeps its own 64 B/cycle
    "blackhole": Arch(name="blackhole", grid=(13, 10), l1_total=1536 * 1024, l1_unreserved_base=0x1B480,
                      l1_alignment=16, num_dram_banks=8, dram_bank_size=4 << 30, dram_alignment=64, num_cbs=64,
                      dst_tiles=16, clock_hz=1.35e9, noc_bytes_per_cycle=60.9, noc_latency_cycles=373,
                      noc_issue_cycles=23, noc_max_packet_bytes=16384, mcast_reserve_cycles=224, noc_hop_cycles=9,
                      dram_bytes_per_cycle=22.0, dram_read_latency_cycles=486, dram_write_latency_cycles=399,
                      dram_bytes_per_s=500.0e9, unpackers_share_l1=False, cb_config_cycles=20,
                      ncrisc_kernel_copy_cycles=0),
}


def get_arch(name: str) -> Arch:
    try:
        return ARCHS[name]
    except KeyError:
        raise ValueError(f"unknown Tenstorrent arch {name!r}; choose one of {sorted(ARCHS)}") from None
