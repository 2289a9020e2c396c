"""LegalizeGlobalAccessTT (first, before A1): element accesses of global tensors inside
``T.Parallel`` become the tile-level copies the pipeline works with.

TileLang kernels may index global tensors directly in a ``T.Parallel`` nest, the GPU way
(``C[by * bm + i, bx * bn + j] = A[by * bm + i, bx * bn + j] + 1``). Tenstorrent cores reach DRAM
only through the reader and writer kernels, so each such access is rewritten: every global slice
the nest reads is copied into a shared block before it (``T.copy(A[by * bm, bx * bn], A_s)``),
every global slice it writes is computed into a fragment and copied out after it. An access is
legalized when its last two indices are ``base + i`` and ``base + j`` of the nest's loop
variables (values named inside the loop substituted) and the other indices do not depend on them;
any other access is left for the later passes to report.
Reads/writes no attribute. Every new statement carries the span of the ``T.Parallel`` nest.

    Before: for i, j in T.Parallel(32, 32):
                C[by * 32 + i, bx * 32 + j] = A[by * 32 + i, bx * 32 + j] + T.float32(1)
    After:  T.copy(T.region(A[by * 32, bx * 32], 1, 32, 32), T.region(A_s[0, 0], 2, 32, 32))
            for i, j in T.Parallel(32, 32):
                C_l[i, j] = A_s[i, j] + T.float32(1)
            T.copy(T.region(C_l[0, 0], 1, 32, 32), T.region(C[by * 32, bx * 32], 2, 32, 32))
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import arith, ir, tirx

from tilelang_tt.passes.common import (
    is_global_buffer,
    keep_span,
    kernel_names,
    make_region,
    parallel_nest,
    prim_func_pass,
    rebuild_nest,
    seq,
    unique_name,
    uses_var,
)

PASS = "LegalizeGlobalAccessTT"
READ, WRITE = 1, 2  # tl.region access masks


def _copy(src, dst, like) -> tirx.Stmt:
    return keep_span(like, tirx.Evaluate(tirx.Call("handle", ir.Op.get("tl.tileop.copy"), [src, dst])))


class _Nest:
    """One T.Parallel nest over (i, j) and the blocks its global accesses become."""

    def __init__(self, loops: list[tirx.For], names: set[str]):
        self.vars = [lp.loop_var for lp in loops]
        self.extents = [int(lp.extent) for lp in loops]
        self.names = names  # buffer names taken (unique block names)
        self.analyzer = arith.Analyzer()
        self.blocks: dict[tuple, tirx.Buffer] = {}  # (global buffer, bases, role) -> block
        self.order: list[tuple] = []

    def bases(self, indices) -> tuple | None:
        """The slice start of an access whose last indices are base + i, base + j; else None."""
        n = len(self.vars)
        if len(indices) < n:
            return None
        lead, tail = list(indices[:-n]), list(indices[-n:])
        if any(uses_var(e, v) for e in lead for v in self.vars):
            return None
        out = []
        for index, var in zip(tail, self.vars):
            base = self.analyzer.simplify(index - var)
            if any(uses_var(base, v) for v in self.vars):
                return None
            out.append(base)
        return tuple(lead + out)

    def block(self, buf: tirx.Buffer, bases: tuple, role: str) -> tirx.Buffer:
        key = (buf, tuple(str(b) for b in bases), role)
        if key not in self.blocks:
            suffix = "_s" if role == "read" else "_l"
            name = unique_name(f"{buf.name}{suffix}", self.names)
            self.names.add(name)
            scope = "shared.dyn" if role == "read" else "local.fragment"
            self.blocks[key] = tirx.decl_buffer(self.extents, buf.dtype, name, scope=scope)
            self.order.append((key, buf, bases, role))
        return self.blocks[key]

    def rewrite_expr(self, expr):
        def post(node):
            if isinstance(node, tirx.BufferLoad) and is_global_buffer(node.buffer):
                bases = self.bases(node.indices)
                if bases is not None:
                    return tirx.BufferLoad(self.block(node.buffer, bases, "read"), self.vars)
            return None

        return tirx.stmt_functor.ir_transform(tirx.Evaluate(expr), None, post, ["tirx.BufferLoad"]).value


def _legalize(loop: tirx.For, names: set[str], allocated: list[tirx.Buffer]) -> tirx.Stmt | None:
    loops, body = parallel_nest(loop)
    nest = _Nest(loops, names)
    named, stmts = {}, []
    for s in list(body.seq) if isinstance(body, tirx.SeqStmt) else [body]:
        if isinstance(s, tirx.Bind):  # substituted into the stores below
            named[s.var] = tirx.stmt_functor.substitute(s.value, named)
            continue
        if not isinstance(s, tirx.BufferStore):
            return None
        value = nest.rewrite_expr(tirx.stmt_functor.substitute(s.value, named))
        target, indices = s.buffer, s.indices
        if is_global_buffer(s.buffer):
            bases = nest.bases([tirx.stmt_functor.substitute(e, named) for e in s.indices])
            if bases is None:
                return None
            target, indices = nest.block(s.buffer, bases, "write"), nest.vars
        stmts.append(keep_span(s, tirx.BufferStore(target, value, indices)))
    if not nest.order:
        return None
    new_body = rebuild_nest(loops, seq(stmts))
    before, after = [], []
    for (_, buf, bases, role) in nest.order:
        block = nest.blocks[(buf, tuple(str(b) for b in bases), role)]
        allocated.append(block)
        lead = len(buf.shape) - len(nest.vars)
        tensor = make_region(buf, bases, [1] * lead + nest.extents, READ if role == "read" else WRITE)
        zeros = [tirx.IntImm("int32", 0)] * len(nest.vars)
        if role == "read":
            before.append(_copy(tensor, make_region(block, zeros, nest.extents, WRITE), loop))
        else:
            after.append(_copy(make_region(block, zeros, nest.extents, READ), tensor, loop))
    return seq(before + [new_body] + after)


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    names = kernel_names(func)
    pending: list[tirx.Buffer] = []

    def visit(stmt):
        if isinstance(stmt, tirx.For) and stmt.kind == tirx.ForKind.PARALLEL:
            return _legalize(stmt, names, pending) or stmt
        if isinstance(stmt, tirx.SeqStmt):
            return seq([visit(s) for s in stmt.seq])
        if isinstance(stmt, tirx.For):
            return keep_span(stmt, tirx.For(stmt.loop_var, stmt.min, stmt.extent, stmt.kind, visit(stmt.body),
                                            stmt.thread_binding, stmt.annotations))
        if isinstance(stmt, tirx.AttrStmt):
            return keep_span(stmt, tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value, visit(stmt.body)))
        if isinstance(stmt, tirx.SBlockRealize):
            blk = stmt.block
            first = len(pending)
            body = visit(blk.body)
            allocs = list(blk.alloc_buffers)
            if len(pending) > first:  # the innermost block around the nest: the kernel's own
                allocs += pending[first:]
                del pending[first:]
            new_blk = tirx.SBlock(blk.iter_vars, blk.reads, blk.writes, blk.name_hint, body, blk.init, allocs,
                                  blk.match_buffers, blk.annotations)
            return keep_span(stmt, tirx.SBlockRealize(stmt.iter_values, stmt.predicate, new_blk))
        return stmt

    body = visit(func.body)
    return func if body.same_as(func.body) else func.with_body(body)


def LegalizeGlobalAccessTT():
    return prim_func_pass(_transform, PASS)
