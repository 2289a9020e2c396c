"""The ``tilelang-tt`` command line.

Examples::

    tilelang-tt compile examples/gemm.py --out out/gemm              # reader/compute/writer/main.cpp + tt.plan.json
    tilelang-tt compile kernels.py --func my_kernel --arch blackhole --grid 4x4
    tilelang-tt emulate examples/gemm.py --func gemm --arg M=256 --arg N=256   # a kernel factory and its arguments
    tilelang-tt emulate examples/gemm.py                             # compile, run, check against reference(), counters
    tilelang-tt emulate out/gemm --out out/gemm-run                  # saved program on random inputs; keep outputs + counters.json
    tilelang-tt emulate out/gemm --trace gemm.trace.json --png gemm.png   # timeline per core and RISC (Perfetto); utilization
    tilelang-tt emulate out/gemm --timing-only                       # the predicted time alone, without the matmul arithmetic
    tilelang-tt plan show out/gemm/tt.plan.json                      # grid, work per core, CBs and L1 use, runtime args
    tilelang-tt plan show out/gemm/tt.plan.json --png out/gemm/grid.png   # the core grid: work and L1 use per core
    tilelang-tt dump-ir examples/gemm.py --out ir/gemm               # the TIR after every TT pass: ir/gemm/main/NN_<Pass>.py
    tilelang-tt fetch-headers                                        # the pinned tt-metal 0.81.1 headers
    tilelang-tt cache                                                # the build cache's size and limit; --trim, --clear

A kernel file is a Python module with ``build(**options) -> Artifacts``, or ``@T.prim_func``
kernels: its only one, or the one named by ``--func``, or a function returning one (``--func
gemm --arg M=512``: the factory called with the ``--arg`` values); ``reference(*inputs)`` (torch), when present, is what
``emulate`` checks the result against.

On a terminal ``emulate`` shows how it goes on one line of stderr, rewritten in place: compiling
the kernel file, compiling the program with g++ (units compiled / to compile; nothing when it is
cached), running (cores finished / cores), done; in a file or a pipe it prints none of it.

Exit codes: 0 success; 1 the work failed (compile error, the kernel file raised, emulation
failure, result check failed, the results could not be written: a full or read-only disk); 2 usage
error (bad arguments, or an input that is not what the verb takes: no such file, not an artifacts
directory, not a valid tt.plan.json (damaged, or more than a core's L1), an output path that is a file
or a folder of other files).
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import inspect
import os
import sys
import threading
import time
import traceback
from contextlib import nullcontext
from dataclasses import fields
from pathlib import Path

from tilelang_tt.artifacts import Artifacts, ArtifactsDirError
from tilelang_tt.contract.buffers import PlanBuffer
from tilelang_tt.contract.dims import SizeError
from tilelang_tt.contract.plan import Plan
from tilelang_tt.contract.reading import PlanError
from tilelang_tt.emulator import EmulatorError
from tilelang_tt.emulator.driver import COMPILING, RUNNING
from tilelang_tt.errors import TTCompileError, tilelang_frontend
from tilelang_tt.options import CompileOptions, OptionError, did_you_mean
from tilelang_tt.plan_view import draw_png, load_plan, summary


class UsageError(Exception):
    """Exit code 2: the command line or an input it names is wrong."""


class KernelFileError(Exception):
    """Exit code 1: the user's kernel file raised."""


def _user_code_failed(path: Path, what: str, err: BaseException) -> KernelFileError:
    """A one-paragraph report of an exception the kernel file's own code raised: the exception
    and where it happened (the innermost frame, and the kernel file's line when that differs)."""
    frames = traceback.extract_tb(err.__traceback__)
    where = [frames[-1]] if frames else []
    in_file = [f for f in frames if Path(f.filename).resolve() == path.resolve()]
    if in_file and in_file[-1] is not frames[-1]:
        where.insert(0, in_file[-1])
    lines = [f"{path}: {what} raised {type(err).__name__}: {err}"]
    lines += [f"  at {f.filename}:{f.lineno}: {(f.line or '').strip()}" for f in where]
    lines.append(f"  (run `python {path}` for the full traceback)")
    return KernelFileError("\n".join(lines))


def _user_code(path: Path, what: str, call):
    """``call()``, which runs the kernel file's own code; what TileLang's front end raises while it
    parses a kernel there is a compile error at the user's line (:func:`tilelang_frontend`), what
    else it raises, other than a compile error, a :class:`KernelFileError`."""
    try:
        with tilelang_frontend():
            return call()
    except TTCompileError:
        raise
    except Exception as err:
        raise _user_code_failed(path, what, err) from None


def _load_module(path: Path):
    if not path.is_file():
        raise UsageError(f"{path}: no such kernel file")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    _user_code(path, "importing it", lambda: spec.loader.exec_module(module))
    return module


# The compile options the command line gives with --option NAME=VALUE: all but ``layouts`` (BufferLayout objects;
# ``storage`` is its literal spelling for block floating point).
OPTION_NAMES = tuple(f.name for f in fields(CompileOptions) if f.name != "layouts")


def _options(args) -> dict:
    out = {}
    if args.arch:
        out["arch"] = args.arch
    if args.grid:
        try:
            gx, gy = (int(v) for v in args.grid.lower().split("x"))
        except ValueError:
            raise UsageError(f"--grid {args.grid!r}: write it as XxY, e.g. --grid 8x8") from None
        out["grid"] = (gx, gy)
    for item in args.option:
        name, sep, text = item.partition("=")
        if not sep or not name:
            raise UsageError(f"--option {item!r}: write it as NAME=VALUE, e.g. --option math_fidelity=HiFi2")
        if name not in OPTION_NAMES:
            raise UsageError(f"--option {name}: no compile option of that name; the options are "
                             f"{', '.join(OPTION_NAMES)}")
        if name in out:
            raise UsageError(f"--option {name} is given twice (or with --{name})")
        out[name] = _option_value(text)
    return out


def _option_value(text: str):
    """A Python literal (``(8, 8)``, ``True``, ``{'A': 'bfloat8_b'}``), else the text itself (``HiFi2``)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _compile_file(path: Path, args, **extra):
    import tilelang_tt

    module = _load_module(path)
    options = _options(args) | extra
    if args.arg and not args.func:
        raise UsageError("--arg gives an argument of a kernel factory: name the factory with --func, e.g. "
                         f"--func gemm {' '.join('--arg ' + a for a in args.arg)}")
    if args.func:
        func = getattr(module, args.func, None)
        if func is None:
            raise UsageError(f"{path} has no attribute {args.func!r}")
        func = _kernel_of(path, args.func, func, _factory_args(args.arg))
        return module, tilelang_tt.compile(func, **options)
    if not hasattr(module, "build"):
        from tvm import tirx

        funcs = [name for name, value in vars(module).items() if isinstance(value, tirx.PrimFunc)]
        if len(funcs) == 1:  # the file's one kernel
            return module, tilelang_tt.compile(getattr(module, funcs[0]), **options)
        if funcs:
            raise UsageError(f"{path} defines several @T.prim_func kernels ({', '.join(funcs)}) and no "
                             f"build(**options): name one with --func, e.g. --func {funcs[0]}")
        raise UsageError(f"{path} defines no @T.prim_func and no build(**options); name the kernel with --func NAME")
    return module, _user_code(path, "build()", lambda: module.build(**options))


def _factory_args(texts: list[str]) -> dict[str, object]:
    """``--arg M=512`` values: each a Python literal (``512``, ``'float32'``, ``(64, 64)``) or a word."""
    out = {}
    for text in texts:
        name, sep, value = text.partition("=")
        if not sep or not name.isidentifier():
            raise UsageError(f"--arg {text!r}: write it as NAME=VALUE, e.g. --arg M=512")
        if name in out:
            raise UsageError(f"--arg {name} is given twice")
        out[name] = _option_value(value)
    return out


def _kernel_of(path: Path, name: str, value, kwargs: dict[str, object]):
    """The PrimFunc ``--func NAME`` names: the kernel itself, or what a kernel factory (a function
    returning a ``@T.prim_func``, or a ``@tilelang.jit`` factory) returns for the ``--arg`` values."""
    from tilelang.jit import JITImpl
    from tvm import tirx

    if isinstance(value, tirx.PrimFunc):
        if kwargs:
            raise UsageError(f"{path}: {name} is a @T.prim_func, which takes no --arg; drop them, or name a factory "
                             "that returns the kernel")
        return value
    factory = value.get_tir if isinstance(value, JITImpl) else value
    if not callable(factory):
        raise UsageError(f"{path}: {name} is a {type(value).__name__}, not a @T.prim_func or a function returning one")
    signature = inspect.signature(value.func if isinstance(value, JITImpl) else value)
    params = signature.parameters
    if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        for key in kwargs:
            if key not in params:
                raise UsageError(f"--arg {key}: --func {name}{signature} has no parameter {key!r}; "
                                 f"{did_you_mean(key, params)}its parameters are {', '.join(params)}")
    try:
        signature.bind(**kwargs)
    except TypeError as err:
        missing = [p for p, v in signature.parameters.items() if v.default is inspect.Parameter.empty
                   and v.kind is not v.VAR_KEYWORD and v.kind is not v.VAR_POSITIONAL and p not in kwargs]
        raise UsageError(f"--func {name}{signature}: {err}; give each parameter without a default with --arg "
                         f"NAME=VALUE" + (f", e.g. --arg {missing[0]}=..." if missing else "")) from None
    call = f"{name}({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})"
    func = _user_code(path, call, lambda: factory(**kwargs))
    if not isinstance(func, tirx.PrimFunc):
        raise UsageError(f"{path}: {call} returned a {type(func).__name__}, not a @T.prim_func kernel")
    return func


def _sizes(texts: list[str], plan: Plan) -> dict[str, int | float]:
    """``--size m=64`` values for the dynamic sizes and scalar parameters of ``plan`` (every one,
    none more; an integer scalar parameter's may be negative, a float one's any float: ``--size
    scale=0.125``)."""
    names = [d.name for d in plan.dims]
    floats = {d.name for d in plan.dims if d.is_float}
    sizes = {}
    for text in texts:
        name, _, value = text.partition("=")
        if name in floats:
            try:
                sizes[name] = float(value)
            except ValueError:
                raise UsageError(f"--size {text}: `{name}` is a float scalar parameter, give a float "
                                 f"(--size {name}=0.5)") from None
            continue
        if name not in names or not value.removeprefix("-").isdigit():
            raise UsageError(f"--size {text}: expected NAME=VALUE with NAME one of the kernel's sizes {names}")
        sizes[name] = int(value)
    missing = [n for n in names if n not in sizes]
    if missing:
        raise UsageError(f"the kernel's sizes {missing} are dynamic: give each with --size NAME=VALUE "
                         f"(e.g. --size {missing[0]}=128)")
    return sizes


def _random_inputs(plan: Plan, seed: int, sizes: dict[str, int]):
    import torch

    if sizes:  # a plan for these sizes (random inputs of them)
        try:
            plan = plan.bind(sizes)
        except SizeError as err:
            raise UsageError(str(err)) from None
    g = torch.Generator().manual_seed(seed)  # the inputs in parameter order; a scalar parameter's value given
    return [torch.randn(*p.shape, generator=g).to(getattr(torch, p.dtype)) if isinstance(p, PlanBuffer)
            else sizes[p.name] for p in plan.parameters if not isinstance(p, PlanBuffer) or p.is_input]


def cmd_compile(args) -> int:
    _, artifacts = _compile_file(Path(args.kernel), args)
    out = artifacts.save(args.out or Path("out") / Path(args.kernel).stem)
    print(f"wrote {', '.join(sorted(artifacts.sources))} to {out}")
    return 0


COUNTER_COLUMNS = (("dram_bytes_read", "DRAM rd B"), ("dram_bytes_written", "DRAM wr B"),
                   ("noc_read_transactions", "NOC rd"), ("noc_write_transactions", "NOC wr"),
                   ("read_barriers", "rd barr"), ("write_barriers", "wr barr"), ("cb_stall_events", "CB stalls"),
                   ("dst_acquires", "DST acq"))


def counters_report(counters: dict) -> str:
    """The total (every counter, tile ops by kind), one line per core (the main counters), and the
    timing model's predicted time."""
    total = counters["total"]
    lines = ["counters (total):"]
    lines += [f"  {key:<24}{value:>12}" for key, value in total.items() if key != "tile_ops"]
    lines += [f"  tile op {op:<16}{n:>12}" for op, n in sorted(total["tile_ops"].items())]
    # a kernel of several launches: each launch's cores (emulator/driver.py, launch_counters)
    per_core = [("", counters["cores"])] if "cores" in counters else \
        [(f", launch {i}", launch["cores"]) for i, launch in enumerate(counters.get("launches", []))]
    for label, cores in per_core:
        lines += ["", f"counters per core{label}:",
                  "  core   " + "".join(f"{title:>11}" for _, title in COUNTER_COLUMNS) + "   tile ops"]
        for core in cores:
            lines.append(f"  {'({},{})'.format(*core['core']):<7}"
                         + "".join(f"{core[key]:>11}" for key, _ in COUNTER_COLUMNS)
                         + f"{sum(core['tile_ops'].values()):>11}")
    timing = counters["timing"]
    critical = timing["critical_thread"]
    slowest = f"; the launches' sum, the slowest being launch {timing['launch']}" if "launch" in timing else ""
    lines += ["", f"predicted time ({timing['arch']}, timing model): {timing['seconds'] * 1e6:.2f} us = "
                  f"{timing['cycles']} cycles{slowest}, bound: {timing['bound']} (critical path "
                  f"{timing['critical_path_cycles']} cycles, ending on core ({critical['core'][0]},{critical['core'][1]}) "
                  f"{critical['role']}; DRAM {timing['dram_cycles']} cycles)"]
    return "\n".join(lines)


def _output_file(text: str | None, option: str, example: str) -> Path | None:
    """The file ``option`` names for the command to write, checked before the work starts: not a
    directory, and under a directory that exists or can be made (``UsageError`` otherwise)."""
    if text is None:
        return None
    path = Path(text)
    if path.is_dir():
        raise UsageError(f"{option} {text}: is a directory; name a file in it, e.g. {option} {path / example}")
    existing = next(p for p in (path.absolute(), *path.absolute().parents) if p.exists())
    if existing != path.absolute() and not existing.is_dir():
        raise UsageError(f"{option} {text}: {existing} is a file, not a directory; write to another path")
    if not os.access(existing if existing.is_dir() else existing.parent, os.W_OK):
        raise UsageError(f"{option} {text}: {existing} is not writable; write to another path")
    return path


class TerminalProgress:
    """How ``emulate`` goes, on one line of a terminal rewritten in place (carriage return, erase
    to the end of the line); ``progress(phase, done, total)`` as the emulator driver reports it.
    As a context manager it leaves the line empty, or saying ``done`` when the work succeeded."""

    LABELS = {COMPILING: "compiling the program (g++): {done}/{total} units",
              RUNNING: "running on the emulator: {done}/{total} cores finished"}

    def __init__(self, stream) -> None:
        self.stream = stream
        self.lock = threading.Lock()  # the driver reports from its build threads and its pipe reader
        self.started = time.monotonic()

    @classmethod
    def on(cls, stream) -> TerminalProgress | None:
        """One for ``stream`` when it is a terminal; None for a file or a pipe (nothing is shown)."""
        return cls(stream) if stream.isatty() else None

    def show(self, text: str) -> None:
        with self.lock:
            self.stream.write(f"\r\x1b[K{text}")
            self.stream.flush()

    def __call__(self, phase: str, done: int, total: int) -> None:
        self.show(self.LABELS[phase].format(done=done, total=total))

    def __enter__(self) -> TerminalProgress:
        return self

    def __exit__(self, error_type, *_) -> None:
        self.show("" if error_type else f"done in {time.monotonic() - self.started:.1f} s\n")


def cmd_emulate(args) -> int:
    target = Path(args.target)
    trace, png = _output_file(args.trace, "--trace", "trace.json"), _output_file(args.png, "--png", "grid.png")
    module = None
    progress = TerminalProgress.on(sys.stderr)
    with progress or nullcontext():
        if target.is_dir():
            try:
                artifacts = Artifacts.load(target)
            except (ArtifactsDirError, PlanError) as err:
                raise UsageError(str(err)) from None
        elif target.is_file():
            if progress is not None:
                progress.show(f"compiling {target} (TileLang to TT-Metalium)")
            module, artifacts = _compile_file(target, args)
        else:
            raise UsageError(f"{target}: no such kernel file or artifacts directory")
        inputs = _random_inputs(artifacts.plan, args.seed, _sizes(args.size, artifacts.plan))
        outputs = artifacts.run(*inputs, out_dir=args.out, trace=trace, timing_only=args.timing_only,
                                progress=progress)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    status = 0
    reference = getattr(module, "reference", None) if module is not None else None
    if args.timing_only:
        print("result check: timing only (the matrix multiplications' arithmetic skipped); outputs not checked")
    elif reference is not None:
        expected = reference(*inputs)
        expected = expected if isinstance(expected, tuple) else (expected,)
        for out, ref in zip(outputs, expected):
            err = (out.float() - ref.float()).abs().max().item()
            scale = ref.float().abs().max().item()
            ok = err <= args.rtol * max(scale, 1.0)
            print(f"result check: max |error| {err:.4g} (|ref| max {scale:.4g}, rtol {args.rtol}): "
                  f"{'PASS' if ok else 'FAIL'}")
            status = status or (0 if ok else 1)
    else:
        print("result check: no reference() in the kernel file; outputs not checked")
    print(counters_report(artifacts.last_counters))
    if args.out:
        print(f"\nwrote inputs (<buffer>.bin), outputs (<buffer>.out.bin) and counters.json to {args.out}")
    if trace:
        print(f"\nwrote the timing model's timeline to {trace} (Chrome trace: open it in Perfetto or chrome://tracing)")
    if png:
        width, height = draw_png(artifacts.plan, png, timing=artifacts.last_counters["timing"])
        print(f"\nwrote {png} ({width}x{height} px): work, L1 use and busy time per RISC per core")
    return status


def cmd_fetch_headers(args) -> int:
    from tilelang_tt.tools.fetch_tt_metal import main as fetch

    fetch()
    return 0


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError


def cmd_cache(args) -> int:
    from tilelang_tt import cache
    from tilelang_tt.emulator import driver
    from tilelang_tt.env import CACHE_MAX_SIZE

    root, current = driver.cache_root(), driver.build_folder().name
    limit = CACHE_MAX_SIZE.get()
    if args.clear:
        print(f"removed {_size(cache.clear(root))} from {root}")
        return 0
    if args.trim:
        trimmed = cache.trim(root, limit, wait=True) if limit else None
        print(f"{root}: {_size(trimmed.before)} -> {_size(trimmed.after)}, {trimmed.removed} entries removed"
              if trimmed else f"{root}: no limit (TILELANG_TT_CACHE_MAX_SIZE=0), nothing removed")
        return 0
    found = cache.entries(root) if root.is_dir() else []
    total = sum(entry.size for entry in found)
    print(f"{root}: {_size(total)} in {len(found)} entries; limit {_size(limit) if limit else 'none'} "
          f"({CACHE_MAX_SIZE.name})")
    for base in sorted({entry.base for entry in found}, key=lambda b: (b != current, b)):
        mine = [entry for entry in found if entry.base == base]
        kinds: dict[str, list] = {}
        for entry in mine:
            parts = entry.files[0].relative_to(root / base).parts
            kinds.setdefault(parts[0] if len(parts) > 1 else ".", []).append(entry)
        last = time.strftime("%Y-%m-%d %H:%M", time.localtime(max(entry.used for entry in mine)))
        print(f"  {base}{' (this emulator)' if base == current else ''}: {_size(sum(e.size for e in mine))}, "
              f"last used {last}")
        print("    " + ", ".join(f"{kind} {_size(sum(e.size for e in group))} ({len(group)})"
                                 for kind, group in sorted(kinds.items())))
    return 0


def cmd_plan_show(args) -> int:
    try:
        plan = load_plan(args.plan)
    except PlanError as err:
        raise UsageError(str(err)) from None
    print(summary(plan))
    if args.png:
        width, height = draw_png(plan, Path(args.png))
        print(f"\nwrote {args.png} ({width}x{height} px)")
    return 0


def cmd_dump_ir(args) -> int:
    _, artifacts = _compile_file(Path(args.kernel), args, dump_ir=str(args.out))
    out = Path(args.out) / artifacts.kernel_name
    if not out.is_dir():
        raise UsageError(f"{args.kernel}: its build() did not pass the options on to tilelang_tt.compile, so no IR "
                         "was dumped: make build(**options) forward them, or name the kernel with --func")
    files = sorted(p.name for p in out.iterdir() if p.suffix == ".py")
    print(f"wrote the TIR after each of {len(files)} passes to {out}: {files[0]} ... {files[-1]}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tilelang-tt", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    def kernel_options(p):
        p.add_argument("--func", help="name of the @T.prim_func in the file, or of a function returning one (a "
                                      "kernel factory: its arguments with --arg); default: the file's build(), or "
                                      "its only @T.prim_func")
        p.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                       help="an argument of the --func kernel factory, VALUE a Python literal or a word: "
                            "--func gemm --arg M=512 --arg N=512")
        p.add_argument("--arch", choices=["wormhole_b0", "blackhole"])
        p.add_argument("--grid", help="cores to use, XxY (e.g. 8x8)")
        p.add_argument("--option", "-O", action="append", default=[], metavar="NAME=VALUE",
                       help="any compile option of tilelang_tt.compile, VALUE a Python literal or a word: "
                            "-O math_fidelity=HiFi2 -O multicast=off -O \"storage={'A': 'bfloat8_b'}\" "
                            f"(options: {', '.join(OPTION_NAMES)})")

    p = sub.add_parser("compile", help="compile a kernel file to reader/compute/writer/main.cpp + tt.plan.json",
                       epilog="example: tilelang-tt compile examples/gemm.py --out out/gemm")
    p.add_argument("kernel")
    p.add_argument("--out")
    kernel_options(p)
    p.set_defaults(run=cmd_compile)

    p = sub.add_parser("emulate", help="run a kernel file or an artifacts directory on the emulator",
                       epilog="examples: tilelang-tt emulate examples/gemm.py --grid 8x8\n"
                              "          tilelang-tt emulate out/gemm --out out/gemm-run\n"
                              "          tilelang-tt emulate out/gemm --trace gemm.trace.json --png gemm.png",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("target", help="kernel .py file or a directory written by `compile`")
    p.add_argument("--out", help="keep the run here: inputs <buffer>.bin, outputs <buffer>.out.bin, counters.json")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--size", action="append", default=[], metavar="NAME=VALUE",
                   help="a dynamic size (T.dynamic) of the kernel, for its random inputs, or the value of a scalar "
                   "parameter (n: T.int32, scale: T.float32); repeat for each")
    p.add_argument("--rtol", type=float, default=2.0 ** -7, help="allowed max error relative to max |ref|")
    p.add_argument("--timing-only", action="store_true",
                   help="skip the matrix multiplications' arithmetic: the counters and the predicted time of a full "
                        "run, much sooner; no outputs (nothing checked, --out keeps meaningless ones)")
    p.add_argument("--trace", help="write the timing model's timeline to this file as a Chrome trace (Perfetto, "
                                   "chrome://tracing): a process per core, a thread per RISC, busy and stall spans")
    p.add_argument("--png", help="draw the core grid to this PNG: blocks, L1 use and busy %% per RISC per core, "
                                 "with the predicted time and its bound")
    kernel_options(p)
    p.set_defaults(run=cmd_emulate)

    p = sub.add_parser("plan", help="inspect a tt.plan.json")
    plan_sub = p.add_subparsers(dest="plan_command", required=True)
    p = plan_sub.add_parser("show", help="cores, work per core, CBs and L1 use, runtime args (and a grid PNG)",
                            epilog="example: tilelang-tt plan show out/gemm/tt.plan.json --png out/gemm/grid.png")
    p.add_argument("plan", help="a tt.plan.json")
    p.add_argument("--png", help="also draw the core grid to this PNG: blocks per core and L1 use per core")
    p.set_defaults(run=cmd_plan_show)

    p = sub.add_parser("dump-ir", help="compile a kernel file, writing the TIR after every TT pass as numbered files",
                       epilog="example: tilelang-tt dump-ir examples/gemm.py --out ir/gemm")
    p.add_argument("kernel")
    p.add_argument("--out", required=True, help="directory: the TIR goes to OUT/<kernel>/NN_<PassName>.py")
    kernel_options(p)
    p.set_defaults(run=cmd_dump_ir)

    p = sub.add_parser("fetch-headers", help="download the pinned tt-metal 0.81.1 headers into the cache",
                       epilog="example: tilelang-tt fetch-headers")
    p.set_defaults(run=cmd_fetch_headers)

    p = sub.add_parser("cache", help="the emulator's build cache: its size per emulator version and kind of entry, "
                                     "its limit; --trim, --clear",
                       epilog="examples: tilelang-tt cache\n          tilelang-tt cache --clear",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    action = p.add_mutually_exclusive_group()
    action.add_argument("--trim", action="store_true",
                        help="remove the least recently used builds now until the cache is under its limit")
    action.add_argument("--clear", action="store_true", help="remove every build (waits for builds in progress)")
    p.set_defaults(run=cmd_cache)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (UsageError, OptionError) as err:
        print(f"tilelang-tt: {err}", file=sys.stderr)
        return 2
    except TTCompileError as err:
        print(err.render(), file=sys.stderr)
        return 1
    except KernelFileError as err:
        print(f"tilelang-tt: {err}", file=sys.stderr)
        return 1
    except EmulatorError as err:
        print(f"tilelang-tt: emulation failed:\n{err}", file=sys.stderr)
        return 1
    except FileExistsError as err:  # a save that would replace the user's file or folder: the path is wrong
        print(f"tilelang-tt: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # entry() handles it: whoever read our output stopped reading
        raise
    except OSError as err:  # a file could not be written or read: a full or read-only disk, no permission
        where = f"{err.filename}: " if err.filename else ""
        print(f"tilelang-tt: {where}{err.strerror or err}", file=sys.stderr)
        return 1


def entry() -> None:
    """Console-script entry point."""
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:  # whoever read our output (`| head`) stopped reading: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    sys.exit(code)
