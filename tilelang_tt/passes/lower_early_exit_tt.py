"""LowerEarlyExitTT (front, before CheckKernelFormsTT): a block's early exit, ``if cond:
T.thread_return()`` (a GPU block leaving when its group is empty), becomes the guard of the rest
of the block: ``if not cond: <the statements after it>``.

A Tenstorrent core runs its blocks in a loop in each of its three kernels; a ``return`` would end
the core's work, not the block's. The block's remaining statements run under the negated condition
instead, which every kernel takes alike (a condition reading a tensor is then named and handed on
by NameValueConditionsTT). Reads the body; writes no attribute. An exit must be an ``if`` without
``else`` whose body is only ``T.thread_return()``, in the block's straight-line code (outside
loops); any other ``T.thread_return()`` is refused at its line.

    Before: if counts[by] == 0:
                T.thread_return()
            T.copy(A[by * 32, 0], a)
            T.copy(a, C[by * 32, 0])
    After:  if counts[by] != 0:
                T.copy(A[by * 32, 0], a)
                T.copy(a, C[by * 32, 0])
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import ir, tirx

from tilelang_tt.ir.common import contains, error, keep_span, prim_func_pass, seq, simplify

PASS = "LowerEarlyExitTT"


def _is_return(node) -> bool:
    return (isinstance(node, tirx.Evaluate) and isinstance(node.value, tirx.Call) and isinstance(node.value.op, ir.Op)
            and node.value.op.name == "tirx.thread_return")


def _exit(stmt) -> bool:
    """Whether ``stmt`` is ``if cond: T.thread_return()``."""
    return isinstance(stmt, tirx.IfThenElse) and stmt.else_case is None and _is_return(stmt.then_case)


def _guarded(stmts: list) -> list:
    """``stmts`` with the statements after each exit under its negated condition."""
    for k, stmt in enumerate(stmts):
        if _exit(stmt):
            rest = _guarded(stmts[k + 1:])
            if not rest:
                return stmts[:k]
            return [*stmts[:k], keep_span(stmt, tirx.IfThenElse(simplify(tirx.Not(stmt.condition)), seq(rest), None))]
    return stmts


def _straight(stmt):
    """``stmt`` with the exits of the block's straight-line code lowered: through the launch loops,
    the block and attribute scopes, not into serial loops or branches."""
    if isinstance(stmt, tirx.SeqStmt):
        return seq(_guarded([_straight(s) for s in stmt.seq]))
    if isinstance(stmt, tirx.For) and stmt.kind == tirx.ForKind.THREAD_BINDING:
        return keep_span(stmt, tirx.For(stmt.loop_var, stmt.min, stmt.extent, stmt.kind, _straight(stmt.body),
                                        stmt.thread_binding, stmt.annotations))
    if isinstance(stmt, tirx.AttrStmt):
        return keep_span(stmt, tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value, _straight(stmt.body)))
    if isinstance(stmt, tirx.SBlockRealize):
        blk = stmt.block
        body = tirx.SBlock(blk.iter_vars, blk.reads, blk.writes, blk.name_hint, _straight(blk.body), blk.init,
                           blk.alloc_buffers, blk.match_buffers, blk.annotations)
        return keep_span(stmt, tirx.SBlockRealize(stmt.iter_values, stmt.predicate, body))
    return stmt


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    if not contains(func.body, _is_return):
        return func
    body = _straight(func.body)
    left = []

    def visit(node):  # an exit inside a loop, or a return in another form, is still there
        if not left and (_is_return(node) or (isinstance(node, tirx.IfThenElse) and _is_return(node.then_case))):
            left.append(node)

    tirx.stmt_functor.post_order_visit(body, visit)
    if left:
        loops = []
        tirx.stmt_functor.post_order_visit(body, lambda n: loops.append(n) if isinstance(n, tirx.For) and (
            n.kind != tirx.ForKind.THREAD_BINDING) and contains(n, _is_return) else None)
        where = "inside a loop, where it would end the block's remaining iterations too" if loops else (
            "not as `if cond: T.thread_return()` in the block's straight-line code")
        raise error(PASS, func, left[0], f"T.thread_return() {where}: a core runs its blocks in a loop, so a "
                    "block leaves only by skipping its remaining statements",
                    "write the exit as `if cond: T.thread_return()` before the block's remaining statements, "
                    "or put the loop's remaining work under `if not cond:`")
    return func.with_body(body)


def LowerEarlyExitTT():
    return prim_func_pass(_transform, PASS)
