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

from dataclasses import dataclass

import tilelang  # noqa: F401
from tvm import ir, tirx

from tilelang_tt.ir.common import (
    FRAGMENT_SCOPES,
    READ,
    WRITE,
    allocations,
    as_region,
    error,
    is_cb_buffer,
    is_global_buffer,
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
from tilelang_tt.ir.dataflow import READER

PASS = "VersionOnChipBuffersTT"
COMPUTE = "compute"


@dataclass(frozen=True)
class _Access:
    """What one statement of a block's sequence does to the block."""

    role: str | None = None  # READER or COMPUTE: who defines the block here (None: no definition)
    whole: bool = False  # defines every element, reading at most the old value: renamed, no copy first
    fresh: bool = False  # defines every element and reads nothing of the block (a loop starting so carries nothing)
    writer: bool = False  # copies the block to a tensor


def _region_buffer(arg) -> tirx.Buffer | None:
    """The buffer of a tile op's ``tl.region`` argument (whatever its extents), or None."""
    if isinstance(arg, tirx.Call) and isinstance(arg.op, ir.Op) and arg.op.name == "tl.region":
        return arg.args[0].buffer
    return arg.buffer if isinstance(arg, tirx.BufferLoad) else None


def _regions(stmt: tirx.Evaluate, buf: tirx.Buffer) -> list[tuple[object, int]]:
    """(region or None when its extents are not constants, access mask) of each ``tl.region``
    argument of tile op ``stmt`` on ``buf``."""
    return [(as_region(arg), int(arg.args[1])) for arg in stmt.value.args
            if isinstance(arg, tirx.Call) and (b := _region_buffer(arg)) is not None and b.same_as(buf)]


def _shape(buf: tirx.Buffer) -> list[int | None]:
    return [int(d) if isinstance(d, tirx.IntImm) else None for d in buf.shape]


def _covers(region, buf: tirx.Buffer) -> bool:
    return region is not None and all(isinstance(s, tirx.IntImm) and int(s) == 0 for s in region.starts) and \
        list(region.extents) == _shape(buf)


def _tile_op_access(stmt: tirx.Evaluate, buf: tirx.Buffer) -> _Access | None:
    """The access of tile op ``stmt`` to ``buf`` (None when it does not touch it)."""
    name = tile_op_name(stmt)
    regions = _regions(stmt, buf)
    if not regions:
        return None
    writes = [r for r, mask in regions if mask & WRITE]
    updates = any(mask & READ and mask & WRITE for _, mask in regions)  # a region it updates in place
    if name == "reduce" and writes and not bool(stmt.value.args[4]):  # clear=False: accumulates
        updates = True
    whole = bool(writes) and not updates and _covers(writes[0], buf)
    fresh = whole and not any(mask & READ for _, mask in regions)
    if name == "copy":
        src, dst = (_region_buffer(a) for a in stmt.value.args[:2])
        if writes:
            role = READER if src is not None and is_global_buffer(src) else COMPUTE
            return _Access(role, whole=whole, fresh=fresh)
        return _Access(writer=dst is not None and is_global_buffer(dst))
    return _Access(COMPUTE, whole=whole, fresh=fresh) if writes else _Access()


def _nest_access(loop: tirx.For, buf: tirx.Buffer) -> _Access | None:
    """The access of a ``T.Parallel`` nest of stores and named values: whole when its stores into
    ``buf`` index it by the nest's loop variables over its whole shape and nothing before the
    first store reads it."""
    loops, body = parallel_nest(loop)
    stmts = list(body.seq) if isinstance(body, tirx.SeqStmt) else [body]
    if not all(isinstance(s, (tirx.BufferStore, tirx.Bind)) for s in stmts):
        return None  # anything else in the nest: a nested statement
    if not any(_uses(s, buf) for s in stmts):
        return None
    stores = [s for s in stmts if isinstance(s, tirx.BufferStore) and s.buffer.same_as(buf)]
    if not stores:
        return _Access()
    first = stores[0]
    whole = ([int(lp.extent) if isinstance(lp.extent, tirx.IntImm) else -1 for lp in loops] == _shape(buf)
             and len(first.indices) == len(loops)
             and all(isinstance(ix, tirx.Var) and ix.same_as(lp.loop_var) for ix, lp in zip(first.indices, loops))
             and not any(_uses(s, buf) for s in stmts[:stmts.index(first)]))
    return _Access(COMPUTE, whole=whole, fresh=whole and not _uses(tirx.Evaluate(first.value), buf))


def _uses(node, buf: tirx.Buffer) -> bool:
    found = []
    tirx.stmt_functor.post_order_visit(node, lambda n: found.append(n) if isinstance(
        n, (tirx.BufferLoad, tirx.BufferStore)) and n.buffer.same_as(buf) else None)
    return bool(found)


def _first_touch(stmt, buf: tirx.Buffer) -> _Access | None:
    """The access of the first statement inside ``stmt``, in program order, that touches ``buf``
    (None: none does, or a branch decides it)."""
    if isinstance(stmt, tirx.SeqStmt):
        for s in stmt.seq:
            access = _first_touch(s, buf)
            if access is not None or _uses(s, buf):
                return access
        return None
    if isinstance(stmt, tirx.For) and stmt.kind == tirx.ForKind.PARALLEL:
        return _nest_access(stmt, buf)
    if isinstance(stmt, (tirx.For, tirx.AttrStmt)):
        return _first_touch(stmt.body, buf)
    if isinstance(stmt, tirx.Evaluate) and tile_op_name(stmt) is not None:
        return _tile_op_access(stmt, buf)
    return None


def _access(stmt, buf: tirx.Buffer) -> _Access | None:
    """What statement ``stmt`` of the block's sequence does to ``buf`` (None: nothing)."""
    if not _uses(stmt, buf):
        return None
    if isinstance(stmt, tirx.Evaluate) and tile_op_name(stmt) is not None:
        return _tile_op_access(stmt, buf) or _Access()  # a use outside its regions: read
    if isinstance(stmt, tirx.For) and stmt.kind == tirx.ForKind.PARALLEL:
        access = _nest_access(stmt, buf)
        if access is not None:
            return access
    inner = _all_accesses(stmt, buf)
    roles = [a.role for a in inner if a.role]
    if not roles:
        return _Access(writer=any(a.writer for a in inner))
    first = _first_touch(stmt, buf)
    fresh = first is not None and first.fresh
    return _Access(READER if READER in roles else COMPUTE, whole=fresh, fresh=fresh,
                   writer=any(a.writer for a in inner))


def _all_accesses(stmt, buf: tirx.Buffer) -> list[_Access]:
    """The accesses of the tile ops and nests inside a compound statement."""
    out = []

    def visit(node):
        if isinstance(node, tirx.Evaluate) and tile_op_name(node) is not None:
            access = _tile_op_access(node, buf)
        elif isinstance(node, tirx.BufferStore) and node.buffer.same_as(buf):
            access = _Access(COMPUTE)
        else:
            return
        if access is not None:
            out.append(access)

    tirx.stmt_functor.post_order_visit(stmt, visit)
    return out


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
                if isinstance(a, tirx.Call) and (b := _region_buffer(a)) is not None and b.same_as(buf) else a
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

    def sequence(self, stmts: list, buf: tirx.Buffer, live_out: bool) -> list:
        """``stmts`` (a sequence using ``buf`` for the block) with a new version at each definition
        the CB holding the reaching value cannot take: another kernel fills it, the writer has
        copied the value out, or the reader fills it again in the same sequence (its reads are
        batched: one CB would be reserved twice before either fill is pushed)."""
        accesses = [_access(s, buf) for s in stmts]
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
                first = _first_touch(body, buf)
                before = len(self.made)
                carried = live_out or not (first and first.fresh)
                new_body = seq(self.sequence(list(body.seq), buf, carried))
                if len(self.made) > before and carried:
                    raise error(PASS, self.func, stmt, f"the on-chip buffer `{self.buf.name}` takes a new value "
                                "inside the loop (another kernel fills it, or the writer copied the value before) "
                                "that is used after the loop or in its next iteration: one circular buffer takes "
                                "its values from one kernel, and a value made inside the loop cannot leave it",
                                f"update a T.alloc_fragment copy of `{self.buf.name}` in the loop instead, "
                                f"filled with T.copy({self.buf.name}, <fragment>) before it")
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
        new = seq(versioner.sequence(list(home.seq), buf, live_out=False))
        if versioner.made:
            versions[buf] = versioner.made
            body = tirx.stmt_functor.ir_transform(body, None, lambda n, h=home, r=new: r if n.same_as(h) else None,
                                                  ["tirx.SeqStmt"])
    if not versions:
        return func
    return func.with_body(_add_allocations(body, versions))


def VersionOnChipBuffersTT():
    return prim_func_pass(_transform, PASS)
