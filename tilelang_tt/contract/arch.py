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
    dram_bytes_per_s: float  # all banks together, measured

    @property
    def l1_bytes(self) -> int:
        """L1 per core usable for CBs and L1 buffers."""
        return self.l1_total - self.l1_unreserved_base

    def dst_budget(self, fp32_dest_acc: bool) -> int:
        """Tiles one acquire may use: half of DST (double-buffered), halved again for fp32."""
        half = self.dst_tiles // 2
        return half // 2 if fp32_dest_acc else half


ARCHS: dict[str, Arch] = {
    # clock: docs.tenstorrent.com specs; NOC: tt-metal noc_latencies.yaml (via tt-lang's
    # CycleEstimator.md), 25.3 B/cycle at the 64 KB asymptote and a 293-cycle floor; DRAM: 267 GB/s
    # measured of 288 spec (tt-metal tech_reports/Saturating_DRAM_bandwidth)
    "wormhole_b0": Arch(name="wormhole_b0", grid=(8, 8), l1_total=1464 * 1024, l1_unreserved_base=0x19D70,
                        l1_alignment=16, num_dram_banks=12, dram_bank_size=1 << 30, dram_alignment=32, num_cbs=32,
                        dst_tiles=16, clock_hz=1.0e9, noc_bytes_per_cycle=25.3, noc_latency_cycles=293,
                        dram_bytes_per_s=267.0e9),
    # clock: tech_reports Blackhole bring-up guide; NOC 60.9 B/cycle: the tech reports' Blackhole DRAM
    # report; latency: ASSUMPTION, Wormhole's floor (no published Blackhole table; tt-lang does the
    # same); DRAM: 500 GB/s measured of 512 spec, readers next to their banks (Saturating_DRAM_bandwidth)
    "blackhole": Arch(name="blackhole", grid=(13, 10), l1_total=1536 * 1024, l1_unreserved_base=0x1B480,
                      l1_alignment=16, num_dram_banks=8, dram_bank_size=4 << 30, dram_alignment=64, num_cbs=64,
                      dst_tiles=16, clock_hz=1.35e9, noc_bytes_per_cycle=60.9, noc_latency_cycles=293,
                      dram_bytes_per_s=500.0e9),
}


def get_arch(name: str) -> Arch:
    try:
        return ARCHS[name]
    except KeyError:
        raise ValueError(f"unknown Tenstorrent arch {name!r}; choose one of {sorted(ARCHS)}") from None
