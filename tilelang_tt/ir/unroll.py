"""Serial loops whose steps change how a T.Parallel nest inside them moves a block's elements (a butterfly's
stage ``s``: ``x[i, j ^ (1 << s)]``, or ``x[i, j ^ h]`` with ``h = 1 << s`` named in the loop): unrolled, each step's
indices constants of the step, so that the selections of each step are built at compile time
(LowerBlockGathersTT)."""

from __future__ import annotations

from tvm import tirx

from tilelang_tt.ir.common import is_cb_buffer, keep_span, seq, uses_var

MAX_UNROLL = 16  # steps of a serial loop unrolled (log2 of a transform's length)


def selects_per_step(loop) -> bool:
    """Whether ``loop`` is a serial loop of at most MAX_UNROLL steps from 0 whose variable indexes a read of an
    on-chip block inside a T.Parallel nest in it (directly or through the values the loop names) together with
    the nest's own loop variables in one index (a butterfly stage's ``x[i, j ^ (1 << s)]``; ``x[s, j]`` reads a
    row of the block per step, no selection)."""
    if not (isinstance(loop, tirx.For) and loop.kind in (tirx.ForKind.SERIAL, tirx.ForKind.UNROLLED)
            and isinstance(loop.min, tirx.IntImm) and int(loop.min) == 0 and isinstance(loop.extent, tirx.IntImm)
            and int(loop.extent) <= MAX_UNROLL):
        return False
    named = {}
    tirx.stmt_functor.post_order_visit(loop.body, lambda n: named.__setitem__(n.var, n.value) if isinstance(
        n, tirx.Bind) else None)

    def indexed(m, nest) -> bool:
        if not (isinstance(m, tirx.BufferLoad) and is_cb_buffer(m.buffer)):
            return False
        for x in m.indices:
            x = tirx.stmt_functor.substitute(tirx.stmt_functor.substitute(x, named), named)
            if uses_var(x, loop.loop_var) and any(uses_var(x, v) for v in nest):
                return True
        return False

    found = []

    def visit(n):
        if isinstance(n, tirx.For) and n.kind == tirx.ForKind.PARALLEL:
            nest = []
            tirx.stmt_functor.post_order_visit(n, lambda m: nest.append(m.loop_var) if isinstance(
                m, tirx.For) and m.kind == tirx.ForKind.PARALLEL else None)
            tirx.stmt_functor.post_order_visit(n.body, lambda m: found.append(m) if indexed(m, nest) else None)

    tirx.stmt_functor.post_order_visit(loop.body, visit)
    return bool(found)


def unrolled(loop: tirx.For) -> tirx.Stmt:
    """The steps of ``loop`` in sequence: in each, the loop variable its constant and each value the body names
    a new variable (one definition each), a value that is then a constant substituted where it is used."""
    return seq([_step(loop, k) for k in range(int(loop.extent))])


def _step(loop: tirx.For, k: int) -> tirx.Stmt:
    fresh, constant = {}, {}

    def visit(n):
        if isinstance(n, tirx.Bind):
            fresh[n.var] = tirx.Var(n.var.name, n.var.dtype)

    tirx.stmt_functor.post_order_visit(loop.body, visit)
    step = {loop.loop_var: tirx.IntImm(loop.loop_var.dtype, k)}

    def bind(n):
        if isinstance(n, tirx.Bind) and n.var in fresh:
            value = tirx.stmt_functor.substitute(n.value, constant)
            found = []
            tirx.stmt_functor.post_order_visit(value, lambda m: found.append(m) if isinstance(
                m, (tirx.Var, tirx.BufferLoad)) else None)
            if not found and str(n.var.dtype).startswith("int"):  # h = 1 << 3: the constant
                constant[fresh[n.var]] = value
            return keep_span(n, tirx.Bind(fresh[n.var], value))
        return None

    body = tirx.stmt_functor.substitute(loop.body, {**fresh, **step})
    body = tirx.stmt_functor.ir_transform(body, None, bind, ["tirx.Bind"])
    return tirx.stmt_functor.substitute(body, constant) if constant else body
