"""Build and run a program (``main.cpp`` + kernels + ``tt.plan.json``) on the functional emulator.

One host executable per program: ``main.cpp``, each kernel source as its own translation unit
(``-Dkernel_main=<unique>``, ``-DKERNEL_COMPILE_TIME_ARGS=...`` from the plan, registered under
its source name through ``runtime/kernel_registry.hpp``) and the emulator runtime
(``runtime/*.cpp``). Objects and executables are cached under ``<cache>/emu`` by a hash of
everything that goes into them (compiler, flags, sources, every emulator header), so the runtime
is compiled once and a program only once.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tilelang_tt.codegen.host import emit_main_cpp
from tilelang_tt.env import CACHE_DIR, EMU_CXX

EMULATOR_DIR = Path(__file__).resolve().parent
INCLUDE_DIR = EMULATOR_DIR / "include"
RUNTIME_DIR = EMULATOR_DIR / "runtime"
CXX_FLAGS = ("-O2", "-std=c++20", "-pthread")
BUILD_JOBS = 2
RUN_TIMEOUT_S = 600

# Plan dtype -> how its elements are stored in the .bin files.
_STORAGE = {
    "bfloat16": np.dtype("<u2"),
    "float32": np.dtype("<f4"),
    "int32": np.dtype("<i4"),
    "uint32": np.dtype("<u4"),
    "uint16": np.dtype("<u2"),
}


class EmulatorError(RuntimeError):
    """The program failed to build or the emulator rejected it; the message is the diagnostic."""

    def __init__(self, message: str, returncode: int | None = None) -> None:
        super().__init__(message)
        self.returncode = returncode


@dataclass(frozen=True)
class EmulatorResult:
    outputs: dict[str, np.ndarray]  # per written buffer; bfloat16 buffers come back as float32
    counters: dict


# ---- data conversion ----


def _float32_to_bfloat16_bits(values: np.ndarray) -> np.ndarray:
    """Round-to-nearest-even float32 -> bfloat16 bit patterns (NaN stays a quiet NaN)."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(values), np.uint16(0x7FC0), rounded)


def bfloat16_bits_to_float32(bits: np.ndarray) -> np.ndarray:
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def _as_numpy(value: object, dtype: str) -> np.ndarray:
    """A numpy array of ``value``; torch bfloat16 tensors come back as their uint16 bit patterns."""
    if type(value).__module__.split(".")[0] == "torch":
        torch = sys.modules["torch"]
        tensor = value.detach().cpu().contiguous()
        if tensor.dtype == torch.bfloat16:
            return tensor.view(torch.int16).numpy().view(np.uint16)
        if dtype == "bfloat16":
            return tensor.to(torch.float32).numpy()
        return tensor.numpy()
    return np.asarray(value)


def _to_storage(name: str, value: object, buffer: dict) -> np.ndarray:
    dtype = buffer["dtype"]
    if dtype not in _STORAGE:
        raise EmulatorError(f"buffer {name!r}: dtype {dtype!r} is not supported by the emulator driver")
    array = _as_numpy(value, dtype)
    if list(array.shape) != list(buffer["shape"]):
        raise EmulatorError(f"input {name!r} has shape {list(array.shape)}, the plan expects {buffer['shape']}")
    if dtype == "bfloat16":
        if array.dtype in (np.uint16, np.int16):
            return np.ascontiguousarray(array).view(np.uint16).astype("<u2")
        if not np.issubdtype(array.dtype, np.floating):
            raise EmulatorError(f"input {name!r}: expected floats or bfloat16 bit patterns, got {array.dtype}")
        return _float32_to_bfloat16_bits(array.astype(np.float32)).astype("<u2")
    storage = _STORAGE[dtype]
    converted = array.astype(storage)
    if np.issubdtype(storage, np.integer) and not np.array_equal(converted, array):
        raise EmulatorError(f"input {name!r}: values do not fit {dtype}")
    return converted


def _from_storage(raw: np.ndarray, buffer: dict) -> np.ndarray:
    shaped = raw.reshape(buffer["shape"])
    return bfloat16_bits_to_float32(shaped) if buffer["dtype"] == "bfloat16" else shaped


# ---- building ----


def _digest(*parts: bytes | str) -> str:
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()[:24]


def _tree_digest() -> str:
    """Every emulator header and runtime source: anything in them can change any object."""
    files = sorted([*INCLUDE_DIR.rglob("*"), *RUNTIME_DIR.glob("*")])
    return _digest(*(part for f in files if f.is_file() for part in (str(f.relative_to(EMULATOR_DIR)), f.read_bytes())))


def _compiler_identity(cxx: str) -> str:
    try:
        version = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as err:
        raise EmulatorError(f"C++ compiler {cxx!r} is not usable: {err}") from None
    return f"{cxx}\n{version}"


@dataclass(frozen=True)
class _Unit:
    """One translation unit to compile to ``obj``."""

    label: str
    source: Path
    obj: Path
    defines: tuple[str, ...] = ()


def _kernel_symbol(source_name: str) -> str:
    return "tt_emu_kernel_" + re.sub(r"\W", "_", source_name)


def _compile(cxx: str, unit: _Unit) -> None:
    if unit.obj.exists():
        return
    unit.obj.parent.mkdir(parents=True, exist_ok=True)
    partial = unit.obj.with_name(f"{unit.obj.name}.{os.getpid()}.tmp")
    command = [cxx, *CXX_FLAGS, f"-I{INCLUDE_DIR}", f"-I{RUNTIME_DIR}", *unit.defines, "-c", str(unit.source), "-o", str(partial)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        partial.unlink(missing_ok=True)
        raise EmulatorError(f"compiling {unit.label} failed:\n{done.stderr.strip()}", done.returncode)
    os.replace(partial, unit.obj)


def _write_once(path: Path, text: str) -> None:
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    partial.write_text(text)
    os.replace(partial, path)


def build(sources: dict[str, str], plan: dict) -> Path:
    """The cached emulator executable of a program (``main.cpp`` is generated when absent)."""
    cache = CACHE_DIR.get() / "emu"
    cxx = EMU_CXX.get()
    base = _digest(_compiler_identity(cxx), " ".join(CXX_FLAGS), _tree_digest())
    units = [
        _Unit(f"emulator runtime {cpp.name}", cpp, cache / "obj" / f"runtime-{cpp.stem}-{base}.o")
        for cpp in sorted(RUNTIME_DIR.glob("*.cpp"))
    ]
    main_cpp = sources.get("main.cpp") or emit_main_cpp(plan)
    main_key = _digest(base, main_cpp)
    _write_once(cache / "src" / main_key / "main.cpp", main_cpp)
    units.append(_Unit("main.cpp", cache / "src" / main_key / "main.cpp", cache / "obj" / f"main-{main_key}.o"))
    for kernel in plan["kernels"]:
        name = kernel["source"]
        if name not in sources:
            raise EmulatorError(f"the plan's {kernel['role']} kernel {name!r} is not among the sources {sorted(sources)}")
        symbol = _kernel_symbol(name)
        text = f'{sources[name]}\n#include "kernel_registry.hpp"\nTT_EMU_REGISTER_KERNEL("{name}", {symbol})\n'
        defines = (
            f"-Dkernel_main={symbol}",
            "-DKERNEL_COMPILE_TIME_ARGS=" + ",".join(str(int(a)) for a in kernel["compile_time_args"]),
        )
        key = _digest(base, text, *defines)
        _write_once(cache / "src" / key / name, text)
        units.append(_Unit(name, cache / "src" / key / name, cache / "obj" / f"kernel-{key}.o", defines))
    with ThreadPoolExecutor(max_workers=BUILD_JOBS) as pool:
        for future in [pool.submit(_compile, cxx, unit) for unit in units]:
            future.result()
    exe = cache / "bin" / _digest(base, *(u.obj.name for u in units)) / "main"
    if not exe.exists():
        exe.parent.mkdir(parents=True, exist_ok=True)
        partial = exe.with_name(f"main.{os.getpid()}.tmp")
        done = subprocess.run(
            [cxx, *CXX_FLAGS, *(str(u.obj) for u in units), "-o", str(partial)], capture_output=True, text=True
        )
        if done.returncode != 0:
            partial.unlink(missing_ok=True)
            raise EmulatorError(f"linking the emulator program failed:\n{done.stderr.strip()}", done.returncode)
        os.replace(partial, exe)
    return exe


# ---- running ----


def run(sources: dict[str, str], plan: dict, inputs: dict[str, object], data_dir: Path | None = None) -> EmulatorResult:
    """Build (or reuse) the program and run it on ``inputs`` (numpy arrays or torch tensors by buffer name).

    The program's data directory (``<buffer>.bin`` inputs, ``<buffer>.out.bin`` outputs,
    ``counters.json``; DEVELOPERS.md, Contract 2) is ``data_dir`` when given, and kept; else a
    temporary directory."""
    exe = build(sources, plan)
    buffers = {b["name"]: b for b in plan["buffers"]}
    wanted = sorted(n for n, b in buffers.items() if b["access"] in ("read", "readwrite"))
    missing, unknown = set(wanted) - set(inputs), set(inputs) - set(buffers)
    if missing or unknown:
        raise EmulatorError(f"inputs: missing {sorted(missing)}, not buffers of the plan {sorted(unknown)}")
    if data_dir is not None:
        Path(data_dir).mkdir(parents=True, exist_ok=True)
    with nullcontext(data_dir) if data_dir is not None else tempfile.TemporaryDirectory(prefix="tt-emu-") as tmp:
        data_dir = Path(tmp)
        for name in wanted:
            _to_storage(name, inputs[name], buffers[name]).tofile(data_dir / f"{name}.bin")
        counters_path = data_dir / "counters.json"
        env = {**os.environ, "TT_EMU_ARCH": plan["arch"], "TT_EMU_COUNTERS": str(counters_path)}
        try:
            done = subprocess.run(
                [str(exe), str(data_dir)], capture_output=True, text=True, env=env, timeout=RUN_TIMEOUT_S
            )
        except subprocess.TimeoutExpired:
            raise EmulatorError(f"the emulated program ran longer than {RUN_TIMEOUT_S} s") from None
        if done.returncode != 0:
            message = done.stderr.strip() or f"the emulated program exited with code {done.returncode}"
            raise EmulatorError(message, done.returncode)
        outputs = {}
        for name, buffer in buffers.items():
            if buffer["access"] in ("write", "readwrite"):
                count = math.prod(buffer["shape"])
                raw = np.fromfile(data_dir / f"{name}.out.bin", dtype=_STORAGE[buffer["dtype"]], count=count)
                outputs[name] = _from_storage(raw, buffer)
        counters = json.loads(counters_path.read_text()) if counters_path.exists() else {}
    return EmulatorResult(outputs, counters)
