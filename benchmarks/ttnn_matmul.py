"""The timing model on Tenstorrent's own matmul against TileLang's GEMM of the same work.

ttnn 0.81.1's ``bmm_large_block_zm.cpp`` with its ``reader_bmm_tile_layout.cpp`` and
``writer_bmm_tile_layout.cpp``, from the pinned wheel, run by a host program that names them by
their files (the emulated ``CreateKernel`` builds them), with the arguments of
matmul_multi_core_reuse's program factory (``tests/emulator/host_programs.ReuseMatmul``: in0 blocks
two tiles wide, output sub-blocks of 4 x 2 tiles, 16 x 16 output tiles per core, each core reading its
operands from DRAM, no multicast, bfloat16 partials, HiFi4); and TileLang's GEMM
(``tests/kernels.py``) compiled with the same blocking: one 512 x 512 block per core, K steps of 64,
bfloat16 accumulation, no multicast, HiFi4. Both predicted timing-only (no arithmetic).

Run from the project root: ``.venv/bin/python -m benchmarks.ttnn_matmul [M K N]`` (default 1024 1024
1024: 2 x 2 cores).
"""

from __future__ import annotations

import argparse

import numpy as np

import tilelang_tt
from benchmarks.run import KERNELS, bf16
from tests.emulator.host_programs import HostKernel, ReuseMatmul, accessor, buffer_entry, cpp_named, host_program
from tests.emulator.plans import host_program_plan, host_program_sources
from tilelang_tt.emulator import run

BLOCK_READER = "ttnn/operations/matmul/device/kernels/dataflow/reader_bmm_tile_layout.cpp"
BLOCK_WRITER = "ttnn/operations/matmul/device/kernels/dataflow/writer_bmm_tile_layout.cpp"
BLOCK_COMPUTE = "ttnn/operations/matmul/device/kernels/compute/bmm_large_block_zm.cpp"


def _cpp_list(values) -> str:
    return "{" + ", ".join(map(str, values)) + "}"


def ttnn_program(mm: ReuseMatmul) -> tuple[dict, dict]:
    """The host program (sources, plan) of matmul_multi_core_reuse's kernels and arguments."""
    named = cpp_named(mm.named_args)
    cores = mm.grid[0] * mm.grid[1]
    tiles = {"A": mm.mt * mm.kt, "B": mm.kt * mm.nt, "C": mm.mt * mm.nt}
    main = host_program(mm.grid, {"A": (tiles["A"], True), "B": (tiles["B"], True), "C": (tiles["C"], False)},
                        mm.cbs, {
        "reader": HostKernel(BLOCK_READER, "DataMovementConfig{.processor = DataMovementProcessor::RISCV_1, "
                             f".noc = NOC::RISCV_1_default, .compile_args = reader_ct, .named_compile_args = {named}}}",
                             accessor("A", "reader") + accessor("B", "reader"),
                             tuple(_cpp_list(args) for args in mm.reader_args("A_address", "B_address"))),
        "compute": HostKernel(BLOCK_COMPUTE, f"ComputeConfig{{.math_fidelity = MathFidelity::HiFi4, .compile_args = "
                              f"{_cpp_list(mm.compute_args)}, .named_compile_args = {named}}}", "", ("{}",) * cores),
        "writer": HostKernel(BLOCK_WRITER, "DataMovementConfig{.processor = DataMovementProcessor::RISCV_0, "
                             f".noc = NOC::RISCV_0_default, .compile_args = writer_ct, .named_compile_args = {named}}}",
                             accessor("C", "writer"), tuple(_cpp_list(args) for args in mm.writer_args("C_address"))),
    })
    plan = host_program_plan("wormhole_b0", [buffer_entry(name, count, "write" if name == "C" else "read")
                                             for name, count in tiles.items()])
    return host_program_sources(main), plan


def predictions(M: int, K: int, N: int) -> dict[str, dict]:
    mm = ReuseMatmul(M // 32, K // 32, N // 32)
    sources, plan = ttnn_program(mm)
    words = {name: np.zeros((count, 512), dtype=np.uint32)
             for name, count in (("A", mm.mt * mm.kt), ("B", mm.kt * mm.nt))}
    ttnn = run(sources, plan, words, timing_only=True).counters["timing"]
    bm, bn, bk = 32 * mm.per_core_m, 32 * mm.per_core_n, 32 * mm.in0_block_w
    func = KERNELS.gemm(M, N, K, bm, bn, bk, accum_dtype="bfloat16")
    artifacts = tilelang_tt.compile(func, arch="wormhole_b0", grid=mm.grid, multicast="off", math_fidelity="HiFi4")
    artifacts.run(bf16(M, K), bf16(K, N), timing_only=True)
    return {"ttnn bmm_large_block_zm": ttnn, "TileLang GEMM": artifacts.last_counters["timing"]}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shape", nargs="*", type=int, default=[1024, 1024, 1024], help="M K N")
    M, K, N = parser.parse_args(argv).shape
    for name, timing in predictions(M, K, N).items():
        busy = {role: max(c.get(role, {}).get("busy", 0) for c in timing["cores"])
                for role in ("reader", "unpack", "math", "pack", "writer")}
        print(f"{name:24} {timing['seconds'] * 1e6:8.1f} us  bound {timing['bound']:8}  busiest per RISC (cycles): "
              + ", ".join(f"{role} {cycles:.0f}" for role, cycles in busy.items()))


if __name__ == "__main__":
    main()
