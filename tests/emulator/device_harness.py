"""Builds and runs small emulator programs for the device-model tests.

A program is a list of kernel sources (compiled one translation unit each, like the driver
does) plus a line-based spec read by device_harness.cpp:
  arch <name>
  buffer <name> <bytes> <page_size> in|out|inout|scratch   (in: loads <name>.bin)
  cb <cores> <index> <total_bytes> <page_size> <format>
  semaphore <cores> <initial>
  kernel <source> reader|writer|compute <cores> <fp32_dest_acc 0|1> <ct args a,b,c or ->
    (a compute kernel line may end in utd=<one 0/1 per CB index>: ComputeConfig::unpack_to_dest_mode,
    1 = UnpackToDestFp32)
  rtargs <kernel_id> <cores> <args...>   (@buf = buffer address, noc:x,y = NOC x y of a core)
<cores> is "x,y" or "x0,y0-x1,y1".
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tilelang_tt.contract.formats import bfloat16_round
from tilelang_tt.emulator.driver import arch_table_define, bfloat16_bits_to_float32

ROOT = Path(__file__).resolve().parents[2]
EMU = ROOT / "tilelang_tt" / "emulator"
CXX = ["g++", "-std=c++20", "-O2", "-pthread"]
INCLUDES = ["-I", str(EMU / "include"), "-I", str(EMU / "runtime")]
HARNESS = Path(__file__).with_name("device_harness.cpp")
# The device model (kernel side); host_api.cpp is not needed by a harness calling emu::Device.
RUNTIME_SOURCES = ["device.cpp", "dataflow.cpp", "compute.cpp", "tilize.cpp", "formats.cpp"]


@dataclass(frozen=True)
class Kernel:
    source_name: str
    code: str
    compile_args: tuple[int, ...] = ()


def _compile(src: Path, obj: Path, extra: list[str]) -> None:
    subprocess.run([*CXX, *INCLUDES, *extra, "-c", str(src), "-o", str(obj)], check=True,
                   capture_output=True, text=True)


def runtime_objects(build_dir: Path) -> list[Path]:
    """Compiles runtime/*.cpp (with the driver's arch table) and the harness once into build_dir
    (keyed by content)."""
    sources = [EMU / "runtime" / f for f in RUNTIME_SOURCES] + [HARNESS]
    headers = sorted((EMU / "runtime").glob("*.hpp"))
    defines = [arch_table_define()]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources + headers) + defines[0].encode()).hexdigest()[:16]
    out = build_dir / f"runtime-{digest}"
    objs = [out / (p.stem + ".o") for p in sources]
    if not all(o.exists() for o in objs):
        out.mkdir(parents=True, exist_ok=True)
        with ThreadPoolExecutor() as pool:
            list(pool.map(lambda so: _compile(so[0], so[1], defines), zip(sources, objs)))
    return objs


def build(work: Path, runtime: list[Path], kernels: list[Kernel]) -> Path:
    work.mkdir(parents=True, exist_ok=True)
    jobs = []
    for i, k in enumerate(kernels):
        fn = f"kernel_{i}_{Path(k.source_name).stem}"
        src = work / k.source_name
        src.write_text(k.code + f'\n#include "kernel_registry.hpp"\nTT_EMU_REGISTER_KERNEL("{k.source_name}", {fn})\n')
        ct = ",".join(str(a) for a in k.compile_args)
        jobs.append((src, work / f"{fn}.o", [f"-Dkernel_main={fn}", f"-DKERNEL_COMPILE_TIME_ARGS={ct}"]))

    def compile_job(job):
        try:
            _compile(*job)
        except subprocess.CalledProcessError as e:
            raise AssertionError(f"kernel {job[0].name} failed to compile:\n{e.stderr}") from None

    with ThreadPoolExecutor() as pool:
        list(pool.map(compile_job, jobs))
    exe = work / "program"
    subprocess.run([*CXX, *[str(o) for o in runtime], *[str(j[1]) for j in jobs], "-o", str(exe)],
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
