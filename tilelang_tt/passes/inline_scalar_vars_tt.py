"""InlineScalarVarsTT (after UniqueBufferNamesTT): a scalar variable set in straight-line code is
its value where it is read.

TileLang kernels name per-block scalars with ``T.alloc_var``: ``lg = T.alloc_var(T.float32); lg =
T.log2(1 - T.exp2(-5.0 - head))`` (the retention example's per-head decay), or a group index found
by scanning a tensor of offsets (the grouped GEMM: ``g = 0; for i in range(n): g =
T.if_then_else(row >= offsets[i], i, g)``). A Tenstorrent kernel has no scalar registers shared by
its reader, compute and writer: the value is substituted where it is read, so its parts become what
the reader generates or compute evaluates per tile, or the reader and writer compute from the block
coordinates and tensor elements (``B[g, ..]``, ``A[offsets[g] + .., ..]``) like any address.
Inlined: a ``local.var`` buffer of one element whose stores are straight-line code of the block
(outside loops, or in a loop of constant trip count that only sets such variables and names values,
which is unrolled), with values reading only block coordinates, such variables and elements of
tensors the kernel does not write (a value combining several threads', a warp reduction, is none).
Each read takes the value of the last store before it; a value reading tensor elements is named
where it is stored (a ``Bind`` of a new variable, so the reader and writer read the elements once
per block) and read as that name. Other scalar variables are left as
they are (the later passes name them). Reads/writes no attribute.

    Before: lg = T.sblock_alloc_buffer((1,), scope="local.var")
            lg[0] = T.log2(1 - T.exp2(-5.0 - T.Cast("float32", head)))
            for t, d in T.Parallel(64, 64): out[t, d] = T.exp2(T.Cast("float32", t + 1) * lg[0]) * out[t, d]
    After:  for t, d in T.Parallel(64, 64):
                out[t, d] = T.exp2(T.Cast("float32", t + 1) * T.log2(1 - T.exp2(-5.0 - ...))) * out[t, d]

    Before: g[0] = 0
            for i in range(2): reached: T.bool = bx * 64 >= offsets[i]; g[0] = T.if_then_else(reached, i, g[0])
            T.copy(B[g[0], 0, 0], b_blk)
    After:  g1: T.int32 = T.if_then_else(bx * 64 >= offsets[0], 0, 0)
            g2: T.int32 = T.if_then_else(bx * 64 >= offsets[1], 1, g1)
            T.copy(B[g2, 0, 0], b_blk)
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import ir, tirx

from tilelang_tt.ir.common import (
    WRITE,
    as_region,
    const_int,
    contains,
    is_global_buffer,
    keep_span,
    kernel_names,
    prim_func_pass,
    reads_tensor,
    seq,
    tile_op_name,
    unique_name,
)
from tilelang_tt.ir.lanes import exchanges_lanes

PASS = "InlineScalarVarsTT"
MAX_UNROLL = 64  # iterations of a scalar loop unrolled into the values it sets


def _is_var(buf: tirx.Buffer) -> bool:
    return buf.scope() == "local.var" and [int(d) for d in buf.shape] == [1]


def _scalar_loop(node) -> bool:
    """A loop of constant trip count that only names values and sets scalar variables."""
    if not isinstance(node, tirx.For) or node.thread_binding is not None or node.kind == tirx.ForKind.PARALLEL:
        return False
    extent, start = const_int(node.extent), const_int(node.min)
    if extent is None or start is None or extent > MAX_UNROLL:
        return False
    body = list(node.body.seq) if isinstance(node.body, tirx.SeqStmt) else [node.body]
    return all(isinstance(s, tirx.Bind) or (isinstance(s, tirx.BufferStore) and _is_var(s.buffer)) for s in body)


def _written_globals(func: tirx.PrimFunc) -> set:
    """The tensors the kernel writes: stores, and regions tile ops write."""
    out = set()

    def visit(node):
        if isinstance(node, tirx.BufferStore) and is_global_buffer(node.buffer):
            out.add(node.buffer)
        elif isinstance(node, tirx.Call) and isinstance(node.op, ir.Op) and node.op.name == "tl.region" \
                and int(node.args[1]) & WRITE:
            out.add(node.args[0].buffer)

    tirx.stmt_functor.post_order_visit(func.body, visit)
    return out


def _carried(body) -> set:
    """The scalar variables whose value may pass from one iteration of a loop that is not unrolled to
    the next, or out of it: read in such a loop before its body stores them (a running sum over tile
    work), or after the loop before a new store; also those stored in a ``T.Parallel`` nest or under an
    ``if`` in such a loop. A
    variable the body of such a loop stores before reading it in the same iteration (``w = T.exp2(
    lse[sp] - total)`` then a nest reading ``w``) holds one value per iteration: its value where read."""
    carried: set = set()
    last: dict = {}  # variable -> the loops (not unrolled) around its last store; None once one ended

    def check(node, loops) -> None:
        def visit(n):
            if isinstance(n, tirx.BufferLoad) and _is_var(n.buffer) and (
                    last.get(n.buffer) is None or any(lp not in last[n.buffer] for lp in loops
                                                      if n.buffer in stored_in.get(lp, ()))):
                carried.add(n.buffer)
        tirx.stmt_functor.post_order_visit(node, visit)

    stored_in: dict = {}  # loop (not unrolled) -> the variables its body stores

    def collect(node):
        if isinstance(node, tirx.For) and node.thread_binding is None and not _scalar_loop(node):
            found = set()
            tirx.stmt_functor.post_order_visit(node.body, lambda n: found.add(n.buffer) if isinstance(
                n, tirx.BufferStore) and _is_var(n.buffer) else None)
            stored_in[node] = found
            if node.kind == tirx.ForKind.PARALLEL:
                carried.update(found)

    tirx.stmt_functor.post_order_visit(body, collect)

    def walk(node, loops: tuple) -> None:
        if isinstance(node, tirx.SeqStmt):
            for s in node.seq:
                walk(s, loops)
        elif isinstance(node, tirx.For):
            check(tirx.Evaluate(node.extent), loops)
            inner = (*loops, node) if node in stored_in else loops
            walk(node.body, inner)
            for buf, around in last.items():
                if around is not None and node in around:
                    last[buf] = None
        elif isinstance(node, tirx.BufferStore) and _is_var(node.buffer):
            check(tirx.Evaluate(node.value), loops)
            last[node.buffer] = loops
        elif isinstance(node, tirx.IfThenElse):
            check(tirx.Evaluate(node.condition), loops)
            if loops:  # stored on a condition in a loop: an iteration may keep the previous one's value
                tirx.stmt_functor.post_order_visit(node, lambda n: carried.add(n.buffer) if isinstance(
                    n, tirx.BufferStore) and _is_var(n.buffer) else None)
            walk(node.then_case, loops)
            if node.else_case is not None:
                walk(node.else_case, loops)
        elif isinstance(node, tirx.SBlockRealize):
            walk(node.block.body, loops)
        elif isinstance(node, (tirx.AttrStmt, tirx.SBlock)):
            if isinstance(node, tirx.AttrStmt):
                check(tirx.Evaluate(node.value), loops)
            walk(node.body, loops)
        else:
            check(node, loops)

    walk(body, ())
    return carried


def _inlinable(func: tirx.PrimFunc) -> set:
    """The scalar variables whose every store is straight-line and reads only what may be inlined."""
    stores: dict = {}
    tirx.stmt_functor.post_order_visit(func.body, lambda n: stores.setdefault(n.buffer, []).append(n) if isinstance(
        n, tirx.BufferStore) and _is_var(n.buffer) else None)
    written = _written_globals(func)
    candidates = {buf for buf in stores if buf not in _carried(func.body)}

    def readable(node) -> bool:
        if isinstance(node, tirx.Call) and exchanges_lanes(node):  # combines several threads' values (a warp reduction): no block's value
            return False
        if not isinstance(node, tirx.BufferLoad):
            return True
        return node.buffer in candidates or (is_global_buffer(node.buffer) and node.buffer not in written)

    changed = True
    while changed:  # a variable reading one that is not inlined is not inlined either
        changed = False
        for buf in list(candidates):
            if any(contains(s.value, lambda n: not readable(n)) for s in stores[buf]):
                candidates.discard(buf)
                changed = True
    return candidates


class _Inliner:
    """Walks the body in program order, each variable's current value in ``values``; a value that
    reads tensor elements is named where it is stored (``binds``, emitted there), so the kernels read
    the elements once."""

    def __init__(self, scalars: set, taken: set):
        self.scalars = scalars
        self.taken = taken
        self.values: dict = {}
        self.binds: list = []

    def value_of(self, expr, names=None):
        """``expr`` with the variables' current values (and ``names``: Var -> value) substituted."""
        def load(node):
            if isinstance(node, tirx.BufferLoad) and node.buffer in self.values:
                return self.values[node.buffer]
            return None

        expr = tirx.stmt_functor.substitute(expr, names) if names else expr
        return tirx.stmt_functor.ir_transform(tirx.Evaluate(expr), None, load, ["tirx.BufferLoad"]).value

    def store(self, store: tirx.BufferStore, names=None) -> None:
        value = self.value_of(store.value, names)
        if reads_tensor(value):
            name = unique_name(store.buffer.name, self.taken)
            self.taken.add(name)
            var = tirx.Var(name, store.buffer.dtype)
            self.binds.append(keep_span(store, tirx.Bind(var, value)))
            value = var
        self.values[store.buffer] = value

    def named(self) -> tirx.Stmt:
        """The values named since the last call, in order."""
        out, self.binds = self.binds, []
        return seq(out) if out else tirx.Evaluate(0)

    def unroll(self, loop: tirx.For) -> None:
        body = list(loop.body.seq) if isinstance(loop.body, tirx.SeqStmt) else [loop.body]
        for k in range(const_int(loop.min), const_int(loop.min) + const_int(loop.extent)):
            names = {loop.loop_var: tirx.const(k, loop.loop_var.dtype)}
            for s in body:
                if isinstance(s, tirx.Bind):
                    names[s.var] = self.value_of(s.value, names)
                else:
                    self.store(s, names)

    def stmt(self, stmt: tirx.Stmt) -> tirx.Stmt:
        def pre(node):
            if isinstance(node, tirx.SeqStmt):
                return seq([self.stmt(s) for s in node.seq])
            if isinstance(node, tirx.BufferStore) and node.buffer in self.scalars:
                self.store(node)
                return self.named()
            if _scalar_loop(node) and contains(node, lambda n: isinstance(n, tirx.BufferStore) and n.buffer in
                                               self.scalars):
                self.unroll(node)
                return self.named()
            return None

        def post(node):
            if isinstance(node, tirx.BufferLoad) and node.buffer in self.values:
                return self.values[node.buffer]
            if isinstance(node, tirx.SBlock) and any(b in self.scalars for b in node.alloc_buffers):
                return tirx.SBlock(node.iter_vars, node.reads, node.writes, node.name_hint, node.body, node.init,
                                   [b for b in node.alloc_buffers if b not in self.scalars], node.match_buffers,
                                   node.annotations)
            return None

        return tirx.stmt_functor.ir_transform(stmt, pre, post, ["tirx.SeqStmt", "tirx.BufferStore", "tirx.For",
                                                                "tirx.BufferLoad", "tirx.SBlock"])


def _fills_as_stores(func: tirx.PrimFunc) -> tirx.PrimFunc:
    """``func`` with each ``T.fill`` / ``T.clear`` of a scalar variable (``T.clear(total)`` of a
    ``total = T.alloc_var(T.float32)``) written as the store it is, ``total[0] = 0``."""
    def post(node):
        if tile_op_name(node) != "fill":
            return None
        region = as_region(node.value.args[0])
        if region is None or not _is_var(region.buffer):
            return None
        value = node.value.args[1]
        value = value if value.dtype == region.buffer.dtype else tirx.Cast(region.buffer.dtype, value)
        return keep_span(node, tirx.BufferStore(region.buffer, value, [tirx.IntImm("int32", 0)]))

    body = tirx.stmt_functor.ir_transform(func.body, None, post, ["tirx.Evaluate"])
    return func if body.same_as(func.body) else func.with_body(body)


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    func = _fills_as_stores(func)
    scalars = _inlinable(func)
    if not scalars:
        return func
    return func.with_body(_Inliner(scalars, kernel_names(func)).stmt(func.body))


def InlineScalarVarsTT():
    return prim_func_pass(_transform, PASS)
