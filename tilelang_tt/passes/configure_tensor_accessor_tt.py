"""D2 ConfigureTensorAccessorTT (late, reader/writer): bind TensorAccessorArgs slots.

Reads: ``tt.kernel_role``, ``tt.tensor_accessor`` and the global buffers each data-movement
kernel touches (in order of first access).
Writes: ``tt.tensor_accessor`` of reader/writer functions keeps only their buffers, each bound to
``kernel`` and ``cta_offset`` with its compile-time args as tt-metal 0.81.1's
``TensorAccessorArgs`` expects them: interleaved = [ArgsConfig bits (IsDram = 2), aligned page
size]. Compute functions get an empty map. Before/after: TIR unchanged.

    After (reader): "tt.tensor_accessor": {"A": {"kernel": "reader", "cta_offset": 0,
                                                "compile_time_args": [2, 2048], ...}, "B": {"cta_offset": 2, ...}}
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.attrs import AccessorDesc, Attr, Intrin, KernelRole, get, with_attrs
from tilelang_tt.passes.common import (
    as_region,
    error,
    evaluate_calls,
    prim_func_pass,
    stmt_intrin,
)

PASS = "ConfigureTensorAccessorTT"
ARG_SHARDED = 1 << 0
ARG_IS_DRAM = 1 << 1


def accessor_buffers(func: tirx.PrimFunc) -> list[str]:
    """Global buffers moved by a data-movement kernel, in order of first access."""
    names: list[str] = []
    for stmt in evaluate_calls(func.body):
        intrin = stmt_intrin(stmt)
        if intrin == Intrin.READ_TO_CB:
            name = as_region(stmt.value.args[0]).buffer.name
        elif intrin == Intrin.WRITE_FROM_CB:
            name = as_region(stmt.value.args[1]).buffer.name
        else:
            continue
        if name not in names:
            names.append(name)
    return names


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    role = get(func, Attr.KERNEL_ROLE)
    accessors = get(func, Attr.TENSOR_ACCESSOR, {})
    bound = {}
    if role in (KernelRole.READER.value, KernelRole.WRITER.value):
        offset = 0
        for name in accessor_buffers(func):
            acc = AccessorDesc.from_dict(name, accessors[name])
            if acc.layout != "interleaved":
                raise error(PASS, func, None, f"buffer `{name}` has layout {acc.layout}; only interleaved is supported",
                            "leave the buffer interleaved (the default)")
            config = ARG_IS_DRAM if acc.memory == "DRAM" else 0
            cta = (config, acc.page_size)
            bound[name] = AccessorDesc(**(acc.__dict__ | {"kernel": role, "cta_offset": offset,
                                                          "compile_time_args": cta})).to_dict()
            offset += len(cta)
    return with_attrs(func, {Attr.TENSOR_ACCESSOR: bound})


def ConfigureTensorAccessorTT():
    return prim_func_pass(_transform, PASS)
