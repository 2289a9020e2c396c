"""Calibration of the emulator's timing model against published Wormhole measurements (issue 13).

    .venv/bin/python -m benchmarks.calibration [--quick] [--out benchmarks/results/calibration.json]

Each row is an experiment behind a published number, run as a program on the emulator, and the
ratio hardware time / predicted time (goal: within 1.25x either way; TT-Lang's roofline estimator
is 1.4-1.7x off silicon). Sources ("TR" = tenstorrent/tt-metal tech_reports/, figures collected in
../shared/reference/hardware-figures.md):

- ttnn's out-of-box matmul (TR/GEMM_FLOPS/GEMM_FLOPS.md, "N150 Out of Box Results": BF16 in and out,
  HiFi2, DRAM interleaved, 8x8 cores, no trace). The device time is the report's own
  "Device Based Utilization" turned back into time: utilization = ideal cycles / actual cycles with
  ideal cycles = M*K*N / 32^3 * 32 (HiFi2) / 64 cores at 1 GHz. Our program: TileLang's GEMM with
  ttnn's per-core work (a core's block is M/8 x N/8, one block per core, as the multicast factory
  gives it; 4096^3: four 256x256 blocks per core, L1 holds no 512x512 block with its pipeline), a
  K step of 4 tiles, bfloat16 accumulation as ttnn's default compute config (no fp32 DST), and the
  A row / B column multicast.
- DRAM bandwidth (TR/Saturating_DRAM_bandwidth: 267 GB/s measured on Wormhole): an element-wise
  add of 2048x2048 bfloat16 tensors, bytes moved (read and written) per predicted second.
- One core's matrix engine (TR/GEMM_FLOPS "Matrix Multiplication TFLOPS": 8x16 x 16x16 per cycle, 4
  TFLOPS at LoFi, 2 at HiFi2, 1 at HiFi4 on Wormhole; those are peaks, so the hardware column is the
  peak and the ratio is the utilization the model predicts, <= 1 by construction): a 128x1024 by
  1024x128 GEMM on one core (one output block, eight K steps) with A and B in its L1.

The model never predicts faster than the roofline of the shape: each row also checks that.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

import tilelang_tt
from benchmarks.run import KERNELS, ROOT, bf16
from tilelang_tt.contract.arch import get_arch
from tilelang_tt.layout import BufferLayout

GOAL = 1.25  # issue 13: model within 1.25x of hardware
WORMHOLE_CORES = 64  # the 8x8 grid of the GEMM reports
HIFI2_CYCLES = 32  # TR/GEMM_FLOPS: cycles per 32x32x32 tile at HiFi2
WORMHOLE = get_arch("wormhole_b0")  # its clock and measured DRAM bandwidth (sources in contract/arch.py)
CLOCK_HZ, DRAM_GBS = WORMHOLE.clock_hz, WORMHOLE.dram_bytes_per_s / 1e9
PEAK_TFLOPS = {"LoFi": 4.0, "HiFi2": 2.0, "HiFi4": 1.0}  # TR/GEMM_FLOPS, one Wormhole core

# TR/GEMM_FLOPS "N150 Out of Box Results", BF16 HiFi2, DRAM, no trace: (M, K, N) -> device-based
# utilization in percent
OUT_OF_BOX = {
    (1024, 1024, 1024): 41.69,
    (1024, 1024, 2048): 56.83,
    (1024, 2048, 2048): 60.52,
    (2048, 2048, 2048): 66.74,
    (4096, 4096, 4096): 59.49,
}
QUICK = ((1024, 1024, 2048), (2048, 2048, 2048))


def _timing(artifacts, *inputs) -> dict:
    artifacts.run(*inputs)
    return artifacts.last_counters["timing"]


def out_of_box_rows(shapes) -> list[dict]:
    rows = []
    for M, K, N in shapes:
        ideal_cycles = M * K * N / 32**3 * HIFI2_CYCLES / WORMHOLE_CORES
        hardware_s = ideal_cycles / (OUT_OF_BOX[(M, K, N)] / 100) / CLOCK_HZ
        bm, bn = min(M // 8, 256), min(N // 8, 256)
        func = KERNELS.gemm(M, N, K, bm, bn, 128, accum_dtype="bfloat16")
        timing = _timing(tilelang_tt.compile(func, grid=(8, 8), multicast="on", math_fidelity="HiFi2"),
                         bf16(M, K), bf16(K, N), torch.empty(M, N, dtype=torch.bfloat16))
        rows.append(_row(f"ttnn out-of-box matmul {M}x{K}x{N} BF16 HiFi2 8x8", hardware_s, timing,
                         roofline_s=ideal_cycles / CLOCK_HZ, unit=f"{2 * M * K * N / hardware_s / 1e12:.2f} TFLOPS"))
    return rows


def dram_row() -> dict:
    n = 2048
    moved = 3 * n * n * 2  # two inputs read, one output written, bfloat16
    timing = _timing(tilelang_tt.compile(KERNELS.eltwise("add", n, n, 128, 128)), bf16(n, n), bf16(n, n),
                     torch.empty(n, n, dtype=torch.bfloat16))
    hardware_s = moved / (DRAM_GBS * 1e9)
    return _row(f"DRAM bandwidth: element-wise add {n}x{n} bf16", hardware_s, timing, roofline_s=hardware_s,
                unit=f"{DRAM_GBS:.0f} GB/s")


def matrix_engine_rows() -> list[dict]:
    rows = []
    m, k = 128, 1024  # one 128x128 block, eight K steps of 128
    l1 = BufferLayout(memory="L1", layout="height_sharded", shard_grid=(1, 1))
    for fidelity, peak in PEAK_TFLOPS.items():
        func = KERNELS.gemm(m, m, k, m, m, 128, accum_dtype="bfloat16")
        artifacts = tilelang_tt.compile(func, grid=(1, 1), math_fidelity=fidelity, layouts={"A": l1, "B": l1})
        timing = _timing(artifacts, bf16(m, k), bf16(k, m), torch.empty(m, m, dtype=torch.bfloat16))
        peak_s = 2 * m * m * k / (peak * 1e12)
        rows.append(_row(f"one core's matrix engine {m}x{k}x{m} in L1, {fidelity}", peak_s, timing,
                         roofline_s=peak_s, unit=f"{peak:.0f} TFLOPS peak", measured=False))
    return rows


def _row(name: str, hardware_s: float, timing: dict, roofline_s: float, unit: str, measured: bool = True) -> dict:
    """``measured``: the hardware figure is a measurement (the ratio is checked against the goal),
    not a peak."""
    model_s = timing["seconds"]
    return {"experiment": name, "measured": measured, "hardware_us": round(hardware_s * 1e6, 2), "hardware": unit,
            "model_us": round(model_s * 1e6, 2), "bound": timing["bound"],
            "hardware_over_model": round(hardware_s / model_s, 3),
            "above_roofline": model_s >= roofline_s * (1 - 1e-9)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"only the GEMMs {QUICK} of the out-of-box table")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "calibration.json"))
    args = parser.parse_args(argv)
    rows = [*out_of_box_rows(QUICK if args.quick else OUT_OF_BOX), dram_row(), *matrix_engine_rows()]
    print(f"{'experiment':58} {'hardware':>12} {'model':>10} {'hw/model':>9}  bound")
    for r in rows:
        print(f"{r['experiment']:58} {r['hardware_us']:>10.1f}us {r['model_us']:>8.1f}us "
              f"{r['hardware_over_model']:>9.2f}  {r['bound']}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=1) + "\n")
    below = [r["experiment"] for r in rows if not r["above_roofline"]]
    outside = [r["experiment"] for r in rows if r["measured"] and not 1 / GOAL <= r["hardware_over_model"] <= GOAL]
    print(f"\nwrote {out}")
    print("predicted faster than the roofline: " + (", ".join(below) or "none"))
    print(f"outside {GOAL}x of hardware: " + (", ".join(outside) or "none"))


if __name__ == "__main__":
    main()
