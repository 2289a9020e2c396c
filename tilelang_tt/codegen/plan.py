"""G: ``tt.plan.json`` (DEVELOPERS.md, Contract 1) from the attributes of the split kernels."""

from __future__ import annotations

import json

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.attrs import Attr, KernelRole
from tilelang_tt.contract.plan import (
    DATA_MOVEMENT,
    SCHEMA_VERSION,
    ArgKind,
    BufferAddress,
    MeshDevice,
    MulticastGroup,
    NocCoord,
    PlanMesh,
    PlanReduction,
    Policy,
    WorkItem,
    split_columns,
)
from tilelang_tt.contract.formula import to_json
from tilelang_tt.ir.common import dynamic_dims


def build_plan(kernels: dict[str, tirx.PrimFunc]) -> dict:
    """``kernels``: role -> split PrimFunc (reader, compute, writer) of one user kernel."""
    reader, compute, writer = (kernels[r.value] for r in (KernelRole.READER, KernelRole.COMPUTE, KernelRole.WRITER))
    arch = Attr.ARCH.read(compute)
    layouts = Attr.LAYOUT_DESC.read(compute)
    access = Attr.BUFFER_ACCESS.read(compute)

    buffers = []
    for index, param in enumerate(compute.params):
        buf = compute.buffer_map[param]
        desc = layouts[buf.name]
        entry = {
            "name": buf.name, "param_index": index, "shape": [to_json(d) for d in desc.shape], "dtype": desc.dtype,
            "data_format": desc.data_format, "access": access[buf.name], "memory": desc.memory.value,
            "layout": desc.layout.value, "tile_shape": list(desc.tile_shape), "page_size": desc.page_size,
            "num_pages": to_json(desc.num_pages),
        }
        if desc.shard_grid is not None:  # shards in elements of the tensor seen as a matrix, on these cores/banks
            entry |= {"shard_grid": list(desc.shard_grid), "shard_shape": list(desc.shard_shape)}
        if desc.column:  # a rank-1 (or flat) tensor laid out as (n, 1) (InferTTLayout's choice)
            entry["column"] = True
        if desc.flat:  # laid out as the rank-1 tensor of its elements (InferTTLayout's choice)
            entry["flat"] = True
        buffers.append(entry)

    cbs = [
        {"index": cb.index, "name": cb.name, "page_size": cb.page_size, "num_pages": cb.num_pages,
         "data_format": cb.data_format, "producer": cb.producer, "consumer": cb.consumer, "buffer": cb.buffer}
        for cb in sorted(Attr.CB_DESC.read(compute).values(), key=lambda cb: cb.index)
    ]

    accessors, kernel_entries, arg_specs = [], [], {}
    for role, func in (("reader", reader), ("compute", compute), ("writer", writer)):
        bound = sorted(Attr.TENSOR_ACCESSOR.read(func).values(), key=lambda acc: acc.cta_offset)
        ct_args: list[int] = []
        common_args: list[dict] = []
        for acc in bound:
            accessor = {"buffer": acc.buffer, "kernel": role, "cta_offset": acc.cta_offset,
                        "compile_time_args": list(acc.compile_time_args)}
            if acc.sharded:  # the packed NOC coordinates of its banks, known to the host
                accessor |= {"crta_offset": acc.crta_offset, "num_common_runtime_args": acc.num_common_runtime_args}
                common_args.append({"kind": "bank_coords", "buffer": acc.buffer, "count": acc.num_common_runtime_args})
            accessors.append(accessor)
            ct_args.extend(acc.compile_time_args)
        specs = list(Attr.RUNTIME_ARGS.read(func))
        arg_specs[role] = specs
        entry = {"role": role, "source": f"{role}.cpp"}
        if role == "compute":
            config = Attr.COMPUTE_CONFIG.read(compute)
            entry |= {"math_fidelity": config.math_fidelity, "fp32_dest_acc_en": config.fp32_dest_acc_en,
                      "math_approx_mode": config.math_approx_mode, "unpack_to_dest": list(config.unpack_to_dest)}
        else:
            entry |= {"processor": DATA_MOVEMENT[role][0], "noc": DATA_MOVEMENT[role][1], "common_runtime_args": common_args}
        entry |= {"compile_time_args": ct_args, "runtime_args": [a.to_dict() for a in specs]}
        kernel_entries.append(entry)

    work = list(Attr.WORK_PARTITION.read(compute))
    multicast = dict(sorted(Attr.MULTICAST.read(reader).items()))
    # the core holding the block after each core's last (the next of the partition; the last core's own)
    next_core = {w.core: work[min(i + 1, len(work) - 1)].core for i, w in enumerate(work)}

    def values(role: str, item: WorkItem) -> list:
        out = []
        for arg in arg_specs[role]:
            if arg.kind == ArgKind.BUFFER_ADDRESS:
                out.append(BufferAddress(arg.buffer).to_json())
            elif arg.kind == ArgKind.MCAST:
                out.append(mcast_value(arg.what, multicast[arg.cb].group(item.core), item.core, role))
            elif arg.kind == ArgKind.CHAIN:
                core = next_core[item.core] if arg.what.startswith("next") else item.core
                out.append(NocCoord(arg.what[-1], core).to_json())
            else:
                out.append(to_json({
                    ArgKind.START_ID: item.start_id, ArgKind.COUNT: item.count, ArgKind.WIDTH: item.width,
                    ArgKind.SHARD_Y: item.shard[0], ArgKind.SHARD_X: item.shard[1], ArgKind.CONST: arg.value,
                }[arg.kind]) if arg.kind != ArgKind.DIM else arg.dim)  # a size's formula: its name
        return out

    policy = Attr.WORK_POLICY.read(compute)
    semaphores = []
    for mc in multicast.values():
        semaphores += [{"id": mc.sender_semaphore, "name": f"{mc.cb}_sender", "initial_value": 0},
                       {"id": mc.receiver_semaphore, "name": f"{mc.cb}_receiver", "initial_value": 0}]

    reduction = Attr.REDUCTION.read(compute)
    if reduction is not None and reduction.semaphore >= 0:
        semaphores.append({"id": reduction.semaphore, "name": "reduction", "initial_value": 0})
    params = [compute.buffer_map[p] for p in compute.params]
    dims = [  # the dynamic sizes: where the host reads each (the first parameter and axis of the size)
        next({"name": name, "buffer": buf.name, "axis": axis} for buf in params for axis, d in enumerate(buf.shape)
             if d.same_as(var))
        for name, var in dynamic_dims(compute).items()]
    plan = {
        "schema_version": SCHEMA_VERSION,
        "kernel_name": Attr.SOURCE_FUNC.read(compute),
        "arch": arch.name,
        "device_grid": list(arch.grid),
        "core_grid": list(Attr.CORE_GRID.read(compute)),
        "core_ranges": [{"start": list(r.start), "end": list(r.end)} for r in Attr.CORE_RANGES.read(compute)],
        "partition_mode": Attr.PARTITION_MODE.read(compute).value,
        "grid_tiles": [to_json(t) for t in Attr.GRID_TILES.read(compute)],
        "block_grid": [to_json(b) for b in Attr.BLOCK_GRID.read(compute)],
        "block_tiles": list(Attr.BLOCK_TILES.read(compute)),
        "work_policy": policy.to_dict(),
        "work_partition": [w.to_plan(policy.policy == Policy.LOCAL_SHARD) for w in work],
        "buffers": buffers,
        "cbs": cbs,
        "tensor_accessors": accessors,
        "kernels": kernel_entries,
        "runtime_args": [
            {"core": list(w.core), "reader": values("reader", w), "compute": values("compute", w),
             "writer": values("writer", w)} for w in work
        ],
        "semaphores": sorted(semaphores, key=lambda e: e["id"]),
        "multicast": [{"cb": mc.cb} | mc.to_dict() for mc in multicast.values()],
    }
    if reduction is not None and reduction.semaphore >= 0:
        plan["reduction"] = PlanReduction(tuple(b.name for b in reduction.buffers), reduction.blocks,
                                          reduction.semaphore).to_json()
    split = Attr.MESH.read(compute)
    if split is not None:  # every device runs this program over its panel of block rows (or columns)
        per = plan["block_grid"][1 if split_columns(split.axis) else 0]
        devices = tuple(MeshDevice((i // split.shape[1], i % split.shape[1]), (i * per, per), tuple(work))
                        for i in range(split.devices))
        plan["mesh"] = PlanMesh(split.shape, split.axis, split.blocks, devices, split.tensors).to_json(
            policy.policy == Policy.LOCAL_SHARD)
    return plan | {"dims": dims} if dims else plan


def mcast_value(what: str, group: MulticastGroup, core: tuple[int, int], role: str):
    """Per-core value of multicast runtime arg ``what`` (contract.plan.MCAST_ARGS) for ``core`` of
    ``group`` (B1 decided both), multicast by kernel ``role``. NOC coordinates are symbolic
    (:class:`NocCoord`: the host resolves the logical core). The reader multicasts on NOC 1, which
    takes the rectangle from its far corner to its near one (start and end swapped); the writer on
    NOC 0, from the near corner to the far one."""
    start, end = (group.far, group.near) if role == KernelRole.READER.value else (group.near, group.far)
    corners = {"sender": group.sender, "start": start, "end": end}
    if what[-2:] in ("_x", "_y"):
        return NocCoord(what[-1], corners[what[:-2]]).to_json()
    return {"sender": int(tuple(core) == group.sender), "receivers": len(group.cores) - 1}[what]


def dumps_plan(plan: dict) -> str:
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

    return render(plan, 0) + "\n"
