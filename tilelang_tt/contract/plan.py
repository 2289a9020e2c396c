"""``tt.plan.json`` (DEVELOPERS.md, Contract 1) as one typed value: :class:`Plan`.

The compiler builds a :class:`Plan` (``tilelang_tt.codegen.plan.build_plan``) and writes its JSON
(:meth:`Plan.to_json`); every reader takes the :class:`Plan`, and a plan that comes from outside
(a file, an exported module) is read by :meth:`Plan.from_json`, which checks every field it reads:
types, ranges and enumerations, and the references between entries (the buffers runtime args and
tensor accessors name, the CBs of multicasts, one kernel per role, each core's runtime values
against its kernel's runtime-arg list, accessor args inside their kernel's compile-time args).
Anything else is a :class:`~tilelang_tt.contract.reading.PlanError` naming the entry.
``Plan.from_json(d).to_json() == d`` for every plan the compiler writes.

A kernel of several ``T.Kernel`` launches (:mod:`tilelang_tt.launches`) is one plan: the first
launch's, whose ``launches`` are the plans of the others, in order (one program each, the host
running them one after the other); :attr:`Plan.programs` lists all of them.

The entries live with their subject: buffers (:mod:`~tilelang_tt.contract.buffers`), kernels and
per-core values (:mod:`~tilelang_tt.contract.kernels`), the vocabulary shared with the compiler's
attributes (:mod:`~tilelang_tt.contract.vocabulary`), a mesh of chips
(:mod:`~tilelang_tt.contract.mesh`) and sizes known at run time (:mod:`~tilelang_tt.contract.dims`).
Here: the plan, its CBs, semaphores, core ranges and reduction.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tilelang_tt.contract.arch import ARCHS, Arch
from tilelang_tt.contract.buffers import PlanBuffer
from tilelang_tt.contract.dims import PlanDim, bound, bound_buffers, dim_values, runtime_bits
from tilelang_tt.contract.formats import BY_DATA_FORMAT, Format
from tilelang_tt.contract.formula import Formula, to_json
from tilelang_tt.contract.kernels import ROLES, CoreArgs, PlanAccessor, PlanKernel, check_accessor_args
from tilelang_tt.contract.mesh import PlanMesh, combine_kernels
from tilelang_tt.contract.reading import (
    PlanError,
    check_unique,
    read_int,
    read_list,
    read_object,
    read_pair,
    read_sizes,
    read_str,
)
from tilelang_tt.contract.vocabulary import Core, MulticastDesc, Policy, WorkItem, WorkPolicy

SCHEMA_VERSION = 1
# the published schema is tt.plan.schema.json at the repository's root; the package carries the same file
SCHEMA_PATH = Path(__file__).resolve().parents[1] / "schema" / "tt.plan.schema.json"
PARTITION_MODES = ("global", "local_shard")


@dataclass(frozen=True)
class PlanCB:
    """A circular buffer, the same on every active core: the plan's entry, and the part of the
    compiler's ``tt.cb_desc`` entry (``tilelang_tt.ir.attrs.CBDesc``) the host creates."""

    name: str
    index: int
    page_size: int
    num_pages: int
    data_format: str
    producer: str = ""
    consumer: str = ""
    buffer: str = ""  # the plan buffer it stages, "" for an intermediate
    valid: tuple[int, int] | None = None  # a block padded to whole tiles: its valid (rows, cols); None: whole

    @property
    def format(self) -> Format:
        return BY_DATA_FORMAT[self.data_format]

    @property
    def size(self) -> int:
        return self.page_size * self.num_pages

    def to_json(self) -> dict:
        return {"index": self.index, "name": self.name, "page_size": self.page_size, "num_pages": self.num_pages,
                "data_format": self.data_format, "producer": self.producer, "consumer": self.consumer,
                "buffer": self.buffer} | ({"valid": list(self.valid)} if self.valid is not None else {})

    @staticmethod
    def from_json(d: object, where: str, arch: Arch, buffers: Sequence[str]) -> PlanCB:
        d = read_object(d, where, ("index", "name", "page_size", "num_pages", "data_format", "producer", "consumer",
                                   "buffer"), ("valid",))
        where = f"CB {read_str(d['name'], f'{where}.name')!r}"
        if d["buffer"] != "" and d["buffer"] not in buffers:
            raise PlanError(f"{where}: buffer {d['buffer']!r} is not a buffer of the plan")
        return PlanCB(
            index=read_int(d["index"], f"{where}: index ({arch.name} has {arch.num_cbs} CBs)", high=arch.num_cbs - 1),
            name=d["name"], page_size=read_int(d["page_size"], f"{where}: page_size", low=1),
            num_pages=read_int(d["num_pages"], f"{where}: num_pages", low=1),
            data_format=read_str(d["data_format"], f"{where}: data_format", list(BY_DATA_FORMAT)),
            producer=read_str(d["producer"], f"{where}: producer", ROLES),
            consumer=read_str(d["consumer"], f"{where}: consumer", ROLES), buffer=d["buffer"],
            valid=read_pair(d["valid"], f"{where}: valid", low=1) if "valid" in d else None,
        )


@dataclass(frozen=True)
class Semaphore:
    """Allocated on every active core; ``id`` is its position in the plan (kernels get ids as constants)."""

    id: int
    name: str
    initial_value: int = 0

    def to_json(self) -> dict:
        return {"id": self.id, "name": self.name, "initial_value": self.initial_value}

    @staticmethod
    def from_json(d: object, where: str) -> Semaphore:
        d = read_object(d, where, ("id", "name", "initial_value"))
        return Semaphore(read_int(d["id"], f"{where}.id"), read_str(d["name"], f"{where}.name"),
                         read_int(d["initial_value"], f"{where}.initial_value"))


@dataclass(frozen=True)
class CoreRange:
    start: Core  # inclusive
    end: Core

    def to_json(self) -> dict:
        return {"start": list(self.start), "end": list(self.end)}

    @staticmethod
    def from_json(d: object, where: str) -> CoreRange:
        d = read_object(d, where, ("start", "end"))
        return CoreRange(read_pair(d["start"], f"{where}.start"), read_pair(d["end"], f"{where}.end"))


@dataclass(frozen=True)
class PlanReduction:
    """Blocks summing into ``buffers`` (T.atomic_add) take turns: each ``blocks`` consecutive block
    ids add into one region, block ``b`` after block ``b - 1``, ordered by ``semaphore``."""

    buffers: tuple[str, ...]
    blocks: int
    semaphore: int

    def to_json(self) -> dict:
        return {"buffers": list(self.buffers), "blocks": self.blocks, "semaphore": self.semaphore}

    @staticmethod
    def from_json(d: object, buffers: Sequence[str], semaphores: Sequence[int]) -> PlanReduction:
        d = read_object(d, "reduction", ("buffers", "blocks", "semaphore"))
        names = tuple(read_str(b, f"reduction.buffers[{i}]", buffers)
                      for i, b in enumerate(read_list(d["buffers"], "reduction.buffers")))
        if d["semaphore"] not in semaphores:
            raise PlanError(f"reduction: semaphore {d['semaphore']!r} is not a semaphore id of the plan {list(semaphores)}")
        return PlanReduction(names, read_int(d["blocks"], "reduction.blocks", low=2), int(d["semaphore"]))


@dataclass(frozen=True)
class Plan:
    """A checked ``tt.plan.json``. Sequences keep the plan's order."""

    kernel_name: str
    arch: Arch
    core_grid: Core
    core_ranges: tuple[CoreRange, ...]
    partition_mode: str
    grid_tiles: tuple[int | Formula, int | Formula]
    block_grid: tuple[int | Formula, int | Formula]
    block_tiles: Core
    work_policy: WorkPolicy
    work_partition: tuple[WorkItem, ...]
    buffers: tuple[PlanBuffer, ...]
    cbs: tuple[PlanCB, ...]
    tensor_accessors: tuple[PlanAccessor, ...]
    kernels: tuple[PlanKernel, ...]
    runtime_args: tuple[CoreArgs, ...]
    semaphores: tuple[Semaphore, ...]
    multicast: tuple[MulticastDesc, ...]  # without their groups: each core's runtime values carry them
    dims: tuple[PlanDim, ...] = ()  # dynamic sizes; the plan's formulas name them
    reduction: PlanReduction | None = None  # blocks taking turns to sum into tensors
    mesh: PlanMesh | None = None  # a mesh of devices, each running the plan over its block rows
    # a kernel of several T.Kernel launches: the plans of the launches after this one (the first), in
    # order; this plan's buffers carry the whole kernel's access, each launch's its own
    launches: tuple[Plan, ...] = ()

    KEYS = ("schema_version", "kernel_name", "arch", "device_grid", "core_grid", "core_ranges", "partition_mode",
            "grid_tiles", "block_grid", "block_tiles", "work_policy", "work_partition", "buffers", "cbs",
            "tensor_accessors", "kernels", "runtime_args", "semaphores", "multicast")

    @property
    def device_grid(self) -> Core:
        return self.arch.grid

    @property
    def programs(self) -> tuple[Plan, ...]:
        """The programs the host runs in order, one per launch: this plan, then its ``launches``."""
        return (self, *self.launches)

    @property
    def program_kernels(self) -> tuple[PlanKernel, ...]:
        """Every kernel main.cpp creates: each launch's, then a mesh collective's combine kernels."""
        kernels = tuple(k for program in self.programs for k in program.kernels)
        collective = None if self.mesh is None else self.mesh.collective
        if collective is None:
            return kernels
        buffer = next(b for b in self.buffers if b.name == collective.buffer)
        return kernels + combine_kernels(collective, buffer, self.accessor_args(collective.buffer))

    def accessor_args(self, buffer: str) -> tuple[int, ...]:
        """The TensorAccessorArgs compile-time arguments of ``buffer`` (as any kernel reading it has them)."""
        return next(tuple(a.compile_time_args) for a in self.tensor_accessors if a.buffer == buffer)

    @property
    def host_buffers(self) -> tuple[PlanBuffer, ...]:
        """The buffers as the host's tensors hold them: on a mesh, whole (each ``shape`` the mesh
        tensor's; the plan's are one device's), else the buffers themselves."""
        if self.mesh is None:
            return self.buffers
        return tuple(dataclasses.replace(b, shape=self.mesh.tensor(b.name).shape) for b in self.buffers)

    @property
    def inputs(self) -> tuple[PlanBuffer, ...]:
        """The buffers the host uploads (access read or readwrite), in parameter order."""
        return tuple(b for b in self.buffers if b.is_input)

    @property
    def outputs(self) -> tuple[PlanBuffer, ...]:
        """The buffers the host reads back (access write or readwrite), in parameter order."""
        return tuple(b for b in self.buffers if b.is_output)

    def kernel(self, role: str) -> PlanKernel:
        return next(k for k in self.kernels if k.role == role)

    @property
    def unpacked_to_dest(self) -> tuple[int, ...]:
        """The indices of the CBs compute unpacks straight to DST (``UnpackToDestMode::UnpackToDestFp32``)."""
        index = {cb.name: cb.index for cb in self.cbs}
        return tuple(index[name] for name in self.kernel("compute").config.unpack_to_dest)

    # ---- sizes known at run time ----

    def dim_values(self, shapes: Mapping[str, Sequence[int]],
                   scalars: Mapping[str, object] = {}) -> dict[str, int | float]:
        """The value of each dynamic size read from ``shapes`` (buffer name -> shape of the tensor
        given for it; outputs may be missing) and of each scalar parameter from ``scalars`` (name ->
        an int, or a float for a float parameter): a :class:`~tilelang_tt.contract.dims.SizeError` for
        tensors or scalars the program cannot serve (:func:`~tilelang_tt.contract.dims.dim_values`)."""
        return dim_values(self.dims, self.buffers, shapes, scalars)

    @property
    def parameters(self) -> tuple[PlanBuffer | PlanDim, ...]:
        """The kernel's parameters in order: its :attr:`host_buffers` but scratch tensors and its scalar
        parameters (the dims with a ``param_index``), which the caller passes as ints or floats."""
        return tuple(sorted([*(b for b in self.host_buffers if not b.scratch), *(d for d in self.dims if d.scalar)],
                            key=lambda p: p.param_index))

    def bind(self, values: Mapping[str, int | float]) -> Plan:
        """This plan with every formula of its dynamic sizes computed for ``values``
        (:meth:`dim_values`): a plan of ints, checked as a static one (its ``dims`` stay: the
        kernels' size arguments name them). A buffer over the device's DRAM is a
        :class:`~tilelang_tt.contract.dims.SizeError` naming it and the sizes. Every launch of a
        kernel of several is bound alike (they share the sizes)."""
        return dataclasses.replace(self._bound(values),
                                   launches=tuple(p._bound(values) for p in self.launches)).checked()

    def _bound(self, values: Mapping[str, int | float]) -> Plan:
        """:meth:`bind` of this launch's program alone, unchecked."""
        def value(v):
            return bound(v, values)

        def arg(v):  # a runtime argument: 32 bits (a negative int its two's complement, a float its float32 bits)
            return runtime_bits(bound(v, values)) if isinstance(v, Formula) else v

        return dataclasses.replace(
            self, buffers=bound_buffers(self.buffers, values, self.arch),
            grid_tiles=tuple(map(value, self.grid_tiles)), block_grid=tuple(map(value, self.block_grid)),
            work_partition=tuple(dataclasses.replace(w, start_id=value(w.start_id), count=value(w.count))
                                 for w in self.work_partition),
            runtime_args=tuple(CoreArgs(e.core, {role: tuple(map(arg, v)) for role, v in e.values.items()})
                               for e in self.runtime_args),
        )

    # ---- JSON ----

    def to_json(self) -> dict:
        """The ``tt.plan.json`` dict (keys in the order the schema lists them)."""
        local_shard = self.work_policy.policy == Policy.LOCAL_SHARD
        d = {
            "schema_version": SCHEMA_VERSION,
            "kernel_name": self.kernel_name,
            "arch": self.arch.name,
            "device_grid": list(self.device_grid),
            "core_grid": list(self.core_grid),
            "core_ranges": [r.to_json() for r in self.core_ranges],
            "partition_mode": self.partition_mode,
            "grid_tiles": [to_json(x) for x in self.grid_tiles],
            "block_grid": [to_json(x) for x in self.block_grid],
            "block_tiles": list(self.block_tiles),
            "work_policy": self.work_policy.to_dict(),
            "work_partition": [w.to_plan(local_shard) for w in self.work_partition],
            "buffers": [b.to_json() for b in self.buffers],
            "cbs": [c.to_json() for c in self.cbs],
            "tensor_accessors": [a.to_json() for a in self.tensor_accessors],
            "kernels": [k.to_json() for k in self.kernels],
            "runtime_args": [e.to_json() for e in self.runtime_args],
            "semaphores": [s.to_json() for s in self.semaphores],
            "multicast": [m.to_json() for m in self.multicast],
        }
        if self.reduction is not None:
            d["reduction"] = self.reduction.to_json()
        if self.mesh is not None:
            d["mesh"] = self.mesh.to_json(local_shard)
        if self.dims:
            d["dims"] = [x.to_json() for x in self.dims]
        if self.launches:
            d["launches"] = [p.to_json() for p in self.launches]
        return d

    def checked(self, launch: int = 0) -> Plan:
        """This plan, once its JSON has passed every check of :meth:`from_json` and read back as
        this plan (``launch``: the plan of that launch of a kernel of several): what the compiler
        builds (and :meth:`bind` computes) is held to what the plan's readers accept, with one
        definition of the checks."""
        read = Plan.from_json(self.to_json(), launch)
        if read != self:
            differ = [f.name for f in dataclasses.fields(Plan) if getattr(read, f.name) != getattr(self, f.name)]
            raise PlanError(f"the plan of kernel {self.kernel_name!r} does not read back as itself: {differ} differ")
        return self

    @staticmethod
    def from_json(d: object, launch: int = 0) -> Plan:
        """The checked view of a loaded ``tt.plan.json`` (``launch``: of the launch of that index of
        a kernel of several, an entry of the first's ``launches``), else a :class:`PlanError`."""
        d = read_object(d, "the plan" if launch == 0 else f"launches[{launch - 1}]", Plan.KEYS,
                        ("dims", "reduction", "mesh", "launches"))
        if d["schema_version"] != SCHEMA_VERSION:
            raise PlanError(f"schema_version {d['schema_version']!r}: this reader knows version {SCHEMA_VERSION}")
        arch = ARCHS[read_str(d["arch"], "arch", list(ARCHS))]
        if read_pair(d["device_grid"], "device_grid") != arch.grid:
            raise PlanError(f"device_grid {d['device_grid']} is not the {arch.name} worker grid {list(arch.grid)}")
        dims = tuple(PlanDim.from_json(x, f"dims[{i}]") for i, x in enumerate(read_list(d.get("dims", []), "dims")))
        dim_names = [x.name for x in dims]
        check_unique(dim_names, "dims")
        buffers = tuple(PlanBuffer.from_json(b, f"buffers[{i}]", dim_names)
                        for i, b in enumerate(read_list(d["buffers"], "buffers")))
        names = [b.name for b in buffers]
        check_unique(names, "buffer names")
        cbs = tuple(PlanCB.from_json(c, f"cbs[{i}]", arch, names) for i, c in enumerate(read_list(d["cbs"], "cbs")))
        check_unique([c.index for c in cbs], "CB indices")
        check_unique([c.name for c in cbs], "CB names")
        cb_names = [c.name for c in cbs]
        accessors = tuple(PlanAccessor.from_json(a, f"tensor_accessors[{i}]", names)
                          for i, a in enumerate(read_list(d["tensor_accessors"], "tensor_accessors")))
        kernels = tuple(PlanKernel.from_json(k, f"kernels[{i}]", names, cb_names, dim_names, launch)
                        for i, k in enumerate(read_list(d["kernels"], "kernels")))
        if sorted(k.role for k in kernels) != sorted(ROLES):
            raise PlanError(f"the plan must have exactly one reader, compute and writer kernel, got "
                            f"{[k.role for k in kernels]}")
        for kernel in kernels:
            check_accessor_args(kernel, accessors)
        semaphores = tuple(Semaphore.from_json(s, f"semaphores[{i}]")
                           for i, s in enumerate(read_list(d["semaphores"], "semaphores")))
        for position, semaphore in enumerate(semaphores):
            if semaphore.id != position:
                raise PlanError(f"semaphore ids must be 0, 1, ... in plan order; entry {position} has {semaphore.id}")
        semaphore_ids = [s.id for s in semaphores]
        block_grid = read_sizes(d["block_grid"], "block_grid", dim_names, 2)
        if "mesh" in d and dims:
            raise PlanError("mesh: a plan with dynamic sizes (dims) runs on one device")
        plan = Plan(
            kernel_name=read_str(d["kernel_name"], "kernel_name"), arch=arch,
            core_grid=read_pair(d["core_grid"], "core_grid", low=1),
            core_ranges=tuple(CoreRange.from_json(r, f"core_ranges[{i}]")
                              for i, r in enumerate(read_list(d["core_ranges"], "core_ranges"))),
            partition_mode=read_str(d["partition_mode"], "partition_mode", PARTITION_MODES),
            grid_tiles=read_sizes(d["grid_tiles"], "grid_tiles", dim_names, 2), block_grid=block_grid,
            block_tiles=read_pair(d["block_tiles"], "block_tiles"), work_policy=WorkPolicy.from_json(d["work_policy"]),
            work_partition=tuple(WorkItem.from_json(w, f"work_partition[{i}]", dim_names)
                                 for i, w in enumerate(read_list(d["work_partition"], "work_partition"))),
            buffers=buffers, cbs=cbs, tensor_accessors=accessors, kernels=kernels,
            runtime_args=tuple(CoreArgs.from_json(e, f"runtime_args[{i}]", kernels, names, dim_names)
                               for i, e in enumerate(read_list(d["runtime_args"], "runtime_args"))),
            semaphores=semaphores,
            multicast=tuple(MulticastDesc.from_json(m, f"multicast[{i}]", cb_names, semaphore_ids)
                            for i, m in enumerate(read_list(d["multicast"], "multicast"))),
            dims=dims,
            reduction=PlanReduction.from_json(d["reduction"], names, semaphore_ids) if "reduction" in d else None,
            mesh=PlanMesh.from_json(d["mesh"], buffers, block_grid) if "mesh" in d else None,
            launches=tuple(Plan.from_json(x, i + 1) for i, x in enumerate(read_list(d.get("launches", []), "launches"))),
        )
        plan._check_cores()
        plan._check_launches(launch)
        return plan

    def _check_launches(self, launch: int) -> None:
        """A plan of several launches: only the first holds launches; none has a mesh (one device), all
        have the first's dims (the host reads them once); every launch lays out the same buffers as the
        first (all but their access)."""
        if not self.launches:
            return
        if launch:
            raise PlanError(f"launches[{launch - 1}]: only the first launch's plan lists the launches after it")
        if self.mesh is not None:
            raise PlanError("launches: a plan of several launches runs on one device (no mesh)")
        own = [dataclasses.replace(b, access="read") for b in self.buffers]
        for i, other in enumerate(self.launches):
            if other.arch != self.arch or other.dims != self.dims or other.mesh is not None:
                raise PlanError(f"launches[{i}]: a launch runs on the first's arch ({self.arch.name}) with its sizes "
                                f"{[d.name for d in self.dims]}, and no mesh")
            theirs = [dataclasses.replace(b, access="read") for b in other.buffers]
            if theirs != own:
                differ = [b.name for b, o in zip(other.buffers, own) if dataclasses.replace(b, access="read") != o]
                raise PlanError(f"launches[{i}]: its buffers {differ or [b.name for b in other.buffers]} are not the "
                                f"first launch's {[b.name for b in self.buffers]} (the host allocates them once)")

    def _check_cores(self) -> None:
        gx, gy = self.arch.grid
        cores = [("core_ranges", r.start) for r in self.core_ranges] + [("core_ranges", r.end) for r in self.core_ranges]
        cores += [("work_partition", w.core) for w in self.work_partition]
        cores += [("runtime_args", e.core) for e in self.runtime_args]
        for where, (x, y) in cores:
            if x >= gx or y >= gy:
                raise PlanError(f"{where}: core ({x}, {y}) is outside the {gx}x{gy} worker grid of {self.arch.name}")
        check_unique([w.core for w in self.work_partition], "work_partition cores")
        check_unique([e.core for e in self.runtime_args], "runtime_args cores")
