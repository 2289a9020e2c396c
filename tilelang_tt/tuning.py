"""TileLang's autotuner (``tilelang/autotuner/tuner.py``) on the ``tenstorrent`` target.

Importing the package adapts :class:`~tilelang.autotuner.tuner.AutoTuner` (:func:`register`) for the
``tt_emulator`` execution backend; a tuner of any other backend runs TileLang's code unchanged.

* **Compiling in parallel.** TileLang compiles the configs on a thread pool of
  ``0.9 x CPU count`` workers: one on a 2-core machine. A Tenstorrent candidate is Python + TVM (the
  compiler, serialised here: its passes hold the GIL) and then a C++ build of its three kernels (a
  subprocess; no main.cpp: the emulator's plan host runs a timing-only run,
  :mod:`tilelang_tt.emulator.plan_host`), so the pool gets a worker per CPU and each worker builds its
  candidate's kernels right after compiling it (:func:`_built`): one candidate's build runs beside the
  next one's compile and a built one's emulation (TileLang's ``use_pipeline``: a config is timed as soon
  as it is built). ``TILELANG_AUTO_TUNING_CPU_COUNTS`` still sets the count (1:
  sequential, the same results).
* **Timing first, numerics for the winner.** Every candidate is run once, timing only (the timing
  model's prediction needs no arithmetic). Then the check TileLang runs on every config (``ref_prog``
  with ``manual_check_prog`` or ``rtol``/``atol``) runs on the fastest candidate, and on the next
  fastest while it fails, and on a sample of :data:`CHECKED_SAMPLE` others, so a config with wrong
  numbers is reported even when it is not the fastest. The checked programs are the full runs (the
  outputs read back, by the plan host as a run does); those checked first are built at once, a CPU each
  (:func:`_build_programs`).
* **Failures with their reasons.** A config that fails to compile (the whole ``TTCompileError``: message,
  the user's line, the fix), to build or run on the emulator, or its check (the mismatch) is a :class:`ConfigFailure` in the result's
  ``failures`` and in the returned kernel's ``tuning_failures`` (TileLang only logs them).
* **The reference's time.** A ``ref_prog`` that is itself a Tenstorrent kernel, or a ``PrimFunc``
  (compiled here with the tuner's compile arguments), is timed on the same model: the result's
  ``ref_latency``. A Python reference has no predicted time: ``ref_latency`` is ``None``
  (:func:`~tilelang_tt.profiler.reference_untimed`).
* **A disk cache.** TileLang caches a result under a key of the function's source and reloads it as a
  ``JITKernel`` of its own backends, which cannot hold a Tenstorrent program, and caches nothing when a
  ``ref_prog`` is given. Here the key (:func:`cache_material`) is the kernel's TIR structural hash (its
  shapes included) at the first config, the configs, the architecture, the compile and check arguments
  (the callbacks by their code and the values they capture) and the compiler version (the package version and a hash of every
  source file of the package, :func:`compiler_version`: a compiler change invalidates it). An entry
  (``<TileLang cache>/autotuner/tenstorrent/<key>/``) holds the result, the kernel's programs as a
  ``.tenstorrent`` module file (sha256-checked) and its PrimFunc; it is reloaded as a
  ``TenstorrentKernel``. An entry that cannot be read whole, or whose recorded key is not the one
  looked up, is removed and the tuning runs again and overwrites it (:func:`load_result`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import importlib.metadata
import inspect
import json
import logging
import marshal
import shutil
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import tilelang  # noqa: F401  (tilelang must be imported before tvm)
import torch
import tvm
from tilelang import env
from tilelang.autotuner.param import AutotuneResult
from tilelang.autotuner.tuner import AutoTuner
from tilelang.utils.device import get_available_cpu_count
from tvm import tirx

from tilelang_tt.backend import EXECUTION_BACKEND, TenstorrentKernel
from tilelang_tt.emulator import driver, plan_host
from tilelang_tt.module import MODULE_SUFFIX, TenstorrentModule, read_module_file, write_module_file
from tilelang_tt.profiler import dram_notes_off, reference_untimed
from tilelang_tt.target import target_arch

logger = logging.getLogger(__name__)

PACKAGE_DIR = Path(__file__).resolve().parent
SOURCE_SUFFIXES = (".py", ".cpp", ".hpp", ".h", ".json")  # the compiler's sources, the emulator's, the schema
CHECKED_SAMPLE = 2  # candidates checked besides the winner (evenly spread over the ranking)
PASS_CONFIGS_KEY = "__pass_configs__"  # where TileLang's run puts a config's "pass_configs" (tuner.py)
ENTRY_RESULT, ENTRY_KERNEL, ENTRY_FUNC = "result.json", "kernel" + MODULE_SUFFIX, "prim_func.json"
_COMPILE_LOCK = threading.Lock()  # the compiler runs one config at a time; builds and runs overlap it


@dataclass(frozen=True)
class ConfigFailure:
    """A config the tuner dropped: ``stage`` is ``"compile"`` (``reason``: the TTCompileError's message),
    ``"emulator"`` (the program did not build or run) or ``"check"`` (the mismatch against ``ref_prog``)."""

    config: dict
    stage: str
    reason: str

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class TenstorrentAutotuneResult(AutotuneResult):
    """TileLang's ``AutotuneResult`` with the configs dropped and why (:class:`ConfigFailure`)."""

    failures: tuple[ConfigFailure, ...] = ()


def is_tenstorrent(tuner: AutoTuner) -> bool:
    return tuner.compile_args.execution_backend == EXECUTION_BACKEND


# -- the cache key --------------------------------------------------------------------------------


@functools.cache
def compiler_version() -> str:
    """The package version and the sha256 of every source file of the package (compiler, emulator,
    schema): what a cached tuning result was measured with."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE_DIR.rglob("*")):
        if path.suffix in SOURCE_SUFFIXES and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(PACKAGE_DIR)).encode() + b"\0" + path.read_bytes() + b"\0")
    return f"{importlib.metadata.version('tilelang-tt')}+{digest.hexdigest()[:16]}"


def callable_identity(fn) -> str | None:
    """What identifies a check callback across processes: a Tenstorrent kernel by its programs, a PrimFunc by its
    structural hash, a Python function by its code (``marshal``: the bytecode, constants and names) and the values
    it captures (closure and defaults); None for a callable with no such identity (the result is then not cached,
    as TileLang caches nothing when there is a callback)."""
    if fn is None:
        return ""
    if isinstance(fn, TenstorrentModule):
        return "kernel:" + hashlib.sha256(json.dumps({k: a.sources for k, a in fn.programs.items()},
                                                     sort_keys=True).encode()).hexdigest()
    if isinstance(fn, tirx.PrimFunc):
        return f"prim_func:{tvm.ir.structural_hash(fn)}"
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    # the values it captures too (a repr naming a memory address differs in every process: no reuse, never a
    # wrong one); the module globals it reads are not part of it
    captured = [cell.cell_contents for cell in fn.__closure__ or ()], fn.__defaults__, fn.__kwdefaults__
    return f"code:{hashlib.sha256(marshal.dumps(code) + _value_identity(captured).encode()).hexdigest()}"


def _value_identity(value) -> str:
    """A captured value as text: a tensor by its dtype, shape and the sha256 of its elements (its repr elides
    them), containers element by element, anything else by its repr."""
    if isinstance(value, torch.Tensor):
        data = value.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes() if value.numel() else b""
        return f"tensor({value.dtype}, {tuple(value.shape)}, {hashlib.sha256(data).hexdigest()})"
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(_value_identity(item) for item in value) + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key!r}: {_value_identity(item)}" for key, item in value.items()) + "}"
    return repr(value)


def _jsonable(value):
    return json.loads(json.dumps(value, sort_keys=True, default=repr))


def cache_material(tuner: AutoTuner, kernel: tirx.PrimFunc) -> dict | None:
    """The key's parts (:mod:`tilelang_tt.tuning`), for ``kernel`` elaborated at the first config; None when a
    callback has no identity."""
    profile = tuner.profile_args
    callbacks = {name: callable_identity(getattr(profile, name)) for name in ("ref_prog", "supply_prog",
                                                                              "manual_check_prog")}
    if None in callbacks.values():
        return None
    compile_args = tuner.compile_args
    return _jsonable({
        "kernel": tvm.ir.structural_hash(kernel),
        "configs": tuner.configs,
        "arch": target_arch(compile_args.target),
        "target": str(compile_args.target),
        "compiler": compiler_version(),
        "out_idx": compile_args.out_idx,
        "pass_configs": compile_args.pass_configs,
        "check": {"skip_check": profile.skip_check, "rtol": profile.rtol, "atol": profile.atol,
                  "max_mismatched_ratio": profile.max_mismatched_ratio, "supply_type": str(profile.supply_type),
                  **callbacks},
    })


def cache_key(material: dict) -> str:
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def cache_dir() -> Path:
    return AutoTuner._get_cache_dir() / "tenstorrent"


def cache_enabled() -> bool:
    return env.is_cache_enabled() and not env.is_autotune_cache_disabled()


# -- cache entries --------------------------------------------------------------------------------


def save_result(path: Path, material: dict, result: TenstorrentAutotuneResult) -> None:
    """Write ``result`` as the entry ``path`` (replacing any): its files are written into a directory beside it,
    which is then renamed into place, so a reader finds a whole entry or none."""
    kernel = result.kernel
    record = {"key": material, "config": result.config, "latency": result.latency,
              "ref_latency": result.ref_latency, "out_idx": kernel.out_idx,
              "failures": [failure.to_dict() for failure in result.failures]}
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        (staging / ENTRY_RESULT).write_text(json.dumps(_jsonable(record), indent=1, sort_keys=True) + "\n")
        (staging / ENTRY_FUNC).write_text(tvm.ir.save_json(kernel.prim_func))
        write_module_file(staging / ENTRY_KERNEL, kernel.programs)
        shutil.rmtree(path, ignore_errors=True)
        staging.rename(path)
    except OSError as err:  # another process published the entry first, or the disk is full: keep none of ours
        logger.warning("the autotuner result was not cached at %s: %s", path, err)
        shutil.rmtree(staging, ignore_errors=True)


def _tuned_config(recorded, configs) -> dict:
    """The config of ``configs`` (the tuner's own) that ``recorded`` (its JSON form) is: JSON keeps no tuples,
    and a config's ``(1, 1)`` must come back as itself."""
    for config in configs:
        if _jsonable(config) == recorded:
            return dict(config)
    raise ValueError(f"its config {recorded} is not one of the tuned configs")


def load_result(path: Path, material: dict, target, configs) -> TenstorrentAutotuneResult | None:
    """The entry at ``path`` as a result whose kernel is a ``TenstorrentKernel``, its configs those of
    ``configs``; None when there is none. An entry that cannot be read whole (missing or damaged files: its
    module file's sha256 is checked) or whose recorded key is not ``material`` (stale) is removed, so that the
    tuning runs and writes it again."""
    if not path.is_dir():
        return None
    try:
        record = json.loads((path / ENTRY_RESULT).read_text())
        if record["key"] != material:
            raise ValueError("its recorded key is not the one looked up (a stale entry)")
        programs = read_module_file(path / ENTRY_KERNEL)
        func = tvm.ir.load_json((path / ENTRY_FUNC).read_text())
        if not isinstance(func, tirx.PrimFunc) or len(programs) != 1:
            raise ValueError("it does not hold one kernel and its PrimFunc")
        kernel = TenstorrentKernel(func, next(iter(programs.values())), record["out_idx"], target)
        failures = tuple(ConfigFailure(**{**failure, "config": _tuned_config(failure["config"], configs)})
                         for failure in record["failures"])
        config = _tuned_config(record["config"], configs)
        latency, ref_latency = record["latency"], record["ref_latency"]
    except (OSError, ValueError, KeyError, TypeError) as err:  # ModuleFileError, PlanError, JSONDecodeError too
        logger.warning("discarding the cached autotuner result %s: %s", path, err)
        shutil.rmtree(path, ignore_errors=True)
        return None
    kernel.update_tuner_result(latency=latency, config=config, ref_latency=ref_latency)
    kernel.tuning_failures = failures
    return TenstorrentAutotuneResult(latency=latency, config=config, ref_latency=ref_latency,
                                     libcode=kernel.get_kernel_source(), func=func, kernel=kernel, failures=failures)


# -- one tuning run -------------------------------------------------------------------------------


def _reason(err: BaseException) -> str:
    """What a failure says: a TTCompileError's whole diagnostic (message, the user's line, the fix), an
    emulator error's message, an AssertionError's mismatch."""
    return str(err).strip() or type(err).__name__


class _Session:
    """What one ``AutoTuner.run`` of a Tenstorrent kernel records from the threads TileLang runs: each
    config's kernel and predicted latency, and the configs dropped."""

    def __init__(self, tuner: AutoTuner) -> None:
        self.tuner = tuner
        self.config_args: list[dict] = []  # TileLang's per-config keyword arguments, in the order of tuner.configs
        self.configs: dict[int, tuple[int, dict]] = {}  # id(kernel) -> its config's index and the config
        self.timed: list[tuple[float, int, TenstorrentKernel]] = []  # (latency, config index, kernel)
        self.failures: list[ConfigFailure] = []
        self.lock = threading.Lock()

    def config_of(self, config_arg: dict) -> tuple[int, dict]:
        index = self.config_args.index(config_arg)
        return index, dict(self.tuner.configs[index])

    def fail(self, config: dict, stage: str, err: BaseException | str) -> None:
        reason = err if isinstance(err, str) else _reason(err)
        logger.info("config %s dropped at %s: %s", config, stage, reason)
        with self.lock:
            self.failures.append(ConfigFailure(config, stage, reason))

    def check(self, kernel: TenstorrentKernel) -> str | None:
        """TileLang's check of ``kernel`` against ``ref_prog`` (``_benchmark_target``'s): None, or why it fails."""
        profile = self.tuner.profile_args
        profiler = kernel.get_profiler(tensor_supply_type=profile.supply_type)
        if profile.supply_prog is not None:
            inputs = profile.supply_prog(profiler._get_params(with_output=False))
        else:
            inputs = profiler._get_inputs(with_output=False)
        try:
            if profile.manual_check_prog is not None:
                profiler.manual_assert_close(profile.ref_prog, input_tensors=inputs,
                                             manual_check_prog=profile.manual_check_prog)
            else:
                profiler.assert_allclose(profile.ref_prog, input_tensors=inputs, rtol=profile.rtol, atol=profile.atol,
                                         max_mismatched_ratio=profile.max_mismatched_ratio)
        except Exception as err:  # the mismatch, or the run or the reference failing (TileLang drops those too)
            return _reason(err)
        return None

    def verified(self, result: AutotuneResult) -> TenstorrentAutotuneResult:
        """The result of the fastest candidate that passes the check (all are timed without it; of equal times, the
        first config's), the checked sample's failures and every other failure recorded."""
        if not self.timed:  # TileLang's shortcut (the tuned parameters were given): nothing was timed
            return TenstorrentAutotuneResult(**_fields(result), failures=tuple(self.failures))
        profile = self.tuner.profile_args
        ranked = sorted(self.timed, key=lambda item: (item[0], item[1]))  # ties: the first config (any order of runs)
        best = ranked[0]
        if not profile.skip_check and profile.ref_prog is not None:
            _build_programs([kernel for _, _, kernel in [ranked[0], *_spread(ranked[1:], CHECKED_SAMPLE)]])
            best, position = None, len(ranked)
            for position, (latency, index, kernel) in enumerate(ranked):
                reason = self.check(kernel)
                if reason is None:
                    best = (latency, index, kernel)
                    break
                self.fail(dict(self.tuner.configs[index]), "check", reason)
            rest = ranked[position + 1:]
            for latency, index, kernel in _spread(rest, CHECKED_SAMPLE):
                reason = self.check(kernel)
                if reason is not None:
                    self.fail(dict(self.tuner.configs[index]), "check", reason)
            if best is None:
                raise RuntimeError("Auto-tuning failed: no configuration passed its check.\n" + self.summary())
        latency, index, kernel = best
        config = dict(self.tuner.configs[index])
        kernel.update_tuner_result(latency=latency, config=config, ref_latency=result.ref_latency)
        kernel.tuning_failures = tuple(self.failures)
        return TenstorrentAutotuneResult(latency=latency, config=config, ref_latency=result.ref_latency,
                                         libcode=kernel.get_kernel_source(), func=kernel.prim_func, kernel=kernel,
                                         failures=tuple(self.failures))

    def summary(self) -> str:
        return "\n".join(f"  {f.config} ({f.stage}): {f.reason.splitlines()[0] if f.reason else ''}"
                         for f in self.failures)


def _fields(result: AutotuneResult) -> dict:
    return {field.name: getattr(result, field.name) for field in dataclasses.fields(AutotuneResult)}


def _spread(items: list, count: int) -> list:
    """``count`` of ``items`` spread evenly over them (the last one included), all when there are fewer."""
    if len(items) <= count:
        return list(items)
    return [items[round((i + 1) * (len(items) - 1) / count)] for i in range(count)]


def _build(artifacts) -> None:
    """What a run of ``artifacts`` runs, built: the plan host's kernels, or main.cpp's executable where the plan
    host cannot run it (:func:`tilelang_tt.emulator.driver.run`)."""
    replaced = plan_host.replaces_main(artifacts.sources, artifacts.plan)
    (driver.build_plan_host if replaced else driver.build)(artifacts.sources, artifacts.plan)


def _build_programs(kernels: list) -> None:
    """The programs of the Tenstorrent ``kernels`` the check runs first (the winner's and the sample's, when the
    winner passes), built a CPU each at once: the check runs them one after another. A build that fails is built
    again by the check's run, which records why."""

    def build(kernel) -> None:
        if isinstance(kernel, TenstorrentKernel):
            with contextlib.suppress(driver.EmulatorError):
                _build(kernel.artifacts)

    with ThreadPoolExecutor(max_workers=get_available_cpu_count()) as pool:
        list(pool.map(build, kernels))


def _built(session: _Session, compile_func: Callable) -> Callable:
    """``compile_func`` (TileLang's per-config compile), serialised, then the emulator program's C++ build,
    outside the lock (:mod:`tilelang_tt.tuning`); a failure is recorded with its reason and raised on."""

    def compile_and_build(**config_arg):
        index, config = session.config_of(config_arg)
        try:
            with _COMPILE_LOCK:
                kernel = compile_func(**config_arg)
        except Exception as err:
            session.fail(config, "compile", err)
            raise
        if isinstance(kernel, TenstorrentKernel):
            try:
                _build(kernel.artifacts)
            except Exception as err:
                session.fail(config, "emulator", err)
                raise
            with session.lock:
                session.configs[id(kernel)] = (index, config)
        return kernel

    return compile_and_build


def _reference(tuner: AutoTuner):
    """The tuner's ``ref_prog`` as it is run: a PrimFunc compiled with the tuner's compile arguments (a
    Tenstorrent kernel, timed on the model)."""
    ref_prog = tuner.profile_args.ref_prog
    if isinstance(ref_prog, tirx.PrimFunc):
        return tuner.compile_args.compile_program(ref_prog)
    return ref_prog


# -- the adaptation -------------------------------------------------------------------------------


def register() -> None:
    """Adapt ``AutoTuner.run`` and the steps it calls to Tenstorrent kernels (the module's text)."""
    run = AutoTuner.run
    if getattr(run, "adapted_to_tenstorrent", False):
        return
    benchmark, save = AutoTuner._benchmark_target, AutoTuner._save_result_to_disk
    prepare, workers = AutoTuner._prepare_compile_execution, AutoTuner._resolve_num_compile_workers

    @functools.wraps(run)
    def tenstorrent_run(self, *args, **kwargs):
        if not is_tenstorrent(self):
            return run(self, *args, **kwargs)
        if callable(self.configs):  # as TileLang's run resolves them, before the key needs them
            kernel_args, kernel_kwargs = self._kernel_parameters
            self.configs = self.configs(*kernel_args, **dict(kernel_kwargs))
        material = _material(self)
        entry = cache_dir() / cache_key(material) if material is not None and cache_enabled() else None
        if entry is not None:
            cached = load_result(entry, material, self.compile_args.target, self.configs)
            if cached is not None:
                return cached
        if len(args) < 4:  # run(warmup, rep, timeout, use_pipeline, ...): a config runs as soon as it is built
            kwargs.setdefault("use_pipeline", True)
        session = self._tenstorrent_session = _Session(self)
        checked = self.profile_args = dataclasses.replace(self.profile_args, ref_prog=_reference(self))
        self.profile_args = dataclasses.replace(checked, skip_check=True)  # every candidate: timing only
        try:
            result = run(self, *args, **kwargs)
        except RuntimeError as err:  # TileLang's "no configuration ...": say why each config was dropped
            if session.failures:
                raise RuntimeError(f"{err}\n{session.summary()}") from err
            raise
        finally:
            self.profile_args = checked
            self._tenstorrent_session = None
        result = session.verified(result)
        if entry is not None and result.latency is not None:
            save_result(entry, material, result)
        return result

    @functools.wraps(prepare)
    def prepare_compile_execution(self, config_args, grouped_compile_active, group_compile_size, compile_func,
                                  elaborate_func):
        session = getattr(self, "_tenstorrent_session", None)
        if session is not None:
            session.config_args = [dict(config_arg) for config_arg in config_args]
            compile_func = _built(session, compile_func)
        return prepare(self, config_args, grouped_compile_active, group_compile_size, compile_func, elaborate_func)

    @functools.wraps(workers)
    def resolve_num_compile_workers(self):
        count = workers(self)
        if is_tenstorrent(self) and int(env.TILELANG_AUTO_TUNING_CPU_COUNTS) <= 0:
            return max(count, get_available_cpu_count())  # a worker per CPU: the C++ builds release the GIL
        return count

    @functools.wraps(benchmark)
    def benchmark_target(self, jit_kernel, *args, **kwargs):
        session = getattr(self, "_tenstorrent_session", None)
        if not isinstance(jit_kernel, TenstorrentKernel) or session is None:
            return benchmark(self, jit_kernel, *args, **kwargs)
        index, config = session.configs[id(jit_kernel)]
        try:
            with reference_untimed(self.profile_args.ref_prog), dram_notes_off():
                latency, ref_latency = benchmark(self, jit_kernel, *args, **kwargs)
        except Exception as err:
            session.fail(config, "emulator", err)
            raise
        with session.lock:
            session.timed.append((latency, index, jit_kernel))
        return latency, ref_latency

    @functools.wraps(save)
    def save_result_to_disk(self, key, result) -> None:
        if not is_tenstorrent(self):  # TileLang's loader cannot rebuild a Tenstorrent kernel: ours is load_result
            save(self, key, result)

    tenstorrent_run.adapted_to_tenstorrent = True
    AutoTuner.run = tenstorrent_run
    AutoTuner._prepare_compile_execution = prepare_compile_execution
    AutoTuner._resolve_num_compile_workers = resolve_num_compile_workers
    AutoTuner._benchmark_target = benchmark_target
    AutoTuner._save_result_to_disk = save_result_to_disk


def _material(tuner: AutoTuner) -> dict | None:
    """:func:`cache_material` for the kernel at the tuner's first config (elaborated as TileLang elaborates it)."""
    _, elaborate = tuner._ensure_jit_functions()
    parameters = inspect.signature(tuner.fn).parameters
    first = {name: value for name, value in tuner.configs[0].items() if name in parameters}
    return cache_material(tuner, elaborate(**first, **{PASS_CONFIGS_KEY: tuner.configs[0].get("pass_configs")}))


register()
