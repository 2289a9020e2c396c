"""E1 FinalizePersistentSignatureTT: freeze each kernel's runtime arguments.

Reads: ``tt.kernel_role``, ``tt.tensor_accessor`` (reader/writer buffers in slot order),
``tt.work_policy``, ``tt.multicast``.
Writes: ``tt.runtime_args`` = ordered descriptors, each with the TIR variable (``var``) that
stands for the argument in the kernel: reader/writer ``[<buffer>_addr...]``, then the work of
the core — ``start_id, count`` (contiguous, row_major), ``start_id, count, width`` (block), or
the shard extras ``shard_y, shard_x, count, width`` (local_shard) —, then every dynamic size
(``T.dynamic``: its own variable, which the kernel's expressions use), then for the reader the
arguments of every multicast CB (``tilelang_tt.contract.plan.MCAST_ARGS``, in CB name order), for the
writer of a reduction the NOC coordinates of its core and of the next (``CHAIN_ARGS``). Compute
gets the work arguments only. Runs right after D2 (the address arguments follow the accessor
slots) so that D3 finds the multicast arguments by their variables. No TIR loop is added here:
MaterializeCoreLoopTT makes the per-core loop ``for n in range(count)`` over the core's blocks from
these arguments, and codegen reads only the arguments the kernel's IR uses.

    After (reader): "tt.runtime_args": [{"name": "A_addr", "kind": "buffer_address", "buffer": "A", "var": A_addr},
                                        {"name": "B_addr", ...}, {"name": "start_id", ...}, {"name": "count", ...}]
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.contract.vocabulary import CHAIN_ARGS, MCAST_ARGS, ArgKind, Policy
from tilelang_tt.ir.attrs import Attr, KernelRole, RuntimeArg
from tilelang_tt.ir.dataflow import movers
from tilelang_tt.ir.common import dynamic_dims, prim_func_pass

PASS = "FinalizePersistentSignatureTT"
WORK_ARGS = {
    Policy.CONTIGUOUS: (ArgKind.START_ID, ArgKind.COUNT),
    Policy.ROW_MAJOR: (ArgKind.START_ID, ArgKind.COUNT),
    Policy.ZIGZAG: (ArgKind.START_ID, ArgKind.COUNT),
    Policy.BLOCK: (ArgKind.START_ID, ArgKind.COUNT, ArgKind.WIDTH),
    Policy.LOCAL_SHARD: (ArgKind.SHARD_Y, ArgKind.SHARD_X, ArgKind.COUNT, ArgKind.WIDTH),
}


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    role = Attr.KERNEL_ROLE.read(func)
    accessors = Attr.TENSOR_ACCESSOR.read(func)
    ordered = sorted(accessors.values(), key=lambda acc: acc.cta_offset)
    args = [_arg(f"{acc.buffer}_addr", ArgKind.BUFFER_ADDRESS, buffer=acc.buffer) for acc in ordered]
    policy = Attr.WORK_POLICY.read(func).policy
    args += [_arg(kind.value, kind) for kind in WORK_ARGS[policy]]
    # the dynamic sizes: the kernel's expressions of them (loop bounds, tile ids) read them as they are
    args += [RuntimeArg(name, ArgKind.DIM, dim=name, var=var) for name, var in dynamic_dims(func).items()]
    readers = movers(func)
    for cb, mc in sorted(Attr.MULTICAST.read(func).items()):  # the multicast blocks this kernel reads
        if readers[cb] == role:
            args += [_arg(mc.arg(what), ArgKind.MCAST, cb=cb, what=what) for what in MCAST_ARGS]
    reduction = Attr.REDUCTION.read(func)
    if role == KernelRole.WRITER and reduction is not None and reduction.semaphore >= 0:
        args += [_arg(f"sum_{what}", ArgKind.CHAIN, what=what) for what in CHAIN_ARGS]
    return Attr.RUNTIME_ARGS.write(func, args)


def _arg(name: str, kind: ArgKind, **fields) -> RuntimeArg:
    return RuntimeArg(name, kind, var=tirx.Var(name, "uint32"), **fields)


def FinalizePersistentSignatureTT():
    return prim_func_pass(_transform, PASS)
