"""PersistentToGridTT (first after UniqueBufferNamesTT): a persistent kernel's waves become blocks
of the grid.

A GPU persistent kernel launches one program per SM, ``T.Kernel(P) as pid``, and walks the output
tiles in waves: ``for w in T.serial(W)`` around a guarded body whose tile is a function of
``w * P + pid`` (``T.Persistent([Mb, Nb], P, pid)`` generates exactly that; the examples also
write it out). On Tenstorrent the work partition already gives each core a persistent loop over
its blocks, so the waves are unrolled into the grid: one block per (wave, program),
``T.Kernel(W * P) as t`` with ``w = t // P`` and ``pid = t % P``; the guard stays (a block whose
tile is past the output does nothing) and the partition checks that the blocks write disjoint tiles.

Recognized: a one-dimensional grid ``pid`` whose block body ends with a serial loop ``w`` of
constant extent whose body is a single ``if`` (the guard), the other statements before it being
allocations and named values (``by = (w * P + pid) // ...``). Anything else is left as it is.
Reads/writes no attribute.

    Before: for pid in T.thread_binding(8, "blockIdx.x"):
                by = (w * 8 + pid) % 2; bx = (w * 8 + pid) // 2
                for w in range(2):
                    if bx < 4: ...
    After:  for pid in T.thread_binding(16, "blockIdx.x"):
                by = pid % 2; bx = pid // 2
                if bx < 4: ...
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import arith, ir, tirx

from tilelang_tt.ir.common import const_int, keep_span, prim_func_pass, seq
from tilelang_tt.ir.slices import block_grid_loops

PASS = "PersistentToGridTT"


def _waves(body) -> tirx.For | None:
    """The wave loop ending a block body: serial, constant extent, its body named values and one
    ``if`` (the guard)."""
    stmts = list(body.seq) if isinstance(body, tirx.SeqStmt) else [body]
    last = stmts[-1]
    if not isinstance(last, tirx.For) or last.thread_binding is not None or last.kind != tirx.ForKind.SERIAL:
        return None
    if const_int(last.extent) is None or const_int(last.min) != 0 or not all(isinstance(s, tirx.Bind) for s in stmts[:-1]):
        return None
    inner = list(last.body.seq) if isinstance(last.body, tirx.SeqStmt) else [last.body]
    if not isinstance(inner[-1], tirx.IfThenElse) or inner[-1].else_case is not None or not all(
            isinstance(s, tirx.Bind) for s in inner[:-1]):
        return None
    return last


def _floor_division(analyzer: arith.Analyzer, e):
    """``e`` with C-style integer division and remainder of non-negative operands (what
    T.Persistent's tile walk uses) as TIR's floor forms, which the later analyses read as digits."""
    def post(node):
        if isinstance(node, (tirx.Div, tirx.Mod)) and node.dtype.startswith("int") and all(
                analyzer.can_prove(x >= 0) for x in (node.a, node.b)):
            return (tirx.FloorDiv if isinstance(node, tirx.Div) else tirx.FloorMod)(node.a, node.b)
        return None

    return tirx.stmt_functor.ir_transform(tirx.Evaluate(e), None, post, ["tirx.Div", "tirx.Mod"]).value


MAX_BLOCKS = 1 << 14  # guards are evaluated block by block up to this many blocks


def _prefix(analyzer: arith.Analyzer, condition, pid: tirx.Var, blocks: int) -> int | None:
    """n when ``condition`` holds for block ids 0 .. n - 1 (n >= 1) and no other, else None."""
    if blocks > MAX_BLOCKS:
        return None
    holds = []
    for b in range(blocks):
        value = analyzer.simplify(tirx.stmt_functor.substitute(condition, {pid: tirx.IntImm(pid.dtype, b)}))
        if const_int(value) is None:
            return None
        holds.append(bool(const_int(value)))
    n = holds.count(True)
    return n if n and all(holds[:n]) else None


class _Walk:
    """The block body's tile walk over block ids ``pid`` in [0, blocks): named values simplified,
    branches that always hold dropped."""

    def __init__(self, pid: tirx.Var, blocks: int, values: dict):
        self.analyzer = arith.Analyzer()
        self.analyzer.bind(pid, ir.Range.from_min_extent(0, blocks))
        self.renamed = dict(values)  # w and pid in terms of the new block id
        self.values: dict = {}  # named values -> theirs in terms of the block id (for the analysis)

    def value(self, e):
        e = _floor_division(self.analyzer, tirx.stmt_functor.substitute(e, self.renamed))
        return self.analyzer.simplify(e)

    def holds(self, cond) -> bool:
        return self.analyzer.can_prove(tirx.stmt_functor.substitute(self.value(cond), self.values))

    def bind(self, stmt: tirx.Bind) -> tirx.Bind:
        value = self.value(stmt.value)
        self.values[stmt.var] = tirx.stmt_functor.substitute(value, self.values)
        return keep_span(stmt, tirx.Bind(stmt.var, value))

    def body(self, stmt):
        def post(node):
            if isinstance(node, tirx.Bind):
                return self.bind(node)
            if isinstance(node, tirx.IfThenElse) and node.else_case is None and self.holds(node.condition):
                return node.then_case
            return None

        return tirx.stmt_functor.ir_transform(tirx.stmt_functor.substitute(stmt, self.renamed), None, post,
                                              ["tirx.Bind", "tirx.IfThenElse"])


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    loops = [lp for lp in block_grid_loops(func).values() if const_int(lp.extent) != 1]
    if len(loops) != 1 or const_int(loops[0].extent) is None:
        return func
    grid = loops[0]
    programs = const_int(grid.extent)
    found = []

    def find(node):
        if isinstance(node, tirx.SBlock) and node.name_hint == "tilelang_root" and (waves := _waves(node.body)):
            found.append((node, waves))

    tirx.stmt_functor.post_order_visit(func.body, find)
    if len(found) != 1:
        return func
    root, waves = found[0]
    pid, w = grid.loop_var, waves.loop_var
    blocks = programs * const_int(waves.extent)
    flat = {w: tirx.FloorDiv(pid, programs), pid: tirx.FloorMod(pid, programs)}
    outer = list(root.body.seq)[:-1] if isinstance(root.body, tirx.SeqStmt) else []
    inner = list(waves.body.seq) if isinstance(waves.body, tirx.SeqStmt) else [waves.body]
    guard = inner[-1]

    # the guard, in terms of the block id: when it holds exactly for the first blocks (the tiles),
    # their number is the grid's
    walk = _Walk(pid, blocks, flat)
    named = [walk.bind(s) for s in outer + inner[:-1]]
    condition = tirx.stmt_functor.substitute(walk.value(guard.condition), walk.values)
    tiles = _prefix(walk.analyzer, condition, pid, blocks)
    whole = tiles is not None
    if whole:
        blocks = tiles
        walk = _Walk(pid, blocks, flat)  # simplified again over the blocks that remain
        named = [walk.bind(s) for s in outer + inner[:-1]]
    then = walk.body(guard.then_case)
    body = seq(named + [then if whole else keep_span(guard, tirx.IfThenElse(walk.value(guard.condition), then, None))])

    def unroll(node):
        if isinstance(node, tirx.SBlockRealize) and node.block.same_as(root):
            blk = node.block
            new = tirx.SBlock(blk.iter_vars, blk.reads, blk.writes, blk.name_hint, body, blk.init,
                              blk.alloc_buffers, blk.match_buffers, blk.annotations)
            return keep_span(node, tirx.SBlockRealize(node.iter_values, node.predicate, new))
        return None

    def widen(node):
        if isinstance(node, tirx.For) and node.thread_binding is not None and node.loop_var.same_as(pid):
            extent = tirx.IntImm(node.extent.dtype, blocks)
            iv = node.thread_binding
            binding = tirx.IterVar(None if iv.dom is None else ir.Range(0, extent), iv.var, iv.iter_type, iv.thread_tag)
            return keep_span(node, tirx.For(node.loop_var, node.min, extent, node.kind, node.body, binding,
                                            node.annotations))
        return None

    new = tirx.stmt_functor.ir_transform(func.body, None, unroll, ["tirx.SBlockRealize"])
    return func.with_body(tirx.stmt_functor.ir_transform(new, None, widen, ["tirx.For"]))


def PersistentToGridTT():
    return prim_func_pass(_transform, PASS)
