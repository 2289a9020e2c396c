"""Calibration of the emulator's timing model against published Wormhole and Blackhole measurements (issue 13).

    .venv/bin/python -m benchmarks.calibration [--quick] [--out benchmarks/results/calibration.json]

Each row is an experiment behind a published number, run as a program on the emulator, and the
ratio hardware time / predicted time (goal: within 1.25x either way; TT-Lang's roofline estimator
is 1.4-1.7x off silicon). Every row also checks that the model never predicts faster than the
roofline of the experiment (compute: the matrix engine's peak; DRAM: the spec bandwidth; NOC: one
flit per cycle). A row is "by construction" when the model's constant is the published number
itself (its ratio is then 1 or the difference between two published figures). Sources ("TR" =
tenstorrent/tt-metal tech_reports/, figures collected in ../shared/reference/hardware-figures.md;
"NL" = tenstorrent/tt-metal tests/tt_metal/tt_metal/data_movement/noc_estimator/noc_latencies.yaml,
the data-movement test suite's measured cycles per (pattern, transactions, size), which
noc_estimator.hpp looks up):

- ttnn's matmuls, the programs behind TR/GEMM_FLOPS/GEMM_FLOPS.md's figures: ttnn 0.81.1's 2-D multicast
  matmul (tests/emulator/host_programs.Mcast2DMatmul: the wheel's kernels, unmodified, with the host
  arguments MatmulMultiCoreReuseMcast2DProgramFactory computes), timing only, A, B and C interleaved in DRAM.
  * out of box ("N150 Out of Box Results" and "P150 Out of Box Results (11x10 grid)": BF16 in and out,
    HiFi2, no trace): Mcast2DMatmul.out_of_box, the blocks and sub-blocks create_matmul_program_config
    picks and the default compute config (packer L1 accumulation on for a bfloat16 output);
  * manually tuned ("N150 Manually Tuned Configurations", 8x8, the rows with A and C in DRAM:
    3072x3072x4096 and larger; no trace): Mcast2DMatmul.tuned with the benchmark's own config per shape
    (TUNED: in0_block_w_div, num_out_blocks_h, num_out_blocks_w of tests/ttnn/unit_tests/benchmarks/
    test_benchmark.py's matmul_shapes_bfloat16 / _bfloat8_b, the version listing the report's shapes),
    BF16 HiFi2 and HiFi4, BFP8 HiFi2 and LoFi (BFP8 A and B; C stays bfloat16 here where the benchmark
    writes it as BFP8: the writes follow the last math, outside the time compared). The rows with A or C
    sharded in L1 (every shape up to 3072^3) run the factory's sharded in0 reader, not reproduced.
  The hardware time is the report's "Device Based Utilization" turned back into time: utilization =
  ideal cycles / TRISC1's kernel duration (test_benchmark.py: device_trisc1_kernel_duration, which
  tt-metal's device_post_proc_config.py takes "op_first_last" over all cores: the first TRISC1 kernel
  start to the last TRISC1 kernel end), ideal cycles = M*K*N / 32^3 * cycles per tile (LoFi 16 ... HiFi4
  64) / cores at the arch's clock. The model's time compared is the same span: the latest math (TRISC1)
  clock's end less the earliest one's start (the model's whole kernel, with the writers' last stores of
  C, is the JSON rows' "kernel_us").
- DRAM bandwidth: an element-wise add of 2048x2048 bfloat16 tensors, bytes moved (read and
  written) per predicted second. Wormhole: 267 GB/s measured (TR/Saturating_DRAM_bandwidth), the
  model's constant: by construction. Blackhole (TR/Saturating_DRAM_bandwidth/
  bh_dram_read_microbenchmark.md, one reader per bank streaming 16 KB packets): 500 GB/s with each
  reader next to its bank, the model's constant (by construction), and 344 GB/s with arbitrary
  reader placement, which is what our program's readers have (every core reads every bank): the
  model has no NOC congestion, so that row measures the gap.
- One core's matrix engine (TR/GEMM_FLOPS "Matrix Multiplication TFLOPS": 8x16 x 16x16 per cycle,
  LoFi / HiFi2 / HiFi4 4 / 2 / 1 TFLOPS on Wormhole at 1 GHz, 5.4 / 2.7 / 1.35 on Blackhole at 1.35
  GHz; peaks, so the hardware column is the peak and the ratio is the utilization the model
  predicts, <= 1 by construction): a 128x1024 by 1024x128 GEMM on one core (one output block,
  eight K steps) with A and B in its L1.
- NOC transfers (NL). Most of the model's NOC figures come from this table (contract/arch.py: the
  floors are one-transaction 64 B L1 and DRAM reads and writes, 25.3 B/cycle a 64 KB transfer
  (Blackhole's 60.9 is TR's Blackhole DRAM report), the issue rate and the per-core DRAM rate
  transfers of 256 transactions, the multicast reservation 256 multicasts of 64 B), so these rows
  test how the model composes them, not the figures themselves. Our programs: copy kernels
  whose reader issues N transactions of S bytes and then one barrier, as the suite's kernels do
  (transaction size = a tile page: 2048 B bfloat16, 4096 B float32; or a row of a row-major DRAM
  tensor). The emulated window is the suite's: from the first transaction's issue to the end of
  the barrier that waits for the last one, read off the timing model's trace.
  * unicast L1 -> L1 (NL ONE_FROM_ONE read / ONE_TO_ONE write, cores not sharing a row or
    column): on a 2x2 grid, core (x, y) reads the L1 shard of the diagonally opposite core and
    writes its block into that core's shard of the output (all four at once; the model has no
    link contention, so each core's window is that of a lone transfer);
  * DRAM -> L1 reads (NL ONE_FROM_ONE, DRAM_INTERLEAVED): one core reads 64 tiles, or 64 rows of
    64 B of a row-major tensor;
  * multicast to a core row (NL ONE_TO_ROW, no loopback, 8 cores on Wormhole, 13 on Blackhole): a
    kernel whose every block reads the same block of A, so the compiler multicasts it from the
    row's first core to the others (7 and 12 receivers). The emulated window runs from the
    multicast's issue to the last receiver seeing the sender's flag, which follows the data (the
    suite waits for the write acknowledgements instead). A multicast leaves in packets of at most
    NOC_MAX_BURST_SIZE bytes (tt-metal 0.81.1 noc_parameters.h: 256 words of 32 B on Wormhole, 64 B
    on Blackhole), every packet with the call's `linked` flag (noc_nonblocking_api.h,
    ncrisc_noc_fast_write_any_len). Our sender links the block's multicast to its flag's, so its
    packets reserve the path once. The suite's sender (one_to_all/kernels/sender_multicast.cpp)
    issues N multicasts of S bytes, linked (MULTICAST_LINKED) or not (MULTICAST), and unlinks the
    last one: so each row is compared with the measurement whose packets are our program's. One
    packet (2 KB, 8 KB): the one-transaction row (linked or not, the same: 659 / 666, 884 / 868
    cycles on Wormhole). Larger blocks: N linked multicasts of S bytes with N * S the block's
    bytes (the suite's one-transaction rows of 32 KB and 64 KB are unlinked packets, each
    reserving the path again: 575 cycles per 8 KB packet against 272 linked, NL's 256-transaction
    rows; tests/emulator/test_timing.py pins that cost in the model). Wormhole 64 KB is 4 x 16 KB:
    eight 8 KB packets like ours, but the last multicast's second packet reserves the path once
    more than ours does.
- ttnn's SDPA (tests/emulator/vendor_sdpa.SdpaProgram: the 0.81.1 kernels sdpa.cpp, reader_interleaved.cpp and
  writer_interleaved.cpp, unmodified, with SDPAProgramFactory's arguments), timing only, on Blackhole, causal, d 128,
  batch 1, exp_approx_mode at its default (on). The figures are P150 op times from TR/FlashAttention/
  SDPAPrecisionRecipes.md: the "Routing" table's tt_transformers prefill call (32 query and 8 K/V heads, BFP8 Q, K
  and V, Q256 / K256 chunks on 8x8 cores, HiFi4 with a float32 DST), S 4096 and 8192, whose "Before (legacy)"
  column is the loop 0.81.1 runs with a float32 DST (the standard compute path) and whose "BF16-DEST streaming
  kernel" times (the line under the table) are the streaming path, run here with the same HiFi4; and "Causal,
  sliding-window ...": 8192^2 x 10 heads, Q256 / K512, full grid (the model's 13x10), "the legacy BF16-dest kernel"
  (the streaming path with the default HiFi2). The model's time compared is the program's (kernel) time; the
  report's is the op's (a dispatch of a few us more).
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
from pathlib import Path

import tilelang.language as T
import torch

import tilelang_tt
from benchmarks.run import KERNELS, ROOT, bf16
from tilelang_tt.contract.arch import get_arch
from tilelang_tt.layout import BufferLayout
from tests.emulator.host_programs import Mcast2DMatmul, run_mcast
from tests.emulator.metal2 import ComputeHw
from tests.emulator.vendor_sdpa import SdpaProgram, run_sdpa

GOAL = 1.25  # issue 13: model within 1.25x of hardware
WORMHOLE, BLACKHOLE = get_arch("wormhole_b0"), get_arch("blackhole")  # clocks, DRAM constants (sources in arch.py)
# TR/GEMM_FLOPS "Matrix Multiplication TFLOPS on Wormhole/Blackhole": one core's peak per fidelity
PEAK_TFLOPS = {"wormhole_b0": {"LoFi": 4.0, "HiFi2": 2.0, "HiFi4": 1.0},
               "blackhole": {"LoFi": 5.4, "HiFi2": 2.7, "HiFi4": 1.35}}
# The physical floor of a NOC transfer: one flit per cycle (hardware-figures.md: 32 B flits on
# Wormhole, 64 B on Blackhole)
FLIT_BYTES = {"wormhole_b0": 32, "blackhole": 64}
# DRAM spec bandwidth, the roofline of a DRAM-bound row (TR/Saturating_DRAM_bandwidth: 288 GB/s
# Wormhole; bh_dram_read_microbenchmark.md: 512 GB/s Blackhole)
DRAM_SPEC_GBS = {"wormhole_b0": 288.0, "blackhole": 512.0}
BH_DRAM_ARBITRARY_GBS = 344.0  # bh_dram_read_microbenchmark.md: arbitrary reader placement

# TR/GEMM_FLOPS out-of-box results, BF16 HiFi2, DRAM, no trace: (M, K, N) -> device-based
# utilization in percent. N150: 8x8 grid; P150: "P150 Out of Box Results (11x10 grid)".
OUT_OF_BOX = {
    "wormhole_b0": {(1024, 1024, 1024): 41.69, (1024, 1024, 2048): 56.83, (1024, 2048, 2048): 60.52,
                    (2048, 2048, 2048): 66.74, (4096, 4096, 4096): 59.49},
    "blackhole": {(1280, 1408, 1408): 61.41, (2560, 2816, 2816): 85.08},
}
OUT_OF_BOX_GRID = {"wormhole_b0": (8, 8), "blackhole": (11, 10)}  # (x = columns, y = rows) of the reports
QUICK = {"wormhole_b0": ((1024, 1024, 1024), (2048, 2048, 2048)), "blackhole": ((1280, 1408, 1408),)}
# TR/GEMM_FLOPS "N150 Manually Tuned Configurations", A and C in DRAM, no trace: (storage, fidelity, (M, K, N))
# -> (device-based utilization in percent, the benchmark's (in0_block_w_div, num_out_blocks_h,
# num_out_blocks_w) for that shape: test_benchmark.py matmul_shapes_bfloat16 / matmul_shapes_bfloat8_b)
TUNED = {
    ("bfloat16", "HiFi2", (3072, 3072, 4096)): (74.19, (2, 1, 1)),
    ("bfloat16", "HiFi2", (3072, 4096, 4096)): (75.09, (2, 1, 1)),
    ("bfloat16", "HiFi2", (4096, 4096, 4096)): (59.50, (1, 2, 2)),
    ("bfloat16", "HiFi2", (8192, 8192, 8192)): (66.47, (2, 4, 4)),
    ("bfloat16", "HiFi4", (3072, 3072, 4096)): (91.69, (2, 1, 1)),
    ("bfloat16", "HiFi4", (3072, 4096, 4096)): (92.18, (2, 1, 1)),
    ("bfloat16", "HiFi4", (4096, 4096, 4096)): (83.21, (1, 2, 2)),
    ("bfloat16", "HiFi4", (8192, 8192, 8192)): (88.69, (2, 4, 4)),
    ("bfloat8_b", "HiFi2", (4096, 4096, 4096)): (79.43, (1, 2, 2)),
    ("bfloat8_b", "HiFi2", (8192, 8192, 8192)): (83.94, (2, 4, 4)),
    ("bfloat8_b", "LoFi", (4096, 4096, 4096)): (58.88, (1, 2, 2)),
    ("bfloat8_b", "LoFi", (8192, 8192, 8192)): (64.77, (2, 4, 4)),
}
QUICK_TUNED = (("bfloat16", "HiFi4", (3072, 3072, 4096)),)
CYCLES_PER_TILE = {"LoFi": 16, "HiFi2": 32, "HiFi3": 48, "HiFi4": 64}  # TR/GEMM_FLOPS, per 32x32x32 tile
DATA_FORMAT = {"bfloat16": "Float16_b", "bfloat8_b": "Bfp8_b"}
STORAGE_NAME = {"bfloat16": "BF16", "bfloat8_b": "BFP8"}  # as the report names them
FORMAT_NAME = {"Float16_b": "BF16", "Bfp8_b": "BFP8"}

# NL (noc_latencies.yaml), cycles from the first issue to the barrier for N transactions of S bytes:
# key fields (pattern, mechanism, memory, arch, num_transactions, num_subordinates) and the list
# index of the transaction size (sizes 64, 128, ..., 65536). Wormhole is arch 2, Blackhole 3.
NOC_READ = {  # ONE_FROM_ONE (pattern 0), L1, cores not sharing an axis
    "wormhole_b0": {(1, 2048): 366, (16, 2048): 1468, (64, 2048): 4947, (64, 4096): 9498},
    "blackhole": {(1, 2048): 404, (64, 2048): 2591},
}
NOC_WRITE = {  # ONE_TO_ONE (pattern 1), L1, cores not sharing an axis
    "wormhole_b0": {(1, 2048): 369, (64, 2048): 4650},
    "blackhole": {(64, 2048): 2545},
}
DRAM_READ = {  # ONE_FROM_ONE (pattern 0), DRAM_INTERLEAVED (memory 1)
    "wormhole_b0": {(64, 2048): 6413, (64, 64): 2104},
    "blackhole": {(64, 2048): 6389},
}
# ONE_TO_ROW (pattern 6), no loopback, 8 subordinates (Wormhole), 13 (Blackhole): our block's bytes ->
# (transactions N, transaction size S, cycles) of the measurement issuing our program's packets (see
# above): MULTICAST (mechanism 1) for one transaction, MULTICAST_LINKED (mechanism 2) for N = 4.
MULTICAST_ROW = {
    "wormhole_b0": (8, {2048: (1, 2048, 659), 8192: (1, 8192, 884), 32768: (4, 8192, 1726),
                        65536: (4, 16384, 3106)}),
    "blackhole": (13, {2048: (1, 2048, 766), 65536: (4, 16384, 1849)}),
}
QUICK_NOC = {(1, 2048), (64, 2048), 2048}


# ---- the programs ----


def swap_copy(bm: int, bn: int, dtype: str):
    """On a 2x2 grid, core (x, y) copies shard 3 - (2y + x) of A (four bm x bn shards, one per
    core) into the same shard of C: every core reads from, and writes to, the L1 of the core
    diagonally opposite (not sharing a row or a column)."""

    @T.prim_func
    def main(A: T.Tensor((4 * bm, bn), dtype), C: T.Tensor((4 * bm, bn), dtype)):
        with T.Kernel(2, 2, threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bn), dtype)
            T.copy(A[(3 - (by * 2 + bx)) * bm, 0], A_s)
            T.copy(A_s, C[(3 - (by * 2 + bx)) * bm, 0])

    return main


def copy(M: int, N: int, bm: int, dtype: str = "bfloat16"):
    """C = A in whole-width blocks of bm rows."""

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(1, M // bm, threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, N), dtype)
            T.copy(A[by * bm, 0], A_s)
            T.copy(A_s, C[by * bm, 0])

    return main


def broadcast(cores: int, bm: int, bn: int, dtype: str = "bfloat16"):
    """C[:, x*bn:(x+1)*bn] = A for the `cores` blocks of one row: every block reads the same A
    block, so the compiler multicasts it along the core row."""

    @T.prim_func
    def main(A: T.Tensor((bm, bn), dtype), C: T.Tensor((bm, cores * bn), dtype)):
        with T.Kernel(cores, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bn), dtype)
            T.copy(A[0, 0], A_s)
            T.copy(A_s, C[0, bx * bn])

    return main


# ---- running and measuring ----


def _timing(artifacts, *inputs, timing_only: bool = False) -> dict:
    artifacts.run(*inputs, timing_only=timing_only)
    return artifacts.last_counters["timing"]


def _spans(artifacts, inputs, clock_hz: float) -> dict:
    """Run with the timing model's trace: {(core name, role): [(call, start, end) in cycles]}."""
    with tempfile.TemporaryDirectory(prefix="tt-calibration-") as tmp:
        path = Path(tmp) / "trace.json"
        artifacts.run(*inputs, trace=path)
        events = json.loads(path.read_text())["traceEvents"]
    cores = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    roles = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    spans: dict = {}
    cycles = clock_hz / 1e6  # trace times are microseconds
    for e in events:
        if e["ph"] == "X":
            spans.setdefault((cores[e["pid"]], roles[e["pid"], e["tid"]]), []).append(
                (e["name"], e["ts"] * cycles, (e["ts"] + e["dur"]) * cycles))
    return spans


def _window(calls: list, issue: str, barrier: str) -> float:
    """Cycles from the first `issue` call to the end of the `barrier` call after it (its wait
    included): the span the data-movement suite times."""
    start = next(s for name, s, _ in calls if name == issue)
    end = max(e for name, s, e in calls if s >= start and name in (barrier, f"wait {barrier}"))
    return end - start


def _row(name: str, arch: str, hardware_s: float, model_s: float, bound: str, roofline_s: float, unit: str,
         measured: bool = True, by_construction: bool = False, cycles: bool = False) -> dict:
    """``measured``: the hardware figure is a measurement (the ratio is checked against the goal),
    not a peak; ``by_construction``: the model's constant is the published figure; ``cycles``: a
    short transfer, shown in cycles of the arch clock."""
    return {"experiment": name, "arch": arch, "measured": measured, "by_construction": by_construction,
            "hardware_us": round(hardware_s * 1e6, 3), "hardware": unit, "model_us": round(model_s * 1e6, 3),
            "bound": bound, "hardware_over_model": round(hardware_s / model_s, 3),
            "above_roofline": model_s >= roofline_s * (1 - 1e-9), "cycles": cycles}


def _trisc1_span(timing: dict) -> int:
    """Cycles from the first math (TRISC1) kernel start to the last one's end over all cores: what
    TR/GEMM_FLOPS' device-based utilization times on the device (see the module docstring)."""
    cores = [c["math"] for c in timing["cores"] if c["math"]["end"]]
    return max(c["end"] for c in cores) - min(c["start"] for c in cores)


def _matmul_row(name: str, arch_name: str, mm: Mcast2DMatmul, grid: tuple[int, int], fidelity: str,
                utilization: float) -> dict:
    arch = get_arch(arch_name)
    M, K, N = 32 * mm.mt, 32 * mm.kt, 32 * mm.nt
    ideal_cycles = M * K * N / 32**3 * CYCLES_PER_TILE[fidelity] / (grid[0] * grid[1])
    hardware_s = ideal_cycles / (utilization / 100) / arch.clock_hz
    timing = run_mcast(mm, arch=arch_name).counters["timing"]
    row = _row(name, arch_name, hardware_s, _trisc1_span(timing) / arch.clock_hz, timing["bound"],
               roofline_s=ideal_cycles / arch.clock_hz, unit=f"{2 * M * K * N / hardware_s / 1e12:.2f} TFLOPS")
    row["kernel_us"] = round(timing["seconds"] * 1e6, 3)
    row["config"] = (f"blocks {mm.block_h}x{mm.block_w} of {mm.per_core_m}x{mm.per_core_n}, in0_block_w "
                     f"{mm.in0_block_w}, sub-blocks {mm.out_subblock_h}x{mm.out_subblock_w}")
    return row


def out_of_box_rows(arch_name: str, shapes) -> list[dict]:
    gx, gy = OUT_OF_BOX_GRID[arch_name]
    return [_matmul_row(f"ttnn out-of-box matmul {M}x{K}x{N} BF16 HiFi2 {gx}x{gy}", arch_name,
                        Mcast2DMatmul.out_of_box(M // 32, K // 32, N // 32, (gx, gy), arch=arch_name), (gx, gy),
                        "HiFi2", OUT_OF_BOX[arch_name][(M, K, N)])
            for M, K, N in shapes]


def tuned_rows(keys) -> list[dict]:
    """ttnn's matmul with the hand-picked configs of TR/GEMM_FLOPS' N150 manually tuned rows (Wormhole, 8x8)."""
    rows = []
    for storage, fidelity, (M, K, N) in keys:
        utilization, (div, blocks_h, blocks_w) = TUNED[storage, fidelity, (M, K, N)]
        mm = Mcast2DMatmul.tuned(M // 32, K // 32, N // 32, (8, 8), div, blocks_h, blocks_w, DATA_FORMAT[storage],
                                 fidelity)
        name = f"ttnn manually tuned matmul {M}x{K}x{N} {STORAGE_NAME[storage]} {fidelity} 8x8"
        rows.append(_matmul_row(name, "wormhole_b0", mm, (8, 8), fidelity, utilization))
    return rows


def dram_rows(arch_name: str) -> list[dict]:
    n = 2048
    moved = 3 * n * n * 2  # two inputs read, one output written, bfloat16
    timing = _timing(tilelang_tt.compile(KERNELS.eltwise("add", n, n, 128, 128), arch=arch_name),
                     bf16(n, n), bf16(n, n))
    roofline_s = moved / (DRAM_SPEC_GBS[arch_name] * 1e9)
    model_gbs = get_arch(arch_name).dram_bytes_per_s / 1e9
    published = [(model_gbs, "measured", True)]
    if arch_name == "blackhole":
        published = [(model_gbs, "measured, readers next to their banks", True),
                     (BH_DRAM_ARBITRARY_GBS, "measured, arbitrary reader placement", False)]
    return [_row(f"DRAM bandwidth ({gbs:.0f} GB/s {what}): element-wise add {n}x{n} bf16", arch_name,
                 moved / (gbs * 1e9), timing["seconds"], timing["bound"], roofline_s, unit=f"{gbs:.0f} GB/s",
                 by_construction=construction)
            for gbs, what, construction in published]


def matrix_engine_rows(arch_name: str) -> list[dict]:
    rows = []
    m, k = 128, 1024  # one 128x128 block, eight K steps of 128
    l1 = BufferLayout(memory="L1", layout="height_sharded", shard_grid=(1, 1))
    for fidelity, peak in PEAK_TFLOPS[arch_name].items():
        func = KERNELS.gemm(m, m, k, m, m, 128, accum_dtype="bfloat16")
        artifacts = tilelang_tt.compile(func, arch=arch_name, grid=(1, 1), math_fidelity=fidelity,
                                        layouts={"A": l1, "B": l1})
        timing = _timing(artifacts, bf16(m, k), bf16(k, m), timing_only=True)
        peak_s = 2 * m * m * k / (peak * 1e12)
        rows.append(_row(f"one core's matrix engine {m}x{k}x{m} in L1, {fidelity}", arch_name, peak_s,
                         timing["seconds"], timing["bound"], roofline_s=peak_s, unit=f"{peak:g} TFLOPS peak",
                         measured=False))
    return rows


def _noc_row(name: str, arch_name: str, hardware_cycles: int, model_cycles: float, nbytes: int) -> dict:
    clock = get_arch(arch_name).clock_hz
    return _row(name, arch_name, hardware_cycles / clock, model_cycles / clock, "noc",
                roofline_s=nbytes / FLIT_BYTES[arch_name] / clock, unit=f"{hardware_cycles} cycles", cycles=True)


def unicast_rows(arch_name: str, quick: bool) -> list[dict]:
    """L1 -> L1 reads and writes between diagonal cores of a 2x2 grid (NL ONE_FROM_ONE / ONE_TO_ONE)."""
    clock = get_arch(arch_name).clock_hz
    l1 = BufferLayout(memory="L1", layout="height_sharded", shard_grid=(2, 2))
    reads, writes = NOC_READ[arch_name], NOC_WRITE[arch_name]
    rows = []
    for n, size in sorted(set(reads) | set(writes), key=lambda key: (key[1], key[0])):
        if quick and (n, size) not in QUICK_NOC:
            continue
        dtype = {2048: "bfloat16", 4096: "float32"}[size]
        side = 32 * math.isqrt(n)  # a square block of n tiles
        artifacts = tilelang_tt.compile(swap_copy(side, side, dtype), arch=arch_name, grid=(2, 2),
                                        partition_mode="global", layouts={"A": l1, "C": l1})
        spans = _spans(artifacts, [torch.randn(4 * side, side).to(getattr(torch, dtype))], clock)
        for table, role, issue, barrier, what in ((reads, "reader", "noc_async_read", "noc_async_read_barrier", "read"),
                                                   (writes, "writer", "noc_async_write", "noc_async_write_barrier",
                                                    "write")):
            if (n, size) in table:
                model = max(_window(calls, issue, barrier) for (_, r), calls in spans.items() if r == role)
                rows.append(_noc_row(f"NOC unicast {what} L1->L1, {n} x {size} B", arch_name, table[n, size], model,
                                     n * size))
    return rows


def dram_read_rows(arch_name: str, quick: bool) -> list[dict]:
    """One core reads N transactions from DRAM (NL ONE_FROM_ONE, DRAM_INTERLEAVED): N tiles of an
    interleaved tensor, or N rows of a row-major one (both tensors in rows: tilize and untilize
    between)."""
    clock = get_arch(arch_name).clock_hz
    rows = []
    for (n, size), hardware in DRAM_READ[arch_name].items():
        if quick and (n, size) not in QUICK_NOC:
            continue
        if size == 2048:  # n tiles: a square block
            side = 32 * math.isqrt(n)
            artifacts = tilelang_tt.compile(copy(side, side, side), arch=arch_name, grid=(1, 1))
            inputs, what = [bf16(side, side)], "tiles"
        else:  # n rows of size bytes
            rows_rm = BufferLayout(layout="row_major")
            artifacts = tilelang_tt.compile(copy(n, size // 2, n), arch=arch_name, grid=(1, 1),
                                            layouts={"A": rows_rm, "C": rows_rm})
            inputs, what = [bf16(n, size // 2)], "row-major rows"
        spans = _spans(artifacts, inputs, clock)
        model = _window(spans["core (0,0)", "reader"], "noc_async_read", "noc_async_read_barrier")
        rows.append(_noc_row(f"NOC read DRAM->L1, {n} x {size} B ({what})", arch_name, hardware, model, n * size))
    return rows


def multicast_rows(arch_name: str, quick: bool) -> list[dict]:
    """One multicast of S bytes, linked to its flag, from a row's first core to the rest of the row
    (NL ONE_TO_ROW, the measurement with the same packets)."""
    clock = get_arch(arch_name).clock_hz
    cores, published = MULTICAST_ROW[arch_name]
    rows = []
    for size, (n, each, hardware) in published.items():
        if quick and size not in QUICK_NOC:
            continue
        bm = 32 * 2 ** ((size // 2048).bit_length() // 2)  # 32x32, 64x64, 128x128, 256x128 bfloat16
        bn = size // 2 // bm
        artifacts = tilelang_tt.compile(broadcast(cores, bm, bn), arch=arch_name, grid=(cores, 1), multicast="on")
        spans = _spans(artifacts, [bf16(bm, bn)], clock)
        (sender,) = [calls for (_, role), calls in spans.items()
                     if role == "reader" and any(name == "noc_async_write_multicast" for name, _, _ in calls)]
        start = next(s for name, s, _ in sender if name == "noc_async_write_multicast")
        arrived = max(e for (_, role), calls in spans.items() if role == "reader" and calls is not sender
                      for name, _, e in calls if name == "wait noc_semaphore_wait")
        suite = "" if n == 1 else f" (suite: {n} x {each} B linked)"
        rows.append(_noc_row(f"NOC multicast to a row of {cores} ({cores - 1} receivers), 1 x {size} B{suite}",
                             arch_name, hardware, arrived - start, size))
    return rows


# P150 op times (ms) of TR/FlashAttention/SDPAPrecisionRecipes.md (module docstring): (case, S, query heads, K/V
# heads, K chunk rows, grid, Q/K/V format, compute config, ms)
FP32_HIFI4 = ComputeHw("HiFi4", fp32_dest_acc_en=True, math_approx_mode=False)
BF16_HIFI4 = ComputeHw("HiFi4", fp32_dest_acc_en=False, math_approx_mode=False)
BF16_HIFI2 = ComputeHw("HiFi2", fp32_dest_acc_en=False, math_approx_mode=False)
SDPA_FIGURES = (
    ("tt_transformers prefill", 4096, 32, 8, 256, (8, 8), "Bfp8_b", FP32_HIFI4, 7.62),
    ("tt_transformers prefill", 8192, 32, 8, 256, (8, 8), "Bfp8_b", FP32_HIFI4, 29.38),
    ("tt_transformers prefill", 4096, 32, 8, 256, (8, 8), "Bfp8_b", BF16_HIFI4, 2.28),
    ("tt_transformers prefill", 8192, 32, 8, 256, (8, 8), "Bfp8_b", BF16_HIFI4, 8.72),
    ("P150b", 8192, 10, 10, 512, (13, 10), "Float16_b", BF16_HIFI2, 1.96),
)


def sdpa_rows(quick: bool) -> list[dict]:
    """ttnn's SDPA in the configurations of Tenstorrent's Blackhole figures (module docstring)."""
    rows = []
    for case, seq, heads, kv_heads, k_chunk, grid, fmt, hw, ms in () if quick else SDPA_FIGURES:
        program = SdpaProgram(1, heads, seq, 128, True, grid, q_chunk=256, k_chunk=k_chunk, kv_heads=kv_heads, hw=hw,
                              dtype=fmt)
        timing = run_sdpa(program, arch="blackhole")[1]["timing"]
        # QK^T and PV over the causal blocks of 256 x k_chunk (the diagonal ones whole)
        flops = 2 * 2 * heads * 128 * seq * (seq + k_chunk) / 2
        roofline_s = flops / (PEAK_TFLOPS["blackhole"][hw.math_fidelity] * 1e12 * grid[0] * grid[1])
        dst = "fp32" if hw.fp32_dest_acc_en else "bf16"
        name = (f"ttnn SDPA {case} causal S{seq} {heads}/{kv_heads} heads d128 {FORMAT_NAME[fmt]} "
                f"Q256/K{k_chunk} {hw.math_fidelity} {dst}-dst {grid[0]}x{grid[1]}")
        rows.append(_row(name, "blackhole", ms * 1e-3, timing["seconds"], timing["bound"], roofline_s,
                         unit=f"{flops / (ms * 1e-3) / 1e12:.1f} TFLOPS"))
    return rows


def noc_rows(arch_name: str, quick: bool) -> list[dict]:
    return unicast_rows(arch_name, quick) + dram_read_rows(arch_name, quick) + multicast_rows(arch_name, quick)


def all_rows(quick: bool) -> list[dict]:
    rows = []
    for arch_name in ("wormhole_b0", "blackhole"):
        rows += out_of_box_rows(arch_name, QUICK[arch_name] if quick else OUT_OF_BOX[arch_name])
        if arch_name == "wormhole_b0":
            rows += tuned_rows(QUICK_TUNED if quick else TUNED)
        rows += dram_rows(arch_name) + matrix_engine_rows(arch_name) + noc_rows(arch_name, quick)
    return rows + sdpa_rows(quick)


def _show(r: dict, key: str) -> str:
    value = r[key]
    if r["cycles"]:
        clock = get_arch(r["arch"]).clock_hz
        return f"{value * 1e-6 * clock:.0f} cyc"
    return f"{value:.1f} us"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer shapes and transfer sizes")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "calibration.json"))
    args = parser.parse_args(argv)
    rows = all_rows(args.quick)
    print(f"{'arch':11} {'experiment':82} {'hardware':>11} {'model':>11} {'hw/model':>9}  bound")
    for r in rows:
        mark = "  (by construction)" if r["by_construction"] else "" if r["measured"] else "  (peak)"
        print(f"{r['arch']:11} {r['experiment']:82} {_show(r, 'hardware_us'):>11} {_show(r, 'model_us'):>11} "
              f"{r['hardware_over_model']:>9.2f}  {r['bound']}{mark}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=1) + "\n")
    below = [r["experiment"] for r in rows if not r["above_roofline"]]
    outside = [f"{r['arch']}: {r['experiment']} ({r['hardware_over_model']:.2f})" for r in rows
               if r["measured"] and not 1 / GOAL <= r["hardware_over_model"] <= GOAL]
    print(f"\nwrote {out}")
    print("predicted faster than the roofline: " + (", ".join(below) or "none"))
    print(f"outside {GOAL}x of hardware:" + "".join(f"\n  {o}" for o in outside) if outside else
          f"outside {GOAL}x of hardware: none")


if __name__ == "__main__":
    main()
