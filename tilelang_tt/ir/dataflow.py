"""Which kernel fills and reads each on-chip block: readers of ``tt.tile_dfg`` that several passes,
ops and codegen share, and the roles of TileLang's statements before the graph exists.

BuildTileDFGTT writes the graph (``Attr.TILE_DFG``: CB name -> :class:`DFGNode`: producer,
consumers, buffer, and for the CBs it makes itself why: the reduce scaler, the scratch CB of tensor
elements, a hand-off, a staging CB of rows); these functions answer the questions later passes ask
of it, so no pass imports another. :func:`block_access` tells, for a statement of TileLang's tile
ops and ``T.Parallel`` nests, which kernel would fill a block there (a ``T.copy`` from a tensor: the
reader; any other write: compute) and whether the writer copies it out (VersionOnChipBuffersTT
gives each value a block whose CB has one producer).
"""

from __future__ import annotations

import collections
from dataclasses import dataclass

import tilelang  # noqa: F401
from tvm import ir, tirx

from tilelang_tt.ir.attrs import Attr, KernelRole
from tilelang_tt.ir.common import READ, WRITE, as_region, is_global_buffer, parallel_nest, tile_op_name

SCALER_KIND = "scaler"
SCRATCH_KIND = "scratch"
VALUES_KIND = "values"  # a CB of 32-bit values (branch conditions) the reader hands to compute or the writer
VALUE_PAGE = 16  # bytes of a page of VALUES_KIND: one value, at the L1 alignment (contract/arch.py l1_alignment)
ELEMENT_CHUNK = 64  # bytes an element read moves: the aligned 64 holding it (NOC_DRAM_READ_ALIGNMENT_BYTES, Blackhole)
READER, WRITER, COMPUTE = KernelRole.READER.value, KernelRole.WRITER.value, KernelRole.COMPUTE.value
ROW_TAGS = ("blockIdx.z", "blockIdx.y")  # the launch tags of the block-row dimensions, outermost first
TILIZE_FROM, UNTILIZE_TO = "tilize_from", "untilize_to"  # the DFGNode fields naming a block's staging CB


def handoff_cbs(func: tirx.PrimFunc) -> dict[str, str]:
    """Block -> the hand-off CB the writer drains in its place (BuildTileDFGTT made them)."""
    return {cb: node.handoff for cb, node in Attr.TILE_DFG.read(func).items() if node.handoff}


def scratch_cb(func: tirx.PrimFunc, role: str) -> str | None:
    """The CB data-movement kernel ``role`` reads tensor elements into (BuildTileDFGTT made it), or None."""
    return next((cb for cb, node in Attr.TILE_DFG.read(func).items()
                 if node.kind == SCRATCH_KIND and node.producer == role), None)


def value_cbs(func: tirx.PrimFunc) -> dict[str, str]:
    """Kernel role -> the CB through which the reader hands it the values its branches decide on
    (BuildTileDFGTT made them; SplitDeviceKernel drops the one no kernel takes)."""
    return {node.consumers[0]: cb for cb, node in Attr.TILE_DFG.read(func).items() if node.kind == VALUES_KIND}


def scaler_cb(func: tirx.PrimFunc) -> str | None:
    """The name of the kernel's reduce scaler CB (BuildTileDFGTT made it), or None."""
    return next((cb for cb, node in Attr.TILE_DFG.read(func).items() if node.kind == SCALER_KIND), None)


def staging_cbs(func: tirx.PrimFunc) -> tuple[dict[str, str], dict[str, str]]:
    """(block -> the staging CB compute tilizes it from, block -> the staging CB compute untilizes
    it into): the blocks read from and written to row-major tensors (BuildTileDFGTT made them)."""
    dfg = Attr.TILE_DFG.read(func)
    return ({cb: node.tilize_from for cb, node in dfg.items() if node.tilize_from},
            {cb: node.untilize_to for cb, node in dfg.items() if node.untilize_to})


def movers(func: tirx.PrimFunc) -> dict[str, str]:
    """CB name -> the data-movement kernel (``"reader"`` or ``"writer"``) that reads tensors into it
    (BalanceDataMovementTT's choice); a block the graph does not list is the reader's."""
    out = collections.defaultdict(lambda: READER)
    out.update({cb: node.producer for cb, node in Attr.TILE_DFG.read(func).items()
                if node.producer in (READER, WRITER)})
    return out


@dataclass(frozen=True)
class BlockAccess:
    """What one statement of a block's sequence does to the block."""

    role: str | None = None  # READER or COMPUTE: who defines the block here (None: no definition)
    whole: bool = False  # defines every element, reading at most the old value (a new block can take it)
    fresh: bool = False  # defines every element and reads nothing of the block (a loop starting so carries nothing)
    writer: bool = False  # copies the block to a tensor


def region_buffer(arg) -> tirx.Buffer | None:
    """The buffer of a tile op's ``tl.region`` argument (whatever its extents), or None."""
    if isinstance(arg, tirx.Call) and isinstance(arg.op, ir.Op) and arg.op.name == "tl.region":
        return arg.args[0].buffer
    return arg.buffer if isinstance(arg, tirx.BufferLoad) else None


def _regions(stmt: tirx.Evaluate, buf: tirx.Buffer) -> list[tuple[object, int]]:
    """(region or None when its extents are not constants, access mask) of each ``tl.region``
    argument of tile op ``stmt`` on ``buf``."""
    return [(as_region(arg), int(arg.args[1])) for arg in stmt.value.args
            if isinstance(arg, tirx.Call) and (b := region_buffer(arg)) is not None and b.same_as(buf)]


def _shape(buf: tirx.Buffer) -> list[int | None]:
    return [int(d) if isinstance(d, tirx.IntImm) else None for d in buf.shape]


def _covers(region, buf: tirx.Buffer) -> bool:
    return region is not None and all(isinstance(s, tirx.IntImm) and int(s) == 0 for s in region.starts) and \
        list(region.extents) == _shape(buf)


def _tile_op_access(stmt: tirx.Evaluate, buf: tirx.Buffer) -> BlockAccess | None:
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
        src, dst = (region_buffer(a) for a in stmt.value.args[:2])
        if writes:
            role = READER if src is not None and is_global_buffer(src) else COMPUTE
            return BlockAccess(role, whole=whole, fresh=fresh)
        return BlockAccess(writer=dst is not None and is_global_buffer(dst))
    return BlockAccess(COMPUTE, whole=whole, fresh=fresh) if writes else BlockAccess()


def _nest_access(loop: tirx.For, buf: tirx.Buffer) -> BlockAccess | None:
    """The access of a ``T.Parallel`` nest of stores and named values: whole when its stores into
    ``buf`` index it by the nest's loop variables over its whole shape and nothing before the
    first store reads it."""
    loops, body = parallel_nest(loop)
    stmts = list(body.seq) if isinstance(body, tirx.SeqStmt) else [body]
    if not all(isinstance(s, (tirx.BufferStore, tirx.Bind)) for s in stmts):
        return None  # anything else in the nest: a nested statement
    if not any(uses_block(s, buf) for s in stmts):
        return None
    stores = [s for s in stmts if isinstance(s, tirx.BufferStore) and s.buffer.same_as(buf)]
    if not stores:
        return BlockAccess()
    first = stores[0]
    whole = ([int(lp.extent) if isinstance(lp.extent, tirx.IntImm) else -1 for lp in loops] == _shape(buf)
             and len(first.indices) == len(loops)
             and all(isinstance(ix, tirx.Var) and ix.same_as(lp.loop_var) for ix, lp in zip(first.indices, loops))
             and not any(uses_block(s, buf) for s in stmts[:stmts.index(first)]))
    return BlockAccess(COMPUTE, whole=whole, fresh=whole and not uses_block(tirx.Evaluate(first.value), buf))


def uses_block(node, buf: tirx.Buffer) -> bool:
    found = []
    tirx.stmt_functor.post_order_visit(node, lambda n: found.append(n) if isinstance(
        n, (tirx.BufferLoad, tirx.BufferStore)) and n.buffer.same_as(buf) else None)
    return bool(found)


def first_touch(stmt, buf: tirx.Buffer) -> BlockAccess | None:
    """The access of the first statement inside ``stmt``, in program order, that touches ``buf``
    (None: none does, or a branch decides it)."""
    if isinstance(stmt, tirx.SeqStmt):
        for s in stmt.seq:
            access = first_touch(s, buf)
            if access is not None or uses_block(s, buf):
                return access
        return None
    if isinstance(stmt, tirx.For) and stmt.kind == tirx.ForKind.PARALLEL:
        return _nest_access(stmt, buf)
    if isinstance(stmt, (tirx.For, tirx.AttrStmt)):
        return first_touch(stmt.body, buf)
    if isinstance(stmt, tirx.Evaluate) and tile_op_name(stmt) is not None:
        return _tile_op_access(stmt, buf)
    return None


def block_access(stmt, buf: tirx.Buffer) -> BlockAccess | None:
    """What statement ``stmt`` of the block's sequence does to ``buf`` (None: nothing)."""
    if not uses_block(stmt, buf):
        return None
    if isinstance(stmt, tirx.Evaluate) and tile_op_name(stmt) is not None:
        return _tile_op_access(stmt, buf) or BlockAccess()  # a use outside its regions: read
    if isinstance(stmt, tirx.For) and stmt.kind == tirx.ForKind.PARALLEL:
        access = _nest_access(stmt, buf)
        if access is not None:
            return access
    inner = _all_accesses(stmt, buf)
    roles = [a.role for a in inner if a.role]
    if not roles:
        return BlockAccess(writer=any(a.writer for a in inner))
    first = first_touch(stmt, buf)
    fresh = first is not None and first.fresh
    return BlockAccess(READER if READER in roles else COMPUTE, whole=fresh, fresh=fresh,
                   writer=any(a.writer for a in inner))


def _all_accesses(stmt, buf: tirx.Buffer) -> list[BlockAccess]:
    """The accesses of the tile ops and nests inside a compound statement."""
    out = []

    def visit(node):
        if isinstance(node, tirx.Evaluate) and tile_op_name(node) is not None:
            access = _tile_op_access(node, buf)
        elif isinstance(node, tirx.BufferStore) and node.buffer.same_as(buf):
            access = BlockAccess(COMPUTE)
        else:
            return
        if access is not None:
            out.append(access)

    tirx.stmt_functor.post_order_visit(stmt, visit)
    return out


def defines_before_reading(stmt, buf: tirx.Buffer) -> bool | None:
    """Whether every path through ``stmt`` defines the whole of ``buf``, reading none of it, before
    any read of it (True), some path reads its value on entry (False), or no statement touches it
    (None). A branch that leaves it untouched leaves the question to what follows; a loop is taken
    to run its body at least once."""
    if not uses_block(stmt, buf):
        return None
    if isinstance(stmt, tirx.SeqStmt):
        for s in stmt.seq:
            result = defines_before_reading(s, buf)
            if result is not None:
                return result
        return None
    if isinstance(stmt, tirx.IfThenElse):
        if uses_block(tirx.Evaluate(stmt.condition), buf):
            return False
        then = defines_before_reading(stmt.then_case, buf)
        other = None if stmt.else_case is None else defines_before_reading(stmt.else_case, buf)
        if then is False or other is False:
            return False
        return True if then and other else None
    if isinstance(stmt, (tirx.For, tirx.AttrStmt)) and not (
            isinstance(stmt, tirx.For) and stmt.kind == tirx.ForKind.PARALLEL):
        return defines_before_reading(stmt.body, buf)
    access = first_touch(stmt, buf)
    return access is not None and access.fresh
