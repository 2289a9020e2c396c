"""VersionOnChipBuffersTT (front, after the blocks are final): an on-chip block with several roles
becomes one block per value.

TileLang lets one shared or fragment buffer hold several values in turn: a shared block the
reader fills, which compute then overwrites for the way out (``T.copy(x[..], x_s)``, ...,
``T.copy(x_f, x_s)``, ``T.copy(x_s, y[..])``), a block updated in place after the reader filled it
(``x_s[i, j] *= r[i]``), one block reused for two loads, a fragment copied to a tensor and then
updated and copied again. On Tenstorrent every block is a circular buffer with one producer and one
consumer (BuildTileDFGTT), so such a buffer cannot keep one CB. This pass versions the buffer by
definition, as SSA does: in the sequence of statements holding all its uses, each definition that
the dataflow cannot give the buffer's current CB -- a fill by the reader after any definition, a
compute definition after the reader's fill, any definition after the writer copied the value
out -- writes a new buffer (a new ``Buffer``, named ``<name>_v``, ``<name>_v1``... unique against
the kernel's names; a fragment when compute writes it, else of the buffer's scope), allocated
beside it, and every later use reads it. Compute definitions that follow compute definitions stay
in place (an accumulator, a fragment updated in place: one CB compute owns); a loop is one
statement of its sequence, so a loop-carried value (a K loop's C, a block filled each iteration)
is one version. Later passes give each version its CB (InferTTLayout sizes one per allocated
block, NumberCBsTT numbers them); no two versions share L1.

A definition is a tile op writing the buffer (``T.copy`` into it, ``T.fill``/``T.clear``,
``T.reduce_*`` out, ``T.gemm`` C), a ``T.Parallel`` nest storing into it, or a statement holding
such (a loop, a branch). One that writes the whole buffer reading at most its old value (a copy or
fill of the whole block, a reduction that clears, a nest storing every element, a loop whose first
use of the buffer writes all of it reading none of it) is renamed to the new version; any other (an
update: a gemm or a reduction accumulating, a part of the block, a branch, a loop updating it) first
copies the reaching version into the new one (``T.copy(x_s, x_s_v)``) and then updates that.

Reads: the TIR (tile ops, ``T.Parallel`` nests). Writes: the TIR only (no attribute).
Before: the body may use a block in several roles. After: each block is filled by one kernel
(the reader or compute), and the writer copies out a value no later statement overwrites.

    Before: T.copy(x[bx * 32, 0], x_s)              # the reader fills x_s
            T.copy(x_s, x_f)
            for i, j in T.Parallel(32, 256): x_f[i, j] = x_f[i, j] * r[i]
            T.copy(x_f, x_s)                        # compute overwrites it
            T.copy(x_s, y[bx * 32, 0])
    After:  x_s_v = T.sblock_alloc_buffer((32, 256), "bfloat16", scope="local.fragment")
            T.copy(x[bx * 32, 0], x_s)
            T.copy(x_s, x_f)
            for i, j in T.Parallel(32, 256): x_f[i, j] = x_f[i, j] * r[i]
            T.copy(x_f, x_s_v)
            T.copy(x_s_v, y[bx * 32, 0])
"""

from __future__ import annotations


import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.common import (
    FRAGMENT_SCOPES,
    WRITE,
    allocations,
    contains,
    error,
    is_cb_buffer,
    keep_span,
    kernel_names,
    parallel_nest,
    prim_func_pass,
    rebuild_nest,
    replace_buffers,
    seq,
    tile_copy,
    tile_op_name,
    unique_name,
)
from tilelang_tt.ir.dataflow import COMPUTE, READER, block_access, defines_before_reading, region_buffer

PASS = "VersionOnChipBuffersTT"


def _home(body, buf: tirx.Buffer) -> tirx.SeqStmt | None:
    """The innermost sequence holding every use of ``buf`` (None: at most one statement uses it)."""
    total = _count(body, buf)
    found = []

    def visit(node):
        if not found and isinstance(node, tirx.SeqStmt) and _count(node, buf) == total:
            found.append(node)

    tirx.stmt_functor.post_order_visit(body, visit)
    return found[0] if found else None


def _count(node, buf: tirx.Buffer) -> int:
    n = []
    tirx.stmt_functor.post_order_visit(node, lambda x: n.append(1) if isinstance(
        x, (tirx.BufferLoad, tirx.BufferStore)) and x.buffer.same_as(buf) else None)
    return len(n)


def _rename_nest(loop: tirx.For, buf: tirx.Buffer, old: tirx.Buffer, new: tirx.Buffer) -> tirx.Stmt:
    """A whole-defining nest: its stores into ``buf`` write ``new``; its loads read ``old`` up to
    and including the first store, ``new`` after it."""
    loops, body = parallel_nest(loop)
    stmts = list(body.seq) if isinstance(body, tirx.SeqStmt) else [body]
    out, stored = [], False
    for s in stmts:
        reads = {buf: new if stored else old}
        if isinstance(s, tirx.BufferStore) and s.buffer.same_as(buf):
            value = replace_buffers(tirx.Evaluate(s.value), reads).value
            out.append(keep_span(s, tirx.BufferStore(new, value, s.indices)))
            stored = True
        else:
            out.append(replace_buffers(s, reads))
    return rebuild_nest(loops, seq(out))


def _rename_def(stmt, buf: tirx.Buffer, old: tirx.Buffer, new: tirx.Buffer) -> tirx.Stmt:
    """Statement ``stmt``, a whole definition of ``buf``, writing ``new`` (reads of ``buf`` in it
    before the definition read ``old``)."""
    if isinstance(stmt, tirx.For) and stmt.kind == tirx.ForKind.PARALLEL:
        return _rename_nest(stmt, buf, old, new)
    if isinstance(stmt, tirx.Evaluate) and tile_op_name(stmt) is not None:  # reads the old value, writes the new
        args = [tirx.Call(a.dtype, a.op, [tirx.BufferLoad(new if int(a.args[1]) & WRITE else old, a.args[0].indices),
                                          *a.args[1:]])
                if isinstance(a, tirx.Call) and (b := region_buffer(a)) is not None and b.same_as(buf) else a
                for a in stmt.value.args]
        return keep_span(stmt, tirx.Evaluate(tirx.Call(stmt.value.dtype, stmt.value.op, args)))
    return replace_buffers(stmt, {buf: new})  # a loop defining it first


class _Versioner:
    """Versions one block: each definition its current CB cannot take writes a new buffer."""

    def __init__(self, func: tirx.PrimFunc, buf: tirx.Buffer, taken: set):
        self.func, self.buf, self.taken = func, buf, taken
        self.made: list[tirx.Buffer] = []

    def new_version(self, role: str) -> tirx.Buffer:
        name = unique_name(f"{self.buf.name}_v", self.taken)
        self.taken.add(name)
        scope = FRAGMENT_SCOPES[0] if role == COMPUTE else self.buf.scope()
        version = tirx.decl_buffer(self.buf.shape, self.buf.dtype, name, scope=scope, span=self.buf.span)
        self.made.append(version)
        return version

    def carried_error(self, loop) -> Exception:
        return error(PASS, self.func, loop, f"the on-chip buffer `{self.buf.name}` takes a new value inside the loop "
                     "(another kernel fills it, or the writer copied the value before) that is used after the loop "
                     "or in its next iteration: one circular buffer takes its values from one kernel, and a value "
                     "made inside the loop cannot leave it", f"update a T.alloc_fragment copy of `{self.buf.name}` "
                     f"in the loop instead, filled with T.copy({self.buf.name}, <fragment>) before it")

    def sequence(self, stmts: list, buf: tirx.Buffer, live_out: bool) -> list:
        """``stmts`` (a sequence using ``buf`` for the block) with a new version at each definition
        the CB holding the reaching value cannot take: another kernel fills it, the writer has
        copied the value out, or the reader fills it again in the same sequence (its reads are
        batched: one CB would be reserved twice before either fill is pushed)."""
        accesses = [block_access(s, buf) for s in stmts]
        current, role, given = buf, None, False  # the reaching version, its producer, copied out since
        out = []
        for k, (stmt, access) in enumerate(zip(stmts, accesses)):
            if access is None:
                out.append(stmt)
                continue
            compound = not _is_direct(stmt)
            new_role = access.role
            if new_role is not None and role is not None and (
                    given or new_role != role or (new_role == READER and not compound)):
                version = self.new_version(new_role)
                if access.whole:
                    stmt = _rename_def(stmt, buf, current, version)
                elif new_role == READER:
                    raise error(PASS, self.func, stmt, f"the reader fills part of the on-chip buffer `{self.buf.name}` "
                                "that holds another value here: one circular buffer takes values from one kernel, "
                                "whole", "copy the slice into a block of its own (T.alloc_shared) and combine the "
                                "two in a T.Parallel nest")
                else:  # an update: the new version starts as the reaching one
                    out.append(tile_copy(current, version, stmt))
                    stmt = replace_buffers(stmt, {buf: version})
                current, role, given = version, new_role, False
            else:
                if not current.same_as(buf):
                    stmt = replace_buffers(stmt, {buf: current})
                if new_role is not None and role is None:
                    role = new_role
            if compound:
                later = next((a for a in accesses[k + 1:] if a is not None), None)
                stmt = self.inner(stmt, current, live_out if later is None else not (later.role and later.fresh))
            given |= access.writer
            out.append(stmt)
        return out

    def inner(self, stmt, buf: tirx.Buffer, live_out: bool):
        """A loop (or scope) of the sequence, its body's sequence versioned the same way: versions
        made inside may not carry a value to the next iteration or past the loop."""
        if isinstance(stmt, (tirx.For, tirx.AttrStmt)):
            body = stmt.body
            if isinstance(body, tirx.SeqStmt):
                before = len(self.made)
                carried = live_out or not defines_before_reading(body, buf)
                new_body = seq(self.sequence(list(body.seq), buf, carried))
                if len(self.made) > before and carried:
                    raise self.carried_error(stmt)
            else:
                new_body = self.inner(body, buf, live_out)
            if new_body.same_as(stmt.body):
                return stmt
            if isinstance(stmt, tirx.For):
                return keep_span(stmt, tirx.For(stmt.loop_var, stmt.min, stmt.extent, stmt.kind, new_body,
                                                stmt.thread_binding, stmt.annotations))
            return keep_span(stmt, tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value, new_body))
        return stmt


def _is_direct(stmt) -> bool:
    """A tile op or a T.Parallel nest of stores: one definition, not a statement holding some."""
    return (isinstance(stmt, tirx.Evaluate) and tile_op_name(stmt) is not None) or (
        isinstance(stmt, tirx.For) and stmt.kind == tirx.ForKind.PARALLEL)


def _enclosing_loop(body, node) -> tirx.For | None:
    """The innermost serial loop around ``node`` (not the launches), or None."""
    loops = []

    def visit(n):
        if isinstance(n, tirx.For) and n.thread_binding is None and n.kind != tirx.ForKind.PARALLEL \
                and contains(n.body, lambda x: x.same_as(node)):
            loops.append(n)

    tirx.stmt_functor.post_order_visit(body, visit)
    return loops[0] if loops else None


def _add_allocations(body, versions: dict) -> tirx.Stmt:
    """Each block's versions allocated right after it."""
    def post(node):
        if isinstance(node, tirx.SBlock) and any(b in versions for b in node.alloc_buffers):
            allocs = [x for b in node.alloc_buffers for x in (b, *versions.get(b, ()))]
            return tirx.SBlock(node.iter_vars, node.reads, node.writes, node.name_hint, node.body, node.init,
                               allocs, node.match_buffers, node.annotations)
        return None

    return tirx.stmt_functor.ir_transform(body, None, post, ["tirx.SBlock"])


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    taken = kernel_names(func)
    body = func.body
    versions = {}
    for buf in (b for b in allocations(func) if is_cb_buffer(b)):
        home = _home(body, buf)
        if home is None:
            continue
        versioner = _Versioner(func, buf, taken)
        loop = _enclosing_loop(body, home)
        carried = loop is not None and not defines_before_reading(home, buf)  # the next iteration reads the last value
        new = seq(versioner.sequence(list(home.seq), buf, live_out=carried))
        if versioner.made and carried:
            raise versioner.carried_error(loop)
        if versioner.made:
            versions[buf] = versioner.made
            body = tirx.stmt_functor.ir_transform(body, None, lambda n, h=home, r=new: r if n.same_as(h) else None,
                                                  ["tirx.SeqStmt"])
    if not versions:
        return func
    return func.with_body(_add_allocations(body, versions))


def VersionOnChipBuffersTT():
    return prim_func_pass(_transform, PASS)
