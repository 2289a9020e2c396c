"""G: ``tt.plan.json`` (DEVELOPERS.md, Contract 1) from the attributes of the split kernels."""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.arch import get_arch
from tilelang_tt.attrs import (
    AccessorDesc,
    Attr,
    KernelRole,
    LayoutDesc,
    RuntimeArg,
    WorkItem,
    get,
)

SCHEMA_VERSION = 1
PROCESSORS = {KernelRole.READER.value: ("RISCV_1", "RISCV_1_default"), KernelRole.WRITER.value: ("RISCV_0", "RISCV_0_default")}


def build_plan(kernels: dict[str, tirx.PrimFunc]) -> dict:
    """``kernels``: role -> split PrimFunc (reader, compute, writer) of one user kernel."""
    reader, compute, writer = (kernels[r.value] for r in (KernelRole.READER, KernelRole.COMPUTE, KernelRole.WRITER))
    arch = get_arch(get(compute, Attr.ARCH))
    layouts = get(compute, Attr.LAYOUT_DESC)
    read = set(get(reader, Attr.TENSOR_ACCESSOR))
    written = set(get(writer, Attr.TENSOR_ACCESSOR))

    buffers = []
    for index, param in enumerate(compute.params):
        buf = compute.buffer_map[param]
        layout = layouts[buf.name]
        access = "readwrite" if buf.name in read and buf.name in written else "write" if buf.name in written else "read"
        rows, cols = LayoutDesc.from_dict(buf.name, layout).tile_grid
        buffers.append({
            "name": buf.name, "param_index": index, "shape": layout["shape"], "dtype": layout["dtype"],
            "data_format": layout["data_format"], "access": access, "memory": layout["memory"],
            "layout": layout["layout"], "tile_shape": layout["tile_shape"], "page_size": layout["page_size"],
            "num_pages": rows * cols,
        })

    cbs = [
        {"index": d["index"], "name": name, "page_size": d["page_size"], "num_pages": d["num_pages"],
         "data_format": d["data_format"], "producer": d["producer"], "consumer": d["consumer"], "buffer": d["buffer"]}
        for name, d in sorted(get(compute, Attr.CB_DESC).items(), key=lambda kv: kv[1]["index"])
    ]

    accessors, kernel_entries, arg_specs = [], [], {}
    for role, func in (("reader", reader), ("compute", compute), ("writer", writer)):
        bound = sorted(get(func, Attr.TENSOR_ACCESSOR).items(), key=lambda kv: kv[1]["cta_offset"])
        ct_args: list[int] = []
        for name, d in bound:
            acc = AccessorDesc.from_dict(name, d)
            accessors.append({"buffer": name, "kernel": role, "cta_offset": acc.cta_offset,
                              "compile_time_args": list(acc.compile_time_args)})
            ct_args.extend(acc.compile_time_args)
        specs = [RuntimeArg.from_dict(d) for d in get(func, Attr.RUNTIME_ARGS)]
        arg_specs[role] = specs
        entry = {"role": role, "source": f"{role}.cpp"}
        if role == "compute":
            config = get(compute, Attr.COMPUTE_CONFIG)
            entry |= {"math_fidelity": config["math_fidelity"], "fp32_dest_acc_en": config["fp32_dest_acc_en"],
                      "math_approx_mode": config["math_approx_mode"]}
        else:
            entry |= {"processor": PROCESSORS[role][0], "noc": PROCESSORS[role][1]}
        entry |= {"compile_time_args": ct_args, "runtime_args": [a.to_dict() for a in specs]}
        kernel_entries.append(entry)

    work = [WorkItem.from_list(w) for w in get(compute, Attr.WORK_PARTITION)]

    def values(role: str, item: WorkItem) -> list:
        out = []
        for arg in arg_specs[role]:
            if arg.kind == "buffer_address":
                out.append(f"@{arg.buffer}")
            elif arg.kind == "start_id":
                out.append(item.start_id)
            elif arg.kind == "count":
                out.append(item.count)
            else:
                out.append(arg.value)
        return out

    return {
        "schema_version": SCHEMA_VERSION,
        "kernel_name": get(compute, Attr.SOURCE_FUNC),
        "arch": arch.name,
        "device_grid": list(arch.grid),
        "core_grid": get(compute, Attr.CORE_GRID),
        "core_ranges": [{"start": r[0], "end": r[1]} for r in get(compute, Attr.CORE_RANGES)],
        "partition_mode": get(compute, Attr.PARTITION_MODE),
        "grid_tiles": get(compute, Attr.GRID_TILES),
        "block_grid": get(compute, Attr.BLOCK_GRID),
        "block_tiles": get(compute, Attr.BLOCK_TILES),
        "work_partition": [{"core": list(w.core), "start_id": w.start_id, "count": w.count} for w in work],
        "buffers": buffers,
        "cbs": cbs,
        "tensor_accessors": accessors,
        "kernels": kernel_entries,
        "runtime_args": [
            {"core": list(w.core), "reader": values("reader", w), "compute": values("compute", w),
             "writer": values("writer", w)} for w in work
        ],
        "semaphores": [],
    }
