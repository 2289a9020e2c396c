"""Build and run a program (``main.cpp`` + kernels + ``tt.plan.json``) on the functional emulator.

One host executable per program: ``main.cpp``, each kernel source as its own translation unit
(``-Dkernel_main=<unique>``, ``-DKERNEL_COMPILE_TIME_ARGS=...`` from the plan and, for the compute
kernel, ``-DTT_EMU_MATH_APPROX_MODE=0|1`` and ``-DTT_EMU_DST_ACCUM_MODE=0|1``: tt-metal's APPROX and
DST_ACCUM_MODE, :func:`_compute_defines`; for a data-movement kernel ``-DNOC_INDEX=0|1``, its NOC; registered under
its source name through ``runtime/kernel_registry.hpp``) and the emulator runtime
(``runtime/*.cpp``, compiled with the architecture table of :mod:`tilelang_tt.contract.arch` as
the ``TT_EMU_ARCHS`` define) as one shared library, ``libtt_emu.so``, that every program links (found by
its rpath) rather than a copy of it in each executable. Objects, libraries and executables are cached
under ``<cache>/emu/<build base>`` (:func:`_build_base`: the compiler, flags and every emulator source)
by a hash of everything that goes into them (defines, sources), so the runtime is compiled and linked
once and a program only once; the cache is kept under its size limit (:mod:`tilelang_tt.cache`).

The plan is a :class:`tilelang_tt.contract.plan.Plan`; ``main.cpp`` is one of the program's
sources (the compiler writes it), never made here. A run of a plan of one device whose main.cpp is the
compiler's needs no main.cpp build (compiling main.cpp was most of a program's build): the plan host
(:mod:`tilelang_tt.emulator.plan_host`, built once per runtime, :func:`plan_host_executable`) makes main.cpp's
calls and reads from the plan, with the program's kernel objects in a shared object (:func:`build_plan_host`).

A caller that shows progress passes ``progress(phase, done, total)`` (:data:`Progress`): ``build``
reports ``("compiling", units compiled, units to compile)`` for what is not cached yet (the host
program's precompiled header, each translation unit and the link), ``run`` ``("running", cores
finished, cores)`` as the emulated launch goes (the runtime writes it to a pipe,
``TT_EMU_PROGRESS_FD``). Nothing is reported otherwise, and no output of the program changes.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from tilelang_tt import cache
from tilelang_tt.contract.arch import ARCHS
from tilelang_tt.contract.formats import BFLOAT16_QUIET_NAN, bfloat16_round
from tilelang_tt.contract.buffers import PlanBuffer
from tilelang_tt.contract.kernels import ComputeConfig, PlanKernel
from tilelang_tt.contract.plan import Plan
from tilelang_tt.emulator import blockfloat, plan_host
from tilelang_tt.emulator.plan_host import HOST_PROGRAM, NOC
from tilelang_tt.env import CACHE_DIR, EMU_CXX, tt_metal_root

EMULATOR_DIR = Path(__file__).resolve().parent
INCLUDE_DIR = EMULATOR_DIR / "include"
RUNTIME_DIR = EMULATOR_DIR / "runtime"
# The generated program (main.cpp, the kernels) is compiled for every new program and does little
# work itself: -O1 compiles main.cpp in three quarters of -O2's time and runs the same.
CXX_FLAGS = ("-O1", "-std=c++20", "-pthread")
# The host program main.cpp (and the precompiled header of its includes, which must be built alike) is
# compiled without optimisation: a program is one new main.cpp, most of its build's time (an autotuner
# builds one per config), and -O0 compiles it in three quarters of -O1's time; what it runs (reading,
# tilizing and writing the tensors) is a small part of a run.
HOST_CXX_FLAGS = ("-O0",)
# A kernel's object is position independent: the same object links into main.cpp's executable and into the
# shared object of kernels the plan host (plan_host.cpp) loads, so a program's kernels compile once for both.
KERNEL_CXX_FLAGS = ("-fPIC",)
# The runtime (built once per runtime version, cached) is where emulation spends its time: its math
# loops vectorise at -O3 (the same arithmetic: no -ffast-math, no FMA contraction). It is a shared library
# (-fPIC); its thread-locals use the initial-exec model, as an executable's do (the library is loaded with
# the program, never by dlopen, so a thread-local costs no __tls_get_addr call).
RUNTIME_CXX_FLAGS = ("-O3", "-ffp-contract=off", "-fPIC", "-ftls-model=initial-exec")
RUNTIME_LIBRARY = "libtt_emu.so"
LIBRARY_FLAGS = ("-shared", f"-Wl,-soname,{RUNTIME_LIBRARY}")
# -rdynamic: the kernels a program builds from files at run time (runtime/jit.cpp) are shared objects
# whose calls into the emulator resolve to the program's (the runtime library's, and the inline
# variables of the headers the executable defines, one copy for all). -s: no symbol table (a third of an
# executable; the dynamic symbols -rdynamic exports stay), nothing reads it.
LINK_FLAGS = ("-rdynamic", "-s")
# The plan host's kernels: a shared object whose calls into the emulator resolve, when plan_host.cpp loads it,
# to the program's runtime (as LINK_FLAGS above lets them).
SHARED_FLAGS = ("-shared",)
BUILD_JOBS = 2
RUN_TIMEOUT_S = 600
Progress = Callable[[str, int, int], None]  # progress(phase, done, total)
COMPILING, RUNNING = "compiling", "running"  # the phases


class EmulatorError(RuntimeError):
    """The program failed to build or the emulator rejected it; the message is the diagnostic."""

    def __init__(self, message: str, returncode: int | None = None) -> None:
        super().__init__(message)
        self.returncode = returncode


@dataclass(frozen=True)
class EmulatorResult:
    outputs: dict[str, np.ndarray]  # per written buffer; bfloat16 and block float buffers come back as float32
    counters: dict


# ---- data conversion ----


def _float32_to_bfloat16_bits(values: np.ndarray) -> np.ndarray:
    """Round-to-nearest-even float32 -> bfloat16 bit patterns (NaN stays a quiet NaN)."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = bfloat16_round(bits).astype(np.uint16)
    return np.where(np.isnan(values), np.uint16(BFLOAT16_QUIET_NAN), rounded)


def bfloat16_bits_to_float32(bits: np.ndarray) -> np.ndarray:
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def _as_numpy(value: object, dtype: str) -> np.ndarray:
    """A numpy array of ``value``; a torch bfloat16 tensor for a bfloat16 buffer comes back as its
    uint16 bit patterns, for another buffer as its values (never its bits read as numbers)."""
    if type(value).__module__.split(".")[0] == "torch":
        torch = sys.modules["torch"]
        tensor = value.detach().cpu().contiguous()
        if tensor.dtype == torch.bfloat16:
            return tensor.view(torch.int16).numpy().view(np.uint16) if dtype == "bfloat16" else \
                tensor.to(torch.float32).numpy()
        if dtype == "bfloat16":
            return tensor.to(torch.float32).numpy()
        return tensor.numpy()
    return np.asarray(value)


def _to_storage(name: str, value: object, buffer: PlanBuffer) -> np.ndarray:
    dtype = buffer.dtype
    array = _as_numpy(value, dtype)
    if array.shape != buffer.shape:
        raise EmulatorError(f"input {name!r} has shape {list(array.shape)}, the plan expects {list(buffer.shape)}")
    if buffer.format.block:  # the host converts to block floating point tiles (main.cpp writes their bytes)
        floats = bfloat16_bits_to_float32(array) if array.dtype == np.uint16 else array.astype(np.float32)
        return blockfloat.encode_tiles(blockfloat.tilize(floats.reshape(buffer.matrix_dims)), buffer.format)
    if dtype == "bfloat16":
        if array.dtype in (np.uint16, np.int16):
            return np.ascontiguousarray(array).view(np.uint16).astype("<u2")
        if not np.issubdtype(array.dtype, np.floating):
            raise EmulatorError(f"input {name!r}: expected floats or bfloat16 bit patterns, got {array.dtype}")
        return _float32_to_bfloat16_bits(array.astype(np.float32)).astype("<u2")
    storage = np.dtype(buffer.format.storage)
    converted = array.astype(storage)
    if np.issubdtype(storage, np.integer) and not np.array_equal(converted, array):
        raise EmulatorError(f"input {name!r}: values do not fit {dtype}")
    return converted


def _stored_count(buffer: PlanBuffer) -> int:
    """Elements of ``buffer.format.storage`` in its ``.out.bin``: its bytes for block floating point tiles."""
    return buffer.num_pages * buffer.page_size if buffer.format.block else math.prod(buffer.shape)


def _from_storage(raw: np.ndarray, buffer: PlanBuffer) -> np.ndarray:
    if buffer.format.block:
        return blockfloat.untilize(blockfloat.decode_tiles(raw, buffer.format), *buffer.matrix_dims).reshape(buffer.shape)
    shaped = raw.reshape(buffer.shape)
    return bfloat16_bits_to_float32(shaped) if buffer.dtype == "bfloat16" else shaped


# ---- building ----


def arch_table_define() -> str:
    """``-DTT_EMU_ARCHS=...``: every row of :data:`tilelang_tt.contract.arch.ARCHS` as a C++
    ``ArchSpec`` initialiser (runtime/internal.hpp; designated, so a field the two disagree on
    does not compile)."""
    rows = (
        f'{{.name = "{a.name}", .grid_x = {a.grid[0]}, .grid_y = {a.grid[1]}, .l1_size = {a.l1_total}, '
        f".l1_unreserved_base = {a.l1_unreserved_base}, .l1_alignment = {a.l1_alignment}, "
        f".dram_banks = {a.num_dram_banks}, .dram_bank_size = {a.dram_bank_size}, "
        f".dram_alignment = {a.dram_alignment}, .num_cbs = {a.num_cbs}, .dst_tiles = {a.dst_tiles}, "
        f".clock_hz = {a.clock_hz!r}, .noc_bytes_per_cycle = {a.noc_bytes_per_cycle!r}, "
        f".noc_latency = {a.noc_latency_cycles}, .noc_issue = {a.noc_issue_cycles}, "
        f".noc_max_packet = {a.noc_max_packet_bytes}, .mcast_reserve = {a.mcast_reserve_cycles}, "
        f".noc_hop = {a.noc_hop_cycles}, "
        f".dram_bytes_per_cycle = {a.dram_bytes_per_cycle!r}, .dram_read_latency = {a.dram_read_latency_cycles}, "
        f".dram_write_latency = {a.dram_write_latency_cycles}, .dram_bytes_per_s = {a.dram_bytes_per_s!r}, "
        f".unpackers_share_l1 = {str(a.unpackers_share_l1).lower()}, .cb_config = {a.cb_config_cycles}, "
        f".ncrisc_kernel_copy = {a.ncrisc_kernel_copy_cycles}}}"
        for a in ARCHS.values()
    )
    return "-DTT_EMU_ARCHS=" + ", ".join(rows)


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
    flags: tuple[str, ...] = ()  # after CXX_FLAGS
    header: Path | None = None  # included first (a precompiled header)


def _kernel_symbol(source_name: str) -> str:
    return "tt_emu_kernel_" + re.sub(r"\W", "_", source_name)


def _compile(cxx: str, unit: _Unit) -> None:
    """``unit.obj``, compiled unless the cache holds it whole (:func:`tilelang_tt.cache.build_entry`: one
    compile per object across processes, test workers and programs built at once)."""

    def compile_to(partial: Path) -> None:
        command = [cxx, *CXX_FLAGS, *unit.flags, f"-I{INCLUDE_DIR}", f"-I{RUNTIME_DIR}", *unit.defines, "-c",
                   str(unit.source), "-o", str(partial)]
        if unit.header is not None:
            command[1:1] = ["-include", str(unit.header)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise EmulatorError(f"compiling {unit.label} failed:\n{done.stderr.strip()}", done.returncode)

    cache.build_entry(unit.obj, compile_to)


def _host_header(cache_dir: Path, base: str, main_source: str) -> _Unit | None:
    """A precompiled header of the host program's ``#include`` lines (the std and tt-metalium
    headers, about half of compiling ``main.cpp``), built once per include set and compiler setup;
    ``main.cpp`` is compiled with ``-include`` of it (where GCC finds the ``.gch`` beside it; a PCH
    it cannot use it ignores, and the headers are read as text: the same program either way).
    The unit that builds the ``.gch`` from the header (``source``), or None when the program has no
    leading includes."""
    includes = []
    for line in main_source.splitlines():
        if line.startswith("#include"):
            includes.append(line)
        elif includes and line.strip() and not line.startswith("//"):
            break  # the includes are the program's first lines (after its comment)
    if not includes:
        return None
    text = "#pragma once\n" + "\n".join(includes) + "\n"
    header = cache_dir / "pch" / _digest(base, *HOST_CXX_FLAGS, text) / "host.hpp"
    cache.write_text_entry(header, text)
    return _Unit("the host program's precompiled header", header, header.with_name("host.hpp.gch"),
                 flags=(*HOST_CXX_FLAGS, "-x", "c++-header"))


class _Tally:
    """``progress(phase, done, total)`` once per step done, from any thread; nothing without a
    ``progress`` or steps."""

    def __init__(self, progress: Progress | None, phase: str, total: int) -> None:
        self.progress, self.phase, self.total, self.done = progress, phase, total, 0
        self.lock = threading.Lock()

    def step(self, *_future) -> None:
        if self.progress is None or self.total == 0:
            return
        with self.lock:
            self.done += 1
            self.progress(self.phase, self.done, self.total)


def _build_base(cxx: str) -> str:
    """What every object depends on: the compiler, the flags, the emulator's sources, the arch table (and
    the cache's layout: entries with records never share a name with entries of another). Computed again
    only when a file of the emulator or the compiler's executable changes (their sizes and times): a
    program's build asks it, and reading every header and running ``cxx --version`` each time was a tenth
    of an autotuner candidate's time once its builds are cached."""
    files = sorted([*INCLUDE_DIR.rglob("*"), *RUNTIME_DIR.glob("*")])
    stats = tuple((str(f), f.stat().st_mtime_ns, f.stat().st_size) for f in files if f.is_file())
    found = shutil.which(cxx)
    compiler = None if found is None else (found, Path(found).resolve().stat().st_mtime_ns)
    return _build_base_of(cxx, stats, compiler)


@functools.lru_cache(maxsize=8)
def _build_base_of(cxx: str, _stats: tuple, _compiler: tuple | None) -> str:
    """:func:`_build_base` for the files and compiler whose sizes and times are given (the cache's key)."""
    return _digest(_compiler_identity(cxx), " ".join(CXX_FLAGS), " ".join(RUNTIME_CXX_FLAGS), _tree_digest(),
                   arch_table_define(), cache.LAYOUT)


def _root(cxx: str) -> tuple[Path, str]:
    """The cache folder of this build base, ``<cache>/emu/<base>``, and the base: every entry built with it lies
    there, so a base no longer in use is a folder that eviction removes first (:func:`tilelang_tt.cache.trim`)."""
    base = _build_base(cxx)
    return CACHE_DIR.get() / "emu" / base, base


def build_folder() -> Path:
    """The cache folder of the current build base (``<cache>/emu/<base>``)."""
    return _root(EMU_CXX.get())[0]


def cache_root() -> Path:
    """``<cache>/emu``: what :func:`tilelang_tt.cache.using` holds and :func:`tilelang_tt.cache.trim` keeps
    under the limit."""
    return CACHE_DIR.get() / "emu"


def _runtime_units(root: Path, base: str) -> list[_Unit]:
    defines = (arch_table_define(),)
    return [
        _Unit(f"emulator runtime {cpp.name}", cpp, root / "obj" / f"runtime-{cpp.stem}-{base}.o", defines,
              RUNTIME_CXX_FLAGS)
        for cpp in sorted(RUNTIME_DIR.glob("*.cpp"))
    ]


def _runtime_steps(root: Path, base: str) -> int:
    """The units :func:`_runtime_library` will compile and link (0: the cache holds the library whole)."""
    if cache.verified(root / "lib" / RUNTIME_LIBRARY):
        return 0
    return 1 + sum(not cache.verified(unit.obj) for unit in _runtime_units(root, base))


def _runtime_library(cxx: str, root: Path, base: str, tally: _Tally | None) -> Path:
    """The runtime library of the base (``root/lib/libtt_emu.so``), compiled and linked unless the cache holds it
    whole; its objects are compiled only when it is not (a ``tally`` step for each unit and the link)."""
    library = root / "lib" / RUNTIME_LIBRARY
    if not cache.verified(library):
        units = _runtime_units(root, base)
        _compile_all(cxx, [unit for unit in units if not cache.verified(unit.obj)], tally)
        cache.build_entry(library, _linker(cxx, [unit.obj for unit in units], LIBRARY_FLAGS))
        if tally is not None:
            tally.step()
    return library


def runtime_library() -> Path:
    """The emulator runtime (runtime/*.cpp) as the shared library every emulated program links, built once per
    build base into the cache; the device-model tests link their own programs with it (``-Wl,-rpath`` to its
    folder, :func:`rpath`)."""
    cxx = EMU_CXX.get()
    root, base = _root(cxx)
    with cache.using(cache_root()):
        return _runtime_library(cxx, root, base, None)


def rpath(library: Path) -> str:
    """The link flag by which a program finds ``library`` (the runtime) where the cache holds it."""
    return f"-Wl,-rpath,{library.parent}"


def compiled_object(source: Path, label: str) -> Path:
    """``source``, a translation unit of the emulator's headers (a test's own host program), compiled
    with the program's flags once per cache, build and content: what links with runtime_library()."""
    cxx = EMU_CXX.get()
    root, base = _root(cxx)
    obj = root / "obj" / f"{source.stem}-{_digest(base, source.read_bytes())}.o"
    with cache.using(cache_root()):
        _compile(cxx, _Unit(label, source, obj))
    return obj


def _compute_defines(kernel: PlanKernel) -> tuple[str, ...]:
    """What tt-metal's JIT build makes a constant of a compute kernel's build from its ComputeConfig: APPROX,
    ``math_approx_mode``, and DST_ACCUM_MODE, ``fp32_dest_acc_en`` (written into the kernel's
    chlkc_descriptors.h; the emulator's headers read ``TT_EMU_MATH_APPROX_MODE``, runtime/device_types.hpp, and
    ``TT_EMU_DST_ACCUM_MODE``, api/emu/chlkc_descriptors.h, as for kernel files runtime/jit.cpp builds)."""
    if not isinstance(kernel.config, ComputeConfig):
        return ()
    return (f"-DTT_EMU_MATH_APPROX_MODE={int(kernel.config.math_approx_mode)}",
            f"-DTT_EMU_DST_ACCUM_MODE={int(kernel.config.fp32_dest_acc_en)}")


def _movement_defines(kernel: PlanKernel) -> tuple[str, ...]:
    """What tt-metal's JIT build defines for a data-movement kernel from its DataMovementConfig: NOC_INDEX, its
    ``noc``, which the dataflow API makes ``noc_index`` (tt_metal/impl/kernels/kernel.cpp,
    DataMovementKernel::process_defines; the emulator's headers: runtime/device_types.hpp)."""
    if isinstance(kernel.config, ComputeConfig):
        return ()
    return (f"-DNOC_INDEX={NOC[kernel.config.noc]}",)


def _kernels(sources: dict[str, str], plan: Plan, host: tuple[str, ...]) -> list[PlanKernel]:
    """Every launch's kernels; an EmulatorError when ``sources`` lacks one of them or of the ``host`` files."""
    kernels = list(plan.program_kernels)  # every launch's, and a mesh collective's combine kernels
    missing = [name for name in (*host, *(k.source for k in kernels)) if sources.get(name) is None]
    if missing:
        raise EmulatorError(f"the program lacks {', '.join(missing)} (sources given: {sorted(sources)}); "
                            "tilelang_tt.compile() writes every file of a program (Artifacts.sources, "
                            "or the directory Artifacts.save writes)")
    return kernels


def _kernel_units(root: Path, base: str, sources: dict[str, str], kernels: list[PlanKernel]) -> list[_Unit]:
    """Each kernel as its own translation unit, registered under its source name (kernel_registry.hpp)."""
    units = []
    for kernel in kernels:
        name = kernel.source
        symbol = _kernel_symbol(name)
        text = f'{sources[name]}\n#include "kernel_registry.hpp"\nTT_EMU_REGISTER_KERNEL("{name}", {symbol})\n'
        defines = (
            f"-Dkernel_main={symbol}",
            "-DKERNEL_COMPILE_TIME_ARGS=" + ",".join(str(a) for a in kernel.compile_time_args),
            *_compute_defines(kernel),
            *_movement_defines(kernel),
        )
        key = _digest(base, text, *defines, *KERNEL_CXX_FLAGS)
        source = cache.write_text_entry(root / "src" / key / name, text)
        units.append(_Unit(name, source, root / "obj" / f"kernel-{key}.o", defines, KERNEL_CXX_FLAGS))
    return units


def _linker(cxx: str, objects: list[Path], flags: tuple[str, ...]) -> Callable[[Path], None]:
    """What links ``objects`` with ``flags`` into the partial file of a cache entry (:func:`cache.build_entry`)."""

    def link(partial: Path) -> None:
        done = subprocess.run([cxx, *CXX_FLAGS, *flags, *(str(o) for o in objects), "-o", str(partial)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise EmulatorError(f"linking the emulator program failed:\n{done.stderr.strip()}", done.returncode)

    return link


def build(sources: dict[str, str], plan: Plan, progress: Progress | None = None, rebuild: bool = False) -> Path:
    """The cached emulator executable of a program: ``sources`` holds ``main.cpp`` and the plan's
    kernel sources (``progress``: see the module's docstring). Every cache entry it uses is whole
    (:mod:`tilelang_tt.cache`) and stays while it builds (:func:`tilelang_tt.cache.using`); objects that fail
    to link are compiled again once, and ``rebuild`` (the program crashed or could not start) compiles and links
    the program's own entries again."""
    kernels = _kernels(sources, plan, (HOST_PROGRAM,))
    cxx = EMU_CXX.get()
    root, base = _root(cxx)
    with cache.using(cache_root()):
        cache.sweep(cache_root())
        main_key = _digest(base, *HOST_CXX_FLAGS, sources[HOST_PROGRAM])
        main_source = cache.write_text_entry(root / "src" / main_key / HOST_PROGRAM, sources[HOST_PROGRAM])
        main_obj = root / "obj" / f"main-{main_key}.o"
        pch = None if cache.verified(main_obj) and not rebuild else _host_header(root, base, sources[HOST_PROGRAM])
        own = [_Unit(HOST_PROGRAM, main_source, main_obj, header=None if pch is None else pch.source,
                     flags=HOST_CXX_FLAGS), *_kernel_units(root, base, sources, kernels)]
        exe = root / "bin" / _digest(base, *LINK_FLAGS, *(u.obj.name for u in own)) / "main"
        if rebuild:  # the program crashed or could not start: its own entries are built again
            for entry in (exe, *(unit.obj for unit in own)):
                cache.discard(entry)
        first = [pch] if pch is not None and not cache.verified(pch.obj) else []  # main.cpp's compile reads it
        pending = [unit for unit in own if not cache.verified(unit.obj)]
        linked = cache.verified(exe)
        tally = _Tally(progress, COMPILING, len(first) + _runtime_steps(root, base) + len(pending) + (not linked))
        for unit in first:
            _compile(cxx, unit)
            tally.step()
        library = _runtime_library(cxx, root, base, tally)  # the program loads it: checked (and so touched) too
        _compile_all(cxx, pending, tally)
        if not linked:
            link = _linker(cxx, [*(unit.obj for unit in own), library], (*LINK_FLAGS, rpath(library)))
            try:
                cache.build_entry(exe, link)
            except EmulatorError:  # whole objects that do not link: the program's own compiled again (no PCH), once
                for unit in own:
                    cache.discard(unit.obj)
                _compile_all(cxx, [replace(unit, header=None) for unit in own], None)
                cache.build_entry(exe, link)
            tally.step()
    return exe


def plan_host_executable(progress: Progress | None = None, rebuild: bool = False) -> Path:
    """The cached executable of the plan host (:mod:`tilelang_tt.emulator.plan_host`): ``plan_host.cpp``
    linked with the runtime library, one for every program, built once per build base as the runtime is.
    ``progress`` and ``rebuild`` as :func:`build`'s (``rebuild``: ``plan_host.cpp``'s object and the link)."""
    cxx = EMU_CXX.get()
    root, base = _root(cxx)
    host = _Unit("the plan host plan_host.cpp", plan_host.SOURCE,
                 root / "obj" / f"plan-host-{_digest(base, plan_host.SOURCE.read_bytes())}.o")
    exe = root / "bin" / _digest(base, *LINK_FLAGS, host.obj.name) / "plan_host"
    with cache.using(cache_root()):
        cache.sweep(cache_root())
        if rebuild:
            for entry in (exe, host.obj):
                cache.discard(entry)
        linked = cache.verified(exe)
        tally = _Tally(progress, COMPILING,
                       _runtime_steps(root, base) + (0 if linked else (not cache.verified(host.obj)) + 1))
        library = _runtime_library(cxx, root, base, tally)  # the plan host loads it: checked (and so touched) too
        if not linked:
            _link_built(cxx, [host], [library], exe, (*LINK_FLAGS, rpath(library)), tally)
    return exe


def build_plan_host(sources: dict[str, str], plan: Plan, progress: Progress | None = None,
                    rebuild: bool = False) -> tuple[Path, Path]:
    """The plan host (:func:`plan_host_executable`) and the cached shared object of the program's kernels (the
    objects :func:`build` links into main.cpp's executable); ``sources`` needs the plan's kernel sources only.
    ``progress`` and ``rebuild`` as :func:`build`'s."""
    kernels = _kernels(sources, plan, ())
    exe = plan_host_executable(progress, rebuild)
    cxx = EMU_CXX.get()
    root, base = _root(cxx)
    with cache.using(cache_root()):
        own = _kernel_units(root, base, sources, kernels)
        library = root / "lib" / _digest(base, *SHARED_FLAGS, *(u.obj.name for u in own)) / "kernels.so"
        if rebuild:  # the program crashed or could not start: its own entries are built again
            for entry in (library, *(unit.obj for unit in own)):
                cache.discard(entry)
        if not cache.verified(library):
            tally = _Tally(progress, COMPILING, sum(not cache.verified(unit.obj) for unit in own) + 1)
            _link_built(cxx, own, [], library, SHARED_FLAGS, tally)
    return exe, library


def _link_built(cxx: str, units: list[_Unit], libraries: list[Path], path: Path, flags: tuple[str, ...],
                tally: _Tally) -> None:
    """``path``, the cache entry of ``units`` (compiled unless whole) and ``libraries`` linked with ``flags``."""
    pending = [unit for unit in units if not cache.verified(unit.obj)]
    _compile_all(cxx, pending, tally)
    cache.build_entry(path, _linker(cxx, [*(unit.obj for unit in units), *libraries], flags))
    tally.step()


def _compile_all(cxx: str, units: list[_Unit], tally: _Tally | None) -> None:
    """Compile ``units`` (at most BUILD_JOBS at once), a ``tally`` step for each."""
    with ThreadPoolExecutor(max_workers=BUILD_JOBS) as pool:
        futures = [pool.submit(_compile, cxx, unit) for unit in units]
        if tally is not None:
            for future in futures:
                future.add_done_callback(tally.step)
        for future in futures:
            future.result()


def kernel_build_env() -> dict[str, str]:
    """The environment of an emulated program that builds kernel files at run time (CreateKernel with a
    kernel's path, runtime/jit.hpp): the compiler command (one argument per line), the cache of built
    kernels (per build base: a change to the emulator rebuilds them), and tt-metal's root dir, the
    pinned wheel's, where relative kernel paths (``ttnn/cpp/ttnn/operations/...``) are found."""
    cxx = EMU_CXX.get()
    command = [cxx, *CXX_FLAGS, f"-I{INCLUDE_DIR}", f"-I{RUNTIME_DIR}"]
    return {"TT_EMU_KERNEL_BUILD": "\n".join(command),
            "TT_EMU_KERNEL_CACHE": str(_root(cxx)[0] / "jit"),
            "TT_METAL_RUNTIME_ROOT": str(tt_metal_root().parent)}


# ---- running ----


def _execute(command: list[str], env: dict[str, str], progress: Progress | None) -> subprocess.CompletedProcess:
    """Run the emulated program; with ``progress``, report ``("running", cores finished, cores)``
    from the lines the runtime writes to a pipe (``TT_EMU_PROGRESS_FD``) while it runs. The cache keeps its
    files until it has started (:func:`tilelang_tt.cache.using`)."""
    read_fd = write_fd = None
    if progress is not None:
        read_fd, write_fd = os.pipe()
        env = {**env, "TT_EMU_PROGRESS_FD": str(write_fd)}
    try:
        with cache.using(cache_root()):
            process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                       pass_fds=() if write_fd is None else (write_fd,))
    except BaseException:
        if read_fd is not None:
            os.close(read_fd)
        raise
    finally:
        if write_fd is not None:
            os.close(write_fd)
    reader = None
    if read_fd is not None:

        def report() -> None:
            with os.fdopen(read_fd) as lines:  # ends when the program exits (it holds the only write end)
                for line in lines:
                    done, total = (int(n) for n in line.split())
                    progress(RUNNING, done, total)

        reader = threading.Thread(target=report, daemon=True)
        reader.start()
    with process:
        try:
            stdout, stderr = process.communicate(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            raise
    if reader is not None:
        reader.join()
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


# A program killed by one of these signals at once, or that could not be started, may be a damaged build
# (an executable or object written whole and damaged since): it is built again and run once more.
CRASHES = (signal.SIGSEGV, signal.SIGBUS, signal.SIGILL)
# The exit code of a program the dynamic loader could not start (its runtime library missing or damaged).
NOT_LOADED = 127


def _run_built(command: list[str], rebuilt: Callable[[], list[str]], env: dict[str, str],
               progress: Progress | None) -> subprocess.CompletedProcess:
    """Run ``command``; once more, as ``rebuilt()`` builds it again, when it crashed (CRASHES) or could not be
    started (the executable or its runtime library gone or damaged)."""
    try:
        done = _execute(command, env, progress)
        if -done.returncode not in CRASHES and done.returncode != NOT_LOADED:
            return done
    except OSError:  # not an executable any more (exec format error, permissions, removed)
        pass
    return _execute(rebuilt(), env, progress)


def run(sources: dict[str, str], plan: Plan, inputs: dict[str, object], data_dir: Path | None = None,
        trace: Path | None = None, timing_only: bool = False, progress: Progress | None = None,
        main_cpp: bool = False) -> EmulatorResult:
    """Build (or reuse) the program (``sources``: ``main.cpp`` and the kernels of ``plan``) and run
    it on ``inputs`` (numpy arrays or torch tensors by buffer name: every input, and any output whose
    contents the elements the kernel does not write keep; the int or float of each scalar parameter by
    its name); a plan with dynamic sizes runs for the sizes the inputs give (a ``SizeError`` for inputs
    it cannot serve). main.cpp reads each size and scalar from its command line (a float as its shortest
    decimal, which names its float32 value exactly).

    The program's data directory (``<buffer>.bin`` inputs, ``<buffer>.out.bin`` outputs,
    ``counters.json``; DEVELOPERS.md, Contract 2) is ``data_dir`` when given, and kept; else a
    temporary directory. With ``trace`` the run also writes the timing model's timeline there, as
    Chrome trace-event JSON (runtime/trace.cpp); without it nothing is recorded. ``timing_only``
    skips the arithmetic of the matrix multiplications (``Device::set_timing_only``): the counters and the
    timing model's prediction are a full run's, there are no outputs (``outputs`` is empty).
    ``progress(phase, done, total)`` is told how the build and the run go (the module's docstring).

    A plan of one device whose main.cpp is the compiler's runs from the plan host
    (:mod:`tilelang_tt.emulator.plan_host`: main.cpp's host calls and reads, without compiling main.cpp): the same
    outputs and counters; a timing-only run does so without a main.cpp too. main.cpp itself is compiled and run
    when ``main_cpp`` asks for it, when ``data_dir`` is given (its files are main.cpp's, Contract 2) and for every
    other program; a full run of sources without main.cpp is an error."""
    from_plan = (not main_cpp and (timing_only or (data_dir is None and HOST_PROGRAM in sources))
                 and plan_host.replaces_main(sources, plan))
    scalars = {d.name for d in plan.dims if d.scalar}
    sizes = plan.dim_values({name: np.shape(value) for name, value in inputs.items() if name not in scalars},
                            {name: inputs[name] for name in scalars if name in inputs}) if plan.dims else {}
    inputs = {name: value for name, value in inputs.items() if name not in scalars}
    if sizes:
        plan = plan.bind(sizes)
    make = functools.partial(build_plan_host if from_plan else build, sources, plan, progress)
    built = make()
    buffers = {b.name: b for b in plan.host_buffers}
    missing = {b.name for b in plan.inputs} - set(inputs)
    unknown = set(inputs) - set(buffers)
    if missing or unknown:
        raise EmulatorError(f"inputs: missing {sorted(missing)}, not buffers of the plan {sorted(unknown)}")
    if data_dir is not None:
        Path(data_dir).mkdir(parents=True, exist_ok=True)
    if trace is not None:
        Path(trace).parent.mkdir(parents=True, exist_ok=True)
    with nullcontext(data_dir) if data_dir is not None else cache.run_folder() as tmp:
        data_dir = Path(tmp)
        # outputs given too: the host uploads what they hold (the kernel may not write all)
        storage = {name: _to_storage(name, inputs[name], buffers[name]) for name in sorted(inputs)}
        if from_plan:
            script = plan_host.write_script(plan, storage, data_dir, read_back=not timing_only)

            def command(built: tuple[Path, Path]) -> list[str]:
                return [str(built[0]), str(script), str(built[1])]
        else:
            for name, array in storage.items():
                array.tofile(data_dir / f"{name}.bin")

            def command(built: Path) -> list[str]:
                return [str(built), str(data_dir), *(str(v) for v in sizes.values())]
        counters_path = data_dir / "counters.json"
        env = {**os.environ, "TT_EMU_ARCH": plan.arch.name, "TT_EMU_COUNTERS": str(counters_path),
               **kernel_build_env()}
        env.pop("TT_EMU_TRACE", None)
        env.pop("TT_EMU_PROGRESS_FD", None)
        if trace is not None:
            env["TT_EMU_TRACE"] = str(Path(trace).resolve())
        env["TT_EMU_TIMING_ONLY"] = "1" if timing_only else "0"
        try:
            done = _run_built(command(built), lambda: command(make(rebuild=True)), env, progress)
        except subprocess.TimeoutExpired:
            raise EmulatorError(f"the emulated program ran longer than {RUN_TIMEOUT_S} s") from None
        if done.returncode != 0:
            message = done.stderr.strip() or f"the emulated program exited with code {done.returncode}"
            raise EmulatorError(message, done.returncode)
        outputs = {}
        for buffer in () if timing_only else (buffers[b.name] for b in plan.outputs):
            storage = np.dtype(buffer.format.storage)
            if from_plan:  # the pages the plan host read, as main.cpp writes them to <name>.out.bin
                raw = plan_host.unpaged(np.fromfile(plan_host.pages_file(data_dir, buffer), dtype=storage), buffer)
            else:
                raw = np.fromfile(data_dir / f"{buffer.name}.out.bin", dtype=storage, count=_stored_count(buffer))
            outputs[buffer.name] = _from_storage(raw[:_stored_count(buffer)], buffer)
        counters = json.loads(counters_path.read_text()) if counters_path.exists() else {}
        if "devices" in counters:  # a mesh: each device's counters (of its launches), and the mesh's
            counters = mesh_counters([launch_counters(d["launches"]) if "launches" in d else d
                                      for d in counters["devices"]])
            counters_path.write_text(json.dumps(counters, indent=1) + "\n")
        elif "launches" in counters:  # several launches: each one's counters, and the kernel's
            counters = launch_counters(counters["launches"])
            counters_path.write_text(json.dumps(counters, indent=1) + "\n")
    return EmulatorResult(outputs, counters)


def _summed(counters: list[dict]) -> dict:
    """Key-wise sums of counter objects (nested: ``tile_ops`` by op; an op some lack counts 0 there)."""
    keys = sorted({key for c in counters for key in c}, key=[k for c in counters for k in c].index)
    return {key: _summed([c.get(key, {}) for c in counters]) if any(isinstance(c.get(key), dict) for c in counters)
            else sum(c.get(key, 0) for c in counters) for key in keys}


def launch_counters(launches: list[dict]) -> dict:
    """The counters of a kernel of several launches from each launch's (``launches``, in order):
    ``total`` summed; ``timing`` the slowest launch's prediction (``launch``: its index) with
    ``cycles`` and ``seconds`` summed over the launches, which run one after the other, and the fabric's
    ``links`` of every launch that used them (``links_end`` counted from the first launch's start); and
    ``launches`` as given. No ``cores``: each launch has its own."""
    slowest = max(range(len(launches)), key=lambda i: launches[i]["timing"]["cycles"])
    timing = launches[slowest]["timing"] | {"launch": slowest,
                                             "cycles": sum(c["timing"]["cycles"] for c in launches),
                                             "seconds": sum(c["timing"]["seconds"] for c in launches)}
    starts = [sum(c["timing"]["cycles"] for c in launches[:i]) for i in range(len(launches))]
    linked = [(start, c["timing"]) for start, c in zip(starts, launches) if "links" in c["timing"]]
    timing.pop("links", None)
    timing.pop("links_end", None)
    if linked:
        timing["links"] = [link for _, t in linked for link in t["links"]]
        timing["links_end"] = max(start + t["links_end"] for start, t in linked)
    return {"total": _summed([c["total"] for c in launches]), "timing": timing, "launches": launches}


def mesh_counters(devices: list[dict]) -> dict:
    """The counters of a mesh run from each device's (``devices``, row-major over the mesh):
    ``total`` summed over the devices, ``timing`` the slowest device's prediction (the devices run
    at once; ``device``: its index) and ``devices`` as given. No ``cores``: each device has its own.
    With the fabric on, ``links`` sums up the fabric's links over the devices (runtime/fabric.cpp): the
    packets, bytes and busy cycles of every link, and ``end``, when the last link was done."""
    total = _summed([d["total"] for d in devices])
    slowest = max(range(len(devices)), key=lambda i: devices[i].get("timing", {}).get("cycles", 0))
    counters = {"total": total, "devices": devices}
    if "timing" in devices[slowest]:
        counters["timing"] = devices[slowest]["timing"] | {"device": slowest}
    timings = [d["timing"] for d in devices if "links" in d.get("timing", {})]
    if timings:
        links = [link for t in timings for link in t["links"]]
        counters["links"] = {key: sum(link[key] for link in links) for key in ("packets", "bytes", "busy")} | {
            "end": max(t["links_end"] for t in timings)}
    return counters
