"""``TenstorrentModule``: the generated programs of one or more kernels, as ``tvm.build`` returns them.

``tvm.build(mod, target="tenstorrent")`` returns one (see :mod:`tilelang_tt.backend` for how),
and the ``tilelang.compile`` kernel (:class:`tilelang_tt.backend.TenstorrentKernel`) is one with
a single kernel. Each PrimFunc of the built ``IRModule`` is one kernel with its own program
(:class:`Artifacts`).
"""

from __future__ import annotations

import os
from pathlib import Path

from tilelang_tt.artifacts import SOURCE_NAMES, Artifacts, write_files_atomically


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
        is the plan itself (a dict)."""
        return self.program(kernel).inspect_plan()

    def save(self, directory: str | os.PathLike) -> Path:
        """Write the programs into ``directory`` atomically: the five files of one kernel in it, or
        one subdirectory per kernel when there are several."""
        if len(self.programs) == 1:
            return self.artifacts.save(directory)
        return write_files_atomically(directory, {
            f"{kernel}/{name}": art.sources[name] for kernel, art in self.programs.items() for name in SOURCE_NAMES})

    def export_library(self, path: str | os.PathLike) -> Path:
        """TVM's export verb: :meth:`save`. A Tenstorrent program is its kernel sources, the host
        program ``main.cpp`` and the plan, compiled on the machine that runs it, so the
        "library" is that directory, not a shared object."""
        return self.save(path)

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
