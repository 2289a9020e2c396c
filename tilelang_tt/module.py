"""``TenstorrentModule``: the generated programs of one or more kernels, as ``tvm.build`` returns them.

``tvm.build(mod, target="tenstorrent")`` returns one (see :mod:`tilelang_tt.backend` for how),
and the ``tilelang.compile`` kernel (:class:`tilelang_tt.backend.TenstorrentKernel`) is one with
a single kernel. Each PrimFunc of the built ``IRModule`` is one kernel with its own program
(:class:`Artifacts`). As TVM's runtime modules: ``mod["main"]`` / ``mod.get_function("main")`` is
a :class:`TenstorrentFunction`, called with every parameter (torch tensors, numpy arrays,
``tvm.runtime.Tensor`` or any DLPack tensor; an int or a float for a scalar parameter), the outputs written
in place; ``tvm.compile``'s ``Executable`` serves ``ex["main"]`` from it; ``time_evaluator``
reports the timing model's predicted time. ``export_library("name.tenstorrent")`` writes one file
that ``tvm.runtime.load_module`` loads
back (:func:`load_module_file`, TVM's loader of the ``.tenstorrent`` suffix).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import tempfile
from pathlib import Path

import tilelang  # noqa: F401  (tilelang must be imported before tvm)
import tvm_ffi
from tvm.runtime.module import BenchmarkResult

from tilelang_tt import native
from tilelang_tt.arguments import bind
from tilelang_tt.artifacts import EMULATOR, SOURCE_MAP_FILE, Artifacts, read_source_map, write_files_atomically
from tilelang_tt.compiler import DUMP_FILE, dump_file_name
from tilelang_tt.contract.buffers import PlanBuffer
from tilelang_tt.contract.reading import PlanError
from tilelang_tt.plan_view import read_plan


# -- the files of one or more kernels as one text (a TVM source module holds one string) -----------
IR_DIR = "ir/"  # the IR a kernel kept after each pass (keep_ir) travels as files ir/NN_<Pass>.py
BUNDLE_HEADER = re.compile(
    r"// ===== tilelang-tt: (?P<kernel>[^/\n]+)/(?P<file>[^ \n]+) \((?P<size>\d+) chars\) =====\n")


def bundle_files(art: Artifacts) -> dict[str, str]:
    """The files of a compiled kernel: its generated sources and source map (what it saves), then
    the IR it kept after each pass under :data:`IR_DIR` (named as ``dump_ir`` names them)."""
    kept = {IR_DIR + dump_file_name(index, name): text for index, (name, text) in enumerate(art.ir_after_pass, 1)}
    return {**art.files(), **kept}


def bundle(artifacts: dict[str, Artifacts]) -> str:
    """All files of ``{kernel name: Artifacts}`` as one readable text; :func:`unbundle` inverts it."""
    parts = []
    for kernel, art in artifacts.items():
        for name, text in bundle_files(art).items():
            parts.append(f"// ===== tilelang-tt: {kernel}/{name} ({len(text)} chars) =====\n{text}")
    return "".join(parts)


def unbundle(text: str) -> dict[str, Artifacts]:
    sources: dict[str, dict[str, str]] = {}
    pos = 0
    while pos < len(text):
        header = BUNDLE_HEADER.match(text, pos)
        if header is None:
            raise ValueError(f"not a tilelang-tt source bundle (at offset {pos})")
        start = header.end()
        end = start + int(header.group("size"))
        if end > len(text):
            name = f"{header.group('kernel')}/{header.group('file')}"
            raise ValueError(f"a tilelang-tt source bundle cut short: `{name}` has {len(text) - start} of its "
                             f"{header.group('size')} chars")
        sources.setdefault(header.group("kernel"), {})[header.group("file")] = text[start:end]
        pos = end
    return {kernel: artifacts_from_files(files) for kernel, files in sources.items()}


def artifacts_from_files(files: dict[str, str]) -> Artifacts:
    """The inverse of :func:`bundle_files`."""
    sources = {name: text for name, text in files.items() if not name.startswith(IR_DIR) and name != SOURCE_MAP_FILE}
    kept = tuple((DUMP_FILE.fullmatch(name.removeprefix(IR_DIR))["pass_name"], text)
                 for name, text in files.items() if name.startswith(IR_DIR))
    source_map = read_source_map(files[SOURCE_MAP_FILE]) if SOURCE_MAP_FILE in files else {}
    plans = [name for name in sources if name.endswith(".json")]  # the plan file
    if len(plans) != 1:
        raise ValueError(f"a kernel's files hold one plan (a .json file), these hold {len(plans)}: {sorted(sources)}")
    (plan,) = plans
    return Artifacts(sources=sources, plan=read_plan(sources[plan], plan), ir_after_pass=kept, source_map=source_map)


def predicted_seconds(artifacts: Artifacts) -> float:
    """The timing model's predicted kernel time, in seconds, of the last emulator run of
    ``artifacts`` (what ``time_evaluator`` and the profiler report)."""
    return artifacts.last_counters["timing"]["seconds"]


class TenstorrentFunction:
    """One kernel of a :class:`TenstorrentModule` as a TVM function: ``f(*params)`` runs the
    program (on the emulator unless ``device="tt"``) on tensors given for every parameter in
    order (an int or a float for a scalar parameter), checked against the plan (count, dtype, shape: a
    ``TypeError``/``ValueError`` naming the parameter), and writes the outputs into the tensors given for them."""

    def __init__(self, artifacts: Artifacts) -> None:
        self.artifacts = artifacts
        self.plan = artifacts.plan

    def __call__(self, *args, device: str = EMULATOR) -> None:
        import torch

        params = self.plan.parameters
        args = [_as_torch(arg) if isinstance(p, PlanBuffer) else arg for arg, p in zip(args, params)] + list(
            args[len(params):])
        bind(self.plan, args, inputs_only=False)
        results = self.artifacts.run(*args, device=device)
        if not isinstance(results, (tuple, list)):
            results = (results,)
        outputs = [t for p, t in zip(params, args) if isinstance(p, PlanBuffer) and p.is_output]
        for tensor, result in zip(outputs, results, strict=True):
            tensor.copy_(torch.as_tensor(result).reshape(tensor.shape).to(tensor.dtype))


def _as_torch(arg):
    """A torch tensor sharing ``arg``'s memory (outputs are written through it), or ``arg`` itself
    when it is no tensor (:func:`tilelang_tt.arguments.bind` names the parameter)."""
    import numpy as np
    import torch

    if isinstance(arg, torch.Tensor):
        return arg
    if isinstance(arg, np.ndarray):
        return torch.from_numpy(arg)
    if hasattr(arg, "__dlpack__"):
        return torch.from_dlpack(arg)
    return arg


class TenstorrentModule:
    """Programs by kernel name. Methods taking ``kernel=`` need it only when there are several."""

    kind = "tenstorrent"

    def __init__(self, programs: dict[str, Artifacts]) -> None:
        self.programs = dict(programs)

    @property
    def kernels(self) -> list[str]:
        return list(self.programs)

    def program(self, kernel: str | None = None) -> Artifacts:
        """The :class:`Artifacts` of ``kernel``."""
        if kernel is None:
            if len(self.programs) != 1:
                raise ValueError(f"the module holds {len(self.programs)} kernels {self.kernels}: pass kernel=<name>")
            return next(iter(self.programs.values()))
        if kernel not in self.programs:
            raise KeyError(f"no kernel {kernel!r}; the module holds {self.kernels}")
        return self.programs[kernel]

    def get_function(self, name: str, query_imports: bool = False) -> TenstorrentFunction:
        """TVM's ``Module.get_function``: the kernel ``name`` as a :class:`TenstorrentFunction`."""
        if name not in self.programs:
            raise AttributeError(f"no function {name!r} in the Tenstorrent module; it holds {self.kernels}")
        return TenstorrentFunction(self.programs[name])

    def __getitem__(self, name: str) -> TenstorrentFunction:
        return self.get_function(name)

    def time_evaluator(self, func_name: str, dev=None, number: int = 10, repeat: int = 1, **_measurement_options):
        """TVM's ``time_evaluator``: a function that runs ``func_name`` on the emulator once (its
        outputs written as a call writes them) and returns TVM's ``BenchmarkResult`` of the timing
        model's predicted kernel time in seconds, ``repeat`` times (the prediction is deterministic:
        ``number`` and the other measurement options change nothing)."""
        function = self.get_function(func_name)

        def evaluator(*args) -> BenchmarkResult:
            function(*args)
            return BenchmarkResult([predicted_seconds(function.artifacts)] * repeat)

        return evaluator

    @property
    def imported_modules(self) -> list:
        """TVM's imported modules: none (the kernels are this module's own)."""
        return []

    def _collect_from_import_tree(self, predicate) -> list:
        """What ``tvm.runtime.Executable.jit`` asks: the modules of the import tree that ``predicate``
        (not runnable: source modules) holds for. None: this module runs its kernels itself."""
        return []

    def inspect_source(self, fmt: str = "") -> str:
        """TVM's ``inspect_source``: every generated file of every kernel, as one bundle."""
        return bundle(self.programs)

    @property
    def artifacts(self) -> Artifacts:
        """The :class:`Artifacts` of the module's one kernel."""
        return self.program()

    def get_source(self, role: str = "compute", kernel: str | None = None) -> str:
        """One generated file: a role (``"reader"``, ``"compute"``, ``"writer"``, ``"main"``,
        ``"plan"``) or a file name (``reader.cpp``, ..., ``tt.plan.json``)."""
        return self.program(kernel).get_source(role)

    def inspect_plan(self, kernel: str | None = None) -> str:
        """The readable plan summary ``tilelang-tt plan show`` prints; ``program(kernel).plan``
        is the plan itself (a :class:`~tilelang_tt.contract.plan.Plan`)."""
        return self.program(kernel).inspect_plan()

    def save(self, directory: str | os.PathLike) -> Path:
        """Write the programs into ``directory`` atomically: the files of one kernel in it
        (:meth:`Artifacts.files`), or one subdirectory per kernel when there are several."""
        if len(self.programs) == 1:
            return self.artifacts.save(directory)
        return write_files_atomically(directory, {
            f"{kernel}/{name}": text for kernel, art in self.programs.items() for name, text in art.files().items()})

    def export_library(self, path: str | os.PathLike, *, fcompile=None, addons=None, workspace_dir=None,
                       **compile_options) -> Path:
        """TVM's export verb: one file ``<name>.tenstorrent`` holding every file of every kernel
        (:func:`write_module_file`), which ``tvm.runtime.load_module`` loads back. A Tenstorrent
        program is its kernel sources, the host program ``main.cpp`` and the plan, compiled on the
        machine that runs it, so the "library" is that text, not a shared object; :meth:`save`
        writes the sources as a directory. TVM's keyword arguments are taken (``tvm.compile``'s
        ``Executable`` passes them on): ``workspace_dir`` is not needed, and a compiler, objects
        to link or compiler options are refused (there is nothing to compile or link)."""
        linking = {name: value for name, value in (("fcompile", fcompile), ("addons", addons), *compile_options.items())
                   if value}
        if linking:
            raise ModuleFileError(f"a Tenstorrent module exports its programs' text, with nothing to compile or link: "
                                  f"drop {', '.join(linking)}")
        return write_module_file(path, self.programs)

    @staticmethod
    def load(path: str | os.PathLike) -> TenstorrentModule:
        """The module :meth:`export_library` wrote to ``path``, as this class (``tvm.runtime.load_module``
        gives the same programs as a ``tvm.runtime.Module``)."""
        return TenstorrentModule(read_module_file(path))

    def import_module(self, other: TenstorrentModule) -> None:
        """Merge ``other``'s kernels in: how ``tvm.build`` attaches device code to the host module."""
        if not isinstance(other, TenstorrentModule):
            raise TypeError(f"a Tenstorrent module imports Tenstorrent kernels only, not a {other.kind!r} module: "
                            "build the functions for other targets in a separate tvm.build")
        clash = sorted(set(self.programs) & set(other.programs))
        if clash:
            raise ValueError(f"kernels {clash} are defined twice")
        self.programs.update(other.programs)

    def __repr__(self) -> str:
        return f"TenstorrentModule(kernels={self.kernels})"



# -- export_library's file and TVM's loader of it ------------------------------------------------
MODULE_SUFFIX = "." + TenstorrentModule.kind  # tvm.runtime.load_module picks its loader by the suffix
FILE_HEADER = "// tilelang-tt module file, format 2 (tvm.runtime.load_module loads it once tilelang_tt is imported)\n"
# the second line: the sha256 of the rest of the file (the bundle), checked on load: an edited or damaged file
# is refused rather than run
DIGEST_LINE = re.compile(r"// sha256 (?P<digest>[0-9a-f]{64})\n")
MODULE_HELPERS = ("get_source", "inspect_plan")  # what a loaded module serves besides its kernels


@tvm_ffi.register_error
class ModuleFileError(ValueError):
    """A path that is not, or cannot be, an exported Tenstorrent module file (registered with
    ``tvm_ffi``, so it comes out of ``tvm.runtime.load_module`` as itself)."""


def module_file_text(programs: dict[str, Artifacts]) -> str:
    """The text of the module file of ``programs``: :data:`FILE_HEADER`, the digest line
    (:data:`DIGEST_LINE`) and the :func:`bundle`."""
    text = bundle(programs)
    return f"{FILE_HEADER}// sha256 {hashlib.sha256(text.encode()).hexdigest()}\n{text}"


def write_module_file(path: str | os.PathLike, programs: dict[str, Artifacts]) -> Path:
    """Write ``programs`` to ``path`` (which must end in :data:`MODULE_SUFFIX`) atomically."""
    target = Path(path)
    if target.suffix != MODULE_SUFFIX:
        raise ModuleFileError(
            f"{target}: a Tenstorrent module exports to a `{MODULE_SUFFIX}` file, the suffix tvm.runtime.load_module "
            f"loads it back by (its programs are compiled where they run: there is no shared object); name it "
            f"{target.with_suffix(MODULE_SUFFIX).name}, or save(DIR) to write the sources as a directory")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(module_file_text(programs))
        os.replace(partial, target)
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise
    return target


def read_module_file(path: str | os.PathLike) -> dict[str, Artifacts]:
    """The programs of a file :func:`write_module_file` wrote; a :class:`ModuleFileError` naming
    the file for anything else."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        text = ""
    except OSError as err:
        raise ModuleFileError(f"cannot read the Tenstorrent module file {path}: {err.strerror}") from None
    if not text.startswith(FILE_HEADER):
        raise ModuleFileError(f"{path} is not a Tenstorrent module file (its first line is not "
                              f"{FILE_HEADER.strip()!r}); write one with export_library('NAME{MODULE_SUFFIX}')")
    digest = DIGEST_LINE.match(text, len(FILE_HEADER))
    if digest is None:
        raise ModuleFileError(f"the Tenstorrent module file {path} has no digest line after its first line: it was not "
                              "written by export_library of this tilelang-tt, or was edited; export the module again")
    body = text[digest.end():]
    if hashlib.sha256(body.encode()).hexdigest() != digest["digest"]:
        raise ModuleFileError(f"the Tenstorrent module file {path} was changed or damaged after it was exported (its "
                              "content does not match its sha256 digest), so it is not run: export the module again "
                              "(change a program by changing its kernel and compiling it)")
    try:
        programs = unbundle(body)
    except (ValueError, KeyError, TypeError) as err:  # PlanError is a ValueError
        kind = "an invalid plan" if isinstance(err, PlanError) else "damaged"
        raise ModuleFileError(f"the Tenstorrent module file {path} is {kind}: {err}") from None
    if not programs:
        raise ModuleFileError(f"the Tenstorrent module file {path} holds no kernels")
    return programs


def load_module_file(path: str, _format: str) -> tvm_ffi.Module:
    """``ffi.Module.load_from_file.tenstorrent``, what ``tvm.runtime.load_module(path)`` calls for a
    ``.tenstorrent`` file: the programs as a runtime module of kind ``tenstorrent``.

    tvm-ffi casts what a loader returns to ``ffi::Module``, a final FFI type whose Python class is
    ``tvm.runtime.Module`` for every module, so a Python object (a :class:`TenstorrentModule`)
    cannot be returned: the module is a small C++ one (``runtime_module.cc``) holding the bundle of
    every file (``inspect_source()``), whose functions are :func:`module_function`'s, served
    through TVM's own calls: ``m["main"](a, b, c)`` / ``m.get_function("main")`` run a kernel as a
    :class:`TenstorrentFunction` does, and the helpers :data:`MODULE_HELPERS` are module functions
    (as an LLVM module serves ``get_symbol``): ``m.get_source("reader")`` and ``m.inspect_plan()``
    (``kernel`` as a second argument when there are several). ``time_evaluator`` is TVM's: it
    times the calls on the host's clock (emulator runs); :meth:`TenstorrentModule.load` gives the
    module whose ``time_evaluator`` reports the timing model's predicted time."""
    programs = read_module_file(path)
    return native.library().create_tenstorrent_module(bundle(programs))


@functools.lru_cache(maxsize=8)
def _loaded(text: str) -> TenstorrentModule:
    return TenstorrentModule(unbundle(text))


def module_function(text: str, name: str):
    """``tilelang_tt.module_function``: the function ``name`` of the loaded module whose files are
    ``text`` (its bundle), or None; a kernel of a helper's name shadows the helper."""
    module = _loaded(text)
    if name in module.programs:
        return module.get_function(name)
    return getattr(module, name) if name in MODULE_HELPERS else None


tvm_ffi.register_global_func(f"ffi.Module.load_from_file.{TenstorrentModule.kind}", load_module_file, override=True)
tvm_ffi.register_global_func("tilelang_tt.module_function", module_function, override=True)
