"""TileLang and TVM entry points for the ``tenstorrent`` target.

Importing this module registers:

* a TileLang :class:`~tilelang.backend.module.BackendModule` owning the ``ext_dev`` target kind
  for Tenstorrent targets. Its pipeline compiles each PrimFunc with
  :func:`tilelang_tt.compiler.compile_prim_func` and leaves in its place a body-less device
  kernel that carries the generated files (:attr:`Attr.ARTIFACT_SOURCES`); its device codegen
  turns those into a source module. So ``tilelang.lower(func, target="tenstorrent")`` returns a
  ``CompiledArtifact`` whose ``kernel_source`` is the :func:`bundle` of the generated files, and
  :func:`artifacts_of` turns it back into :class:`Artifacts`.
* the execution backend ``tt_emulator`` for ``tilelang.compile`` / ``@tilelang.jit``. TileLang
  builds its ``JITKernel`` adapters from a fixed ``if``/``elif`` over its built-in execution
  backends (``tilelang/jit/kernel.py``), so no ``JITKernel`` can run our program. The one
  dispatch point keyed by an open set of names is the per-execution-backend kernel cache map of
  ``tilelang.cache``; :class:`TenstorrentKernelCache` is registered there and returns a
  :class:`TenstorrentKernel`, which runs the :class:`Artifacts` on the emulator. Its
  ``get_profiler()`` is TileLang's profiler reporting the timing model's predicted latency
  (:mod:`tilelang_tt.profiler`), so ``tilelang.autotune`` / ``AutoTuner`` pick the config of least
  predicted latency (:mod:`tilelang_tt.tuning` adapts the autotuner to ``TenstorrentKernel``).
* the ``tt.<option>`` ``PassContext`` config keys (:data:`~tilelang_tt.options.CONFIG_KEYS`), by
  which ``tilelang.compile(..., pass_configs=...)`` and ``tvm.build`` under
  ``tvm.transform.PassContext(config=...)`` take every :class:`CompileOptions` field; the pipeline
  reads them with :meth:`CompileOptions.from_config`. TVM refuses unregistered config keys and
  registers keys in C++ only (``TVM_REGISTER_PASS_CONFIG_OPTION``; no FFI function does it), and
  a target cannot carry them (``ext_dev`` admits a fixed set of options: ``keys``, ``device``,
  ``model``, ``libs``, ...), so ``pass_config.cc`` registers them: it is built once with the
  C++ compiler against the TVM and tvm-ffi headers and cached (:mod:`tilelang_tt.native`).
* ``target.build.ext_dev`` (what ``tvm.tirx.build`` calls for a device module of kind
  ``ext_dev``) and the TIR pipeline ``"tenstorrent"``. ``tvm.build(mod, target=...)`` runs the
  pipeline named ``"default"``, which the fork maps to ``"s_tir"`` whatever the target; that
  pipeline flattens buffers, merges shared memory and legalises bfloat16, destroying the tile
  structure the TT passes read. The ``"s_tir"`` entry is therefore wrapped to hand modules whose
  functions are all bound to a Tenstorrent target to the ``"tenstorrent"`` pipeline, and every
  other module to the original ``"s_tir"`` pipeline unchanged.

What ``tvm.build`` returns: TVM hands a C++ object's Python class out by its FFI type, and every
runtime module has the one type ``ffi.Module`` (a Python class registered for it would replace
``tvm.runtime.Module`` for every module in the process), so a module made in C++ cannot come
back as a Tenstorrent class. A Python object returned by a Python-registered function does come
back through the FFI as itself, though, and ``tvm.tirx.build`` builds the host side with
``target.build.<kind of the target's host>`` and then calls ``host.import_module(device)``.
The ``tenstorrent`` targets are their own host (the host code of a Tenstorrent program is the
generated ``main.cpp``), so both calls reach :func:`build_module`, which returns a
:class:`~tilelang_tt.module.TenstorrentModule`: ``tvm.build`` returns it. With another host
(``Target("tenstorrent", host="c")``) the device side is a source module the CPU host imports,
and :func:`artifacts_of` finds the programs in it.
"""

from __future__ import annotations

import functools

import tilelang  # noqa: F401  (tilelang must be imported before tvm)
import tilelang.cache
import torch
import tvm
import tvm_ffi
from tilelang.backend.device_codegen import DeviceCodegen
from tilelang.backend.execution_backend import ExecutionBackendSpec
from tilelang.backend.module import BackendContext, BackendModule, register_backend
from tilelang.backend.pass_pipeline import PassPipeline
from tilelang.engine.lower import extrac_params, lower_with_context
from tilelang.engine.param import CompiledArtifact
from tilelang.jit import JITImpl
from tilelang.jit.kernel import JITKernel
from tilelang.transform.pass_config import normalize_pass_configs
from tilelang.utils.tensor import TensorSupplyType
from tvm import tirx
from tvm.ir import CallingConv
from tvm.target import Target

from tilelang_tt import native
from tilelang_tt.artifacts import EMULATOR, Artifacts
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.compiler import at_kernel, compile_prim_func
from tilelang_tt.errors import TTCompileError, tilelang_frontend
from tilelang_tt.module import (
    BUNDLE_HEADER,
    TenstorrentModule,
    artifacts_from_files,
    bundle,
    bundle_files,
    unbundle,
)
from tilelang_tt.options import CONFIG_KEYS, CompileOptions, OptionError
from tilelang_tt.profiler import TenstorrentProfiler
from tilelang_tt.target import is_tenstorrent_target, target_arch

TARGET_KIND = "ext_dev"
EXECUTION_BACKEND = "tt_emulator"
TIR_PIPELINE = "tenstorrent"
SOURCE_FORMAT = "tenstorrent"
FUNC_PASS_CONFIGS = "tilelang_pass_configs"  # TileLang's attribute: a function's own pass configs

def artifacts_of(compiled, kernel: str | None = None) -> Artifacts:
    """The :class:`Artifacts` inside what ``tilelang.lower`` (a ``CompiledArtifact``),
    ``tvm.build`` (a :class:`TenstorrentModule`, or a runtime module for a CPU host),
    ``tvm.compile`` (an ``Executable`` of one of those), ``tilelang.compile`` (a
    :class:`TenstorrentKernel`) or :func:`bundle` returned. ``kernel`` names the PrimFunc when
    there are several."""
    if isinstance(compiled, tvm.runtime.Executable):
        compiled = compiled.mod
    if isinstance(compiled, TenstorrentModule):
        return compiled.program(kernel)
    if isinstance(compiled, CompiledArtifact):
        text = compiled.kernel_source
    elif isinstance(compiled, tvm.runtime.Module):
        text = _bundle_in_module(compiled)
    elif isinstance(compiled, str):
        text = compiled
    else:
        raise TypeError(f"expected a CompiledArtifact, a runtime Module or a bundle, got {type(compiled).__name__}")
    found = unbundle(text)
    if kernel is None:
        if len(found) != 1:
            raise ValueError(f"{len(found)} kernels were compiled ({sorted(found)}): pass kernel=<name>")
        return next(iter(found.values()))
    if kernel not in found:
        raise KeyError(f"no kernel {kernel!r}; compiled kernels are {sorted(found)}")
    return found[kernel]


def _bundle_in_module(mod: tvm.runtime.Module) -> str:
    pending = [mod]
    while pending:
        current = pending.pop()
        if current.kind == "c":
            text = current.inspect_source()
            if BUNDLE_HEADER.match(text):
                return text
        pending.extend(current.imports)
    raise ValueError("the runtime module contains no Tenstorrent kernels")


# ---------------------------------------------------------------------------------------------
# Pipeline and device codegen.


def options_for(target: Target, func: tirx.PrimFunc) -> CompileOptions:
    """The compile options of ``func`` for a Tenstorrent target: the target's architecture and
    the ``tt.*`` config of the current ``PassContext``, under the function's own pass configs
    (:data:`FUNC_PASS_CONFIGS`, where ``tilelang.compile`` puts its ``pass_configs``)."""
    config = dict(tvm.transform.PassContext.current().config)
    if func.attrs is not None and FUNC_PASS_CONFIGS in func.attrs:
        config.update(func.attrs[FUNC_PASS_CONFIGS])
    return CompileOptions.from_config(config, arch=target_arch(target))


def _kernel_stub(func: tirx.PrimFunc, name: str, artifacts: Artifacts, target: Target) -> tirx.PrimFunc:
    """The user's signature with no body, marked as a device kernel and carrying the files."""
    stub = tirx.PrimFunc(func.params, tirx.Evaluate(0), func.ret_type, func.buffer_map)
    stub = stub.with_attrs(
        {
            "global_symbol": name,
            "calling_conv": int(CallingConv.DEVICE_KERNEL_LAUNCH),
            "target": target,
        }
    )
    return Attr.ARTIFACT_SOURCES.write(stub, bundle_files(artifacts))


def lower_module(mod: tvm.IRModule, target: Target) -> tvm.IRModule:
    """Compile every PrimFunc of ``mod`` for ``target``; each becomes a kernel stub."""
    functions = {}
    for gvar, func in mod.functions.items():
        if not isinstance(func, tirx.PrimFunc):
            raise TTCompileError(
                f"`{gvar.name_hint}` is a {type(func).__name__}, not a TIR PrimFunc",
                hint="the Tenstorrent backend compiles TileLang @T.prim_func kernels only",
            )
        name = gvar.name_hint
        try:
            options = options_for(target, func)
        except OptionError as err:
            raise at_kernel(err, func, name) from None
        artifacts = compile_prim_func(func.without_attr(FUNC_PASS_CONFIGS).with_attr("global_symbol", name), options)
        functions[gvar] = _kernel_stub(func, name, artifacts, target)
    return tvm.IRModule(functions, attrs=mod.attrs)


def _programs(mod: tvm.IRModule) -> dict[str, Artifacts]:
    """{kernel name: Artifacts} of the kernel stubs of ``mod``."""
    programs = {}
    for gvar, func in mod.functions.items():
        if not Attr.ARTIFACT_SOURCES.has(func):
            raise TTCompileError(
                f"`{gvar.name_hint}` reached Tenstorrent codegen without going through the Tenstorrent pipeline",
                hint='lower with tilelang.lower(..., target="tenstorrent") or tvm.build(..., target="tenstorrent")',
            )
        programs[gvar.name_hint] = artifacts_from_files(Attr.ARTIFACT_SOURCES.read(func))
    return programs


def build_source_module(mod: tvm.IRModule, target: Target) -> tvm.runtime.Module:
    """A source module holding the :func:`bundle` of the kernel stubs' files (TileLang's device
    codegen, and ``tvm.build`` for a CPU host)."""
    programs = _programs(mod)
    create = tvm.get_global_func("runtime.CSourceModuleCreate")
    return create(bundle(programs), SOURCE_FORMAT, list(programs), [])


def build_module(mod: tvm.IRModule, target: Target) -> TenstorrentModule | tvm.runtime.Module:
    """``target.build.ext_dev``: a :class:`TenstorrentModule` when the target's host is
    Tenstorrent (the ``tenstorrent`` tags; also the call for the host side itself, whose module
    has no functions), else a source module a CPU host module can import."""
    if target.host is None or is_tenstorrent_target(target.host):
        return TenstorrentModule(_programs(mod))
    return build_source_module(mod, target)


BACKEND = register_backend(
    BackendModule(
        name="tenstorrent",
        target_kinds=(TARGET_KIND,),
        supports_target=is_tenstorrent_target,
        pipelines={TARGET_KIND: PassPipeline(TARGET_KIND, lower_module)},
        device_codegens={
            TARGET_KIND: DeviceCodegen("tenstorrent", build=build_source_module, build_without_compile=build_source_module)
        },
        execution_backends=(ExecutionBackendSpec(EXECUTION_BACKEND),),
    )
)

# ---------------------------------------------------------------------------------------------
# tilelang.compile / @tilelang.jit


class TenstorrentKernel(TenstorrentModule):
    """What ``tilelang.compile(..., target="tenstorrent")`` returns: call it with torch tensors.

    As with TileLang's ``JITKernel``: with ``out_idx`` the output parameters are allocated and
    returned (one tensor, or a list), and the call passes the other parameters only; without it
    the call passes every parameter and outputs are written in place. ``device="tt"`` runs on a
    Tenstorrent device (see :meth:`Artifacts.run`); the emulator is the default. As a
    :class:`TenstorrentModule` of one kernel it has ``get_source``, ``save``/``export_library``
    and ``inspect_plan``.
    """

    # What TileLang's autotuner records on the kernel it picks (JITKernel's attributes and methods,
    # which read and write these three only).
    latency: float | None = None
    config: dict | None = None
    ref_latency: float | None = None
    tuning_failures: tuple = ()  # the configs the tuner dropped and why (tilelang_tt.tuning.ConfigFailure)
    update_tuner_result = JITKernel.update_tuner_result
    get_tuner_result = JITKernel.get_tuner_result
    run_once = JITKernel.run_once

    def __init__(self, prim_func: tirx.PrimFunc, artifacts: Artifacts, out_idx, target: Target) -> None:
        super().__init__({artifacts.kernel_name: artifacts})
        self.prim_func = prim_func
        self.target = target
        self.num_params = len(prim_func.params)
        self.out_idx = _normalize_out_idx(out_idx, self.num_params)
        self.params = extrac_params(prim_func)  # TileLang's KernelParams, what its profiler supplies
        self.buffers = {b.param_index: b for b in artifacts.plan.host_buffers}
        self.scalars = {d.param_index: d.name for d in artifacts.plan.dims if d.scalar}  # scalar parameters

    def get_profiler(self, tensor_supply_type: TensorSupplyType = TensorSupplyType.Auto) -> TenstorrentProfiler:
        """TileLang's profiler of this kernel (:class:`TenstorrentProfiler`): ``do_bench()`` is the
        timing model's predicted latency in milliseconds, ``assert_allclose`` checks against a
        reference, inputs come from TileLang's ``tensor_supply_type``."""
        return TenstorrentProfiler(self.params, self.out_idx, tensor_supply_type).with_default_adapter(self)

    def get_kernel_source(self, kernel_only: bool = True) -> str:
        """The compute kernel (``kernel_only``) or every generated file as one :func:`bundle`."""
        if kernel_only:
            return self.artifacts.get_source("compute.cpp")
        return bundle({self.artifacts.kernel_name: self.artifacts})

    def __call__(self, *tensors, device: str = EMULATOR):
        if len(tensors) == self.num_params:
            args = list(tensors)
        elif self.out_idx and len(tensors) == self.num_params - len(self.out_idx):
            positions = [i for i in range(self.num_params) if i not in self.out_idx]
            given = dict(zip(positions, tensors))
            buffers = self._buffers({self.buffers[i].name: t.shape for i, t in given.items() if i in self.buffers},
                                    {self.scalars[i]: t for i, t in given.items() if i in self.scalars})
            given = iter(tensors)
            placement = next((t.device for t in tensors if isinstance(t, torch.Tensor)), torch.device("cpu"))
            args = [self._zeros(buffers[i], placement) if i in self.out_idx else next(given)
                    for i in range(self.num_params)]
        else:
            params = self.artifacts.plan.parameters
            what = "tensors" if len(params) == len(self.buffers) else "parameters"
            takes = f"{len(params)} {what} ({', '.join(p.name for p in params)})"
            if self.out_idx:
                takes += f", or {self.num_params - len(self.out_idx)} without the outputs out_idx={self.out_idx}"
            raise TypeError(f"kernel `{self.artifacts.kernel_name}` takes {takes}, got {len(tensors)}")
        self.get_function(self.artifacts.kernel_name)(*args, device=device)
        if not self.out_idx:
            return None
        outputs = [args[i] for i in self.out_idx]
        return outputs[0] if len(outputs) == 1 else outputs

    def _buffers(self, shapes: dict, scalars: dict) -> dict:
        """The plan's buffers by parameter index, for input tensors of ``shapes`` (buffer name ->
        shape) and the ``scalars`` (name -> int or float): a kernel with dynamic sizes has outputs of the
        sizes its inputs give."""
        plan = self.artifacts.plan
        if not plan.dims:
            return self.buffers
        bound = plan.bind(plan.dim_values(shapes, scalars))
        return {b.param_index: b for b in bound.buffers}

    @staticmethod
    def _zeros(buffer, device: torch.device) -> torch.Tensor:
        """An output ``out_idx`` allocates: zeros, so the elements a kernel does not write are the same on
        every run (TileLang's ``torch.empty`` leaves whatever memory held; the emulator uploads outputs)."""
        return torch.zeros(buffer.shape, dtype=getattr(torch, buffer.dtype), device=device)


def _normalize_out_idx(out_idx, num_params: int) -> list[int]:
    if out_idx is None:
        return []
    indices = [out_idx] if isinstance(out_idx, int) else list(out_idx)
    normalized = []
    for index in indices:
        if not -num_params <= index < num_params:
            raise TTCompileError(
                f"out_idx={out_idx} is out of range for a kernel with {num_params} parameters",
                hint=f"use indices in [{-num_params}, {num_params - 1}], e.g. out_idx=[-1]",
            )
        normalized.append(index % num_params)
    return normalized


class TenstorrentKernelCache:
    """The ``tilelang.cache`` entry of the ``tt_emulator`` execution backend.

    The pass configs become the function's own (:data:`FUNC_PASS_CONFIGS`), whose ``tt.*`` keys
    the pipeline reads as compile options (:func:`options_for`): a ``PassContext`` would carry
    them too, but entering one enters its instruments, and the caller's instruments are to see
    the TT passes once, in the caller's context (:func:`tilelang_tt.passes.pipeline.lower`).
    TileLang's other keys configure its passes, none of which runs here. Device compile flags
    configure device compilers, none of which runs here either: they are accepted and not used.
    The emulator caches its builds by content hash.
    """

    execution_backend = EXECUTION_BACKEND

    def cached(
        self,
        func: tirx.PrimFunc,
        out_idx=None,
        *args,
        backend_context: BackendContext,
        verbose: bool = False,
        pass_configs: dict | None = None,
        compile_flags=None,
    ) -> TenstorrentKernel:
        configs = normalize_pass_configs(pass_configs)
        lowered = func.with_attr(FUNC_PASS_CONFIGS, configs) if configs else func
        compiled = lower_with_context(lowered, backend_context)
        return TenstorrentKernel(func, artifacts_of(compiled), out_idx, backend_context.target)


tilelang.cache._dispatch_map[EXECUTION_BACKEND] = TenstorrentKernelCache()


def _register_frontend_errors() -> None:
    """``tilelang.jit(target="tenstorrent")`` builds its PrimFunc in ``JITImpl.get_tir``, where TileLang's
    front end parses the kernel: for a Tenstorrent target what it raises there is a :class:`TTCompileError`
    at the user's line, without TileLang's dump of its generated parser source
    (:func:`~tilelang_tt.errors.tilelang_frontend`); other targets go through unchanged."""
    get_tir = JITImpl.get_tir
    if getattr(get_tir, "adapted_to_tenstorrent", False):
        return

    @functools.wraps(get_tir)
    def tenstorrent_get_tir(self, *args, **kwargs):
        if not is_tenstorrent_target(self.target):
            return get_tir(self, *args, **kwargs)
        with tilelang_frontend():
            return get_tir(self, *args, **kwargs)

    tenstorrent_get_tir.adapted_to_tenstorrent = True
    JITImpl.get_tir = tenstorrent_get_tir


_register_frontend_errors()


def _register_prim_func_call_error() -> None:
    """Calling a ``@T.prim_func`` with tensors, as if it were the compiled kernel, is Python's bare
    "'PrimFunc' object is not callable": the PrimFunc gets a ``__call__`` that raises a TypeError
    saying to compile it first. A PrimFunc had no ``__call__`` before, so no call that worked
    changes; ``callable(func)`` is now True, which changes one message: ``tilelang.autotune(func)``,
    refused for a PrimFunc either way, refuses it as a function without arguments."""
    if "__call__" in vars(tirx.PrimFunc):
        return

    def __call__(self, *args, **kwargs):
        name = self.attrs["global_symbol"] if self.attrs is not None and "global_symbol" in self.attrs else "main"
        raise TypeError(f"`{name}` is a PrimFunc (TIR), not a compiled kernel: compile it first, e.g. "
                        f'kernel = tilelang.compile({name}, out_idx=[-1], target="tenstorrent") or '
                        f"tilelang_tt.compile({name}), then call kernel(...) with the tensors")

    tirx.PrimFunc.__call__ = __call__


_register_prim_func_call_error()

# ---------------------------------------------------------------------------------------------
# tvm.build / tvm.tirx.build


def _tir_pipeline() -> tvm.transform.Pass:
    @tvm.transform.module_pass(opt_level=0, name="TenstorrentPipeline")
    def run(mod: tvm.IRModule, _ctx) -> tvm.IRModule:
        return lower_module(mod, _bound_target(mod))

    return run


def _bound_target(mod: tvm.IRModule) -> Target:
    targets = {
        str(f.attrs["target"]): f.attrs["target"]
        for f in mod.functions.values()
        if f.attrs is not None and "target" in f.attrs
    }
    if len(targets) != 1:
        raise TTCompileError(
            f"the module's functions are bound to {len(targets)} targets, expected one Tenstorrent target",
            hint='build with tvm.build(mod, target="tenstorrent")',
        )
    return next(iter(targets.values()))


def _all_tenstorrent(mod: tvm.IRModule) -> bool:
    funcs = list(mod.functions.values())
    return bool(funcs) and all(
        func.attrs is not None and "target" in func.attrs and is_tenstorrent_target(func.attrs["target"])
        for func in funcs
    )


def _dispatching_default_pipeline(s_tir_factory):
    def factory(**kwargs) -> tvm.transform.Pass:
        s_tir = s_tir_factory(**kwargs)

        @tvm.transform.module_pass(opt_level=0, name="DefaultTIRPipelineOrTenstorrent")
        def run(mod: tvm.IRModule, _ctx) -> tvm.IRModule:
            return _tir_pipeline()(mod) if _all_tenstorrent(mod) else s_tir(mod)

        return run

    factory.wraps_s_tir = s_tir_factory
    return factory


def _register_config_keys() -> None:
    """Register :data:`CONFIG_KEYS` with TVM's ``PassContext`` (once per process)."""
    missing = [key for key in CONFIG_KEYS if key not in tvm.transform.PassContext.list_configs()]
    if missing:
        register = native.library().register_pass_config
        for key in missing:
            register(key)


def _register_tvm_build() -> None:
    pipelines = tvm.tirx.pipeline.PIPELINE_MAP
    pipelines[TIR_PIPELINE] = _tir_pipeline
    if not hasattr(pipelines["s_tir"], "wraps_s_tir"):
        pipelines["s_tir"] = _dispatching_default_pipeline(pipelines["s_tir"])
    tvm_ffi.register_global_func(f"target.build.{TARGET_KIND}", build_module, override=True)


_register_config_keys()
_register_tvm_build()
