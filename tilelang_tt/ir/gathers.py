"""Reads of on-chip blocks at computed indices in a ``T.Parallel`` nest, as LowerBlockGathersTT sees them:
each read with the condition under which its value is used (the ``T.if_then_else`` and ``if`` around it), reads
of one element as one, and the axis along which a read is a gather."""

from __future__ import annotations

from tvm import ir, tirx

from tilelang_tt.ir.common import is_cb_buffer, uses_var


def block_reads(body: tirx.Stmt, rank: int = 2) -> tuple[list, dict] | None:
    """((load, condition under which its value is used, the statement) for each load of an on-chip block of
    ``rank`` (the nest's; in a nest of one loop, matrices too) in the nest's body, the values the body names substituted; the values named), or None for a body with other
    statements than stores, named values and ``if``."""
    named, out = {}, []

    def expr(e, cond, stmt):
        if isinstance(e, tirx.BufferLoad):
            if is_cb_buffer(e.buffer) and (len(e.indices) == rank or (rank == 1 and len(e.indices) == 2)):
                out.append((e, cond, stmt))
            for x in e.indices:
                expr(x, cond, stmt)
            return
        sel = None
        if isinstance(e, tirx.Select):
            sel = (e.condition, e.true_value, e.false_value)
        elif isinstance(e, tirx.Call) and isinstance(e.op, ir.Op) and e.op.name == "tirx.if_then_else":
            sel = tuple(e.args)
        if sel is not None:
            c, a, b = sel
            expr(c, cond, stmt)
            expr(a, tirx.And(cond, c), stmt)
            expr(b, tirx.And(cond, tirx.Not(c)), stmt)
            return
        for field in ("a", "b", "value", "condition"):
            if hasattr(e, field) and isinstance(getattr(e, field), tirx.PrimExpr):
                expr(getattr(e, field), cond, stmt)
        if isinstance(e, tirx.Call):
            for a in e.args:
                if isinstance(a, tirx.PrimExpr):
                    expr(a, cond, stmt)

    def walk(s, cond) -> bool:
        if isinstance(s, tirx.SeqStmt):
            return all(walk(x, cond) for x in s.seq)
        if isinstance(s, tirx.Bind):
            named[s.var] = tirx.stmt_functor.substitute(s.value, named)
            expr(named[s.var], cond, s)
            return True
        if isinstance(s, tirx.BufferStore):
            expr(tirx.stmt_functor.substitute(s.value, named), cond, s)
            return True
        if isinstance(s, tirx.IfThenElse):
            c = tirx.stmt_functor.substitute(s.condition, named)
            return walk(s.then_case, tirx.And(cond, c)) and (
                s.else_case is None or walk(s.else_case, tirx.And(cond, tirx.Not(c))))
        return False

    return (out, named) if walk(body, tirx.const(True, "bool")) else None


def same_reads(reads: list) -> list:
    """``reads`` with the reads of one element (the same block at equal indices) as one, used where any of
    their conditions holds: their values are equal wherever both are used."""
    out: list[list] = []
    for load, cond, stmt in reads:
        for group in out:
            if group[0].buffer.same_as(load.buffer) and all(
                    tirx.analysis.expr_deep_equal(a, b) for a, b in zip(group[0].indices, load.indices)):
                group[1] = tirx.Or(group[1], cond)
                break
        else:
            out.append([load, cond, stmt])
    return [tuple(g) for g in out]


def gather_axis(load: tirx.BufferLoad, i: tirx.Var, j: tirx.Var) -> int | None:
    """1 for a read ``x[i, f(j)]``, 0 for ``x[f(i), j]`` (``f`` using its loop variable, not the variable
    itself), else None (element-wise, transposed, a vector: C2's forms)."""
    if len(load.indices) == 1:  # a vector in a nest over it: a row
        (b,) = load.indices
        return 1 if uses_var(b, j) and not b.same_as(j) else None
    a, b = load.indices
    if a.same_as(i) and uses_var(b, j) and not b.same_as(j):
        return 1
    if b.same_as(j) and uses_var(a, i) and not a.same_as(i):
        return 0
    return None
