"""A ``T.Parallel`` nest split into the parts of its loops' ranges where its conditions and integer
divisions are constant (LegalizeGlobalAccessTT, for nests whose global accesses are blocks only part by
part).

GPU code chooses a value per element with a condition on its index, rotary embedding's partner half
``T.if_then_else(col < half, -x[row, col + half], x[row, col - half])``, or folds an index with an
integer division, ``cos[row, col % half]``. Over the whole nest such an access touches no box of the
tensor (``x[row, col + half]`` for every ``col`` would read past the row); over ``col < half`` and
``col >= half`` apart each is one: the first half of the row stores ``-x[row, col + half]``, the second
``x[row, col']`` at ``col = col' + half``. :func:`partitioned` finds, for each loop of constant extent,
the points where a condition of the nest's values (``T.if_then_else``, ``Select``, an ``if``) or the
quotient of an integer division by a constant (``//``, ``%``) that depends on that loop alone changes,
evaluated at every point of the loop's range with the analyzer (exact: no pattern of the expression is
assumed), and splits the loop there (a few points at most: a condition that changes at every other
element, ``col % 2 == 0``, a pair swap, is a permutation, not parts). In each part the loop runs from 0
and the body is simplified with its range: the conditions fold to the branch taken and the divisions to
affine indices.
"""

from __future__ import annotations

from tvm import arith, ir, tirx

from tilelang_tt.ir.common import const_int, keep_span, uses_var

MAX_POINTS = 3  # per loop: a few halves or quarters, not a permutation
MAX_EXTENT = 4096  # the loops evaluated point by point


def _inlined(body: tirx.Stmt) -> tirx.Stmt:
    """``body`` with every value it names (``Bind``) substituted where it is used and the names dropped:
    the conditions and indices in terms of the loop variables."""
    named: dict = {}

    def walk(stmt):
        if isinstance(stmt, tirx.SeqStmt):
            parts = [walk(s) for s in stmt.seq]
            parts = [s for s in parts if s is not None]
            return parts[0] if len(parts) == 1 else tirx.SeqStmt(parts) if parts else None
        if isinstance(stmt, tirx.Bind):
            named[stmt.var] = tirx.stmt_functor.substitute(stmt.value, named)
            return None
        if isinstance(stmt, tirx.IfThenElse):
            then = walk(stmt.then_case)
            other = None if stmt.else_case is None else walk(stmt.else_case)
            return keep_span(stmt, tirx.IfThenElse(tirx.stmt_functor.substitute(stmt.condition, named),
                                                   then or tirx.Evaluate(0), other))
        return keep_span(stmt, tirx.stmt_functor.substitute(stmt, named))

    return walk(body) or tirx.Evaluate(0)


def _deciders(body: tirx.Stmt, analyzer: arith.Analyzer) -> list:
    """The expressions whose value decides what the nest computes where, simplified: the conditions of
    its ``T.if_then_else``, ``Select`` and ``if``, and the quotients of the integer divisions by
    constants left in its indices (``c % 64``: ``c // 64``; one the analyzer makes affine, ``(bx * 256 + r *
    128 + c) // 128`` = ``bx * 2 + r``, decides nothing)."""
    found = []

    def division(node):
        if isinstance(node, (tirx.FloorDiv, tirx.FloorMod)) and const_int(node.b) is not None:
            quotient = analyzer.simplify(tirx.FloorDiv(node.a, node.b))
            if _has_division(quotient):
                found.append(quotient)

    def visit(node):
        if isinstance(node, tirx.Call) and isinstance(node.op, ir.Op) and node.op.name == "tirx.if_then_else":
            found.append(analyzer.simplify(node.args[0]))
        elif isinstance(node, (tirx.Select, tirx.IfThenElse)):
            found.append(analyzer.simplify(node.condition))
        elif isinstance(node, (tirx.BufferLoad, tirx.BufferStore)):
            for index in node.indices:
                tirx.stmt_functor.post_order_visit(analyzer.simplify(index), division)

    tirx.stmt_functor.post_order_visit(body, visit)
    return found


def _has_division(expr) -> bool:
    found = []
    tirx.stmt_functor.post_order_visit(expr, lambda n: found.append(n) if isinstance(
        n, (tirx.FloorDiv, tirx.FloorMod)) else None)
    return bool(found)


def _points(loop: tirx.For, loops: list[tirx.For], body: tirx.Stmt, analyzer: arith.Analyzer) -> list[int] | None:
    """The points inside ``loop``'s range where a decider of ``body`` that depends on ``loop`` alone
    of the nest's loops changes value; None when one depends on it and another loop, or changes at
    more than ``MAX_POINTS`` points, or is not constant at a point (it depends on the block)."""
    var, extent = loop.loop_var, const_int(loop.extent)
    if extent is None or extent > MAX_EXTENT:
        return None
    points: set[int] = set()
    for expr in _deciders(body, analyzer):
        if not uses_var(expr, var):
            continue
        if any(uses_var(expr, lp.loop_var) for lp in loops if lp is not loop):
            return None
        values = [const_int(analyzer.simplify(tirx.stmt_functor.substitute(expr, {var: tirx.const(t, var.dtype)})))
                  for t in range(extent)]
        if None in values:
            return None
        points.update(t for t in range(1, extent) if values[t] != values[t - 1])
        if len(points) > MAX_POINTS:
            return None
    return sorted(points)


def _simplified(body: tirx.Stmt, analyzer: arith.Analyzer) -> tirx.Stmt:
    """``body`` with the conditions the analyzer decides replaced by the branch taken and every index
    simplified (``(c + 64) % 64`` is ``c`` for ``c`` in [0, 64))."""
    def decided(cond):
        cond = analyzer.simplify(cond)
        return True if analyzer.can_prove(cond) else False if analyzer.can_prove(tirx.Not(cond)) else None

    def post(node):
        if isinstance(node, tirx.Call) and isinstance(node.op, ir.Op) and node.op.name == "tirx.if_then_else":
            taken = decided(node.args[0])
            return None if taken is None else node.args[1] if taken else node.args[2]
        if isinstance(node, tirx.Select):
            taken = decided(node.condition)
            return None if taken is None else node.true_value if taken else node.false_value
        if isinstance(node, tirx.IfThenElse):
            taken = decided(node.condition)
            if taken is None:
                return None
            return node.then_case if taken else node.else_case or tirx.Evaluate(0)
        if isinstance(node, tirx.BufferLoad):
            return tirx.BufferLoad(node.buffer, [analyzer.simplify(x) for x in node.indices])
        if isinstance(node, tirx.BufferStore):
            indices = [analyzer.simplify(x) for x in node.indices]
            return keep_span(node, tirx.BufferStore(node.buffer, node.value, indices))
        return None

    return tirx.stmt_functor.ir_transform(body, None, post, ["tirx.Call", "tirx.Select", "tirx.IfThenElse",
                                                             "tirx.BufferLoad", "tirx.BufferStore"])


def _split(loops: list[tirx.For], body: tirx.Stmt, analyzer: arith.Analyzer) -> list | None:
    """The parts of the first loop of the nest with points (:func:`_points`), each (loops, body); None
    when no loop has any."""
    for loop in loops:
        points = _points(loop, loops, body, analyzer)
        if not points:
            continue
        bounds = [0, *points, int(loop.extent)]
        parts = []
        for lo, hi in zip(bounds, bounds[1:]):  # each part's loops their own variables (defined once)
            new_loops, subst = [], {}
            for other in loops:
                var = tirx.Var(other.loop_var.name, other.loop_var.dtype)
                extent = hi - lo if other is loop else other.extent
                analyzer.bind(var, ir.Range(0, extent))
                new_loops.append(keep_span(other, tirx.For(var, 0, extent, other.kind, tirx.Evaluate(0),
                                                           other.thread_binding, other.annotations)))
                subst[other.loop_var] = var + lo if other is loop and lo else var
            parts.append((new_loops, _simplified(tirx.stmt_functor.substitute(body, subst), analyzer)))
        return parts
    return None


def partitioned(loops: list[tirx.For], body: tirx.Stmt, analyzer: arith.Analyzer,
                limit: int = 8) -> list[tuple[list[tirx.For], tirx.Stmt]] | None:
    """The nest ``loops`` around ``body`` as the nests of the parts of its loops' ranges where its
    conditions and integer divisions are constant (the module's docstring), at most ``limit`` of them;
    None when it has no such parts."""
    for lp in loops:
        analyzer.bind(lp.loop_var, ir.Range.from_min_extent(lp.min, lp.extent))
    parts = [(loops, _simplified(_inlined(body), analyzer))]
    done: list = []
    while parts:
        nest = parts.pop(0)
        split = _split(*nest, analyzer)
        if split is None:
            done.append(nest)
        else:
            parts = split + parts
        if len(done) + len(parts) > limit:
            return None
    return done if len(done) > 1 else None
