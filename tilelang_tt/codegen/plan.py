"""G: the program's plan (``tt.plan.json``, DEVELOPERS.md Contract 1) from the attributes of the
split kernels, as a :class:`~tilelang_tt.contract.plan.Plan`, and the plan's text."""

from __future__ import annotations

import dataclasses
import json

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.contract.buffers import PlanBuffer
from tilelang_tt.contract.dims import PlanDim
from tilelang_tt.contract.formula import Formula
from tilelang_tt.contract.kernels import (
    ROLES,
    ArgSpec,
    BankCoords,
    ComputeConfig,
    CoreArgs,
    DataMovementConfig,
    PlanAccessor,
    PlanKernel,
    kernel_source,
)
from tilelang_tt.contract.mesh import PlanMesh
from tilelang_tt.contract.plan import Plan, PlanCB, PlanReduction
from tilelang_tt.contract.reading import PlanError
from tilelang_tt.contract.vocabulary import ArgKind, ArgValue, BufferAddress, MulticastGroup, NocCoord, WorkItem, plan_entry
from tilelang_tt.ir.attrs import Attr, KernelRole
from tilelang_tt.ir.common import dynamic_dims, scalar_dtype, scalar_params


def _kernel(role: str, func: tirx.PrimFunc, launch: int) -> tuple[PlanKernel, list[PlanAccessor]]:
    """A kernel of the plan and the TensorAccessorArgs that are its compile-time args (D2 bound
    them, in offset order)."""
    bound = sorted(Attr.TENSOR_ACCESSOR.read(func).values(), key=lambda acc: acc.cta_offset)
    accessors = [PlanAccessor(acc.buffer, role, acc.cta_offset, tuple(acc.compile_time_args),
                              acc.crta_offset if acc.sharded else None, acc.num_common_runtime_args) for acc in bound]
    compile_args = tuple(arg for acc in accessors for arg in acc.compile_time_args)
    args = tuple(plan_entry(ArgSpec, arg) for arg in Attr.RUNTIME_ARGS.read(func))
    if role == KernelRole.COMPUTE.value:
        config = plan_entry(ComputeConfig, Attr.COMPUTE_CONFIG.read(func))
        return PlanKernel(role, kernel_source(role, launch), compile_args, args, config), accessors
    # a sharded accessor's bank coordinates are its common runtime args, which the host knows
    common = tuple(BankCoords(acc.buffer, acc.num_common_runtime_args) for acc in bound if acc.sharded)
    return PlanKernel(role, kernel_source(role, launch), compile_args, args, DataMovementConfig.of(role),
                      common), accessors


def build_plan(kernels: dict[str, tirx.PrimFunc], launch: int = 0, scratch_from: int | None = None) -> Plan:
    """The plan of ``kernels`` (role -> split PrimFunc: reader, compute, writer) of one user kernel
    (of its launch ``launch``, whose parameters from position ``scratch_from`` on are scratch
    tensors: :mod:`tilelang_tt.launches`): every entry from the attributes the passes recorded (the
    plan decides nothing), checked as its readers check a plan (:meth:`Plan.checked`)."""
    reader, compute = kernels[KernelRole.READER.value], kernels[KernelRole.COMPUTE.value]
    layouts, access = Attr.LAYOUT_DESC.read(compute), Attr.BUFFER_ACCESS.read(compute)
    params = [compute.buffer_map[p] for p in compute.params if p in compute.buffer_map]  # scalars are dims
    scratch_from = len(compute.params) if scratch_from is None else scratch_from
    buffers = tuple(PlanBuffer.of(layouts[compute.buffer_map[p].name], index, access[compute.buffer_map[p].name],
                                  scratch=index >= scratch_from)
                    for index, p in enumerate(compute.params) if p in compute.buffer_map)
    cbs = tuple(sorted((plan_entry(PlanCB, cb) for cb in Attr.CB_DESC.read(compute).values()), key=lambda cb: cb.index))

    plan_kernels, accessors = [], []
    for role in ROLES:
        kernel, bound = _kernel(role, kernels[role], launch)
        plan_kernels.append(kernel)
        accessors += bound

    work = Attr.WORK_PARTITION.read(compute)
    multicast = dict(sorted(Attr.MULTICAST.read(reader).items()))
    # the core holding the block after each core's last (the next of the partition; the last core's own)
    next_core = {w.core: work[min(i + 1, len(work) - 1)].core for i, w in enumerate(work)}

    def values(kernel: PlanKernel, item: WorkItem) -> tuple[ArgValue, ...]:
        out = []
        for arg in kernel.runtime_args:
            if arg.kind == ArgKind.BUFFER_ADDRESS:
                out.append(BufferAddress(arg.buffer))
            elif arg.kind == ArgKind.MCAST:
                out.append(mcast_value(arg.what, multicast[arg.cb].group(item.core), item.core, kernel.role))
            elif arg.kind == ArgKind.CHAIN:
                core = next_core[item.core] if arg.what.startswith("next") else item.core
                out.append(NocCoord(arg.what[-1], core))
            elif arg.kind == ArgKind.DIM:  # a size's formula: its name
                out.append(Formula.name(arg.dim))
            else:
                out.append({
                    ArgKind.START_ID: item.start_id, ArgKind.COUNT: item.count, ArgKind.WIDTH: item.width,
                    ArgKind.SHARD_Y: item.shard[0], ArgKind.SHARD_X: item.shard[1], ArgKind.CONST: arg.value,
                }[arg.kind])
        return tuple(out)

    reduction = Attr.REDUCTION.read(compute)
    summed = reduction is not None and reduction.semaphore >= 0
    scalars = scalar_params(compute)
    dims = tuple(  # the values known at run time: where the host reads each (the first parameter and axis
        # of a size; a scalar parameter's position)
        PlanDim(name, param_index=scalars[var], dtype=scalar_dtype(var)) if var in scalars else
        next(PlanDim(name, buf.name, axis) for buf in params for axis, d in enumerate(buf.shape) if d.same_as(var))
        for name, var in dynamic_dims(compute).items())
    block_grid = Attr.BLOCK_GRID.read(compute)
    mesh = Attr.MESH.read(compute)
    return Plan(
        kernel_name=Attr.SOURCE_FUNC.read(compute), arch=Attr.ARCH.read(compute),
        core_grid=Attr.CORE_GRID.read(compute), core_ranges=Attr.CORE_RANGES.read(compute),
        partition_mode=Attr.PARTITION_MODE.read(compute).value, grid_tiles=Attr.GRID_TILES.read(compute),
        block_grid=block_grid, block_tiles=Attr.BLOCK_TILES.read(compute), work_policy=Attr.WORK_POLICY.read(compute),
        work_partition=work, buffers=buffers, cbs=cbs, tensor_accessors=tuple(accessors), kernels=tuple(plan_kernels),
        runtime_args=tuple(CoreArgs(w.core, {k.role: values(k, w) for k in plan_kernels}) for w in work),
        semaphores=Attr.SEMAPHORES.read(compute),
        multicast=tuple(dataclasses.replace(mc, groups=()) for mc in multicast.values()),  # each core's values hold them
        dims=dims,
        reduction=PlanReduction(tuple(b.name for b in reduction.buffers), reduction.blocks, reduction.semaphore)
        if summed else None,
        # every device runs this program over its panel of block rows (or columns)
        mesh=None if mesh is None else PlanMesh.of(mesh, block_grid, work),
    ).checked(launch)


def program_access(accesses: list[str]) -> str:
    """A buffer's access over a kernel's launches, from its access in each launch using it, in order:
    the host uploads it when a launch reads it before any writes it, reads it back when one writes it
    (a buffer no launch moves is "read", as in one launch)."""
    read = written = False
    for access in accesses:
        read = read or (access != "write" and not written)
        written = written or access != "read"
    return "readwrite" if read and written else "write" if written else "read"


def _layout_text(buffer: PlanBuffer) -> str:
    """How ``buffer`` is laid out, for a message: ``DRAM interleaved``, ``DRAM row_major``, ..."""
    extras = [*(["as a column"] if buffer.column else []), *(["flat"] if buffer.flat else []),
              *([f"stored as {buffer.storage}"] if buffer.storage else [])]
    return f"{buffer.memory.value} {buffer.layout.value}" + (f" ({', '.join(extras)})" if extras else "")


class SharedLayoutError(PlanError):
    """Two launches lay out a tensor they share differently: its parameter position and the later
    launch (whose statement using it the compiler names)."""

    def __init__(self, message: str, param_index: int, launch: int):
        super().__init__(message)
        self.param_index, self.launch = param_index, launch


def sequence_plans(plans: list[Plan], used: list[frozenset[int]]) -> Plan:
    """The plan of a kernel of several launches from each launch's (in order; ``used[i]``: the
    parameter positions launch ``i`` reads or writes): the first's, its buffers with the whole
    kernel's access (:func:`program_access`), the others its ``launches``. The host allocates a
    buffer once: every launch using it must lay it out alike (else a :class:`SharedLayoutError` naming
    the buffer and the two launches), and a launch not using it takes that layout too (its own choice
    lays out nothing it moves)."""
    chosen = []  # per buffer: its layout, from the first launch using it
    for i, buffer in enumerate(plans[0].buffers):
        users = [k for k, u in enumerate(used) if buffer.param_index in u] or [0]
        first = plans[users[0]].buffers[i]
        for k in users[1:]:
            other = dataclasses.replace(plans[k].buffers[i], access=first.access)
            if other != first:
                raise SharedLayoutError(f"`{buffer.name}` is laid out {_layout_text(first)} in launch {users[0]} "
                                        f"and {_layout_text(other)} in launch {k}", buffer.param_index, k)
        chosen.append(first)
    plans = [dataclasses.replace(p, buffers=tuple(dataclasses.replace(c, access=b.access)
                                                  for c, b in zip(chosen, p.buffers))) for p in plans]
    buffers = tuple(dataclasses.replace(c, access=program_access(
        [p.buffers[i].access for p, u in zip(plans, used) if c.param_index in u])) for i, c in enumerate(chosen))
    return dataclasses.replace(plans[0], buffers=buffers, launches=tuple(plans[1:])).checked()


def mcast_value(what: str, group: MulticastGroup, core: tuple[int, int], role: str) -> int | NocCoord:
    """Per-core value of multicast runtime arg ``what`` (contract.vocabulary.MCAST_ARGS) for ``core``
    of ``group`` (ChooseMulticastTT decided both), multicast by kernel ``role``. NOC coordinates are symbolic
    (:class:`NocCoord`: the host resolves the logical core). The reader multicasts on NOC 1, which
    takes the rectangle from its far corner to its near one (start and end swapped); the writer on
    NOC 0, from the near corner to the far one."""
    start, end = (group.far, group.near) if role == KernelRole.READER.value else (group.near, group.far)
    corners = {"sender": group.sender, "start": start, "end": end}
    if what[-2:] in ("_x", "_y"):
        return NocCoord(what[-1], corners[what[:-2]])
    return {"sender": int(tuple(core) == group.sender), "receivers": len(group.cores) - 1}[what]


def dumps_plan(plan: Plan) -> str:
    """``tt.plan.json`` text: indented, with every array or object that fits in a line of 100
    characters on one line, so a core's work and arguments read as one row."""

    def render(value, depth: int) -> str:
        pad, inner = "  " * depth, "  " * (depth + 1)
        compact = json.dumps(value, separators=(", ", ": "))
        if not isinstance(value, (list, dict)) or not value or len(pad) + len(compact) <= 100:
            return compact
        if isinstance(value, list):
            return "[\n" + ",\n".join(inner + render(v, depth + 1) for v in value) + "\n" + pad + "]"
        items = (f"{inner}{json.dumps(k)}: {render(v, depth + 1)}" for k, v in value.items())
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"

    return render(plan.to_json(), 0) + "\n"
