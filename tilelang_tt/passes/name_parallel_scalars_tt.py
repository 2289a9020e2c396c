"""NameParallelScalarsTT (front, before InlineScalarVarsTT): a scalar variable that a ``T.Parallel`` nest
sets before it reads it is a named value of each element.

Kernels write temporaries of an element's computation as ``T.alloc_var`` scalars inside ``T.Parallel``
(DeepSeek's TileKernels: ``val_l = T.alloc_var(T.float32); val_l = T.float32(xl[i, j]); val_l =
T.min(val_l, clamp)``; ``sf = T.alloc_var(T.float32); sf = amax / 448``): on a GPU every thread has its
own copy, so each element's value is the one its own iteration stored last. Such a variable is exactly a
name per store (a ``Bind`` of a new variable), each read taking the name of the last store before it in
the nest's body; the later passes see element-wise values (compute evaluates them per tile) and no
scalar store.

Reads: ``local.var`` buffers of one element every access of which lies in the bodies of ``T.Parallel``
nests, in straight-line code (no loop or branch between the nest and the access), each nest storing it
before reading it. Writes: each such store as a ``Bind`` of a new variable, each read as that variable; the variable's
allocation is dropped.
Other scalar variables are left as they are (InlineScalarVarsTT, then LowerTTTileIntrinsics' refusal).
Reads/writes no attribute.

    Before: v = T.sblock_alloc_buffer((1,), scope="local.var")
            for i, j in T.Parallel(16, 256):
                v[0] = T.Cast("float32", x[i, j])
                v[0] = T.min(v[0], limit)
                y[i, j] = v[0] * T.float32(2)
    After:  for i, j in T.Parallel(16, 256):
                v1: T.float32 = T.Cast("float32", x[i, j])
                v2: T.float32 = T.min(v1, limit)
                y[i, j] = v2 * T.float32(2)
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.common import keep_span, kernel_names, parallel_nest, prim_func_pass, rebuild_nest, seq, unique_name

PASS = "NameParallelScalarsTT"


def _is_var(buf: tirx.Buffer) -> bool:
    return buf.scope() == "local.var" and [int(d) for d in buf.shape] == [1]


def _accesses(node) -> list:
    found = []
    tirx.stmt_functor.post_order_visit(node, lambda n: found.append(n) if isinstance(
        n, (tirx.BufferLoad, tirx.BufferStore)) and _is_var(n.buffer) else None)
    return found


def _straight(body) -> list[tirx.Stmt] | None:
    """The statements of a nest's body when it is straight-line code (stores and named values), else None."""
    stmts = list(body.seq) if isinstance(body, tirx.SeqStmt) else [body]
    flat = []
    for s in stmts:
        if isinstance(s, tirx.SeqStmt):
            inner = _straight(s)
            if inner is None:
                return None
            flat.extend(inner)
        elif isinstance(s, (tirx.BufferStore, tirx.Bind)):
            flat.append(s)
        else:
            return None
    return flat


def _named(stmts: list[tirx.Stmt], scalars: set, names: set) -> list[tirx.Stmt] | None:
    """``stmts`` with each store into one of ``scalars`` a named value and each read its last name; None
    when a scalar is read before any store of the nest."""
    current: dict = {}
    unset = []

    def read(expr):
        def post(n):
            if isinstance(n, tirx.BufferLoad) and n.buffer in scalars:
                if n.buffer not in current:
                    unset.append(n)
                    return None
                return current[n.buffer]
            return None
        return tirx.stmt_functor.ir_transform(tirx.Evaluate(expr), None, post, ["tirx.BufferLoad"]).value

    out = []
    for s in stmts:
        if isinstance(s, tirx.Bind):
            out.append(keep_span(s, tirx.Bind(s.var, read(s.value))))
            continue
        value = read(s.value)
        indices = [read(x) for x in s.indices]
        if s.buffer in scalars:
            name = unique_name(s.buffer.name, names)
            names.add(name)
            var = tirx.Var(name, s.buffer.dtype)
            current[s.buffer] = var
            out.append(keep_span(s, tirx.Bind(var, value)))
        else:
            out.append(keep_span(s, tirx.BufferStore(s.buffer, value, indices)))
    return None if unset else out


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    everywhere = {a.buffer for a in _accesses(func.body)}
    if not everywhere:
        return func
    inside: list = []  # the accesses in the straight-line bodies of nests
    nests = []

    def find(node):
        if isinstance(node, tirx.For) and node.kind == tirx.ForKind.PARALLEL:
            loops, body = parallel_nest(node)
            stmts = _straight(body)
            if stmts is not None:
                nests.append(node)
                inside.extend(_accesses(body))
            return False
        return True

    tirx.stmt_functor.pre_order_visit(func.body, find)
    counts = {}
    for a in _accesses(func.body):
        counts[a.buffer] = counts.get(a.buffer, 0) + 1
    for a in inside:
        counts[a.buffer] -= 1
    scalars = {b for b in everywhere if counts[b] == 0}  # every access inside such a nest
    if not scalars:
        return func
    names = kernel_names(func)
    rewritten = {}
    for nest in nests:
        loops, body = parallel_nest(nest)
        if not any(a.buffer in scalars for a in _accesses(body)):
            continue
        stmts = _named(_straight(body), scalars, names)
        if stmts is None:
            return func  # a value carried between iterations: not a name per element
        rewritten[nest] = keep_span(nest, rebuild_nest(loops, seq(stmts)))

    def pre(node):
        for nest, new in rewritten.items():
            if node.same_as(nest):
                return new
        return None

    def post(node):  # the variables are names now: no allocation left
        if isinstance(node, tirx.SBlock) and any(b in scalars for b in node.alloc_buffers):
            return tirx.SBlock(node.iter_vars, node.reads, node.writes, node.name_hint, node.body, node.init,
                               [b for b in node.alloc_buffers if b not in scalars], node.match_buffers,
                               node.annotations)
        return None

    return func.with_body(tirx.stmt_functor.ir_transform(func.body, pre, post, ["tirx.For", "tirx.SBlock"]))


def NameParallelScalarsTT():
    return prim_func_pass(_transform, PASS)
