"""Benchmarks: TT pipeline compile time, emulator speed, and the traffic of the generated code.

    .venv/bin/python benchmarks/run.py [--out benchmarks/results/latest.json] [--quick]

Prints a table and writes JSON. Traffic is compared with the physical minimum of the shape
(every input read once, every output written once). Emulator times are for a cached build
(the first run of each program compiles it and is not timed).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import time
from pathlib import Path

import torch

import tilelang_tt

ROOT = Path(__file__).resolve().parents[1]


def _module(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


KERNELS = _module(ROOT / "tests" / "kernels.py")
OPS = _module(ROOT / "tests" / "op_kernels.py")


def timed(fn, repeat: int):
    times = []
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return result, statistics.median(times)


def bf16(*shape):
    return torch.randn(*shape).to(torch.bfloat16)


def case(name, build, inputs, min_read, min_written, repeat, no_reuse_read=None):
    artifacts, compile_s = timed(build, repeat)
    artifacts.run(*inputs)  # build the emulator program once (cached by content hash)
    _, emulate_s = timed(lambda: artifacts.run(*inputs), repeat)
    totals = artifacts.last_counters["total"]
    tiles_out = min_written // 2048
    return {
        "case": name,
        "compile_s": round(compile_s, 4),
        "emulate_s": round(emulate_s, 4),
        "dram_bytes_read": totals["dram_bytes_read"],
        "dram_bytes_written": totals["dram_bytes_written"],
        "read_vs_minimum": round(totals["dram_bytes_read"] / min_read, 3),
        # tt-metal's matmul_multi_core algorithm reads Kt A tiles and Kt B tiles for every output tile
        "no_reuse_vs_ours": round(no_reuse_read / totals["dram_bytes_read"], 2) if no_reuse_read else "-",
        "write_vs_minimum": round(totals["dram_bytes_written"] / min_written, 3),
        "noc_transactions": totals["noc_read_transactions"] + totals["noc_write_transactions"],
        "barriers": totals["read_barriers"] + totals["write_barriers"],
        "dst_acquires_per_output_tile": round(totals["dst_acquires"] / tiles_out, 3),
        "cores": len(artifacts.plan["work_partition"]),
    }


def gemm_case(M, N, K, bm, bn, bk, grid, repeat):
    a, b = bf16(M, K), bf16(K, N)
    no_reuse = (M // 32) * (N // 32) * (K // 32) * 2 * 2048
    return case(f"gemm {M}x{N}x{K} blk {bm}x{bn}x{bk} grid {grid[0]}x{grid[1]}",
                lambda: tilelang_tt.compile(KERNELS.gemm(M, N, K, bm, bn, bk), grid=grid),
                (a, b), 2 * (M * K + K * N), 2 * M * N, repeat, no_reuse)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "latest.json"))
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args(argv)
    repeat = 1 if args.quick else 3

    rows = [
        gemm_case(512, 512, 512, 64, 64, 64, (8, 8), repeat),
        gemm_case(512, 512, 512, 128, 128, 64, (4, 4), repeat),
        gemm_case(1024, 1024, 2048, 128, 128, 64, (8, 8), repeat),
    ]
    a, b = bf16(2048, 2048), bf16(2048, 2048)
    rows.append(case("eltwise add 2048x2048 blk 64x128 grid 8x8",
                     lambda: tilelang_tt.compile(KERNELS.eltwise("add", 2048, 2048, 64, 128), grid=(8, 8)),
                     (a, b), 2 * 2 * 2048 * 2048, 2 * 2048 * 2048, repeat))
    q, k, v = bf16(1024, 64), bf16(1024, 64), bf16(1024, 64)
    rows.append(case("flash attention seq 1024 d 64",
                     lambda: tilelang_tt.compile(OPS.flash_attention(1024, 64)),
                     (q, k, v), 3 * 2 * 1024 * 64, 2 * 1024 * 64, repeat))

    header = ["case", "compile_s", "emulate_s", "read_vs_minimum", "no_reuse_vs_ours", "write_vs_minimum",
              "noc_transactions",
              "barriers", "dst_acquires_per_output_tile", "cores"]
    widths = [max(len(h), *(len(str(r[h])) for r in rows)) for h in header]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    for r in rows:
        print("  ".join(str(r[h]).ljust(w) for h, w in zip(header, widths)))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
