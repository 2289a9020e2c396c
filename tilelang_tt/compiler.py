"""``compile()``: a TileLang PrimFunc (or IRModule) → :class:`Artifacts`."""

from __future__ import annotations

import dataclasses
import re
import sys
import time
from pathlib import Path

import tilelang  # noqa: F401
import tvm
from tvm import tirx

from tilelang_tt.artifacts import Artifacts
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.codegen.collective import COMBINE_SOURCES
from tilelang_tt.codegen.host import emit_main_cpp
from tilelang_tt.codegen.kernels import emit_kernel
from tilelang_tt.codegen.plan import SharedLayoutError, build_plan, dumps_plan, sequence_plans
from tilelang_tt.contract.kernels import ROLES, kernel_source
from tilelang_tt.contract.plan import Plan, PlanBuffer
from tilelang_tt.env import DUMP_IR, PASS_TIMING, PRINT_IR
from tilelang_tt.errors import TTCompileError
from tilelang_tt.kernel_checks import check_kernel
from tilelang_tt.layout import BufferLayout
from tilelang_tt.options import CompileOptions, OptionError
from tilelang_tt.ir.common import error, first_stmt_using, func_name
from tilelang_tt.launches import PASS as SPLIT_LAUNCHES, Launch, split_launches
from tilelang_tt.passes.pipeline import internal_error, lower


DUMP_FILE = re.compile(r"(?P<index>\d{2})_(?P<pass_name>\w+)\.py")  # NN_<PassName>.py, what the recorder writes


def dump_file_name(index: int, pass_name: str) -> str:
    """The name of the IR after the ``index``-th pass (1-based), as :data:`DUMP_FILE` reads it."""
    return f"{index:02d}_{pass_name}.py"


class IRRecorder:
    """Shows each TT pass as the options (or the env knobs) ask: prints the TIR after it to stderr
    (``print_ir``), writes it to ``<dump_ir>/<kernel>/NN_<PassName>.py`` numbered in pipeline
    order (``dump_ir``; numbered files of an earlier dump there are removed first), prints its
    time to stderr (``pass_timing``) and keeps ``(pass name, TIR)`` (``keep_ir``).
    :func:`tilelang_tt.passes.pipeline.lower` calls ``run_before_pass``/``run_after_pass``
    around every pass."""

    def __init__(self, options: CompileOptions, kernel: str):
        self.kernel = kernel
        self.print_ir = options.print_ir or PRINT_IR.get()
        dump = options.dump_ir or DUMP_IR.get()
        self.dump_dir = None if dump is None else Path(dump) / kernel
        self.timing = options.pass_timing or PASS_TIMING.get()
        self.keep = options.keep_ir
        self.kept: list[tuple[str, str]] = []
        self.count = 0
        self.start = 0.0
        if self.dump_dir is not None and self.dump_dir.is_dir():
            for stale in self.dump_dir.iterdir():
                if DUMP_FILE.fullmatch(stale.name):
                    stale.unlink()

    def run_before_pass(self, mod, info):
        self.start = time.perf_counter()

    def run_after_pass(self, mod, info):
        elapsed = time.perf_counter() - self.start
        self.count += 1
        if self.timing:
            print(f"[tilelang-tt] {self.kernel}: {info.name}: {elapsed * 1e3:.2f} ms", file=sys.stderr)
        if not (self.print_ir or self.dump_dir or self.keep):
            return
        text = mod.script()
        if self.print_ir:
            print(f"# {self.kernel} after {info.name}\n{text}", file=sys.stderr)
        if self.dump_dir is not None:
            self.dump_dir.mkdir(parents=True, exist_ok=True)
            (self.dump_dir / dump_file_name(self.count, info.name)).write_text(text)
        if self.keep:
            self.kept.append((info.name, text))


def _compile_launch(launch: Launch, index: int, options: CompileOptions) -> tuple[Plan, dict, dict, list]:
    """The plan, kernel sources, source map and kept IR (the IR after each pass, when asked) of launch
    ``index`` of a kernel (the TT pipeline and codegen on its PrimFunc)."""
    func = launch.func
    name = str(func.attrs["global_symbol"])
    recorder = IRRecorder(options, name)
    mod = lower(tvm.IRModule({name: func}), options, observers=[recorder])
    kernels = {Attr.KERNEL_ROLE.read(f).value: f for _, f in mod.functions.items()}
    try:
        plan = build_plan(kernels, index, launch.scratch_from)
        emitted = {kernel_source(role, index): emit_kernel(kernels[role]) for role in ROLES}
    except TTCompileError:
        raise
    except Exception as err:  # noqa: BLE001 - a codegen failure is a compiler bug, reported as one
        raise internal_error(err, "codegen", tvm.IRModule({name: func})) from None
    return plan, {file: source for file, (source, _) in emitted.items()}, \
        {file: lines for file, (_, lines) in emitted.items()}, recorder.kept


def requestable(buffer: PlanBuffer) -> BufferLayout | None:
    """The layout option that makes InferTTLayout lay ``buffer`` out as its plan entry says, or None
    where no option says it (a vector's column or flat view: only the kernel's accesses choose it)."""
    if buffer.column or buffer.flat:
        return None
    return BufferLayout(memory=buffer.memory.value, layout=buffer.layout.value, shard_grid=buffer.shard_grid,
                        shard_shape=buffer.shard_shape, dtype=buffer.storage)


def compile_prim_func(func: tirx.PrimFunc, options: CompileOptions) -> Artifacts:
    """Check the kernel (:func:`tilelang_tt.kernel_checks.check_kernel`), split it into its launches
    (:func:`tilelang_tt.launches.split_launches`), run the TT pipeline and codegen on each: one program
    per launch, the host's main.cpp running them in order.

    The host allocates a tensor once, so the launches sharing it must lay it out alike: where the
    launches' own choices differ (a scratch tensor one launch writes in rows and the next reads as
    vectors), each launch using it is compiled again with the layout another one chose, in launch
    order, as the ``layouts`` option would ask; the first that every launch compiles with is the
    tensor's layout in the plan. None: a :class:`SharedLayoutError`, refused at the later launch's
    first statement using the tensor."""
    name = str(func.attrs["global_symbol"]) if func.attrs is not None and "global_symbol" in func.attrs else "main"
    check_kernel(func, options)
    launches = split_launches(func.with_attr("global_symbol", name), name, options.mesh)
    compiled = [_compile_launch(launch, index, options) for index, launch in enumerate(launches)]
    forced: list[dict[str, BufferLayout]] = [{} for _ in launches]  # per launch: the layouts another launch chose
    while True:
        try:
            plan = compiled[0][0] if len(compiled) == 1 else sequence_plans(
                [c[0] for c in compiled], [launch.used for launch in launches])
            break
        except SharedLayoutError as err:
            agreed = _agree(err, launches, compiled, forced, options)
            if agreed is None:  # at the later launch's first statement using the tensor
                later = launches[err.launch].func
                stmt = first_stmt_using(later.body, later.buffer_map[later.params[err.param_index]])
                raise error(SPLIT_LAUNCHES, later, stmt, f"the launches lay out a tensor they share differently: "
                            f"{err}, and no launch using it compiles with a layout another chose (of those the layouts "
                            "option can ask for: not a flat or column view); the host allocates it once",
                            "copy the tensor in the same blocks in every launch (whole tiles, or rows in each), or "
                            "set its layout with the compile option layouts") from None
            compiled = agreed
    sources, source_map, kept = {}, {}, []
    for _, launch_sources, launch_map, launch_kept in compiled:
        sources |= launch_sources
        source_map |= launch_map
        kept += launch_kept
    try:
        sources["main.cpp"] = emit_main_cpp(plan)
        if plan.mesh is not None and plan.mesh.collective is not None:  # the combine program's kernels
            sources |= COMBINE_SOURCES
    except TTCompileError:
        raise
    except Exception as err:  # noqa: BLE001 - a codegen failure is a compiler bug, reported as one
        raise internal_error(err, "codegen", tvm.IRModule({name: func})) from None
    sources["tt.plan.json"] = dumps_plan(plan)
    return Artifacts(sources=sources, plan=plan, ir_after_pass=tuple(kept), source_map=source_map)


def _agree(err: SharedLayoutError, launches: list[Launch], compiled: list, forced: list[dict],
           options: CompileOptions) -> list | None:
    """``compiled`` with the launches using the tensor ``err`` names compiled again so that they lay it
    out alike (the first layout, in launch order, that one of them chose and every other compiles
    with; ``forced`` records it per launch), or None: no such layout, or the user's ``layouts`` option
    names the tensor (the compiler does not override it)."""
    position = next(i for i, b in enumerate(compiled[0][0].buffers) if b.param_index == err.param_index)
    name = compiled[0][0].buffers[position].name
    users = [k for k, launch in enumerate(launches) if err.param_index in launch.used]
    if name in (options.layouts or {}) or any(name in forced[k] for k in users):
        return None
    chosen = [compiled[k][0].buffers[position] for k in users]
    for candidate in dict.fromkeys(filter(None, map(requestable, chosen))):
        attempt = list(compiled)
        try:
            for k, own in zip(users, chosen):
                if requestable(own) != candidate:
                    layouts = {**(options.layouts or {}), **forced[k], name: candidate}
                    attempt[k] = _compile_launch(launches[k], k, dataclasses.replace(options, layouts=layouts))
        except TTCompileError:
            continue
        for k in users:
            forced[k][name] = candidate
        return attempt
    return None


def at_kernel(err: TTCompileError, func: tirx.PrimFunc, name: str | None = None) -> TTCompileError:
    """``err`` located at the kernel ``func`` (called ``name``, else by its global symbol)."""
    return err.with_context(func_name=name or func_name(func), span=func.span)


def compile(func_or_mod, **options) -> Artifacts | dict[str, Artifacts]:  # noqa: A001 - the public verb
    """Compile a TileLang kernel for Tenstorrent. A PrimFunc gives one :class:`Artifacts`; an
    IRModule gives {function name: Artifacts}. Options: see :class:`CompileOptions`."""
    try:
        opts = CompileOptions.from_kwargs(**options)
    except OptionError as err:
        if not isinstance(func_or_mod, tirx.PrimFunc):
            raise
        raise at_kernel(err, func_or_mod) from None
    if isinstance(func_or_mod, tvm.IRModule):
        return {gv.name_hint: compile_prim_func(f.with_attr("global_symbol", gv.name_hint), opts)
                for gv, f in func_or_mod.functions.items() if isinstance(f, tirx.PrimFunc)}
    if not isinstance(func_or_mod, tirx.PrimFunc):
        raise TTCompileError(f"expected a TileLang @T.prim_func or an IRModule, got {type(func_or_mod).__name__}",
                             hint="decorate the kernel with @T.prim_func")
    return compile_prim_func(func_or_mod, opts)
