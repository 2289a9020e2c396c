"""Thread-level code rewritten into the forms ThreadsToLanesTT lowers (before its per-array analysis,
:mod:`tilelang_tt.ir.lanes`): values named per thread substituted, a flat lane split into rows and
columns, staging registers forwarded to their readers, guards fixing one lane around idempotent
stores dropped, a lane and a serial loop that index as one run merged; and, after the lowering, the
root block's allocations of the lane arrays (:func:`reallocate`)."""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import arith, ir, tirx

from tilelang_tt.ir.common import const_int, keep_span, loads, stores, uses_var
from tilelang_tt.ir.lanes import ALLREDUCE, Lanes, accumulated_term, call_name, loads_of


def inline_lane_binds(body, lanes: Lanes) -> tirx.Stmt:
    """Values named per thread (``idx = bx * 256 + tx``) substituted where they are used."""
    named = {}

    def pre(node):
        if isinstance(node, tirx.Bind):
            value = tirx.stmt_functor.substitute(node.value, named)
            if lanes.lanes_of(value) or any(lanes.is_private(x.buffer) for x in loads(value)):
                named[node.var] = value
        return None

    tirx.stmt_functor.pre_order_visit(body, lambda n: pre(n) is None)

    def post(node):
        if isinstance(node, tirx.Bind) and node.var in named:
            return tirx.Evaluate(0)
        return None

    body = tirx.stmt_functor.ir_transform(body, None, post, ["tirx.Bind"])
    return tirx.stmt_functor.substitute(body, named)


def split_flat_lanes(body, lanes: Lanes, grid: dict) -> tirx.Stmt:
    """A lane that indexes through ``(base + t) // C`` and ``(base + t) % C`` (a flat index of a
    row-major tile of C columns, one C for the lane, dividing its extent) is two lanes, ``t = hi * C
    + lo``: the indices, simplified with the lanes' ranges, become ``base // C + hi`` and ``lo``."""
    for var in list(lanes.order):
        divisors = set()

        def visit(node, var=var):
            if isinstance(node, (tirx.FloorDiv, tirx.FloorMod)) and uses_var(node.a, var) and \
                    const_int(node.b) is not None:
                divisors.add(const_int(node.b))

        tirx.stmt_functor.post_order_visit(body, visit)
        extent = lanes.extents[var]
        if len(divisors) != 1 or not 1 < next(iter(divisors)) < extent or extent % next(iter(divisors)):
            continue
        columns = next(iter(divisors))
        hi, lo = tirx.Var(f"{var.name}_hi", var.dtype), tirx.Var(f"{var.name}_lo", var.dtype)
        analyzer = arith.Analyzer()
        for loop in grid.values():  # the block coordinates' ranges: a guard of the last block may go
            analyzer.bind(loop.loop_var, ir.Range(loop.min, loop.min + loop.extent))
        analyzer.bind(hi, ir.Range(0, extent // columns))
        analyzer.bind(lo, ir.Range(0, columns))
        body = tirx.stmt_functor.substitute(body, {var: hi * columns + lo})

        def post(node, analyzer=analyzer):
            if isinstance(node, tirx.BufferLoad):
                return tirx.BufferLoad(node.buffer, [analyzer.simplify(i) for i in node.indices])
            if isinstance(node, tirx.BufferStore):
                return keep_span(node, tirx.BufferStore(node.buffer, node.value,
                                                        [analyzer.simplify(i) for i in node.indices]))
            if isinstance(node, tirx.IfThenElse):
                return keep_span(node, tirx.IfThenElse(analyzer.simplify(node.condition), node.then_case,
                                                       node.else_case))
            return None

        body = tirx.stmt_functor.ir_transform(body, None, post, ["tirx.BufferLoad", "tirx.BufferStore",
                                                                 "tirx.IfThenElse"])
        at = lanes.order.index(var)
        lanes.order[at:at + 1] = [hi, lo]
        if lanes.x is not None and lanes.x.same_as(var):
            lanes.x = lo
        del lanes.extents[var]
        lanes.extents.update({hi: extent // columns, lo: columns})
    return body


class _NotStaged(Exception):
    """The array is not a staging register of one loop (see :func:`forward_staged_registers`)."""


def _take_store(stmt, buf: tirx.Buffer, var: tirx.Var):
    """(``stmt`` without its store into ``buf[var]``, the value stored), the value a
    ``T.if_then_else`` where an if/else stores into both branches; None when it has no such store."""
    if isinstance(stmt, tirx.BufferStore):
        if not stmt.buffer.same_as(buf):
            return stmt, None
        if len(stmt.indices) != 1 or not (isinstance(stmt.indices[0], tirx.Var) and stmt.indices[0].same_as(var)):
            raise _NotStaged()
        return tirx.Evaluate(0), stmt.value
    if isinstance(stmt, tirx.SeqStmt):
        kept, values = [], []
        for s in stmt.seq:
            rest, value = _take_store(s, buf, var)
            kept.append(rest)
            values += [value] if value is not None else []
        if len(values) > 1:
            raise _NotStaged()
        kept = [s for s in kept if not _noop(s)]
        rest = kept[0] if len(kept) == 1 else tirx.SeqStmt(kept) if kept else tirx.Evaluate(0)
        return rest, values[0] if values else None
    if isinstance(stmt, tirx.IfThenElse):
        then, a = _take_store(stmt.then_case, buf, var)
        other, b = _take_store(stmt.else_case, buf, var) if stmt.else_case is not None else (None, None)
        if (a is None) != (b is None):
            raise _NotStaged()
        if a is None:
            return stmt, None
        value = tirx.if_then_else(stmt.condition, a, b)
        if _noop(then) and (other is None or _noop(other)):
            return tirx.Evaluate(0), value
        return keep_span(stmt, tirx.IfThenElse(stmt.condition, then, other)), value
    if loads_of(stmt, buf) or _stores_into(stmt, buf):
        raise _NotStaged()
    return stmt, None


def _noop(stmt) -> bool:
    return isinstance(stmt, tirx.Evaluate) and isinstance(stmt.value, tirx.IntImm)


def _stores_into(stmt, buf) -> bool:
    return any(x.buffer.same_as(buf) for x in stores(stmt))


def forward_staged_registers(body, lanes: Lanes) -> tirx.Stmt:
    """A per-thread array used as staging registers — filled element by element by one loop
    (``for e: r[e] = W[row, k0 + e]``, possibly ``if ok: r[e] = .. else: r[e] = 0``) and read by
    the statements after that loop in the same sequence, which nothing between re-writes — is its
    value where it is read (``r[w]`` is ``W[row, k0 + w]``), and the array goes: a GPU thread's
    vector load is the block read the reading statement makes anyway."""
    for buf in list(lanes.private):
        own = [const_int(d) for d in buf.shape if const_int(d) != 1]
        if len(own) != 1:
            continue
        done = []

        def post(node, buf=buf, extent=own[0], done=done):
            if done or not isinstance(node, tirx.SeqStmt):
                return None
            for i, loop in enumerate(node.seq):
                if not (isinstance(loop, tirx.For) and const_int(loop.extent) == extent and const_int(loop.min) == 0):
                    continue
                try:
                    rest, value = _take_store(loop.body, buf, loop.loop_var)
                except _NotStaged:
                    return None
                if value is None:
                    continue
                after = list(node.seq[i + 1:])
                readers = [k for k, s in enumerate(after) if loads_of(s, buf)]
                if any(lanes.is_private(x.buffer) for x in loads(value)) or not readers or any(
                        _stores_into(s, buf) for s in after) or any(
                        any(w.buffer.same_as(x.buffer) for x in loads(value) for w in stores(s))
                        for s in after[:readers[-1] + 1]):
                    return None

                def forward(n, var=loop.loop_var, value=value):
                    if isinstance(n, tirx.BufferLoad) and n.buffer.same_as(buf):
                        return tirx.stmt_functor.substitute(value, {var: n.indices[0]})
                    return None

                after = [tirx.stmt_functor.ir_transform(s, None, forward, ["tirx.BufferLoad"]) for s in after]
                loop = None if _noop(rest) else \
                    keep_span(loop, tirx.For(loop.loop_var, loop.min, loop.extent, loop.kind, rest,
                                             loop.thread_binding, loop.annotations))
                done.append(buf)
                stmts = list(node.seq[:i]) + ([loop] if loop else []) + after
                return stmts[0] if len(stmts) == 1 else keep_span(node, tirx.SeqStmt(stmts))
            return None

        body = tirx.stmt_functor.ir_transform(body, None, post, ["tirx.SeqStmt"])
        if done and not loads_of(body, buf) and not _stores_into(body, buf):
            lanes.private = [b for b in lanes.private if not b.same_as(buf)]
            lanes.dropped.append(buf)
    return body


def drop_single_lane_guards(body, lanes: Lanes) -> tirx.Stmt:
    """``if s == c: y[i] = v`` where every statement inside stores a value not reading its target: each
    lane would store the same value, so the lane ``s`` is ``c`` there and the condition goes (the
    lanes of ``s`` then need not reach the statement)."""

    def idempotent(stmt) -> bool:
        leaves = [stmt] if not isinstance(stmt, tirx.SeqStmt) else list(stmt.seq)
        return all(isinstance(s, tirx.BufferStore) and not loads_of(s.value, s.buffer) and
                   not lanes.is_private(s.buffer) for s in leaves)

    def post(node):
        if not isinstance(node, tirx.IfThenElse) or node.else_case is not None or not idempotent(node.then_case):
            return None
        terms, todo = [], [node.condition]
        while todo:
            g = todo.pop()
            if isinstance(g, tirx.And):
                todo += [g.b, g.a]
            else:
                terms.append(g)
        fixed = {g.a: g.b for g in terms if isinstance(g, tirx.EQ) and isinstance(g.a, tirx.Var) and
                 g.a in lanes.extents and not lanes.lanes_of(g.b)}
        if not fixed:
            return None
        rest = [g for g in terms if not (isinstance(g, tirx.EQ) and isinstance(g.a, tirx.Var) and g.a in fixed)]
        then = tirx.stmt_functor.substitute(node.then_case, fixed)
        if not rest:
            return then
        cond = rest[0]
        for g in rest[1:]:
            cond = tirx.And(cond, g)
        return keep_span(node, tirx.IfThenElse(tirx.stmt_functor.substitute(cond, fixed), then, None))

    return tirx.stmt_functor.ir_transform(body, None, post, ["tirx.IfThenElse"])


def merge_lane_loops(body, lanes: Lanes, grid: dict) -> tirx.Stmt:
    """A serial loop over ``e`` (extent n) summing into accumulators absorbed over a lane ``s`` that
    indexes only as ``s * n + e`` there and nowhere outside the loop: ``(s, e)`` is one lane ``k = s
    * n + e`` (a K slice per thread is a run of the whole K), the loop goes."""
    ranges = {loop.loop_var: ir.Range(loop.min, loop.min + loop.extent) for loop in grid.values()}
    tirx.stmt_functor.post_order_visit(body, lambda n: ranges.setdefault(n.loop_var, ir.Range(
        n.min, n.min + n.extent)) if isinstance(n, tirx.For) else None)

    def post(node):
        if not isinstance(node, tirx.For) or node.kind == tirx.ForKind.PARALLEL or const_int(node.extent) in (None, 1) \
                or const_int(node.min) != 0:
            return None
        leaves = [node.body] if not isinstance(node.body, tirx.SeqStmt) else list(node.body.seq)
        if not all(isinstance(s, tirx.BufferStore) and s.buffer in lanes.absorbed and
                   accumulated_term(s) is not None for s in leaves):
            return None
        common = set.intersection(*(lanes.absorbed[s.buffer] for s in leaves))
        for lane in lanes.sorted(common):
            if lane not in lanes.extents:
                continue
            outside = tirx.stmt_functor.ir_transform(body, None, lambda n: tirx.Evaluate(0) if n.same_as(node)
                                                     else None, ["tirx.For"])
            if _uses_lane_outside_reductions(outside, lane):
                continue
            n = const_int(node.extent)
            k = tirx.Var(f"{lane.name}_{node.loop_var.name}", lane.dtype)
            analyzer = arith.Analyzer()
            for var, rng in ranges.items():
                analyzer.bind(var, rng)
            analyzer.bind(k, ir.Range(0, lanes.extents[lane] * n))
            merged = tirx.stmt_functor.substitute(node.body, {lane: tirx.FloorDiv(k, n),
                                                              node.loop_var: tirx.FloorMod(k, n)})
            merged = _simplified(merged, analyzer)
            left = []
            tirx.stmt_functor.post_order_visit(merged, lambda x: left.append(x) if isinstance(
                x, (tirx.FloorDiv, tirx.FloorMod)) and uses_var(x, k) else None)
            if left:
                continue
            lanes.merged[lane] = k
            at = lanes.order.index(lane)
            lanes.order[at] = k
            lanes.extents[k] = lanes.extents.pop(lane) * n
            for buf, over in lanes.absorbed.items():
                if lane in over:
                    lanes.absorbed[buf] = (over - {lane}) | {k}
            return merged
        return None

    return tirx.stmt_functor.ir_transform(body, None, post, ["tirx.For"])


def _uses_lane_outside_reductions(stmt, lane) -> bool:
    """Whether ``lane`` is used other than as the lane an all-reduce names."""
    found = []

    def visit(node):
        if isinstance(node, (tirx.BufferStore, tirx.IfThenElse, tirx.For, tirx.Bind)) and uses_var(
                node if not isinstance(node, tirx.IfThenElse) else node.condition, lane):
            if isinstance(node, (tirx.BufferStore, tirx.Bind)) or isinstance(node, tirx.IfThenElse) or \
                    uses_var(node.min, lane) or uses_var(node.extent, lane):
                found.append(node)
        elif isinstance(node, tirx.Evaluate) and call_name(node.value) != ALLREDUCE and uses_var(node, lane):
            found.append(node)

    tirx.stmt_functor.post_order_visit(stmt, visit)
    return bool(found)


def _simplified(stmt, analyzer) -> tirx.Stmt:
    def post(node):
        if isinstance(node, tirx.BufferStore):
            return keep_span(node, tirx.BufferStore(node.buffer, analyzer.simplify(node.value),
                                                    [analyzer.simplify(i) for i in node.indices]))
        return None

    return tirx.stmt_functor.ir_transform(stmt, None, post, ["tirx.BufferStore"])


def allocated(body) -> list:
    """The buffers the blocks of ``body`` allocate."""
    out = []
    tirx.stmt_functor.post_order_visit(body, lambda n: out.extend(n.alloc_buffers) if isinstance(
        n, tirx.SBlock) else None)
    return out


def reallocate(body, lanes: Lanes) -> tirx.Stmt:
    """The root block allocates each per-thread array's lane array and the reduced values; the
    forwarded staging registers go."""

    def post(node):
        if isinstance(node, tirx.SBlock) and any(lanes.is_private(b) or b in lanes.dropped
                                                 for b in node.alloc_buffers):
            buffers = [lanes.made.get(b, b) for b in node.alloc_buffers if b not in lanes.dropped]
            if node.name_hint == "tilelang_root":
                buffers += [lanes.made[b] for b in lanes.extra if b in lanes.made]
            return tirx.SBlock(node.iter_vars, node.reads, node.writes, node.name_hint, node.body, node.init,
                               buffers, node.match_buffers, node.annotations)
        return None

    return tirx.stmt_functor.ir_transform(body, None, post, ["tirx.SBlock"])
