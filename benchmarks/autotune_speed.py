"""How long TileLang's autotuner takes to tune 30 GEMM configs on target "tenstorrent" (issue 33, item 3).

    .venv/bin/python -m benchmarks.autotune_speed [--n 512] [--seed ~/.cache/tilelang-tt]

Tunes ``C = A @ B`` (n x n x n, bfloat16, float32 accumulation) over 30 block configs (27 of bm x bn x bk and three
with 3 stages) with a torch reference checked within 2% of the largest |C|, TileLang's result cache off, twice, each
time in a new process: cold (a new cache directory, where no program of the configs is built yet) and warm (the
same directory again: every build cached, the time is the compiler's and the emulator's). It prints the wall and
CPU seconds of each (the tuning process and its children: the C++ builds and the emulator runs) with the load
average before and after, the winner and the configs dropped.

The emulator's runtime and timing host are built into the new directory first, outside the timings (once per cache
and emulator version, not the tuner's work; minutes). ``--seed DIR`` copies them from the cache ``DIR`` instead
(entries named by the hash of what built them, so a copy is the same build), with its pinned tt-metal headers.

Where a candidate's time goes (docs/profiling-and-autotuning.md): the compile, the C++ build of its three kernels
(the timing host runs it without a main.cpp), one timing-only run; main.cpp is built for the checked configs only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import tilelang  # noqa: F401  (tilelang before tvm)
from tilelang.autotuner import AutoTuner

from benchmarks.run import KERNELS
from tilelang_tt import cache

CONFIGS = ([{"bm": bm, "bn": bn, "bk": bk} for bm in (32, 64, 128) for bn in (64, 128, 256) for bk in (32, 64, 128)]
           + [{"bm": 64, "bn": 128, "bk": 64, "stages": 3}, {"bm": 128, "bn": 128, "bk": 64, "stages": 3},
              {"bm": 128, "bn": 256, "bk": 32, "stages": 3}])
PINNED = "ttnn-0.81.1"  # the cache's pinned tt-metal headers (tilelang_tt.env.tt_metal_root)


def within_2_percent(outputs, references):
    for out, ref in zip(outputs, references):
        assert (out.float() - ref).abs().max() <= 0.02 * ref.abs().max()


def cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def tune(n: int) -> dict:
    """One tuning of the 30 configs in this process: its figures."""
    os.environ["TILELANG_AUTO_TUNING_DISABLE_CACHE"] = "1"  # tune, do not reload
    tuner = AutoTuner.from_kernel(lambda bm=64, bn=64, bk=64, stages=2: KERNELS.gemm(n, n, n, bm, bn, bk, stages),
                                  CONFIGS).set_compile_args(out_idx=[-1], target="tenstorrent")
    tuner.set_profile_args(ref_prog=lambda a, b: a.float() @ b.float(), manual_check_prog=within_2_percent)
    load = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), cpu_seconds()
    result = tuner.run()
    wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    return {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "load_before": round(load, 1),
            "load_after": round(os.getloadavg()[0], 1), "config": result.config,
            "latency_us": round(result.latency * 1e3, 2),
            "failures": [f"{f.config} ({f.stage}): {f.reason.splitlines()[0]}" for f in result.failures]}


def seed(directory: Path, source: Path) -> None:
    """Copy the emulator runtime library and the pinned headers of the cache ``source``."""
    if (source / PINNED).is_dir():
        (directory / PINNED).symlink_to((source / PINNED).resolve())
    listed = subprocess.run([sys.executable, "-c", "from tilelang_tt.emulator import driver; "
                             "print(driver.runtime_library())"],
                            env={**os.environ, "TILELANG_TT_CACHE_DIR": str(source)}, check=True,
                            stdout=subprocess.PIPE, text=True)
    library = Path(listed.stdout.strip())
    copy = directory / library.relative_to(source)
    copy.parent.mkdir(parents=True, exist_ok=True)
    for path in (library, cache.record_of(library)):
        shutil.copy2(path, copy.parent / path.name)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=512)
    parser.add_argument("--seed", type=Path, help="a cache directory to copy the emulator runtime from")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # one tuning, its figures as JSON
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(tune(args.n)))
        return
    directory = Path(tempfile.mkdtemp(prefix="tt-autotune-speed-"))
    env = {**os.environ, "TILELANG_TT_CACHE_DIR": str(directory)}
    try:
        if args.seed is not None:
            seed(directory, args.seed.expanduser())
        # the runtime and the timing host, outside the timings
        subprocess.run([sys.executable, "-c", "from tilelang_tt.emulator import driver; driver.runtime_library(); "
                        "driver.plan_host_executable()"], env=env, check=True)
        for name in ("cold", "warm"):
            done = subprocess.run([sys.executable, "-m", "benchmarks.autotune_speed", "--one", "--n", str(args.n)],
                                  env=env, check=True, stdout=subprocess.PIPE, text=True)
            figures = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"{name}: tuned {len(CONFIGS)} configs of GEMM {args.n}^3 in {figures['wall_s']} s wall, "
                  f"{figures['cpu_s']} s CPU ({os.cpu_count()} CPUs, load average {figures['load_before']} before, "
                  f"{figures['load_after']} after)")
            print(f"  best {figures['config']}: {figures['latency_us']} us predicted; "
                  f"dropped {len(figures['failures'])}")
            for failure in figures["failures"]:
                print(f"  {failure}")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
