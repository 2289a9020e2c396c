"""``Artifacts``: the generated program of one kernel (sources, plan) and what can be done with it."""

from __future__ import annotations

import json
import linecache
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tilelang_tt.arguments import bind
from tilelang_tt.contract.buffers import PlanBuffer
from tilelang_tt.contract.plan import Plan
from tilelang_tt.errors import span_from_location
from tilelang_tt.plan_view import read_plan, summary

SOURCE_NAMES = ("reader.cpp", "compute.cpp", "writer.cpp", "main.cpp", "tt.plan.json")
SOURCE_MAP_FILE = "source_map.json"  # Artifacts.source_map, in a saved program's directory
_GENERATED_LINE = re.compile(r"(?<![\w/])((?:launch\d+/)?(?:reader|compute|writer)\.cpp):(\d+)\b")
# get_source() role names -> file names
ROLES = {"reader": "reader.cpp", "compute": "compute.cpp", "writer": "writer.cpp", "main": "main.cpp",
         "plan": "tt.plan.json"}
EMULATOR, DEVICE = "emulator", "tt"  # Artifacts.run(device=...)


class ArtifactsDirError(ValueError):
    """A directory that does not hold a saved program."""


def extra_sources(plan: Plan) -> tuple[str, ...]:
    """The kernel sources beside :data:`SOURCE_NAMES`: the launches' after the first
    (``launch<i>/<role>.cpp``) in a program of several launches, and the combine kernels of a sum
    across the chips of a mesh (``combine_<role>.cpp``)."""
    first = {kernel.source for kernel in plan.kernels}
    return tuple(kernel.source for kernel in plan.program_kernels if kernel.source not in first)


def read_source_map(text: str) -> dict[str, dict[int, str]]:
    """The source map :meth:`Artifacts.files` wrote as :data:`SOURCE_MAP_FILE`."""
    return {file: {int(n): origin for n, origin in lines.items()} for file, lines in json.loads(text).items()}


def with_origins(message: str, source_map: dict[str, dict[int, str]]) -> str:
    """``message`` (an emulator error naming lines of the generated kernels, ``compute.cpp:30``)
    followed by the user's file, line and statement each of those lines was generated from."""
    seen = []
    for match in _GENERATED_LINE.finditer(message):
        file, line = match.group(1), int(match.group(2))
        origin = source_map.get(file, {}).get(line)
        if origin and (file, line, origin) not in seen:
            seen.append((file, line, origin))
    if not seen:
        return message
    notes = []
    for file, line, origin in seen:
        span = span_from_location(origin)
        path, user_line = str(span.source_name.name), int(span.line)
        statement = linecache.getline(path, user_line).strip()
        notes.append(f"  {file}:{line} <- {path}:{user_line}" + (f": {statement}" if statement else ""))
    return "\n".join([message, "generated from the kernel's statements:", *notes])


def _foreign_entries(directory: Path) -> list[str]:
    """What in ``directory`` a save did not write: anything but a saved program's files
    (:data:`SOURCE_NAMES`, :data:`SOURCE_MAP_FILE`) and folders holding only those (one kernel of
    a module's save, the kernels of a launch after the first)."""
    program = {*SOURCE_NAMES, SOURCE_MAP_FILE}

    def ours(path: Path) -> bool:
        children = list(path.iterdir()) if path.is_dir() else []
        return path.name in program if path.is_file() else bool(children) and all(ours(child) for child in children)

    return sorted(entry.name for entry in directory.iterdir() if not ours(entry))


def write_files_atomically(directory: str | os.PathLike, files: dict[str, str]) -> Path:
    """Make ``directory`` hold exactly ``files`` ({relative path: text}), all of them or, on
    failure, the directory as it was. A ``directory`` that is a file, or a folder holding anything
    a save did not write, is left as it is: a ``FileExistsError`` naming it (a save replaces the
    whole folder)."""
    target = Path(directory)
    if target.exists() and not target.is_dir():
        raise FileExistsError(f"{target} is a file, not a folder: a program is saved as a folder of files; save it "
                              "to another path (the file is left as it is)")
    foreign = _foreign_entries(target) if target.is_dir() else []
    if foreign:
        raise FileExistsError(f"{target} holds {', '.join(foreign[:5])}{' ...' if len(foreign) > 5 else ''}, which "
                              "no save wrote: saving replaces the whole folder, so it is left as it is; save to a new "
                              "or empty folder, or to one an earlier save wrote")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        for name, text in files.items():
            (staging / name).parent.mkdir(parents=True, exist_ok=True)
            (staging / name).write_text(text)
        if target.exists():
            backup = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
            backup.rmdir()
            target.rename(backup)
            staging.rename(target)
            shutil.rmtree(backup)
        else:
            staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


class NotRunError(RuntimeError):
    """What a program has only after a run (its counters, its predicted time) asked of it before one."""


@dataclass
class Artifacts:
    sources: dict[str, str]  # file name -> text: the kernels, main.cpp and tt.plan.json (the plan's JSON)
    plan: Plan
    ir_after_pass: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # (pass name, TIR) when asked
    counters: dict | None = field(default=None, repr=False)  # emulator counters of the last run(), None before
    # per kernel file, line -> the user's statement it was generated from (``file:line:column``):
    # what an emulator error naming a generated line also shows (saved as SOURCE_MAP_FILE)
    source_map: dict[str, dict[int, str]] = field(default_factory=dict, repr=False)

    @property
    def kernel_name(self) -> str:
        return self.plan.kernel_name

    @property
    def last_counters(self) -> dict:
        """The emulator's counters of the last :meth:`run` (``total``, per ``cores``, ``timing``); a
        :class:`NotRunError` before the program has run on the emulator."""
        if self.counters is None:
            raise NotRunError(f"kernel `{self.kernel_name}` has not run on the emulator yet, so it has no counters: "
                              "run it first (artifacts.run(*tensors), or call the compiled kernel), then read "
                              "last_counters")
        return self.counters

    def get_source(self, name: str = "compute") -> str:
        """One generated file, by role (``"reader"``, ``"compute"``, ``"writer"``, ``"main"``,
        ``"plan"``) or file name (``reader.cpp``, ..., ``tt.plan.json``)."""
        key = ROLES.get(name, name)
        if key not in self.sources:
            raise KeyError(f"no generated source {name!r}; choose a role {sorted(ROLES)} or a file {sorted(self.sources)}")
        return self.sources[key]

    def inspect_plan(self) -> str:
        """The readable plan summary ``tilelang-tt plan show`` prints (the plan is ``.plan``)."""
        return summary(self.plan)

    def files(self) -> dict[str, str]:
        """What :meth:`save` writes: every source, and the source map beside them (not a source: it
        names the kernel's file where it lies on this machine)."""
        files = {name: self.sources[name] for name in (*SOURCE_NAMES, *extra_sources(self.plan))}
        if self.source_map:
            files[SOURCE_MAP_FILE] = json.dumps(self.source_map, indent=1, sort_keys=True) + "\n"
        return files

    def save(self, directory: str | os.PathLike) -> Path:
        """Write :meth:`files` into ``directory`` atomically (all files or none)."""
        return write_files_atomically(directory, self.files())

    @staticmethod
    def load(directory: str | os.PathLike) -> Artifacts:
        """The program :meth:`save` wrote to ``directory``: an :class:`ArtifactsDirError` when a file
        is missing, a :class:`~tilelang_tt.contract.reading.PlanError` naming the file when its
        ``tt.plan.json`` is not a valid plan."""
        d = Path(directory)
        missing = [name for name in SOURCE_NAMES if not (d / name).is_file()]
        if missing:
            raise ArtifactsDirError(f"{d} is not a saved tilelang-tt program: it lacks {', '.join(missing)}; write one "
                                    f"with Artifacts.save(DIR) or `tilelang-tt compile KERNEL.py --out DIR`")
        texts = {}
        for name in (*SOURCE_NAMES, *([SOURCE_MAP_FILE] if (d / SOURCE_MAP_FILE).is_file() else [])):
            try:
                texts[name] = (d / name).read_text()
            except UnicodeDecodeError as err:
                raise ArtifactsDirError(f"{d} holds a damaged program: its {name} is not text ({err}); write it "
                                        "again with Artifacts.save(DIR) or `tilelang-tt compile KERNEL.py --out DIR`"
                                        ) from None
        try:
            source_map = read_source_map(texts.pop(SOURCE_MAP_FILE)) if SOURCE_MAP_FILE in texts else {}
        except ValueError as err:  # json's errors are ValueErrors
            raise ArtifactsDirError(f"{d} holds a damaged program: its {SOURCE_MAP_FILE} is not a source map ({err}); "
                                    "write it again with Artifacts.save(DIR)") from None
        plan = read_plan(texts["tt.plan.json"], str(d / "tt.plan.json"))
        missing = [name for name in extra_sources(plan) if not (d / name).is_file()]
        if missing:
            raise ArtifactsDirError(f"{d} is not a whole saved tilelang-tt program: it lacks {', '.join(missing)}, "
                                    "which its plan's launches name; write it again with Artifacts.save(DIR)")
        texts |= {name: (d / name).read_text() for name in extra_sources(plan)}
        return Artifacts(sources=texts, plan=plan, source_map=source_map)

    def run(self, *tensors, device: str = EMULATOR, out_dir: str | os.PathLike | None = None,
            trace: str | os.PathLike | None = None, timing_only: bool = False, progress=None, **named):
        """Execute the program. Positional tensors follow the kernel's parameter order (all of
        them, or only the inputs, but those given by name), keyword tensors name buffers; a scalar
        parameter (``offset: T.int32``, ``scale: T.float32``) is an input, an int or a float in its position
        or by its name; each value
        is checked against its parameter (:func:`tilelang_tt.arguments.bind`: dtype, shape, count);
        returns the output tensors (one tensor if there is one). An output given keeps its contents
        where the kernel does not write it (the emulator uploads it; one not given starts as zeros).

        ``device="emulator"`` (the default) runs it on the emulator and keeps its counters in
        ``last_counters``; with ``out_dir`` the emulator's data directory is kept there: inputs
        ``<buffer>.bin``, outputs ``<buffer>.out.bin`` and ``counters.json`` (per core and total);
        with ``trace`` the timing model's timeline of the run is written to that file as a Chrome
        trace (open it in Perfetto or chrome://tracing: one process per core, one thread per RISC);
        ``timing_only`` skips the arithmetic of the matrix multiplications, where emulation spends
        its time: ``last_counters`` (and its ``timing``) are those of a full run, and it returns None;
        ``progress(phase, done, total)`` is told how the build and the run go
        (:mod:`tilelang_tt.emulator.driver`: what ``tilelang-tt emulate`` shows on a terminal).
        ``device="tt"`` runs it on a Tenstorrent device through ttnn's ``generic_op``
        (:func:`tilelang_tt.host.ttnn_program.run_on_device`)."""
        plan = self.plan
        given = bind(plan, tensors, named)
        if device == DEVICE:
            if out_dir is not None:
                raise ValueError("out_dir keeps the emulator's data directory; a device run has none: drop out_dir")
            if trace is not None or timing_only or progress is not None:
                raise ValueError("trace, timing_only and progress are about the emulator (its timing model, its "
                                 "build and run); a device run has none of them: drop them")
            from tilelang_tt.host.ttnn_program import run_on_device

            return run_on_device(self, *(given[p.name] for p in plan.parameters
                                         if not isinstance(p, PlanBuffer) or p.is_input))
        if device != EMULATOR:
            raise ValueError(f"device={device!r}: use device={EMULATOR!r} (the default) or device={DEVICE!r} "
                             "(a Tenstorrent device through ttnn)")
        from tilelang_tt.emulator import EmulatorError, run

        try:
            result = run(self.sources, self.plan, given, data_dir=None if out_dir is None else Path(out_dir),
                         trace=None if trace is None else Path(trace), timing_only=timing_only, progress=progress)
        except EmulatorError as err:
            raise EmulatorError(with_origins(str(err), self.source_map), err.returncode) from None
        self.counters = result.counters
        if timing_only:
            return None
        outputs = [result.outputs[b.name] for b in plan.outputs]
        if any(type(t).__module__.startswith("torch") for t in given.values()):
            import torch

            outputs = [torch.from_numpy(o).to(getattr(torch, b.dtype)) for o, b in zip(outputs, plan.outputs)]
        return outputs[0] if len(outputs) == 1 else tuple(outputs)
