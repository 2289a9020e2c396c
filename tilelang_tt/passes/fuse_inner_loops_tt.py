"""FuseInnerLoopsTT (front, after LowerAtomicAddTT, before LegalizeGlobalAccessTT): a ``T.Parallel`` loop whose body
is named values and one serial loop of a constant extent is one ``T.Parallel`` loop over both.

A GPU kernel gives each thread a few consecutive elements: ``T.atomic_addx2(B[i, 2 * j], A[i, 2 * j])`` in a
``T.Parallel`` over half the columns (TileLang's atomic tests; LowerAtomicAddTT makes it a serial loop of two element
adds), or a serial loop over the thread's elements written out. The loops ``j`` (extent ``n``) and ``t`` (extent
``k``) are one loop ``j_t`` over ``n * k`` with ``j = j_t // k`` and ``t = j_t % k``: the same iterations in the same
order, so the rewrite is exact, and an index ``base + k * j + t`` is ``base + j_t``, one loop variable, which the
legalization turns into a block copy. Only where the outer loop's body is the inner loop after named values
(``Bind``): a statement beside the inner loop would run ``k`` times; and only where the inner loop's iterations are
independent, as a ``T.Parallel`` loop's must be: its body is one store into a global tensor at indices that use its
variable, reading the stored tensor at the store's indices alone (``C[.., c + t] = C[.., c + t] + v``), not a
running value (``acc[i] = acc[i] + x[i, t]``, a scan the later passes lower).

Reads/writes no attribute; the named values keep their names, the fused loop is named ``<j>_<t>`` (unique).

    Before: for i, j in T.Parallel(32, 16):
                idx_j = by * 32 + j * 2
                for t in range(2):
                    B[i, idx_j + t] = B[i, idx_j + t] + A[i, idx_j + t]
    After:  for i, j_t in T.Parallel(32, 32):
                idx_j = by * 32 + j_t // 2 * 2
                B[i, idx_j + j_t % 2] = B[i, idx_j + j_t % 2] + A[i, idx_j + j_t % 2]
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.common import (const_int, is_global_buffer, keep_span, kernel_names, prim_func_pass, seq,
                                   unique_name, uses_var)

PASS = "FuseInnerLoopsTT"


def _split(body) -> tuple[list, tirx.For] | None:
    """(the named values, the serial loop of a constant extent) a loop body is, else None."""
    stmts = list(body.seq) if isinstance(body, tirx.SeqStmt) else [body]
    *named, inner = stmts
    if not all(isinstance(s, tirx.Bind) for s in named) or not isinstance(inner, tirx.For):
        return None
    if inner.kind not in (tirx.ForKind.SERIAL, tirx.ForKind.UNROLLED, tirx.ForKind.VECTORIZED) or \
            inner.thread_binding is not None or const_int(inner.min) != 0 or const_int(inner.extent) is None:
        return None
    return (named, inner) if _independent(inner) else None


def _independent(loop: tirx.For) -> bool:
    """Whether ``loop``'s body is one store into a global tensor at indices that use its variable, reading the
    stored tensor at the store's indices alone: each iteration its own element (stores into on-chip blocks are the
    row-loop passes' and the element-wise rules')."""
    store = loop.body
    if not isinstance(store, tirx.BufferStore) or not is_global_buffer(store.buffer) or \
            not any(uses_var(i, loop.loop_var) for i in store.indices):
        return False
    same = []
    tirx.stmt_functor.post_order_visit(store.value, lambda n: same.append(all(
        tirx.analysis.expr_deep_equal(a, b) for a, b in zip(n.indices, store.indices))) if isinstance(
        n, tirx.BufferLoad) and n.buffer.same_as(store.buffer) else None)
    return all(same)


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    taken = kernel_names(func)

    def post(node):
        if not isinstance(node, tirx.For) or node.kind != tirx.ForKind.PARALLEL or const_int(node.min) != 0 or \
                const_int(node.extent) is None:
            return None
        split = _split(node.body)
        if split is None:
            return None
        named, inner = split
        k = const_int(inner.extent)
        name = unique_name(f"{node.loop_var.name}_{inner.loop_var.name}", taken)
        taken.add(name)
        fused = tirx.Var(name, node.loop_var.dtype)
        outer_of = {node.loop_var: tirx.floordiv(fused, k)}
        inner_of = {**outer_of, inner.loop_var: tirx.floormod(fused, k)}
        body = seq([*(tirx.stmt_functor.substitute(s, outer_of) for s in named),
                    tirx.stmt_functor.substitute(inner.body, inner_of)])
        return keep_span(node, tirx.For(fused, 0, const_int(node.extent) * k, tirx.ForKind.PARALLEL, body, None,
                                        node.annotations))

    body = tirx.stmt_functor.ir_transform(func.body, None, post, ["tirx.For"])
    return func if body.same_as(func.body) else func.with_body(body)


def FuseInnerLoopsTT():
    return prim_func_pass(_transform, PASS)
