"""D3 LowerCBIntrinsics (late, reader/writer): abstract data movement → NOC/CB protocol.

Reads: ``tt.cb_desc`` (CB ids, block pages), ``tt.tensor_accessor`` (tile grid of each tensor),
``tt.tile_dfg`` (the writer drains a block's hand-off CB when it has one, a row-major tensor's
block moves through its staging CB), ``tt.layout_desc`` (how each tensor is stored),
``tt.multicast`` and the variables of its runtime arguments (``tt.runtime_args``).
Writes: no attribute. TIR of reader (writer mirrors it):

    Before: T.tt.read_to_cb(T.region(A[by * 64, k * 32], 1, 64, 32), T.region(A_s[0, 0], 2, 64, 32))
    After:  T.tt.cb_reserve_back(0, 2)
            l1_A_s: T.uint32 = T.tt.get_write_ptr(0)
            for r in range(2):
                T.tt.noc_async_read_page((by * 2 + r) * 4 + k, A.data, l1_A_s + r * 2048)
            T.tt.noc_async_read_barrier()
            T.tt.cb_push_back(0, 2)

Tile ids come from the access expressions: tile (row, col) of a region starting at (r0, c0) is
``(r0 / 32 + row) * Nt + c0 / 32 + col`` in the tensor's row-major tile grid (its matrix view: a
rank-1 tensor InferTTLayout laid out as a column is (n, 1), Nt = 1, its slices rows) when the slice
starts at a whole tile. Pages within the CB block are row-major. A block that may reach past the
tensor (its extent does not divide the shape: provable from the loop ranges) moves only the tiles
inside it: the reader guards each page with ``row < Mt`` / ``col < Nt`` and fills the pages outside
with zeros (``tt.noc_async_read_zeros``), the writer skips them. Consecutive plain
reads (no decision, no multicast) share one barrier: every CB reserved, every read issued, one
``noc_async_read_barrier``, every CB pushed (:func:`_batched`).
The writer writes the rows below ``tt.valid_rows`` only, and writes a block copied into several
tensors (``tt.multi_store``) from the same CB pages, popping them after the last copy only; the reader reads a block under
``tt.read_when`` when its condition holds, else fills it with zeros. The tensor elements such a
condition or a generated value reads are read first, each into the block's own CB pages
(:func:`~tilelang_tt.ir.elements.fetch_elements`); those of addresses FetchAddressElementsTT read before.

A generated block (``tt.generate_block``) is written element by element by the reader, each value at its
place in tile layout (:func:`~tilelang_tt.ops.generate.fill_generated`). The transfers of one slice (tiles,
rows of a row-major tensor, a column written an element per row) come from :mod:`tilelang_tt.ir.transfers`. A
multicast CB (``tt.multicast``) is read by the first core of its group only and multicast to the others
(:func:`~tilelang_tt.ir.multicast.multicast_block`); a kernel whose last multicast is flushed by no later read
ends with ``T.tt.noc_async_write_barrier()``.
A slice of a tensor in tiles that covers part of a tile whose other elements are the tensor's (it
starts inside a tile, or ends inside one short of its matrix's end) moves its face-row runs, at any
element offset (:mod:`tilelang_tt.ir.tile_runs`): the reader zero-fills the block, then reads each
run into the block's L1 tiles at its place in the block; the writer writes the runs alone.
Errors: a slice of part of a tile of a block floating point tensor; a row-major slice that is not one run
of strided rows of the block's shape; valid rows of a tensor of tiles; a copy from a tensor into a
block of another dtype; an element of a block floating point tensor; a column written per row into a
tensor stored as block floats.
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import arith, tirx

from tilelang_tt.contract.buffers import MemoryLayout
from tilelang_tt.contract.vocabulary import ArgKind, MulticastDesc
from tilelang_tt.ir.attrs import Attr, CBDesc, KernelRole, MultiStore, Scope
from tilelang_tt.ir.common import as_region, const_int, error, evaluate, keep_span, prim_func_pass, seq, stmt_intrin
from tilelang_tt.ir.dataflow import handoff_cbs, scratch_cb, staging_cbs
from tilelang_tt.ir.elements import fetch_elements, stored
from tilelang_tt.ir.intrin import Intrin, call, call_intrin
from tilelang_tt.ir.multicast import multicast_block, overlaps_multicast
from tilelang_tt.ir.slices import bound_analyzer, element_column
from tilelang_tt.ir.tensors import AccessorDesc
from tilelang_tt.ir.transfers import column_writes, part_of_block, row_transfers, tile_transfers
from tilelang_tt.ops.generate import fill_generated

PASS = "LowerCBIntrinsics"


def _lower(stmt, func, cbs: dict[str, CBDesc], accessors: dict[str, AccessorDesc], handoffs: dict,
           staging: tuple[dict, dict], analyzer: arith.Analyzer, multicast: dict[str, MulticastDesc],
           mcast_args: dict[str, dict[str, tirx.Var]], when=None, valid=None, parts: bool = False, pop: bool = True,
           scratch=None):
    """The protocol of one move; with ``parts`` (a plain read: no decision, no multicast) its parts
    (before the transfers, the transfers, after the barrier, after that) for :func:`_batched`; a write
    without ``pop`` leaves the block's pages in its CB (another copy of them follows); ``scratch``: the
    L1 address of the kernel's scratch CB, or None."""
    reading = stmt_intrin(stmt) == Intrin.READ_TO_CB  # either data-movement kernel may read (BalanceDataMovementTT)
    staged = staging[0] if reading else staging[1]
    tensor, block = (as_region(a) for a in stmt.value.args[:2])
    if not reading:
        tensor, block = block, tensor
    name = handoffs.get(block.buffer.name, block.buffer.name)
    cb = cbs[staged.get(name, name)]  # a row-major tensor's block moves through its staging CB
    acc = accessors[tensor.buffer.name]
    ptr = tirx.Var(f"l1_{cb.name}", "uint32")
    if acc.layout == MemoryLayout.ROW_MAJOR.value:
        transfers = row_transfers(PASS, stmt, func, cb, tensor, block, reading, analyzer, ptr, valid, scratch)
        pages = cb.block_pages
    elif element_column(func, tensor, cb.vector, reading):
        transfers = column_writes(PASS, stmt, func, cb, tensor, acc, analyzer, ptr, valid)
        pages = cb.block_pages
    else:
        if valid is not None:
            raise error(PASS, func, stmt, f"the writer writes some rows of a block into `{tensor.buffer.name}`, which "
                        f"is laid out in {acc.layout} tiles (a tile is written whole)",
                        f"leave `{tensor.buffer.name}` to the default layout (rows are chosen for it), or store "
                        "whole blocks")
        transfers, pages = tile_transfers(PASS, stmt, func, cb, tensor, acc, reading, analyzer, ptr, scratch,
                                          part=None if reading else part_of_block(cb, block))
    begin, end, barrier = ((Intrin.CB_RESERVE_BACK, Intrin.CB_PUSH_BACK, Intrin.NOC_READ_BARRIER) if reading else
                           (Intrin.CB_WAIT_FRONT, Intrin.CB_POP_FRONT, Intrin.NOC_WRITE_BARRIER))
    arrived = []  # after the barrier
    stored_as = stored(func, tensor.buffer).data_format  # a block float storage: the CB's too
    if reading and stored_as != cb.data_format:
        # a mask's bytes into a bfloat16 block (WidenMaskBlocksTT): widened in place
        if (stored_as, cb.data_format) != ("UInt8", "Float16_b"):
            raise error(PASS, func, stmt, f"T.copy of `{tensor.buffer.name}` ({tensor.buffer.dtype}) into "
                        f"`{block.buffer.name}` ({cb.data_format}): a copy from DRAM keeps the tensor's dtype",
                        "copy into a block of the tensor's dtype and cast on chip (T.copy between blocks)")
        arrived.append(evaluate(Intrin.WIDEN_BYTES, ptr, pages, like=stmt))
    ptr_intrin = Intrin.GET_WRITE_PTR if reading else Intrin.GET_READ_PTR
    drained = None if reading or not pop or parts else _drained_as_pushed(func, cb, transfers, pages, ptr, stmt)
    if drained is not None:
        return drained
    head = [evaluate(begin, cb.index, pages, like=stmt),
            keep_span(stmt, tirx.Bind(ptr, call(ptr_intrin, cb.index, dtype="uint32")))]
    tail = [evaluate(end, cb.index, pages, like=stmt)] if pop else []
    if parts:
        return head, transfers, arrived, tail
    moved = seq([transfers, evaluate(barrier, like=stmt), *arrived])
    if when is not None:  # a read the reader decides (tt.read_when): the tensor elements it reads, then zeros or the slice
        fetches, (when,) = fetch_elements(PASS, stmt, func, [when], accessors, analyzer, ptr)
        zeros = seq([evaluate(Intrin.NOC_READ_ZEROS, ptr, tirx.Cast("uint32", pages * cb.page_size), like=stmt),
                     evaluate(barrier, like=stmt)])
        moved = seq([*fetches, keep_span(stmt, tirx.IfThenElse(when, moved, zeros))])
    if reading and name in multicast:
        mc = multicast[name]
        overlapped = when is None and cb.num_pages >= 2 * pages
        if overlapped:  # the previous block's multicast leaves L1 while this block's pages arrive
            moved = seq([transfers, evaluate(Intrin.NOC_WRITES_FLUSHED, like=stmt), evaluate(barrier, like=stmt),
                         *arrived])
        moved = multicast_block(mc, mcast_args[mc.cb], ptr, pages * cb.page_size, moved, stmt, flush=not overlapped)
    return seq([*head, moved, *tail])


def _drained_as_pushed(func, cb: CBDesc, transfers, pages: int, ptr, like) -> tirx.Stmt | None:
    """The writer's drain of a block compute pushes a few pages at a time in the block's row order (``push_pages``:
    a gemm's sub-blocks, whole tile rows or a part of one), as ttnn's matmul writer drains each sub-block
    (reader_bmm_tile_layout_in1_sender_writer_padding.cpp): per push, wait for its pages, write them, wait for the
    writes, pop them; the writes of the first pages overlap compute's packing of the next. None where the block
    moves whole (no ``push_pages``, a block of column-major tiles, a slice of part of a tile)."""
    rows, cols = cb.block_tiles
    push = cb.push_pages
    if not push or pages != cb.block_pages or push >= pages or cb.name in Attr.COLUMN_MAJOR_BLOCKS.read(func):
        return None
    if (push % cols and cols % push) or (push % cols == 0 and rows % (push // cols)):
        return None
    if rows == 1 and isinstance(transfers, tirx.For) and const_int(transfers.extent) == cols:
        # one tile row: its loop over the row's tiles alone (the loop over one row folded away)
        transfers = tirx.For(tirx.Var("r", "int32"), 0, 1, tirx.ForKind.SERIAL, transfers)
    if not (isinstance(transfers, tirx.For) and const_int(transfers.extent) == rows):
        return None
    q, r, c = tirx.Var("q", "int32"), tirx.Var("r", "int32"), tirx.Var("c", "int32")
    if push % cols == 0:  # whole rows a push
        height = push // cols
        row_of = {transfers.loop_var: q * height + r} if height > 1 else {transfers.loop_var: q * height}
        moves = tirx.stmt_functor.substitute(transfers.body, row_of)
        if height > 1:
            moves = tirx.For(r, 0, height, tirx.ForKind.SERIAL, moves)
    else:  # a part of a row a push
        row = transfers.body
        if not (isinstance(row, tirx.For) and const_int(row.extent) == cols):
            return None
        per_row = cols // push
        moves = tirx.stmt_functor.substitute(row.body, {transfers.loop_var: tirx.FloorDiv(q, per_row),
                                                         row.loop_var: tirx.FloorMod(q, per_row) * push + c})
        moves = tirx.For(c, 0, push, tirx.ForKind.SERIAL, moves)
    step = seq([evaluate(Intrin.CB_WAIT_FRONT, cb.index, push, like=like), moves,
                evaluate(Intrin.NOC_WRITE_BARRIER, like=like), evaluate(Intrin.CB_POP_FRONT, cb.index, push, like=like)])
    # the block's pages lie from the read pointer on: its pushes do not wrap the FIFO (one or more whole blocks)
    return seq([keep_span(like, tirx.Bind(ptr, call(Intrin.GET_READ_PTR, cb.index, dtype="uint32"))),
                keep_span(like, tirx.For(q, 0, pages // push, tirx.ForKind.SERIAL, step))])


def _batched(reads: list[tuple]) -> tirx.Stmt:
    """Consecutive reads of one step (their :func:`_lower` parts) behind one barrier: reserve every
    CB, issue every read, wait once, push every CB (the reads overlap on the NOC; compute, which
    waits for each block in turn, sees them pushed together)."""
    heads, moves, arrived, tails = zip(*reads)
    like = moves[0]
    return seq([*(s for h in heads for s in h), *moves, evaluate(Intrin.NOC_READ_BARRIER, like=like),
                *(s for a in arrived for s in a), *(s for t in tails for s in t)])


def _scratch_ptr(func: tirx.PrimFunc, cbs: dict[str, CBDesc], role: KernelRole):
    """The variable holding the L1 address of the kernel's scratch CB (FetchAddressElementsTT reserved it
    and bound it at the kernel's start), or None for a kernel without one."""
    name = scratch_cb(func, role.value)
    if name is None:
        return None
    index = cbs[name].index
    found = []

    def visit(node):
        if isinstance(node, tirx.Bind) and call_intrin(node.value) == Intrin.GET_WRITE_PTR and \
                const_int(node.value.args[0]) == index:
            found.append(node.var)

    tirx.stmt_functor.post_order_visit(func.body, visit)
    return found[0] if found else None


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    role = Attr.KERNEL_ROLE.read(func)
    if role not in (KernelRole.READER, KernelRole.WRITER):
        return func
    cbs = Attr.CB_DESC.read(func)
    accessors = Attr.TENSOR_ACCESSOR.read(func)
    handoffs = handoff_cbs(func)
    tilized, untilized = staging_cbs(func)
    staging = (tilized, untilized)
    analyzer = bound_analyzer(func.body)
    multicast = Attr.MULTICAST.read(func)
    scratch = _scratch_ptr(func, cbs, role)
    mcast_args: dict[str, dict[str, tirx.Var]] = {}
    for arg in Attr.RUNTIME_ARGS.read(func):
        if arg.kind == ArgKind.MCAST:
            mcast_args.setdefault(arg.cb, {})[arg.what] = arg.var

    def batchable(node) -> bool:
        """A plain read (no decision, no multicast) that may share a barrier with its neighbours."""
        if stmt_intrin(node) != Intrin.READ_TO_CB:
            return False
        block = as_region(node.value.args[1]).buffer.name
        return handoffs.get(block, block) not in multicast

    def written(stmt, pop: bool = True):
        """A copy of a block into a tensor (under ``tt.valid_rows``: of its first rows)."""
        valid = None
        if isinstance(stmt, tirx.AttrStmt) and stmt.attr_key == Scope.VALID_ROWS.value:
            stmt, valid = stmt.body, stmt.value
        return _lower(stmt, func, cbs, accessors, handoffs, staging, analyzer, multicast, mcast_args, valid=valid,
                      pop=pop, scratch=scratch)

    def lowered(stmt):
        return tirx.stmt_functor.ir_transform(stmt, post, None, ["tirx.Evaluate", "tirx.AttrStmt", "tirx.SeqStmt"])

    def post(node):
        if isinstance(node, tirx.SeqStmt) and any(batchable(a) and batchable(b) for a, b in zip(node.seq, node.seq[1:])):
            out, group = [], []
            for child in [*node.seq, None]:
                if child is not None and batchable(child):
                    group.append(child)
                    continue
                if len(group) > 1:
                    out.append(_batched([_lower(g, func, cbs, accessors, handoffs, staging, analyzer, multicast,
                                                mcast_args, parts=True, scratch=scratch) for g in group]))
                else:
                    out += [lowered(g) for g in group]
                group = []
                if child is not None:
                    out.append(lowered(child))
            return seq(out)
        if isinstance(node, tirx.AttrStmt) and node.attr_key == Scope.READ_WHEN.value:
            return _lower(node.body, func, cbs, accessors, handoffs, staging, analyzer, multicast, mcast_args,
                          node.value, scratch=scratch)
        if isinstance(node, tirx.AttrStmt) and node.attr_key == Scope.MULTI_STORE.value:
            return written(node.body, pop=bool(int(node.value) & MultiStore.POPS))
        if isinstance(node, tirx.AttrStmt) and node.attr_key == Scope.VALID_ROWS.value:
            return written(node)
        if stmt_intrin(node) in (Intrin.READ_TO_CB, Intrin.WRITE_FROM_CB):
            return _lower(node, func, cbs, accessors, handoffs, staging, analyzer, multicast, mcast_args,
                          scratch=scratch)
        if stmt_intrin(node) == Intrin.GENERATE_BLOCK:
            return fill_generated(PASS, node, func, cbs, accessors, analyzer)
        return None

    body = lowered(func.body)
    if overlaps_multicast(body):  # the last multicast's data leaves L1 before the kernel ends
        body = seq([body, evaluate(Intrin.NOC_WRITE_BARRIER)])
    return func.with_body(body)


def LowerCBIntrinsics():
    return prim_func_pass(_transform, PASS)
