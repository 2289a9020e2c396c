"""Builds and runs small emulator programs for the device-model tests.

A program is a list of kernel sources (compiled one translation unit each, like the driver
does) plus a line-based spec read by device_harness.cpp:
  arch <name>
  buffer <name> <bytes> <page_size> in|out|inout|scratch   (in: loads <name>.bin)
  cb <cores> <index> <total_bytes> <page_size> <format> [shares=<index>]
    (shares=: the CB shares the L1 of that CB, configured before: several indices of one
    CircularBufferConfig)
  semaphore <cores> <initial>
  kernel <source> reader|writer|compute <cores> <fp32_dest_acc 0|1> <ct args a,b,c or ->
    (a compute kernel line may end in utd=<one 0/1 per CB index>: ComputeConfig::unpack_to_dest_mode,
    1 = UnpackToDestFp32; fid=<0|2|3|4>: ComputeConfig::math_fidelity; fullsync=<0|1>: dst_full_sync_en;
    approx=<0|1>: math_approx_mode, which the kernel's build must match: Kernel.defines
    ``("TT_EMU_MATH_APPROX_MODE", "1")``; a reader or writer line may end in noc=<0|1>:
    DataMovementConfig::noc, 0 when not given, which the kernel's build must match: Kernel.defines
    ``("NOC_INDEX", "1")``)
  rtargs <kernel_id> <cores> <args...>   (@buf = buffer address, noc:x,y = NOC x y of a core)
  stall_limit <seconds>   (Device::set_stall_limit: the launch's watchdog)
  launches <n>   (the program runs n times; with failures the exit code is 3 and stderr has each
    distinct message once, as "<count> x <message>")
<cores> is "x,y" or "x0,y0-x1,y1".
"""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tilelang_tt.contract.formats import bfloat16_round
from tilelang_tt.emulator.driver import CXX_FLAGS, bfloat16_bits_to_float32, compiled_object, rpath, runtime_library
from tilelang_tt.env import EMU_CXX

ROOT = Path(__file__).resolve().parents[2]
EMU = ROOT / "tilelang_tt" / "emulator"
CXX = [EMU_CXX.get(), *CXX_FLAGS]
INCLUDES = ["-I", str(EMU / "include"), "-I", str(EMU / "runtime")]
HARNESS = Path(__file__).with_name("device_harness.cpp")


@dataclass(frozen=True)
class Kernel:
    """A kernel source and what its CreateKernel call would give it: compile-time args, defines and
    named compile-time args (``-DKERNEL_COMPILE_TIME_ARG_MAP``, as tt-metal's JIT build passes them);
    ``cb_formats`` describes the program's CBs to the kernel's build (the kernel-side DataFormat id by
    CB index, 255 for none: tt-metal's chlkc_descriptors.h, api/emu/cb_descriptors.h);
    ``include_dirs`` where its own includes are found."""

    source_name: str
    code: str
    compile_args: tuple[int, ...] = ()
    defines: tuple[tuple[str, str], ...] = ()
    named_args: tuple[tuple[str, int], ...] = ()
    cb_formats: tuple[int, ...] = ()
    include_dirs: tuple[Path, ...] = ()

    def flags(self) -> list[str]:
        out = [f"-D{name}={value}" for name, value in self.defines]
        if self.named_args:
            out.append("-DKERNEL_COMPILE_TIME_ARG_MAP=" + ",".join(f'{{"{n}",{v}}}' for n, v in self.named_args))
        if self.cb_formats:
            out.append("-DTT_EMU_CB_FORMATS=" + ",".join(map(str, self.cb_formats)))
        return out + [f"-I{d}" for d in self.include_dirs]


def _compile(src: Path, obj: Path, extra: list[str]) -> None:
    subprocess.run([*CXX, *INCLUDES, *extra, "-c", str(src), "-o", str(obj)], check=True,
                   capture_output=True, text=True)


def runtime_objects() -> list[Path]:
    """What every test program links: the harness's object and the emulator runtime library, each built once per
    cache and content (the driver's cache)."""
    return [compiled_object(HARNESS, "the device-model test harness"), runtime_library()]


def build(work: Path, runtime: list[Path], kernels: list[Kernel]) -> Path:
    work.mkdir(parents=True, exist_ok=True)
    jobs = []
    for i, k in enumerate(kernels):
        fn = f"kernel_{i}_{Path(k.source_name).stem}"
        src = work / k.source_name  # a path: its directories too ("a/k.cpp", test_kernel_paths.py)
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_text(k.code + f'\n#include "kernel_registry.hpp"\nTT_EMU_REGISTER_KERNEL("{k.source_name}", {fn})\n')
        ct = ",".join(str(a) for a in k.compile_args)
        jobs.append((src, work / f"{fn}.o", [f"-Dkernel_main={fn}", f"-DKERNEL_COMPILE_TIME_ARGS={ct}", *k.flags()]))

    def compile_job(job):
        try:
            _compile(*job)
        except subprocess.CalledProcessError as e:
            raise AssertionError(f"kernel {job[0].name} failed to compile:\n{e.stderr}") from None

    with ThreadPoolExecutor() as pool:
        list(pool.map(compile_job, jobs))
    exe = work / "program"
    libraries = [rpath(path) for path in runtime if path.suffix == ".so"]
    subprocess.run([*CXX, *[str(o) for o in runtime], *libraries, *[str(j[1]) for j in jobs], "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    return exe


@dataclass
class Result:
    returncode: int
    stderr: str
    outputs: dict[str, bytes]
    counters: dict


def run(work: Path, exe: Path, spec: str, inputs: dict[str, bytes], outputs: list[str],
        timeout: float = 20) -> Result:
    (work / "spec.txt").write_text(spec)
    for name, data in inputs.items():
        (work / f"{name}.bin").write_bytes(data)
    proc = subprocess.run([str(exe), str(work)], capture_output=True, text=True, timeout=timeout)
    outs = {}
    counters = {}
    if proc.returncode == 0:
        outs = {n: (work / f"{n}.out.bin").read_bytes() for n in outputs}
        counters = json.loads((work / "counters.json").read_text())
    return Result(proc.returncode, proc.stderr, outs, counters)


def split_work(num_tiles: int, num_cores: int) -> list[tuple[int, int]]:
    """(start tile, tile count) per core, contiguous ranges in core order: tt-metal's
    split_work_to_cores, the first cores one tile more when the tiles do not divide evenly."""
    base, extra = divmod(num_tiles, num_cores)
    out, start = [], 0
    for i in range(num_cores):
        count = base + (i < extra)
        out.append((start, count))
        start += count
    return out


# ---------------------------------------------------------------- numpy reference helpers
def bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bit patterns, round to nearest even (finite inputs)."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return bfloat16_round(u).astype(np.uint16)


def bf16_to_f32(b: np.ndarray) -> np.ndarray:
    return bfloat16_bits_to_float32(b)


def tilize(x: np.ndarray) -> np.ndarray:
    """(M, N) -> flat array of 32x32 tiles, row-major over tiles, each tile as faces 0..3."""
    m, n = x.shape
    t = x.reshape(m // 32, 2, 16, n // 32, 2, 16)  # tile row, face row, row, tile col, face col, col
    return t.transpose(0, 3, 1, 4, 2, 5).reshape(-1)


def untilize(flat: np.ndarray, m: int, n: int) -> np.ndarray:
    t = flat.reshape(m // 32, n // 32, 2, 2, 16, 16)
    return t.transpose(0, 2, 4, 1, 3, 5).reshape(m, n)
