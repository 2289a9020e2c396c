"""``Artifacts``: the generated program of one kernel (sources, plan) and what can be done with it."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

SOURCE_NAMES = ("reader.cpp", "compute.cpp", "writer.cpp", "main.cpp", "tt.plan.json")


def _torch_dtype(plan: dict, name: str):
    import torch

    dtype = next(b["dtype"] for b in plan["buffers"] if b["name"] == name)
    return getattr(torch, dtype)


@dataclass
class Artifacts:
    sources: dict[str, str]
    plan: dict
    ir_after_pass: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # (pass name, TIR) when asked
    last_counters: dict | None = field(default=None, repr=False)  # emulator counters of the last run()

    @property
    def kernel_name(self) -> str:
        return self.plan["kernel_name"]

    def get_source(self, name: str = "compute.cpp") -> str:
        """One generated file: ``reader.cpp``, ``compute.cpp``, ``writer.cpp``, ``main.cpp`` or
        ``tt.plan.json`` (a role name such as ``"reader"`` works too)."""
        key = name if name in self.sources else f"{name}.cpp"
        if key not in self.sources:
            raise KeyError(f"no generated source {name!r}; choose one of {sorted(self.sources)}")
        return self.sources[key]

    def save(self, directory: str | os.PathLike) -> Path:
        """Write every source into ``directory`` atomically (all files or none)."""
        target = Path(directory)
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
        try:
            for name in SOURCE_NAMES:
                (staging / name).write_text(self.sources[name])
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

    @staticmethod
    def load(directory: str | os.PathLike) -> Artifacts:
        d = Path(directory)
        sources = {name: (d / name).read_text() for name in SOURCE_NAMES}
        return Artifacts(sources=sources, plan=json.loads(sources["tt.plan.json"]))

    def run(self, *tensors, **named):
        """Execute on the emulator. Positional tensors follow the kernel's parameter order (all of
        them, or only the inputs); returns the output tensors (one tensor if there is one)."""
        from tilelang_tt.emulator import run

        buffers = self.plan["buffers"]
        inputs = [b for b in buffers if b["access"] != "write"]
        if len(tensors) == len(buffers):
            given = {b["name"]: t for b, t in zip(buffers, tensors) if b["access"] != "write"}
        elif len(tensors) == len(inputs):
            given = {b["name"]: t for b, t in zip(inputs, tensors)}
        else:
            raise TypeError(f"kernel `{self.kernel_name}` takes {len(inputs)} input tensors "
                            f"({', '.join(b['name'] for b in inputs)}), got {len(tensors)}")
        given |= named
        result = run(self.sources, self.plan, given)
        outputs = [result.outputs[b["name"]] for b in buffers if b["access"] != "read"]
        if any(type(t).__module__.startswith("torch") for t in given.values()):
            import torch

            outputs = [torch.from_numpy(o).to(_torch_dtype(self.plan, name)) for o, name in
                       zip(outputs, [b["name"] for b in buffers if b["access"] != "read"])]
        self.last_counters = result.counters
        return outputs[0] if len(outputs) == 1 else tuple(outputs)
