"""E1 FinalizePersistentSignatureTT: freeze each kernel's runtime arguments.

Reads: ``tt.kernel_role``, ``tt.tensor_accessor`` (reader/writer buffers in slot order),
``tt.partition_mode``.
Writes: ``tt.runtime_args`` = ordered descriptors: reader/writer ``[<buffer>_addr..., start_id,
count]``, compute ``[start_id, count]``. No TIR loop is added: codegen materializes the per-core
persistent loop ``for (i = 0; i < count; ++i)`` over block ``start_id + i`` (spec E1/G).

    After (reader): "tt.runtime_args": [{"name": "A_addr", "kind": "buffer_address", "buffer": "A"},
                                        {"name": "B_addr", ...}, {"name": "start_id", ...}, {"name": "count", ...}]
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.attrs import Attr, PartitionMode, RuntimeArg, get, with_attrs
from tilelang_tt.passes.common import error, prim_func_pass

PASS = "FinalizePersistentSignatureTT"


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    if get(func, Attr.PARTITION_MODE) != PartitionMode.GLOBAL.value:
        raise error(PASS, func, None, f"partition mode {get(func, Attr.PARTITION_MODE)!r} is not supported yet",
                    "use the default global partition")
    accessors = get(func, Attr.TENSOR_ACCESSOR, {})
    ordered = sorted(accessors.items(), key=lambda kv: kv[1]["cta_offset"])
    args = [RuntimeArg(f"{name}_addr", "buffer_address", buffer=name) for name, _ in ordered]
    args += [RuntimeArg("start_id", "start_id"), RuntimeArg("count", "count")]
    return with_attrs(func, {Attr.RUNTIME_ARGS: [a.to_dict() for a in args]})


def FinalizePersistentSignatureTT():
    return prim_func_pass(_transform, PASS)
