"""Scalar code over rows read as block code (ScalarRowsToBlocksTT): a sweep's statements with its
named values inlined, the recurrences ``acc = f(acc, term)`` it carries, the scalar stores before a
sweep that start a reduction at its first term, values named from row scalars, and a sweep's elements
at a row of a nest over rows (a serial sweep carrying a running product, max or min)."""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import arith, ir, tirx

from tilelang_tt.ir.common import (
    const_int,
    is_global_buffer,
    keep_span,
    loads,
    stores,
    unique_name,
    uses_var,
)
from tilelang_tt.ir.lanes import PRIVATE_SCOPES

REDUCERS = {tirx.Add: "sum", tirx.Max: "max", tirx.Min: "min"}


class NotRows(Exception):
    """The statements are not scalar code over rows: the kernel is left as it is."""


def leaves(stmt) -> list:
    return [x for s in stmt.seq for x in leaves(s)] if isinstance(stmt, tirx.SeqStmt) else [stmt]


def recurrence(store: tirx.BufferStore):
    """(operator, term) of ``acc[0] = f(acc[0], term)``, ``f`` +, *, max or min, ``term`` not reading
    ``acc``; else None."""
    value = store.value
    if type(value) not in (tirx.Add, tirx.Mul, tirx.Max, tirx.Min):
        return None

    def is_self(e):
        return isinstance(e, tirx.BufferLoad) and e.buffer.same_as(store.buffer)

    term = value.b if is_self(value.a) else value.a if is_self(value.b) else None
    if term is None or any(x.buffer.same_as(store.buffer) for x in loads(term)):
        return None
    return type(value), term


def inline_binds(body) -> list:
    """The statements of a loop body with its named values (``e = T.exp(..)``) substituted where used;
    NotRows when a named value reads a buffer the statements between store into."""
    named, out = {}, []
    for s in leaves(body):
        if isinstance(s, tirx.Bind):
            named[s.var] = (tirx.stmt_functor.substitute(s.value, {v: e for v, (e, _) in named.items()}), len(out))
            continue
        for var, (value, at) in named.items():
            if uses_var(s, var) and any(x.buffer.same_as(w.buffer) for x in loads(value)
                                        for t in out[at:] for w in stores(t)):
                raise NotRows()
        out.append(tirx.stmt_functor.substitute(s, {v: e for v, (e, _) in named.items()}))
    return out


def root_block(func: tirx.PrimFunc):
    found = []
    tirx.stmt_functor.post_order_visit(func.body, lambda n: found.append(n) if isinstance(
        n, tirx.SBlock) and n.name_hint == "tilelang_root" else None)
    return found[0] if len(found) == 1 else None


def is_sweep(stmt, scalars) -> bool:
    """Whether ``stmt`` is a serial loop of scalar code sweeping a row: reading or storing tensor
    elements at its variable in their last index, storing a tensor element or touching a scalar, with
    no loop inside (``for k in range(3): g = g * 0.5`` sweeps nothing: InlineScalarVarsTT's)."""
    if not isinstance(stmt, tirx.For) or stmt.kind != tirx.ForKind.SERIAL or stmt.thread_binding is not None:
        return False
    inner = []
    tirx.stmt_functor.post_order_visit(stmt.body, lambda n: inner.append(n) if isinstance(
        n, (tirx.For, tirx.Evaluate, tirx.IfThenElse)) else None)
    touched = [x for x in (*stores(stmt.body), *loads(stmt.body)) if any(x.buffer.same_as(b) for b in scalars)]
    sweeping = [stmt.loop_var]  # the loop variable and the values named from it (col = n - 1 - j)
    for s in leaves(stmt.body):
        if isinstance(s, tirx.Bind) and any(uses_var(s.value, v) for v in sweeping):
            sweeping.append(s.var)
    rows = [x for x in (*stores(stmt.body), *loads(stmt.body)) if is_global_buffer(x.buffer) and
            any(uses_var(x.indices[-1], v) for v in sweeping)]  # the elements it sweeps
    return not inner and const_int(stmt.extent) is not None and const_int(stmt.min) is not None and bool(rows) \
        and (bool(touched) or any(is_global_buffer(s.buffer) for s in stores(stmt.body)))


def first_terms(loop: tirx.For, pending: dict) -> dict:
    """The scalars whose store just before ``loop`` sets them to the term the loop would combine at
    ``lo - 1``: scalar -> that store, when every statement of the loop is such a reduction; else {}."""
    out, analyzer = {}, arith.Analyzer()
    for s in inline_binds(loop.body):
        if not (isinstance(s, tirx.BufferStore) and s.buffer in pending):
            return {}
        combined = recurrence(s)
        if combined is None or combined[0] not in REDUCERS:
            return {}
        first = tirx.stmt_functor.substitute(combined[1], {loop.loop_var: loop.min - 1})
        first = tirx.stmt_functor.ir_transform(tirx.Evaluate(first), None, lambda n: tirx.BufferLoad(
            n.buffer, [analyzer.simplify(i) for i in n.indices]) if isinstance(n, tirx.BufferLoad) else None,
            ["tirx.BufferLoad"]).value
        if const_int(loop.min) < 1 or s.buffer in out or not ir.structural_equal(first, pending[s.buffer].value):
            return {}
        out[s.buffer] = pending[s.buffer]
    return out


def name_row_values(statements, scalars, names: set) -> tuple[list, list]:
    """A value named outside the loops from row scalars (``inv = 1.0 / s[0]``) is a row scalar of its
    own: ``inv[0] = 1.0 / s[0]``, its uses reading ``inv[0]``. (The statements, the new scalars.)"""
    out, named, made = [], {}, []
    for s in statements:
        s = tirx.stmt_functor.substitute(s, named) if named else s
        if isinstance(s, tirx.Bind) and any(any(x.buffer.same_as(b) for b in scalars + made) for x in loads(s.value)):
            name = unique_name(s.var.name, names)
            names.add(name)
            buf = tirx.decl_buffer([1], s.value.dtype, name, scope="local")
            made.append(buf)
            named[s.var] = tirx.BufferLoad(buf, [tirx.IntImm("int32", 0)])
            out.append(keep_span(s, tirx.BufferStore(buf, s.value, [tirx.IntImm("int32", 0)])))
            continue
        out.append(s)
    return out, made


def element_of_row(access, var: tirx.Var) -> bool:
    """Whether ``access`` is ``G[rows.., f(var)]``: an element of a row the other indices pick, at a
    column of the sweep over ``var`` (``X[bx, j]``, ``X[bx, n - 1 - j]`` from the end), no index read
    from a register."""
    *rows, last = access.indices
    return bool(rows) and uses_var(last, var) and not any(uses_var(r, var) for r in rows) and not any(
        x.buffer.scope() in PRIVATE_SCOPES for e in access.indices for x in loads(e))


def row_element(access, i: tirx.Var) -> list:
    """The indices of ``access`` (``G[.., r, c]``) at row ``r + i`` of a nest over the row."""
    idx = list(access.indices)
    return [*idx[:-2], idx[-2] + i, idx[-1]]


def element_at_row(expr, var: tirx.Var, i: tirx.Var, frags: dict):
    """``expr`` of the sweep's iteration ``var`` in a nest over the row (``i`` of extent 1): each row
    scalar (a key of ``frags``) its fragment's element ``i``, each tensor element of the row (at
    ``var``) at row ``r + i``; NotRows for another tensor element."""
    def at(n):
        scalar = next((f for b, f in frags.items() if b.same_as(n.buffer)), None)
        if scalar is not None:
            return tirx.BufferLoad(scalar, [i])
        if not is_global_buffer(n.buffer):
            return None
        if not element_of_row(n, var):
            failed.append(n)
            return None
        return tirx.BufferLoad(n.buffer, row_element(n, i))

    failed = []  # an exception raised in TVM's callback comes back a RuntimeError: raised after it
    value = tirx.stmt_functor.ir_transform(tirx.Evaluate(expr), None, at, ["tirx.BufferLoad"]).value
    if failed:
        raise NotRows()
    return value
