"""D4 InsertComputeInitTT (late, compute): engine initialization (unpack/math/pack).

Reads: ``tt.kernel_role``, ``tt.cb_desc``, the compute intrinsics of the kernel.
Writes: no attribute. TIR: before the per-core launch, ``tt.engine.init_common(in0, in1, out,
reverse)`` (→ ``compute_kernel_hw_startup``, ``SrcOrder::Reverse`` for matmul) and the op's init
(``tt.fpu.matmul_init(in0, in1, transpose)`` → ``matmul_init``; ``tt.fpu.binary_init(op, in0, in1)``
→ ``add_tiles_init``...). When a kernel mixes several ops, each op is preceded by its own short
init. No DST protocol yet.

    Before: bx = T.launch_thread("coreIdx.x", 4) ... T.tt.mm.mma(A_s.data, B_s.data, C_l.data, ...)
    After:  T.tt.engine.init_common(0, 1, 16, T.bool(True))
            T.tt.fpu.matmul_init(0, 1, T.bool(False))
            bx = T.launch_thread("coreIdx.x", 4) ...
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.attrs import Attr, Intrin, KernelRole, get
from tilelang_tt.passes.common import (
    evaluate,
    evaluate_calls,
    keep_span,
    prim_func_pass,
    seq,
    stmt_intrin,
)

PASS = "InsertComputeInitTT"


def cb_index_map(func: tirx.PrimFunc) -> dict[str, int]:
    return {name: d["index"] for name, d in get(func, Attr.CB_DESC, {}).items()}


def data_names(func: tirx.PrimFunc) -> dict:
    """Buffer data var -> on-chip buffer name (the allocations are gone after D1)."""
    names = {}
    cbs = set(get(func, Attr.CB_DESC, {}))

    def visit(node):
        if isinstance(node, tirx.Evaluate) and isinstance(node.value, tirx.Call):
            for arg in node.value.args:
                if isinstance(arg, tirx.Var) and arg.name in cbs:
                    names[arg] = arg.name

    tirx.stmt_functor.post_order_visit(func.body, visit)
    return names


def op_init(stmt, index) -> tuple[tuple, list[tirx.Stmt]]:
    """(key, [startup, init]) for a compute intrinsic statement."""
    args = stmt.value.args
    if stmt_intrin(stmt) == Intrin.MM_MMA:
        a, b, c = (index(v) for v in args[:3])
        return ("mm", a, b, c, bool(args[7])), [
            evaluate(Intrin.HW_STARTUP, a, b, c, True, like=stmt),
            evaluate(Intrin.MATMUL_INIT, a, b, args[7], like=stmt),
        ]
    op = args[0].value
    a, b, c = (index(v) for v in args[1:4])
    return ("binary", op, a, b, c), [
        evaluate(Intrin.HW_STARTUP, a, b, c, False, like=stmt),
        evaluate(Intrin.BINARY_INIT, op, a, b, like=stmt),
    ]


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    if get(func, Attr.KERNEL_ROLE) != KernelRole.COMPUTE.value:
        return func
    indices = cb_index_map(func)

    def index(var):
        return indices[var.name]

    ops = [s for s in evaluate_calls(func.body) if stmt_intrin(s) in (Intrin.MM_MMA, Intrin.FPU_BINARY)]
    if not ops:
        return func
    inits = {}
    for stmt in ops:
        key, init = op_init(stmt, index)
        inits.setdefault(key, init)
    if len(inits) == 1:
        (init,) = inits.values()
        return func.with_body(seq([*init, func.body]))

    # several ops: hardware startup once, then a short init before every op
    first_startup = next(iter(inits.values()))[0]

    def post(node):
        if stmt_intrin(node) in (Intrin.MM_MMA, Intrin.FPU_BINARY):
            _, init = op_init(node, index)
            return keep_span(node, seq([init[1], node]))
        return None

    body = tirx.stmt_functor.ir_transform(func.body, None, post, ["tirx.Evaluate"])
    return func.with_body(seq([first_startup, body]))


def InsertComputeInitTT():
    return prim_func_pass(_transform, PASS)
