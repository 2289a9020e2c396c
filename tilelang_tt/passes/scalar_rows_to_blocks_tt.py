"""ScalarRowsToBlocksTT (front, after ThreadsToLanesTT): scalar code sweeping a tensor row is block
code over that row.

A kernel written as one sequential program per block (KernelBench's ``T.Kernel(B, threads=1)``, a
block per row) sweeps its row with serial loops ``for j in range(lo, hi)`` that read and write the
row's elements (``Y[bx, j] = T.exp(X[bx, j] - m[0])``) and carry scalars (``T.alloc_local((1,))``,
``T.alloc_var``) from one iteration to the next. A Tenstorrent core computes whole tiles, so each
loop of the block's statement sequence becomes block code over the ``hi - lo`` elements it sweeps:

* a store into a tensor element ``G[.., base + j]`` (``j`` in the last index) computes a row block
  ``(1, hi - lo)`` in a ``T.Parallel(1, hi - lo)`` nest, which is copied to the slice
  ``G[.., base + lo : base + hi]`` after the loop; a later read of that slice (in the loop, or in a
  later loop sweeping the same slice) reads the block;
* a scalar accumulated by an associative operator, ``acc[0] = f(acc[0], term)`` with ``f`` one of
  ``+``, ``T.max``, ``T.min``, and read nowhere else in the loop, is a reduction along the row: the
  terms' block, ``T.reduce`` of it (sum, max, min) and ``acc = f(acc, reduced)``. When the statement
  just before the loop sets ``acc`` to the term at ``j = lo - 1`` (``m[0] = X[bx, 0]`` before
  ``for j in range(1, n)``), the reduction covers ``[lo - 1, hi)`` and replaces ``acc``;
* the loop's statements run one after the other over the whole row (loop fission), which is exact
  because each reads only elements stored at its own ``j`` and scalars the loop does not change;
* a scalar store outside the loops (``s[0] = 0``) and a value named from scalars
  (``inv = 1.0 / s[0]``) are per-row values: the scalars become ``(1,)`` fragments, each element of
  the nest ``i`` of extent 1 (the row), which CoarsenRowBlocksTT groups into 32-row blocks.

Refused at the statement (``TTCompileError``): a scalar read in the loop that accumulates it (a
running value: a scan), with ``*`` (no block reduction of products), or with ``+`` (``T.cumsum``).

Acts on the ``tilelang_root`` block's statements when each loop there that reads or writes a row
scalar or stores a tensor element is of this form; otherwise the kernel comes out unchanged
(LegalizeGlobalAccessTT refuses its scalar stores). Reads/writes no attribute; the new blocks are
allocated in the root block, the row scalars become fragments of the same name.

    Before: m = T.sblock_alloc_buffer((1,), scope="local")
            m[0] = X[bx, 0]
            for j in range(1, 64):
                m[0] = T.max(m[0], X[bx, j])
            for j in range(64):
                Y[bx, j] = X[bx, j] - m[0]
    After:  m = T.sblock_alloc_buffer((1,), scope="local.fragment")
            for i, j in T.parallel(1, 64):
                m_terms[i, j] = X[bx + i, j]
            T.reduce(T.region(m_terms[0, 0], 1, 1, 64), T.region(m_max[0], 2, 1), "max", 1, True)
            for i in T.parallel(1):
                m[i] = m_max[i]
            for i, j in T.parallel(1, 64):
                Y_row[i, j] = X[bx + i, j] - m[i]
            T.copy(T.region(Y_row[0, 0], 1, 1, 64), T.region(Y[bx, 0], 2, 1, 64))
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import arith, ir, tirx

from tilelang_tt.ir.common import (
    READ,
    WRITE,
    const_int,
    error,
    is_global_buffer,
    keep_span,
    kernel_names,
    loads,
    make_region,
    prim_func_pass,
    seq,
    stores,
    unique_name,
    uses_var,
)
from tilelang_tt.ir.lanes import PRIVATE_SCOPES, same_indices

PASS = "ScalarRowsToBlocksTT"
REDUCERS = {tirx.Add: "sum", tirx.Max: "max", tirx.Min: "min"}
FRAGMENT = "local.fragment"
SCAN_HINT = {
    tirx.Add: "a running sum is T.cumsum of the row block: for i, j in T.Parallel(1, n): t[i, j] = ...; "
              "T.cumsum(t, dim=1); then use t[i, j]",
    tirx.Mul: "a running product has no exact block form (exp(T.cumsum(log(x))) is exact for no value and "
              "wrong for negatives): compute it on the host (torch.cumprod), or, for positive values, as "
              "T.exp of T.cumsum(T.log(x)) of the row block",
}


class _NotRows(Exception):
    """The statements are not scalar code over rows: the kernel is left as it is."""


def _leaves(stmt) -> list:
    return [x for s in stmt.seq for x in _leaves(s)] if isinstance(stmt, tirx.SeqStmt) else [stmt]


def _combine(store: tirx.BufferStore):
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


class _Rows:
    def __init__(self, func: tirx.PrimFunc, scalars: list, names: set):
        self.func = func
        self.scalars = scalars  # the row scalars (per-thread arrays of one element)
        self.frags = {b: tirx.decl_buffer(b.shape, b.dtype, b.name, scope=FRAGMENT, span=b.span) for b in scalars}
        self.names = names
        self.made: list = []  # blocks this pass allocates
        self.rows: list = []  # (tensor, row indices, start, extent, block, copy out): row blocks stored so far
        self.superseded: list = []  # copies out of a slice a later loop stores again
        self.stored_here: dict = {}  # tensor -> (row indices, start) the loop being rewritten stores
        self.analyzer = arith.Analyzer()

    def is_scalar(self, buf) -> bool:
        return any(buf.same_as(b) for b in self.scalars)

    def block(self, name: str, shape, dtype) -> tirx.Buffer:
        name = unique_name(name, self.names)
        self.names.add(name)
        buf = tirx.decl_buffer(shape, dtype, name, scope=FRAGMENT)
        self.made.append(buf)
        return buf

    # ---- the slice of a row an access sweeps
    def row_of(self, access, var: tirx.Var, lo):
        """(row indices, start) of ``G[rows.., base + var]``: the last index ``base + var``, the others
        not using ``var``, at least one of them (the row's); else _NotRows."""
        *rows, last = access.indices
        base = self.analyzer.simplify(last - var)
        if not rows or uses_var(base, var) or any(uses_var(r, var) for r in rows):
            raise _NotRows()
        return list(rows), self.analyzer.simplify(base + lo)

    def stored_row(self, buf, rows, start, extent):
        """The block holding the slice ``buf[rows.., start:start + extent]`` stored by a row loop, None
        when none stored ``buf``; _NotRows when one stored another slice of it."""
        found = None
        for tensor, r, s, n, block, _ in self.rows:
            if not tensor.same_as(buf):
                continue
            if same_indices(r, rows) and tirx.analysis.expr_deep_equal(s, start) and n == extent:
                found = block
            else:
                raise _NotRows()
        return found

    # ---- expressions of one element of the row
    def element(self, expr, var: tirx.Var, lo, i: tirx.Var, jj: tirx.Var, extent: int, own: dict):
        """``expr`` (of iteration ``var``) at element ``(i, jj)`` of the row block: tensor reads of the
        row at ``var`` become reads of the slice (or of the block that stored it: ``own`` this loop's,
        then earlier loops'), scalars their row's element."""

        def read(n):
            if isinstance(n, tirx.BufferLoad) and self.is_scalar(n.buffer):
                return tirx.BufferLoad(self.frags[n.buffer], [i])
            if isinstance(n, tirx.BufferLoad) and is_global_buffer(n.buffer):
                if not uses_var(n, var):
                    raise _NotRows()  # a single element in the sweep: not a row block
                rows, start = self.row_of(n, var, lo)
                here = self.stored_here.get(n.buffer)
                if here is not None and not (same_indices(here[0], rows) and
                                             tirx.analysis.expr_deep_equal(here[1], start)):
                    raise _NotRows()  # another element than the one this loop stores: an earlier iteration's
                mine = own.get(n.buffer)
                if mine is not None:
                    return tirx.BufferLoad(mine[2], [i, jj])
                block = self.stored_row(n.buffer, rows, start, extent)
                if block is not None:
                    return tirx.BufferLoad(block, [i, jj])
                return tirx.BufferLoad(n.buffer, [*rows[:-1], rows[-1] + i, start + jj])
            return None

        failed = []

        def post(n):  # an exception raised in TVM's callback comes back a RuntimeError: raised after it
            try:
                return read(n)
            except _NotRows:
                failed.append(n)
                return None

        out = tirx.stmt_functor.ir_transform(tirx.Evaluate(expr), None, post, ["tirx.BufferLoad"]).value
        if failed:
            raise _NotRows()
        return tirx.stmt_functor.substitute(out, {var: jj + lo if const_int(lo) != 0 else jj})

    # ---- statements
    def scalar_store(self, store: tirx.BufferStore) -> tirx.Stmt:
        """``s[0] = v`` outside the loops: the row's element of ``s``."""
        if any(is_global_buffer(x.buffer) for x in loads(store.value)):
            raise _NotRows()
        i = tirx.Var("i", "int32")
        value = self.element(store.value, tirx.Var("j", "int32"), 0, i, i, 1, {})
        return keep_span(store, tirx.For(i, 0, 1, tirx.ForKind.PARALLEL, keep_span(
            store, tirx.BufferStore(self.frags[store.buffer], value, [i]))))

    def loop(self, loop: tirx.For, inits: dict) -> list:
        """The row loop ``loop`` as block code; ``inits``: scalar -> the store just before the loop
        that sets it to the term at ``lo - 1`` (the reduction then covers that element too)."""
        leaves = _inline_binds(self.func, loop.body)
        var, lo, extent = loop.loop_var, loop.min, const_int(loop.extent)
        accumulated, self.stored_here = {}, {}
        for k, s in enumerate(leaves):
            if not isinstance(s, tirx.BufferStore):
                raise _NotRows()
            if self.is_scalar(s.buffer):
                combined = _combine(s)
                if combined is None or s.buffer in accumulated:
                    raise _NotRows()
                accumulated[s.buffer] = (k, *combined)
            elif not is_global_buffer(s.buffer) or not uses_var(s.indices[-1], var):
                raise _NotRows()
            else:
                rows, start = self.row_of(s, var, lo)
                known = self.stored_here.setdefault(s.buffer, (rows, start))
                if not (same_indices(known[0], rows) and tirx.analysis.expr_deep_equal(known[1], start)):
                    raise _NotRows()  # two slices of one tensor
        for buf, (k, op, _) in accumulated.items():
            if any(x.buffer.same_as(buf) for at, s in enumerate(leaves) if at != k for x in loads(s.value)):
                raise self.scan(leaves[k], buf, op)
            if op is tirx.Mul:
                raise error(PASS, self.func, leaves[k], f"`{buf.name}[0]` is a product of the row's elements: "
                            "a block has no product reduction",
                            "compute the product on the host (torch.prod), or, for positive values, "
                            "T.exp of T.reduce_sum of T.log of the row block")
        if inits:
            lo = lo - 1
            extent += 1
        out, own = [], {}
        for s in leaves:
            i, jj = tirx.Var("i", "int32"), tirx.Var("j", "int32")
            if s.buffer in accumulated:
                _, op, term = accumulated[s.buffer]
                terms = self.block(f"{s.buffer.name}_terms", [1, extent], term.dtype)
                total = self.block(f"{s.buffer.name}_{REDUCERS[op]}", [1], term.dtype)
                acc = self.frags[s.buffer]
                out.append(self.nest(s, i, jj, extent, tirx.BufferStore(
                    terms, self.element(term, var, lo, i, jj, extent, own), [i, jj])))
                out.append(keep_span(s, tirx.Evaluate(tirx.Call("handle", ir.Op.get("tl.tileop.reduce"), [
                    make_region(terms, [0, 0], [1, extent], READ), make_region(total, [0], [1], WRITE),
                    tirx.StringImm(REDUCERS[op]), tirx.IntImm("int32", 1), tirx.IntImm("bool", True)]))))
                k = tirx.Var("i", "int32")
                got = tirx.BufferLoad(total, [k])
                if s.buffer not in inits:
                    got = op(tirx.BufferLoad(acc, [k]), got)
                if got.dtype != acc.dtype:
                    got = tirx.Cast(acc.dtype, got)
                out.append(keep_span(s, tirx.For(k, 0, 1, tirx.ForKind.PARALLEL, keep_span(
                    s, tirx.BufferStore(acc, got, [k])))))
                continue
            rows, start = self.stored_here[s.buffer]
            value = self.element(s.value, var, lo, i, jj, extent, own)  # reads before this store
            if s.buffer not in own:
                own[s.buffer] = (rows, start, self.block(f"{s.buffer.name}_row", [1, extent], s.buffer.dtype))
            out.append(self.nest(s, i, jj, extent, tirx.BufferStore(own[s.buffer][2], value, [i, jj])))
        for buf, (rows, start, block) in own.items():
            self.superseded += [r[5] for r in self.rows if r[0].same_as(buf)]  # the slice is stored again
            copy = keep_span(loop, tirx.Evaluate(tirx.Call("handle", ir.Op.get("tl.tileop.copy"), [
                make_region(block, [0, 0], [1, extent], READ),
                make_region(buf, [*rows, start], [1] * len(rows) + [extent], WRITE)])))
            self.rows = [r for r in self.rows if not r[0].same_as(buf)] + [(buf, rows, start, extent, block, copy)]
            out.append(copy)
        return out

    def nest(self, like, i, jj, extent, store) -> tirx.Stmt:
        inner = keep_span(like, tirx.For(jj, 0, extent, tirx.ForKind.PARALLEL, keep_span(like, store)))
        return keep_span(like, tirx.For(i, 0, 1, tirx.ForKind.PARALLEL, inner))

    def scan(self, store, buf, op):
        what = {tirx.Add: "sum", tirx.Mul: "product", tirx.Max: "max", tirx.Min: "min"}[op]
        return error(PASS, self.func, store, f"`{buf.name}[0]` is a running {what} along the row, read in the loop "
                     "that accumulates it (a scan): a block computes each statement over the whole row",
                     SCAN_HINT.get(op, "compute the running value on the host, or reduce the whole row "
                                       "(T.reduce_max) and read it after the loop"))


def _inline_binds(func, body) -> list:
    """The statements of a loop body with its named values (``e = T.exp(..)``) substituted where used;
    _NotRows when a named value reads a buffer the statements between store into."""
    named, out = {}, []
    for s in _leaves(body):
        if isinstance(s, tirx.Bind):
            named[s.var] = (tirx.stmt_functor.substitute(s.value, {v: e for v, (e, _) in named.items()}), len(out))
            continue
        for var, (value, at) in named.items():
            if uses_var(s, var) and any(x.buffer.same_as(w.buffer) for x in loads(value)
                                        for t in out[at:] for w in stores(t)):
                raise _NotRows()
        out.append(tirx.stmt_functor.substitute(s, {v: e for v, (e, _) in named.items()}))
    return out


def _root(func: tirx.PrimFunc):
    found = []
    tirx.stmt_functor.post_order_visit(func.body, lambda n: found.append(n) if isinstance(
        n, tirx.SBlock) and n.name_hint == "tilelang_root" else None)
    return found[0] if len(found) == 1 else None


def _sweeps(stmt, scalars) -> bool:
    """Whether ``stmt`` is a serial loop of scalar code: storing a tensor element or touching a scalar,
    with no loop inside."""
    if not isinstance(stmt, tirx.For) or stmt.kind != tirx.ForKind.SERIAL or stmt.thread_binding is not None:
        return False
    inner = []
    tirx.stmt_functor.post_order_visit(stmt.body, lambda n: inner.append(n) if isinstance(
        n, (tirx.For, tirx.Evaluate, tirx.IfThenElse)) else None)
    touched = [x for x in (*stores(stmt.body), *loads(stmt.body)) if any(x.buffer.same_as(b) for b in scalars)]
    return not inner and const_int(stmt.extent) is not None and const_int(stmt.min) is not None and \
        (bool(touched) or any(is_global_buffer(s.buffer) for s in stores(stmt.body)))


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    root = _root(func)
    if root is None:
        return func
    scalars = [b for b in root.alloc_buffers if b.scope() in PRIVATE_SCOPES and
               all(const_int(d) == 1 for d in b.shape)]
    statements = _leaves(root.body)
    if not any(_sweeps(s, scalars) for s in statements):
        return func
    try:
        body = _rewrite(func, root, statements, scalars)
    except _NotRows:
        return func
    return func.with_body(body)


def _rewrite(func, root, statements, scalars) -> tirx.Stmt:
    names = kernel_names(func)
    statements, named = _name_row_values(statements, scalars, names)
    scalars = scalars + named
    rows = _Rows(func, scalars, names)
    out, pending = [], {}  # pending: scalar -> its store just before a loop (a reduction's first term?)
    for s in statements:
        if isinstance(s, tirx.BufferStore) and rows.is_scalar(s.buffer):
            if s.buffer in pending:  # stored again: the earlier stores are per-row values
                out += [rows.scalar_store(store) for store in pending.values()]
                pending = {}
            pending[s.buffer] = s
            continue
        if _sweeps(s, scalars):
            inits = _first_terms(rows, s, pending)
            for buf, store in pending.items():
                if buf not in inits:
                    out.append(rows.scalar_store(store))
            pending = {}
            out += rows.loop(s, inits)
            continue
        for store in pending.values():
            out.append(rows.scalar_store(store))
        pending = {}
        if any(rows.is_scalar(x.buffer) for x in (*loads(s), *stores(s))) or \
                any(is_global_buffer(x.buffer) and any(x.buffer.same_as(r[0]) for r in rows.rows) for x in loads(s)):
            raise _NotRows()  # a scalar or a stored row used by other code
        out.append(s)
    out += [rows.scalar_store(store) for store in pending.values()]
    body = seq([s for s in out if not any(s.same_as(c) for c in rows.superseded)])
    new_root = tirx.SBlock(root.iter_vars, root.reads, root.writes, root.name_hint, body, root.init,
                           [b for b in root.alloc_buffers if not any(b.same_as(s) for s in scalars)] +
                           [rows.frags[b] for b in scalars] + rows.made, root.match_buffers, root.annotations)
    return tirx.stmt_functor.ir_transform(func.body, None, lambda n: new_root if n.same_as(root) else None,
                                          ["tirx.SBlock"])


def _first_terms(rows: _Rows, loop: tirx.For, pending: dict) -> dict:
    """The scalars whose store just before ``loop`` sets them to the term the loop would combine at
    ``lo - 1``: scalar -> that store, when every statement of the loop is such a reduction; else {}."""
    out = {}
    for s in _inline_binds(rows.func, loop.body):
        if not (isinstance(s, tirx.BufferStore) and s.buffer in pending):
            return {}
        combined = _combine(s)
        if combined is None or combined[0] not in REDUCERS:
            return {}
        first = tirx.stmt_functor.substitute(combined[1], {loop.loop_var: loop.min - 1})
        first = tirx.stmt_functor.ir_transform(tirx.Evaluate(first), None, lambda n: tirx.BufferLoad(
            n.buffer, [rows.analyzer.simplify(i) for i in n.indices]) if isinstance(n, tirx.BufferLoad) else None,
            ["tirx.BufferLoad"]).value
        if const_int(loop.min) < 1 or s.buffer in out or not ir.structural_equal(first, pending[s.buffer].value):
            return {}
        out[s.buffer] = pending[s.buffer]
    return out


def _name_row_values(statements, scalars, names: set) -> tuple[list, list]:
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


def ScalarRowsToBlocksTT():
    return prim_func_pass(_transform, PASS)
