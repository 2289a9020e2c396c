"""ScalarRowsToBlocksTT (front, before InlineScalarVarsTT): scalar code sweeping a tensor row is block
code over that row.

A kernel written as one sequential program per block (KernelBench's ``T.Kernel(B, threads=1)``, a
block per row) sweeps its row with serial loops ``for j in range(lo, hi)`` that read and write the
row's elements (``Y[bx, j] = T.exp(X[bx, j] - m[0])``) and carry scalars (``T.alloc_local((1,))``,
``T.alloc_var``) from one iteration to the next. A Tenstorrent core computes whole tiles, so each
loop of the block's statement sequence becomes block code over the ``hi - lo`` elements it sweeps:

* a store into a tensor element ``G[.., base + j]`` (``j`` in the last index) computes a row block
  ``(1, hi - lo)`` in a ``T.Parallel(1, hi - lo)`` nest, which is copied to the slice
  ``G[.., base + lo : base + hi]`` after the loop; a later read of that slice (in the loop, or in a
  later loop sweeping the same slice) reads the block; a read of a slice no loop stores reads a
  shared row block copied in before the first loop reading it (the copies CoarsenRowBlocksTT
  groups by);
* a scalar accumulated by an associative operator, ``acc[0] = f(acc[0], term)`` with ``f`` one of
  ``+``, ``T.max``, ``T.min``, and read nowhere else in the loop, is a reduction along the row: the
  terms' block, ``T.reduce`` of it (sum, max, min) and ``acc = f(acc, reduced)``. When the statement
  just before the loop sets ``acc`` to the term at ``j = lo - 1`` (``m[0] = X[bx, 0]`` before
  ``for j in range(1, n)``), the reduction covers ``[lo - 1, hi)`` and replaces ``acc``;
* a scalar summed (``+``) and read by the statements after its sum in the loop is a running sum:
  ``T.cumsum`` of the terms' block (TileLang's fragment scan: a shared copy scanned in place), those
  statements reading the scalar plus it, and the scalar adds the row's total after them;
* a scalar combined by ``*`` (a product: no block reduction computes it), or by ``T.max`` or ``T.min``
  and read by the loop's other statements (a running max or min): the loop stays a
  serial loop over the row, each statement a nest over the row's element at ``j`` (``X[bx + i, j]``,
  the scalars' element ``i``) that CoarsenRowBlocksTT widens to a column of 32 rows (the reader reads
  an element per row, one tile operation per column, the writer writes an element per row): the
  kernel's own order and float32 rounding, any order of reads in the loop;
* the loop's statements run one after the other over the whole row (loop fission), which is exact
  because each reads only elements stored at its own ``j`` and scalars the loop does not change
  (or reads as a running sum);
* a scalar store outside the loops (``s[0] = 0``) and a value named from scalars
  (``inv = 1.0 / s[0]``) are per-row values: the scalars become ``(1,)`` fragments, each element of
  the nest ``i`` of extent 1 (the row), which CoarsenRowBlocksTT groups into 32-row blocks; a store
  of such a value into a tensor of rank 1 (``S[bx] = s[0]``) is the nest storing ``S[bx + i]``.

Refused at the statement (``TTCompileError``): a running sum read in its loop before it is accumulated
(an exclusive scan).

It runs before InlineScalarVarsTT, which would unroll a short sweep of ``T.alloc_var`` scalars into
one expression; a row a variable names (``X[r[0], j]``) is left to it, and thread-level code (a
statement using a thread index) to ThreadsToLanesTT.
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
            T.copy(T.region(X[bx, 0], 1, 1, 64), T.region(X_row[0, 0], 2, 1, 64))
            for i, j in T.parallel(1, 64):
                m_terms[i, j] = X_row[i, j]
            T.reduce(T.region(m_terms[0, 0], 1, 1, 64), T.region(m_max[0], 2, 1), "max", 1, True)
            for i in T.parallel(1):
                m[i] = m_max[i]
            for i, j in T.parallel(1, 64):
                Y_row[i, j] = X_row[i, j] - m[i]
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
from tilelang_tt.ir.lanes import PRIVATE_SCOPES, same_indices, thread_bindings
from tilelang_tt.ir.row_sweeps import (
    REDUCERS,
    NotRows,
    element_at_row,
    element_of_row,
    first_terms,
    inline_binds,
    is_sweep,
    leaves,
    name_row_values,
    recurrence,
    root_block,
    row_element,
)

PASS = "ScalarRowsToBlocksTT"
FRAGMENT, SHARED = "local.fragment", "shared.dyn"
SCAN_HINT = {
    tirx.Add: "read the running sum after adding the term (acc[0] += x[bx, j]; then use acc[0]): an inclusive "
              "running sum compiles (T.cumsum of the row); the exclusive one is that minus the term",
}


class _Rows:
    def __init__(self, func: tirx.PrimFunc, scalars: list, names: set):
        self.func = func
        self.scalars = scalars  # the row scalars (per-thread arrays of one element)
        self.frags = {b: tirx.decl_buffer(b.shape, b.dtype, b.name, scope=FRAGMENT, span=b.span) for b in scalars}
        self.names = names
        self.made: list = []  # blocks this pass allocates
        self.rows: list = []  # (tensor, row indices, start, extent, block, copy out): row blocks stored so far
        self.superseded: list = []  # copies out of a slice a later loop stores again
        self.read: list = []  # (tensor, row indices, start, extent, block): slices copied in
        self.copies_in: list = []  # the copies in the loop being rewritten makes
        self.stored_here: dict = {}  # tensor -> (row indices, start) the loop being rewritten stores
        self.scanned: dict = {}  # scalar -> the block of its running sum in the loop being rewritten
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
        if not rows or uses_var(base, var) or any(uses_var(r, var) for r in rows) or \
                any(x.buffer.scope() in PRIVATE_SCOPES for x in loads(last)) or \
                any(x.buffer.scope() in PRIVATE_SCOPES for r in rows for x in loads(r)):
            raise NotRows()  # (a row a variable names: InlineScalarVarsTT, after, makes it its value)
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
                raise NotRows()
        return found

    def read_row(self, buf, rows, start, extent: int) -> tirx.Buffer:
        """The shared block the slice ``buf[rows.., start:start + extent]`` is copied into (once, before
        the loop reading it first; ``copies_in``): the copy that makes it a row block of the grid."""
        for tensor, r, s, n, block in self.read:
            if tensor.same_as(buf) and same_indices(r, rows) and tirx.analysis.expr_deep_equal(s, start) and \
                    n == extent:
                return block
        block = self.block(f"{buf.name}_row", [1, extent], buf.dtype)
        block = tirx.decl_buffer(block.shape, block.dtype, block.name, scope=SHARED)
        self.made[-1] = block
        self.read.append((buf, rows, start, extent, block))
        self.copies_in.append(tirx.Evaluate(tirx.Call("handle", ir.Op.get("tl.tileop.copy"), [
            make_region(buf, [*rows, start], [1] * len(rows) + [extent], READ),
            make_region(block, [0, 0], [1, extent], WRITE)])))
        return block

    # ---- expressions of one element of the row
    def element(self, expr, var: tirx.Var, lo, i: tirx.Var, jj: tirx.Var, extent: int, own: dict):
        """``expr`` (of iteration ``var``) at element ``(i, jj)`` of the row block: tensor reads of the
        row at ``var`` become reads of the slice (or of the block that stored it: ``own`` this loop's,
        then earlier loops'), scalars their row's element."""

        def read(n):
            if isinstance(n, tirx.BufferLoad) and self.is_scalar(n.buffer):
                value = tirx.BufferLoad(self.frags[n.buffer], [i])
                scan = self.scanned.get(n.buffer)
                if scan is not None:  # the running sum at this element
                    running = tirx.BufferLoad(scan, [i, jj])
                    value = value + (running if running.dtype == value.dtype else tirx.Cast(value.dtype, running))
                return value
            if isinstance(n, tirx.BufferLoad) and is_global_buffer(n.buffer):
                if not uses_var(n, var):
                    raise NotRows()  # a single element in the sweep: not a row block
                rows, start = self.row_of(n, var, lo)
                here = self.stored_here.get(n.buffer)
                if here is not None and not (same_indices(here[0], rows) and
                                             tirx.analysis.expr_deep_equal(here[1], start)):
                    raise NotRows()  # another element than the one this loop stores: an earlier iteration's
                mine = own.get(n.buffer)
                if mine is not None:
                    return tirx.BufferLoad(mine[2], [i, jj])
                block = self.stored_row(n.buffer, rows, start, extent)
                return tirx.BufferLoad(block if block is not None else self.read_row(n.buffer, rows, start, extent),
                                       [i, jj])
            return None

        failed = []

        def post(n):  # an exception raised in TVM's callback comes back a RuntimeError: raised after it
            try:
                return read(n)
            except NotRows:
                failed.append(n)
                return None

        out = tirx.stmt_functor.ir_transform(tirx.Evaluate(expr), None, post, ["tirx.BufferLoad"]).value
        if failed:
            raise NotRows()
        return tirx.stmt_functor.substitute(out, {var: jj + lo if const_int(lo) != 0 else jj})

    # ---- statements
    def scalar_store(self, store: tirx.BufferStore) -> tirx.Stmt:
        """``s[0] = v`` outside the loops: the row's element of ``s``; ``G[r] = v`` into a tensor of rank 1
        (a value per row: ``S[bx] = s[0]``): the nest storing its row ``r + i``."""
        if any(is_global_buffer(x.buffer) for x in loads(store.value)):
            raise NotRows()
        i = tirx.Var("i", "int32")
        value = self.element(store.value, tirx.Var("j", "int32"), 0, i, i, 1, {})
        into = tirx.BufferStore(store.buffer, value, [store.indices[0] + i]) if is_global_buffer(store.buffer) \
            else tirx.BufferStore(self.frags[store.buffer], value, [i])
        return keep_span(store, tirx.For(i, 0, 1, tirx.ForKind.PARALLEL, keep_span(store, into)))

    def loop(self, loop: tirx.For, inits: dict) -> list:
        """The row loop ``loop`` as block code; ``inits``: scalar -> the store just before the loop
        that sets it to the term at ``lo - 1`` (the reduction then covers that element too)."""
        statements = inline_binds(loop.body)
        var, lo, extent = loop.loop_var, loop.min, const_int(loop.extent)
        accumulated, self.stored_here, self.copies_in = {}, {}, []
        for k, s in enumerate(statements):
            if not isinstance(s, tirx.BufferStore):
                raise NotRows()
            if self.is_scalar(s.buffer):
                combined = recurrence(s)
                if combined is None or s.buffer in accumulated or not uses_var(combined[1], var):
                    raise NotRows()  # not one recurrence over the row's elements
                accumulated[s.buffer] = (k, *combined)
            elif not is_global_buffer(s.buffer) or not uses_var(s.indices[-1], var):
                raise NotRows()
        running = [buf for buf, (k, op, _) in accumulated.items() if op is tirx.Mul or (op is not tirx.Add and any(
            x.buffer.same_as(buf) for s in statements[:k] + statements[k + 1:] for x in loads(s.value)))]
        if running and not inits:
            return self.sequential(loop, statements)
        for s in statements:
            if not self.is_scalar(s.buffer):
                rows, start = self.row_of(s, var, lo)
                known = self.stored_here.setdefault(s.buffer, (rows, start))
                if not (same_indices(known[0], rows) and tirx.analysis.expr_deep_equal(known[1], start)):
                    raise NotRows()  # two slices of one tensor
        self.scanned = {}
        for buf, (k, op, _) in accumulated.items():
            before = any(x.buffer.same_as(buf) for s in statements[:k] for x in loads(s.value))
            after = any(x.buffer.same_as(buf) for s in statements[k + 1:] for x in loads(s.value))
            if before or (after and op is not tirx.Add):
                raise self.scan(statements[k], buf, op)
            if after:
                self.scanned[buf] = None  # a running sum: the scan's block, made below
        if inits:
            lo = lo - 1
            extent += 1
        out, own, combined = [], {}, []
        for s in statements:
            i, jj = tirx.Var("i", "int32"), tirx.Var("j", "int32")
            if s.buffer in accumulated:
                _, op, term = accumulated[s.buffer]
                terms = self.block(f"{s.buffer.name}_terms", [1, extent], term.dtype)
                total = self.block(f"{s.buffer.name}_{REDUCERS[op]}", [1], term.dtype)
                acc = self.frags[s.buffer]
                out.append(self.nest(s, i, jj, extent, tirx.BufferStore(
                    terms, self.element(term, var, lo, i, jj, extent, own), [i, jj])))
                if s.buffer in self.scanned:
                    out += self.running_sum(s, terms, extent)
                out.append(keep_span(s, tirx.Evaluate(tirx.Call("handle", ir.Op.get("tl.tileop.reduce"), [
                    make_region(terms, [0, 0], [1, extent], READ), make_region(total, [0], [1], WRITE),
                    tirx.StringImm(REDUCERS[op]), tirx.IntImm("int32", 1), tirx.IntImm("bool", True)]))))
                k = tirx.Var("i", "int32")
                got = tirx.BufferLoad(total, [k])
                if s.buffer not in inits:
                    got = op(tirx.BufferLoad(acc, [k]), got)
                if got.dtype != acc.dtype:
                    got = tirx.Cast(acc.dtype, got)
                combined.append(keep_span(s, tirx.For(k, 0, 1, tirx.ForKind.PARALLEL, keep_span(
                    s, tirx.BufferStore(acc, got, [k])))))  # after the statements reading its running sum
                continue
            rows, start = self.stored_here[s.buffer]
            value = self.element(s.value, var, lo, i, jj, extent, own)  # reads before this store
            if s.buffer not in own:
                own[s.buffer] = (rows, start, self.block(f"{s.buffer.name}_row", [1, extent], s.buffer.dtype))
            out.append(self.nest(s, i, jj, extent, tirx.BufferStore(own[s.buffer][2], value, [i, jj])))
        out = [keep_span(loop, c) for c in self.copies_in] + out + combined
        for buf, (rows, start, block) in own.items():
            self.superseded += [r[5] for r in self.rows if r[0].same_as(buf)]  # the slice is stored again
            copy = keep_span(loop, tirx.Evaluate(tirx.Call("handle", ir.Op.get("tl.tileop.copy"), [
                make_region(block, [0, 0], [1, extent], READ),
                make_region(buf, [*rows, start], [1] * len(rows) + [extent], WRITE)])))
            self.rows = [r for r in self.rows if not r[0].same_as(buf)] + [(buf, rows, start, extent, block, copy)]
            out.append(copy)
        return out

    def sequential(self, loop: tirx.For, statements: list) -> list:
        """A loop carrying a running product, max or min (``running[0] *= X[bx, j]; Y[bx, j] =
        running[0]``): no block scan computes it exactly, so the loop stays serial along the row and
        each of its statements, in its order, is a nest over the row's element at ``j`` (``X[bx + i,
        j]``, the scalar's element ``i``), which CoarsenRowBlocksTT makes a column of 32 rows: one tile
        operation per column in the kernel's order and rounding, the reader reading and the writer
        writing an element per row."""
        var = loop.loop_var
        out = []
        for s in statements:
            if not self.is_scalar(s.buffer) and not element_of_row(s, var):
                raise NotRows()
            i = tirx.Var("i", "int32")
            value = self.at_element(s.value, var, i)
            store = tirx.BufferStore(self.frags[s.buffer], value, [i]) if self.is_scalar(s.buffer) else \
                tirx.BufferStore(s.buffer, value, row_element(s, i))
            out.append(keep_span(s, tirx.For(i, 0, 1, tirx.ForKind.PARALLEL, keep_span(s, store))))
        return [keep_span(loop, tirx.For(var, loop.min, loop.extent, tirx.ForKind.SERIAL, seq(out)))]

    def at_element(self, expr, var: tirx.Var, i: tirx.Var):
        """``expr`` of iteration ``var`` at the row's element ``i`` (:func:`element_at_row`: the
        scalars' fragments); _NotRows for a tensor an earlier loop stored into a row block."""
        stored = [r[0] for r in self.rows]
        if any(is_global_buffer(x.buffer) and any(x.buffer.same_as(t) for t in stored) for x in loads(expr)):
            raise NotRows()
        return element_at_row(expr, var, i, self.frags)

    def running_sum(self, store, terms: tirx.Buffer, extent: int) -> list:
        """The inclusive running sum of the terms (``T.cumsum`` of a shared copy, as TileLang scans a
        fragment), which the statements after ``store`` read as the scalar's value plus it."""
        scan = self.block(f"{store.buffer.name}_scan", [1, extent], terms.dtype)
        scan = tirx.decl_buffer(scan.shape, scan.dtype, scan.name, scope=SHARED)
        self.made[-1] = scan
        self.scanned[store.buffer] = scan
        whole = ([0, 0], [1, extent])
        return [keep_span(store, tirx.Evaluate(tirx.Call("handle", ir.Op.get("tl.tileop.copy"), [
                    make_region(terms, *whole, READ), make_region(scan, *whole, WRITE)]))),
                keep_span(store, tirx.Evaluate(tirx.Call("handle", ir.Op.get("tl.tileop.cumsum"), [
                    make_region(scan, *whole, READ), make_region(scan, *whole, WRITE), tirx.IntImm("int32", 1),
                    tirx.IntImm("bool", False)])))]

    def nest(self, like, i, jj, extent, store) -> tirx.Stmt:
        inner = keep_span(like, tirx.For(jj, 0, extent, tirx.ForKind.PARALLEL, keep_span(like, store)))
        return keep_span(like, tirx.For(i, 0, 1, tirx.ForKind.PARALLEL, inner))

    def scan(self, store, buf, op):
        what = {tirx.Add: "sum", tirx.Mul: "product", tirx.Max: "max", tirx.Min: "min"}[op]
        when = "before its term is added (an exclusive scan)" if op is tirx.Add else "in the loop that accumulates it"
        return error(PASS, self.func, store, f"`{buf.name}[0]` is a running {what} along the row, read {when}: "
                     "a block computes each statement over the whole row",
                     SCAN_HINT.get(op, "start the running value at the operator's identity (-T.infinity for a "
                                       "max) before a loop over the whole row: that loop compiles as it is "
                                       "written; or reduce the whole row (T.reduce_max) and read it after the loop"))


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    root = root_block(func)
    if root is None:
        return func
    scalars = [b for b in root.alloc_buffers if b.scope() in PRIVATE_SCOPES and
               all(const_int(d) == 1 for d in b.shape)]
    statements = leaves(root.body)
    if not any(is_sweep(s, scalars) for s in statements):
        return func
    try:
        body = _rewrite(func, root, statements, scalars)
    except NotRows:
        return func
    return func.with_body(body)


def _rewrite(func, root, statements, scalars) -> tirx.Stmt:
    threads = [var for var, _, _ in thread_bindings(func.body)]
    if any(uses_var(s, t) for s in statements for t in threads if is_sweep(s, scalars) or any(
            any(x.buffer.same_as(b) for b in scalars) for x in (*loads(s), *stores(s)))):
        raise NotRows()  # thread-level code: ThreadsToLanesTT's
    names = kernel_names(func)
    statements, named = name_row_values(statements, scalars, names)
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
        if is_sweep(s, scalars):
            inits = first_terms(s, pending)
            for buf, store in pending.items():
                if buf not in inits:
                    out.append(rows.scalar_store(store))
            pending = {}
            out += rows.loop(s, inits)
            continue
        for store in pending.values():
            out.append(rows.scalar_store(store))
        pending = {}
        if isinstance(s, tirx.BufferStore) and is_global_buffer(s.buffer) and len(s.indices) == 1 and \
                any(rows.is_scalar(x.buffer) for x in loads(s.value)):
            out.append(rows.scalar_store(s))  # a value per row into a vector
            continue
        if any(rows.is_scalar(x.buffer) for x in (*loads(s), *stores(s))) or \
                any(is_global_buffer(x.buffer) and any(x.buffer.same_as(r[0]) for r in rows.rows) for x in loads(s)):
            raise NotRows()  # a scalar or a stored row used by other code
        out.append(s)
    out += [rows.scalar_store(store) for store in pending.values()]
    body = seq([s for s in out if not any(s.same_as(c) for c in rows.superseded)])
    new_root = tirx.SBlock(root.iter_vars, root.reads, root.writes, root.name_hint, body, root.init,
                           [b for b in root.alloc_buffers if not any(b.same_as(s) for s in scalars)] +
                           [rows.frags[b] for b in scalars] + rows.made, root.match_buffers, root.annotations)
    return tirx.stmt_functor.ir_transform(func.body, None, lambda n: new_root if n.same_as(root) else None,
                                          ["tirx.SBlock"])


def ScalarRowsToBlocksTT():
    return prim_func_pass(_transform, PASS)
