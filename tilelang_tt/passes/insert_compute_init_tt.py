"""D4 InsertComputeInitTT (late, compute): engine initialization (unpack/math/pack).

Reads: ``tt.kernel_role``, ``tt.cb_desc``, the compute intrinsics of the kernel.
Writes: no attribute. TIR: before the per-core launch, ``tt.engine.init_common(in0, in1, out,
reverse)`` (→ ``compute_kernel_hw_startup``, ``SrcOrder::Reverse`` when the first op is a matmul)
from the CBs of the kernel's first compute op. When the whole kernel runs one engine
configuration — only matmuls of the same operands, or only one FPU binary op of two blocks — its
init (``matmul_init`` / ``add_init``…) is hoisted here too; otherwise InsertDSTManagementTT
emits each op's short init where the op runs. No DST protocol yet.

    Before: bx = T.launch_thread("coreIdx.x", 4) ... T.tt.mm.mma(A_s.data, B_s.data, C_l.data, ...)
    After:  T.tt.engine.init_common(0, 1, 16, T.bool(True))
            T.tt.fpu.matmul_init(0, 1, T.bool(False))
            bx = T.launch_thread("coreIdx.x", 4) ...
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.attrs import AccumulateMode, Attr, Intrin, KernelRole, get
from tilelang_tt.passes.build_tile_dfg_tt import scaler_cb
from tilelang_tt.passes.common import (
    evaluate,
    evaluate_calls,
    prim_func_pass,
    seq,
    stmt_intrin,
)

PASS = "InsertComputeInitTT"
FPU_BINARY = {tirx.Add: "add", tirx.Sub: "sub", tirx.Mul: "mul"}


def fpu_binary(value, cbs: dict) -> tuple[str, str, str] | None:
    """(op, a, b) when an eltwise value is A[i, j] op B[i, j] of two full blocks: one FPU op."""
    op = FPU_BINARY.get(type(value))
    if op is None:
        return None
    operands = []
    for x in (value.a, value.b):
        while isinstance(x, tirx.Cast):
            x = x.value
        if not isinstance(x, tirx.BufferLoad) or cbs[x.buffer.name]["vector"] != "":
            return None
        operands.append(x.buffer.name)
    return op, operands[0], operands[1]


def engine_configs(func: tirx.PrimFunc) -> list[tuple]:
    """One entry per compute op: the engine configuration it needs."""
    cbs = get(func, Attr.CB_DESC, {})
    reloads = set()

    def visit(node):
        if isinstance(node, tirx.AttrStmt) and node.attr_key == Attr.ACCUMULATE.value and int(node.value) != AccumulateMode.FRESH:
            reloads.add(node.node.name)

    tirx.stmt_functor.post_order_visit(func.body, visit)
    configs = []
    for stmt in evaluate_calls(func.body):
        intrin = stmt_intrin(stmt)
        args = stmt.value.args if intrin is not None else []
        if intrin == Intrin.MM_MMA:
            c = args[2].name
            configs.append(("matmul", args[0].name, args[1].name, bool(args[7]), c in reloads))
        elif intrin == Intrin.TILE_ELTWISE:
            binary = fpu_binary(args[3], cbs)
            configs.append(("binary", *binary) if binary else ("sfpu", stmt))
        elif intrin == Intrin.TILE_REDUCE:
            configs.append(("reduce", stmt))
    return configs


def hoistable_init(func: tirx.PrimFunc) -> tuple | None:
    """The single engine configuration of a kernel whose op init can be done once, else None."""
    configs = engine_configs(func)
    if not configs or any(c[0] in ("sfpu", "reduce") or (c[0] == "matmul" and c[4]) for c in configs):
        return None
    return configs[0] if len(set(configs)) == 1 else None


def first_op_cbs(func: tirx.PrimFunc, index) -> tuple[int, int, int, bool]:
    cbs = get(func, Attr.CB_DESC, {})
    for stmt in evaluate_calls(func.body):
        intrin = stmt_intrin(stmt)
        args = stmt.value.args if intrin is not None else []
        if intrin == Intrin.MM_MMA:
            return index(args[0].name), index(args[1].name), index(args[2].name), True
        if intrin == Intrin.TILE_ELTWISE:
            loads = []
            tirx.stmt_functor.post_order_visit(
                args[3], lambda n: loads.append(n.buffer.name) if isinstance(n, tirx.BufferLoad) else None)
            out = index(args[0].name)
            a = index(loads[0]) if loads else out
            b = index(loads[1]) if len(loads) > 1 else a
            return a, b, out, False
        if intrin == Intrin.TILE_REDUCE:
            return index(args[1].name), cbs[scaler_cb(func)]["index"], index(args[2].name), False
    raise AssertionError("no compute op")


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    if get(func, Attr.KERNEL_ROLE) != KernelRole.COMPUTE.value or not engine_configs(func):
        return func
    cbs = get(func, Attr.CB_DESC)

    def index(name):
        return cbs[name]["index"]

    a, b, out, reverse = first_op_cbs(func, index)
    init = [evaluate(Intrin.HW_STARTUP, a, b, out, reverse)]
    config = hoistable_init(func)
    if config is not None and config[0] == "matmul":
        init.append(evaluate(Intrin.MATMUL_INIT, index(config[1]), index(config[2]), config[3]))
    elif config is not None:
        init.append(evaluate(Intrin.BINARY_INIT, config[1], index(config[2]), index(config[3])))
    return func.with_body(seq([*init, func.body]))


def InsertComputeInitTT():
    return prim_func_pass(_transform, PASS)
