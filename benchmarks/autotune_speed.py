"""How long TileLang's autotuner takes to tune 30 GEMM configs on target "tenstorrent" (issue 33, item 3).

    TILELANG_TT_CACHE_DIR=$(mktemp -d) .venv/bin/python -m benchmarks.autotune_speed [--n 512]

Tunes ``C = A @ B`` (n x n x n, bfloat16, float32 accumulation) over 30 block configs (27 of bm x bn x bk and three
with 3 stages) with a torch reference checked within 2% of the largest |C|, TileLang's result cache off, and prints
the wall and CPU seconds (this process and its children: the C++ builds and the emulator runs), the winner and the
configs dropped. With a fresh ``TILELANG_TT_CACHE_DIR`` every program is built (the emulator's runtime is built
first, outside the timing: once per cache); with a warm one the builds are cached and the time is the compiler's and
the emulator's. Where a candidate's time goes (docs/profiling-and-autotuning.md): the C++ build of its emulator
program, most of it the host program main.cpp; the compile; one timing-only run.
"""

from __future__ import annotations

import argparse
import os
import time

import tilelang  # noqa: F401  (tilelang before tvm)
from tilelang.autotuner import AutoTuner

from benchmarks.run import KERNELS
from tilelang_tt.emulator import driver

CONFIGS = ([{"bm": bm, "bn": bn, "bk": bk} for bm in (32, 64, 128) for bn in (64, 128, 256) for bk in (32, 64, 128)]
           + [{"bm": 64, "bn": 128, "bk": 64, "stages": 3}, {"bm": 128, "bn": 128, "bk": 64, "stages": 3},
              {"bm": 128, "bn": 256, "bk": 32, "stages": 3}])


def within_2_percent(outputs, references):
    for out, ref in zip(outputs, references):
        assert (out.float() - ref).abs().max() <= 0.02 * ref.abs().max()


def cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=512)
    args = parser.parse_args(argv)
    os.environ["TILELANG_AUTO_TUNING_DISABLE_CACHE"] = "1"  # tune, do not reload
    driver.runtime_objects()  # the emulator runtime, once per cache: not the tuner's work
    n = args.n
    tuner = AutoTuner.from_kernel(lambda bm=64, bn=64, bk=64, stages=2: KERNELS.gemm(n, n, n, bm, bn, bk, stages),
                                  CONFIGS).set_compile_args(out_idx=[-1], target="tenstorrent")
    tuner.set_profile_args(ref_prog=lambda a, b: a.float() @ b.float(), manual_check_prog=within_2_percent)
    wall, cpu = time.perf_counter(), cpu_seconds()
    result = tuner.run()
    wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    print(f"tuned {len(CONFIGS)} configs of GEMM {n}^3 in {wall:.1f} s wall, {cpu:.1f} s CPU "
          f"({os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end)")
    print(f"best {result.config}: {result.latency * 1e3:.2f} us predicted; dropped {len(result.failures)}")
    for failure in result.failures:
        print(f"  {failure.config} ({failure.stage}): {failure.reason.splitlines()[0]}")


if __name__ == "__main__":
    main()
