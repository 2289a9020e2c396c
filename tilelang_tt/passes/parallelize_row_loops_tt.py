"""ParallelizeRowLoopsTT (front, after LocalBlocksTT): a serial loop walking the rows of a block
around (or inside) a one-dimensional ``T.Parallel`` is the two-dimensional nest.

GPU kernels walk a block row by row, a thread per column: ``for i in T.serial(rows): for j in
T.Parallel(cols): y[i, j] = x[i, j] * s[i]``, or ``for j in T.Parallel(cols): for i in
T.serial(rows): ...``, and sum the rows into a vector the same way (``total[j] += x[i, j]``). A
Tenstorrent core computes whole tiles: when the iterations are independent the two loops are one
``T.Parallel`` nest over (rows, cols) — the element-wise lowering takes it whole, and
LowerParallelReductionsTT makes the sums a ``T.reduce_sum`` along the rows.

The loops are fused when the serial loop has a constant extent and no annotations, the nest is
one ``T.Parallel`` loop of constant extent directly around or inside it, and every store of the body is

* into an element of the serial loop's own row (an index of the store is the serial variable:
  ``y[i, j]``, ``y[i]``, a tensor's ``Y[r0 + i, j]``, or the flat index of the row's element
  ``i * cols + j + base``: ``smem[j + h * 128]``, the halves of a rank-1 block), the stores into
  one buffer at the same row (not ``y[i, j]`` and ``y[i + 1, j]``), loads of the blocks the body
  writes reading an element a store writes; or
* an accumulation into an on-chip vector of the columns, ``v[j] = v[j] + term`` (the sum over the
  rows), ``v`` read nowhere else in the body and ``term`` not reading it.

Anything else (a row read after the next iteration wrote it, a store the iterations share) keeps
its loops: the later passes judge the serial loop as it is. The nest's loops are ordered as the
body's first two-dimensional access of an on-chip block indexes them (rows first; a tensor read at
swapped indices, ``F[i, j] = A[bx * 32 + j, by * 32 + i]``, is then the transposed read of a block, as
in a ``T.Parallel`` nest), else as its first access of a tensor does. A body that accumulates among other
statements becomes a nest per statement (the rows being independent, each statement may run over
all of them before the next), the values named in it substituted. Reads/writes no attribute.

    Before: for sp in T.serial(4):
                for t in T.parallel(128):
                    total[t] = total[t] + T.exp2(parts[sp, t] - peak[t])
    After:  for sp in T.parallel(4):
                for t in T.parallel(128):
                    total[t] = total[t] + T.exp2(parts[sp, t] - peak[t])
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import arith, tirx

from tilelang_tt.ir.common import (
    const_int,
    is_cb_buffer,
    is_global_buffer,
    keep_span,
    prim_func_pass,
    seq,
    uses_var,
)

PASS = "ParallelizeRowLoopsTT"


def _is_var(expr, var: tirx.Var) -> bool:
    return isinstance(expr, tirx.Var) and expr.same_as(var)


def _accumulated(store: tirx.BufferStore, j: tirx.Var):
    """The term of ``v[j] = v[j] + term`` (or ``term + v[j]``) into an on-chip vector, else None."""
    if len(store.indices) != 1 or not _is_var(store.indices[0], j) or is_global_buffer(store.buffer):
        return None
    value = store.value
    if not isinstance(value, tirx.Add):
        return None

    def is_self(e):
        return isinstance(e, tirx.BufferLoad) and e.buffer.same_as(store.buffer) and _is_var(e.indices[0], j)

    term = value.b if is_self(value.a) else value.a if is_self(value.b) else None
    if term is None or _reads(term, store.buffer):
        return None
    return term


def _reads(expr, buffer: tirx.Buffer) -> bool:
    found = []
    tirx.stmt_functor.post_order_visit(expr, lambda n: found.append(n) if isinstance(
        n, tirx.BufferLoad) and n.buffer.same_as(buffer) else None)
    return bool(found)


def _own_row(store: tirx.BufferStore, i: tirx.Var, j: tirx.Var, cols: int) -> tuple | None:
    """(dimension, form, base) of the first index of ``store`` that is ``base + i`` (the serial
    variable, or a tensor's row ``r0 + i``) or the flat index ``i * cols + j + base`` of an element of
    row ``i`` (``base`` of neither): distinct rows, distinct elements; None when no index is."""
    analyzer = arith.Analyzer()
    for dim, index in enumerate(store.indices):
        for form, base in enumerate((analyzer.simplify(index - i), analyzer.simplify(index - i * cols - j))):
            if not uses_var(base, i) and not uses_var(base, j):
                return dim, form, base
    return None


def _same_rows(keys: list[tuple]) -> bool:
    """Whether the stores of one buffer (their :func:`_own_row` keys) write row ``i`` at the same place:
    ``y[i, j]`` and ``y[i + 1, j]`` would write each other's rows."""
    dim, form, base = keys[0]
    return all(k[:2] == (dim, form) and tirx.analysis.expr_deep_equal(k[2], base) for k in keys[1:])


def _independent(body, i: tirx.Var, j: tirx.Var, cols: int) -> bool:
    """Whether the rows ``i`` of ``body`` (stores and loads as in the module docstring; ``cols`` the
    parallel loop's extent) may run at once."""
    stores, loads = [], []
    tirx.stmt_functor.post_order_visit(body, lambda n: stores.append(n) if isinstance(n, tirx.BufferStore) else (
        loads.append(n) if isinstance(n, tirx.BufferLoad) else None))
    if not stores or not all(isinstance(s, (tirx.BufferStore, tirx.Bind, tirx.SeqStmt, tirx.IfThenElse))
                             for s in _statements(body)):
        return False
    accumulated, own_row, rows = set(), {}, {}
    for store in stores:
        key = _own_row(store, i, j, cols)
        if key is not None:
            own_row.setdefault(store.buffer, []).append(store)
            rows.setdefault(store.buffer, []).append(key)
            continue
        if _accumulated(store, j) is None or not (is_cb_buffer(store.buffer) or store.buffer.scope() == "local"):
            return False
        if store.buffer in accumulated:
            return False
        accumulated.add(store.buffer)
    if any(buf in own_row for buf in accumulated) or not all(_same_rows(keys) for keys in rows.values()):
        return False
    for load in loads:
        if load.buffer in accumulated:
            continue  # the accumulation's own read (checked by _accumulated); elsewhere:
        written = own_row.get(load.buffer)
        if written and not any(all(tirx.analysis.expr_deep_equal(a, b) for a, b in zip(load.indices, s.indices))
                               for s in written):
            return False
    for store in stores:  # an accumulated vector read by another statement
        if store.buffer not in accumulated and any(_reads(store.value, acc) for acc in accumulated):
            return False
    return True


def _statements(body) -> list:
    if isinstance(body, tirx.SeqStmt):
        return [x for s in body.seq for x in _statements(s)]
    return [body]


def _order(body, i: tirx.Var, j: tirx.Var) -> tuple[tirx.Var, tirx.Var]:
    """(row loop, column loop) as the body's first two-dimensional access of an on-chip block indexes
    them in two of its indices (its stores before its loads), else its first access of a tensor; the
    serial loop first (rows) when none does. An on-chip block is indexed (row, column) of the block
    the nest computes; a tensor may be read or written at swapped indices (``A[bx * 32 + j, by * 32 +
    i]``, a transposed block), whose order would make the block's own accesses the swapped ones."""
    accesses = []
    tirx.stmt_functor.post_order_visit(body, lambda n: accesses.append(n) if isinstance(
        n, (tirx.BufferLoad, tirx.BufferStore)) and len(n.indices) >= 2 else None)
    accesses.sort(key=lambda n: (is_global_buffer(n.buffer), isinstance(n, tirx.BufferLoad)))  # stable
    for access in accesses:
        first = [k for k, x in enumerate(access.indices) if uses_var(x, i)]
        second = [k for k, x in enumerate(access.indices) if uses_var(x, j)]
        if first and second and first[0] != second[0]:  # not one flat index of both
            return (i, j) if first[0] < second[0] else (j, i)
    return i, j


def _fused(outer: tirx.For) -> tirx.Stmt | None:
    """The 2-D nest of a serial loop around a 1-D T.Parallel (or the other way round), else None."""
    inner = outer.body
    if not isinstance(inner, tirx.For) or outer.kind == inner.kind:
        return None
    serial, parallel = (outer, inner) if outer.kind == tirx.ForKind.SERIAL else (inner, outer)
    if {serial.kind, parallel.kind} != {tirx.ForKind.SERIAL, tirx.ForKind.PARALLEL}:
        return None
    if serial.annotations or serial.thread_binding is not None or any(
            const_int(lp.extent) is None or const_int(lp.min) != 0 for lp in (serial, parallel)):
        return None
    body = inner.body
    if isinstance(body, tirx.For) and body.kind == tirx.ForKind.PARALLEL:
        return None  # a nest of two or more loops around or inside: not one row loop
    i, j = serial.loop_var, parallel.loop_var
    if not _independent(body, i, j, const_int(parallel.extent)):
        return None
    loops = {i: serial, j: parallel}
    first, second = (loops[v] for v in _order(body, i, j))

    def nest(stmt, fresh: bool = False):
        """The 2-D nest around ``stmt``; ``fresh``: with loop variables of its own (a variable is
        bound once in a function)."""
        a, b = first.loop_var, second.loop_var
        if fresh:
            a, b = tirx.Var(a.name, a.dtype), tirx.Var(b.name, b.dtype)
            stmt = tirx.stmt_functor.substitute(stmt, {first.loop_var: a, second.loop_var: b})
        inner = keep_span(second, tirx.For(b, 0, second.extent, tirx.ForKind.PARALLEL, stmt))
        return keep_span(outer, tirx.For(a, 0, first.extent, tirx.ForKind.PARALLEL, inner))

    statements = _statements(body)
    if len(statements) == 1 or not any(isinstance(s, tirx.BufferStore) and _accumulated(s, j) is not None
                                       for s in statements):
        return nest(body)
    # an accumulation among other statements: a nest of its own, as LowerParallelReductionsTT takes it
    # (the rows are independent: each statement may run over all of them before the next)
    named, nests = {}, []
    for stmt in statements:
        if isinstance(stmt, tirx.Bind):
            named[stmt.var] = tirx.stmt_functor.substitute(stmt.value, named)
            continue
        nests.append(nest(keep_span(stmt, tirx.stmt_functor.substitute(stmt, named)) if named else stmt,
                          fresh=bool(nests)))
    return seq(nests)


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    def post(node):
        return _fused(node) if isinstance(node, tirx.For) else None

    body = tirx.stmt_functor.ir_transform(func.body, None, post, ["tirx.For"])
    return func if body.same_as(func.body) else func.with_body(body)


def ParallelizeRowLoopsTT():
    return prim_func_pass(_transform, PASS)
