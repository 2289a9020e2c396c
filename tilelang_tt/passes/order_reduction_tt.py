"""D3a OrderReductionTT (reader/writer, before LowerCBIntrinsics): blocks summing into a tensor
take turns.

Reads: ``tt.reduction`` (the summed tensors, the ``S`` consecutive blocks adding into one region,
the semaphore), ``tt.core_map`` and the core launches (the block id ``b = row * Bx + column``),
``tt.runtime_args`` (``start_id``, ``count``; the writer's ``CHAIN_ARGS``).
Writes: no attribute. TIR: in the reader, before each read of a summed tensor, a block that is not
the first of its group (``b % S != 0``) waits until its core's semaphore counts every such block
of the core so far, itself included: the core's blocks are the consecutive ids ``start_id ..
start_id + count - 1``, so that count is ``(b - start_id) - b // S + (start_id + S - 1) // S``
(the ids so far that are not multiples of ``S``). In the writer, after the block's writes, a block
that is not the last of its group makes them visible (write barrier) and increments the semaphore
of the core that runs block ``b + 1``: its own core, or for its last block the next core of the
partition. Each core receives its increments in block order (from itself, and once from the core
before), and every wait is for a smaller block id, which each core runs in increasing order: the
turns cannot deadlock, and the sum is made in block order.

    Before (reader): T.tt.read_to_cb(T.region(C[..], 1, 64, 64), T.region(C_s[0, 0], 2, 64, 64))
    After:           if b % 4 != 0:
                         T.tt.noc_semaphore_wait_min(0, b - start_id - b // 4 + (start_id + 3) // 4)
                     T.tt.read_to_cb(...)
    After (writer, at the end of the block):
                     if b % 4 != 3:
                         T.tt.noc_async_write_barrier()
                         if b + 1 < start_id + count: T.tt.noc_semaphore_inc(sum_self_x, sum_self_y, 0, 1)
                         else: T.tt.noc_semaphore_inc(sum_next_x, sum_next_y, 0, 1)
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.contract.vocabulary import ArgKind
from tilelang_tt.ir.attrs import Attr, KernelRole
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.ir.common import as_region, evaluate, keep_span, prim_func_pass, seq, stmt_intrin
from tilelang_tt.ir.slices import bound_analyzer

PASS = "OrderReductionTT"


def _launches(func: tirx.PrimFunc) -> dict[str, tirx.AttrStmt]:
    """Core-launch tag -> its ``thread_extent`` statement."""
    out = {}
    tirx.stmt_functor.post_order_visit(func.body, lambda n: out.__setitem__(str(n.node.thread_tag), n) if isinstance(
        n, tirx.AttrStmt) and n.attr_key == "thread_extent" and isinstance(n.node, tirx.IterVar) else None)
    return out


def _block_id(func: tirx.PrimFunc) -> tirx.PrimExpr:
    core_map, launches = Attr.CORE_MAP.read(func), _launches(func)
    row, col = launches.get(core_map.m), launches.get(core_map.n)
    b = tirx.IntImm("int32", 0)
    if row is not None:
        b = row.node.var * (col.value if col is not None else 1)
    return b + col.node.var if col is not None else b


def _wrap_innermost(body, tail: tirx.Stmt) -> tirx.Stmt:
    """``body`` with ``tail`` after the statements inside its core launches."""
    if isinstance(body, tirx.AttrStmt) and body.attr_key == "thread_extent":
        return keep_span(body, tirx.AttrStmt(body.node, body.attr_key, body.value, _wrap_innermost(body.body, tail)))
    return seq([body, tail])


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    role = Attr.KERNEL_ROLE.read(func)
    reduction = Attr.REDUCTION.read(func)
    if reduction is None or reduction.semaphore < 0 or role not in (KernelRole.READER, KernelRole.WRITER):
        return func
    args = {a.kind if a.kind != ArgKind.CHAIN else a.what: a.var for a in Attr.RUNTIME_ARGS.read(func)}
    start = tirx.Cast("int32", args[ArgKind.START_ID])
    count = tirx.Cast("int32", args[ArgKind.COUNT])
    b, s, sem = _block_id(func), reduction.blocks, reduction.semaphore
    simplify = bound_analyzer(func.body).simplify  # b % S is the summing coordinate

    if role == KernelRole.READER:
        waits = (b - start) - tirx.FloorDiv(b, s) + tirx.FloorDiv(start + (s - 1), s)
        wait = evaluate(Intrin.SEM_WAIT_MIN, sem, tirx.Cast("uint32", simplify(waits)))

        def post(node):
            if stmt_intrin(node) == Intrin.READ_TO_CB and reduction.summed(as_region(node.value.args[0]).buffer):
                return seq([keep_span(node, tirx.IfThenElse(simplify(tirx.FloorMod(b, s) != 0), keep_span(node, wait), None)), node])
            return None

        return func.with_body(tirx.stmt_functor.ir_transform(func.body, None, post, ["tirx.Evaluate"]))

    signal = seq([
        evaluate(Intrin.NOC_WRITE_BARRIER),
        tirx.IfThenElse(simplify(b + 1 < start + count), evaluate(Intrin.SEM_INC, args["self_x"], args["self_y"], sem, 1),
                        evaluate(Intrin.SEM_INC, args["next_x"], args["next_y"], sem, 1)),
    ])
    return func.with_body(_wrap_innermost(func.body, tirx.IfThenElse(simplify(tirx.FloorMod(b, s) != s - 1), signal, None)))


def OrderReductionTT():
    return prim_func_pass(_transform, PASS)
