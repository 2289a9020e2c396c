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

A generated block (``tt.generate_block``) is written element by element by the reader, each value
at its place in tile layout (``tt.store_tile_element``, bfloat16 rounded to nearest even):

    T.tt.cb_reserve_back(2, 4); l1_acc_s_gen = T.tt.get_write_ptr(2)
    for i, j in grid(64, 64):
        T.tt.store_tile_element(l1_acc_s_gen, i, j, 2, T.if_then_else(bx * 64 + i >= k * 64 + j, 0, -inf), "Float32")
    T.tt.cb_push_back(2, 4)

A vector generated from a tensor read at the element's index (``s[i] = S[by * 32 + i, k]``: a column of
``S``, the per-row scales of a K step) reads that element per element, inside the loop, into a face of
its first tile the vector leaves empty (face 1 of a column, face 2 of a row): the 64 bytes of the tile
page holding it, 64-byte aligned at both ends as any element read (ir/elements.py).

A column vector block written into one column of a tensor of more columns in tiles (``S[by * 32:by *
32 + 32, bx]``, ``ir.slices.element_column``: per-row scales) is written an element per row, from face 1
of its first tile, at the address matching the destination's modulo 32 elements (:func:`_column_writes`):

    for r in range(32):
        S_element = T.tt.load_element(l1_S_l, r // 16 * 512 + r % 16 * 16, "Float32")
        T.tt.store_tile_element(l1_S_l + 1024, <place % 32> // 16, <place % 32> % 16, 1, S_element, "Float32")
        T.tt.noc_async_write_row(by + r // 32, S.data, <place> * 4, l1_S_l + 1024 + <place % 32> * 4, 4)
        T.tt.noc_async_writes_flushed()

A multicast CB (``tt.multicast``) is read by the first core of its group only and multicast to
the others (tt-metal's ``matmul_multicore_reuse_mcast`` handshake, see :func:`_multicast`):

    T.tt.cb_reserve_back(0, 2); l1_A_s = T.tt.get_write_ptr(0)
    if A_s_mcast_sender != 0:
        (page reads); T.tt.noc_async_writes_flushed(); T.tt.noc_async_read_barrier()
        T.tt.noc_semaphore_wait(0, A_s_mcast_receivers); T.tt.noc_semaphore_set(0, 0)
        T.tt.noc_async_write_multicast(l1_A_s, <rect>, 4096, A_s_mcast_receivers)
        T.tt.noc_semaphore_set(1, 1); T.tt.noc_semaphore_set_multicast(1, <rect>, A_s_mcast_receivers)
    else:
        T.tt.noc_semaphore_set(1, 0); T.tt.noc_semaphore_inc(A_s_mcast_sender_x, A_s_mcast_sender_y, 0, 1)
        T.tt.noc_semaphore_wait(1, 1)
    T.tt.cb_push_back(0, 2)
    ...
    T.tt.noc_async_write_barrier()   (the kernel's end: the last multicast has left L1)
The flush of a block's multicast waits in the next block's read (its CB holds two blocks: the reads go into
the other slot); a CB of one block flushes right after the multicast instead, and the kernel has no barrier.
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

import functools

import tilelang  # noqa: F401
from tvm import arith, tirx

from tilelang_tt.contract.formats import BY_DATA_FORMAT, DATA_FORMATS
from tilelang_tt.contract.formula import ceildiv
from tilelang_tt.contract.vocabulary import ArgKind, MulticastDesc
from tilelang_tt.ir.attrs import Attr, CBDesc, KernelRole, MultiStore, Scope
from tilelang_tt.ir.intrin import Intrin, call, call_intrin
from tilelang_tt.contract.buffers import MemoryLayout
from tilelang_tt.ir.tensors import AccessorDesc
from tilelang_tt.ir.dataflow import handoff_cbs, scratch_cb, staging_cbs
from tilelang_tt.ir.elements import fetch_elements, stored
from tilelang_tt.ir.common import (
    COL,
    ROW,
    TILE,
    as_region,
    const_int,
    dynamic_dims,
    error,
    evaluate,
    expr_of,
    keep_span,
    prim_func_pass,
    seq,
    stmt_intrin,
    tensor_loads,
    uses_var,
)
from tilelang_tt.ir.tile_runs import (
    SCRATCH,
    aligned,
    columns_of,
    is_partial,
    no_scratch,
    run_transfers,
    staged_move,
)
from tilelang_tt.ir.slices import (
    bound_analyzer,
    element_column,
    matrix_extents,
    matrix_slice,
    overhanging_axes,
    row_slice,
    vector_layout,
)

PASS = "LowerCBIntrinsics"


def _multicast(mc: MulticastDesc, args: dict[str, tirx.Var], ptr, nbytes: int, read, like,
               flush: bool = True) -> tirx.Stmt:
    """The sender reads the block and multicasts it to its group; the others receive it.

    The sender waits until every receiver has reserved its CB slot (they increment its sender
    semaphore), multicasts the block into the same L1 address of the others of the group (its own
    slot already holds it: no loopback), linked to the multicast that then sets every receiver
    semaphore to VALID the same way (the NOC delivers it after the data on the path the block
    reserved, as ttnn's matmul senders rely on), and, with ``flush``, waits until the
    block has left its L1 (flushed: the slot is reused once compute pops it; no write barrier). Without it
    (a CB of two blocks or more: ``read`` flushes the previous block's multicast between issuing its
    reads and their barrier, as the slot it reads into is not that block's) the multicast leaves L1 while
    the next block arrives from DRAM, as ttnn's in0/in1 senders on Wormhole do not flush at all
    (reader_bmm_tile_layout_in0_sender_padding.cpp); the kernel then ends with a write barrier. A receiver
    marks its semaphore INVALID, signals the sender and waits for VALID. ``args``: the variables
    of the CB's multicast runtime arguments (FinalizePersistentSignatureTT), by ``what``."""
    arg = args.__getitem__

    rect = [arg(w) for w in ("start_x", "start_y", "end_x", "end_y")]
    send = seq([
        read,
        evaluate(Intrin.SEM_WAIT, mc.sender_semaphore, arg("receivers"), like=like),
        evaluate(Intrin.SEM_SET, mc.sender_semaphore, 0, like=like),
        evaluate(Intrin.MCAST_WRITE, ptr, *rect, nbytes, arg("receivers"), like=like),
        evaluate(Intrin.SEM_SET, mc.receiver_semaphore, 1, like=like),
        evaluate(Intrin.SEM_SET_MCAST, mc.receiver_semaphore, *rect, arg("receivers"), like=like),
        *([evaluate(Intrin.NOC_WRITES_FLUSHED, like=like)] if flush else []),
    ])
    receive = seq([
        evaluate(Intrin.SEM_SET, mc.receiver_semaphore, 0, like=like),
        evaluate(Intrin.SEM_INC, arg("sender_x"), arg("sender_y"), mc.sender_semaphore, 1, like=like),
        evaluate(Intrin.SEM_WAIT, mc.receiver_semaphore, 1, like=like),
    ])
    return keep_span(like, tirx.IfThenElse(tirx.NE(arg("sender"), tirx.const(0, "uint32")), send, receive))


def _row_transfers(stmt, func, cb: CBDesc, tensor, block, reading: bool, analyzer: arith.Analyzer, ptr,
                   valid=None, scratch=None) -> tirx.Stmt:
    """A block of a row-major tensor moves row by row: the reader reads each row of the slice (a
    part of one page) into the block's staging CB, one block row after the other (compute tilizes
    them), the writer writes them from it (compute untilized them); rows and columns past the
    tensor's end are zeros on the way in and dropped on the way out, and so are the rows from
    ``valid`` on (``tt.valid_rows``; of a rank-1 tensor, its one row: the elements from ``valid``
    on). A slice smaller than the block (a block padded to whole tiles, PadBlocksTT) fills its valid
    rows and columns: the reader zero-fills the rest of the block. A slice may start at any row and
    column: each row is one run of a page's bytes, moved through the kernel's scratch at ``scratch``, in
    pieces, where its offsets in the page and in the block differ modulo the DRAM alignment
    (:func:`~tilelang_tt.ir.tile_runs.staged_move`)."""
    view = row_slice(tensor)
    name = tensor.buffer.name
    if view is None:
        raise error(PASS, func, stmt, f"the slice of the row-major tensor `{name}` takes rows along several dimensions",
                    "slice one leading dimension (the rows) and the last one (the columns); index the others")
    width, height = cb.block_tiles[1] * TILE, cb.block_tiles[0] * TILE
    if view.cols > width or view.rows > height:
        raise error(PASS, func, stmt, f"the slice of the row-major tensor `{name}` is {view.rows}x{view.cols}, the "
                                      f"block `{block.buffer.name}` {height}x{width}",
                    "copy slices of the block's shape to and from row-major tensors")
    elem = DATA_FORMATS[str(tensor.buffer.dtype)][1]
    r = tirx.Var("r", "int32")
    at = ptr + tirx.Cast("uint32", r * (width * elem))
    rows_past, cols_past = overhanging_axes(tensor, analyzer, row_major=True)
    row_bytes = view.cols * elem
    if cols_past:  # the row ends inside the slice
        row_bytes = tirx.Cast("uint32", analyzer.simplify(tirx.Min(tensor.buffer.shape[-1] - view.col, view.cols) * elem))
    tail = None  # the columns of the block past the tensor's end or the slice's
    if cols_past or view.cols < width:
        tail = evaluate(Intrin.NOC_READ_ZEROS, at + row_bytes, tirx.Cast("uint32", width * elem) - row_bytes, like=stmt)
    alignment = Attr.ARCH.read(func).dram_alignment
    page, offset = analyzer.simplify(view.page + r * view.stride), analyzer.simplify(view.col * elem)
    count = view.cols  # the row's elements inside the tensor
    if cols_past:
        count = analyzer.simplify(tirx.Min(tensor.buffer.shape[-1] - view.col, view.cols))

    def run(nbytes, elements, page=page):
        """The move of the row's first ``elements`` (``nbytes``, as the transfer takes them) of ``page``."""
        if aligned(offset, r * (width * elem), alignment, analyzer):
            return evaluate(Intrin.NOC_READ_ROW if reading else Intrin.NOC_WRITE_ROW, page, tensor.buffer.data,
                            tirx.Cast("uint32", offset), at, nbytes, like=stmt)
        if scratch is None:
            raise no_scratch(f"a row of the slice of `{tensor.buffer.name}`")
        return staged_move(stmt, page, tensor.buffer, offset, at, analyzer.simplify(elements * elem), reading,
                           scratch, elem, alignment, short=view.cols * elem + alignment - elem <= SCRATCH)

    move = run(row_bytes, count)
    if reading and tail is not None:  # the columns past the tensor's end read as zeros
        move = seq([move, tail])
    if rows_past:
        zeros = evaluate(Intrin.NOC_READ_ZEROS, at, width * elem, like=stmt) if reading else None
        move = keep_span(stmt, tirx.IfThenElse(analyzer.simplify(view.bound_row + r < view.bound_rows), move, zeros))
    if valid is not None and len(tensor.buffer.shape) == 1:  # a vector's first `valid` elements, inside the tensor
        first = tirx.Min(valid, count)
        nbytes = tirx.Cast("uint32", analyzer.simplify(first * elem))
        move = keep_span(stmt, tirx.IfThenElse(valid > 0, run(nbytes, first, view.page), None))
    elif valid is not None:
        move = keep_span(stmt, tirx.IfThenElse(r < valid, move, None))
    rows = keep_span(stmt, tirx.For(r, 0, view.rows, tirx.ForKind.SERIAL, move))
    if reading and view.rows < height:  # the block's rows past the slice's
        rows = seq([rows, evaluate(Intrin.NOC_READ_ZEROS, ptr + view.rows * width * elem,
                                   (height - view.rows) * width * elem, like=stmt)])
    return rows


def _column_writes(stmt, func, cb: CBDesc, tensor, acc: AccessorDesc, analyzer: arith.Analyzer, ptr,
                   valid=None) -> tirx.Stmt:
    """The writer writes a column vector block (column 0 of each of its tiles) into one column of a
    tensor of more columns laid out in tiles (``ir.slices.element_column``: per-row scales), an element
    per row, since the tile holding it holds other columns' values: each element is copied to the
    empty face 1 of the block's first tile (a column leaves faces 1 and 3 empty) at the place whose
    address matches its destination's modulo 32 elements (a NOC write keeps the source's alignment,
    32 bytes for DRAM on Wormhole and 64 on Blackhole: tt-metal's ``DRAM_ALIGNMENT``), written from
    there (one element's bytes into the tile page), and flushed before the next one reuses the place.
    Rows past the tensor's end, and from ``valid`` on (``tt.valid_rows``), are not written."""
    name = tensor.buffer.name
    fmt, stored_as = cb.data_format, stored(func, tensor.buffer).data_format
    if fmt not in ("Float32", "Float16_b") or stored_as != fmt:
        raise error(PASS, func, stmt, f"the writer writes a column of `{name}` (stored as {stored_as}) an element per "
                    f"row from the block `{cb.name}` ({fmt}): it writes float32 and bfloat16 elements into a tensor "
                    "stored in its dtype (a block float element shares its exponent with its neighbours)",
                    f"store `{name}` in its dtype (no BufferLayout dtype for it), or write it in whole tiles")
    view = matrix_slice(tensor)
    row0 = view.row
    nt = expr_of(acc.tile_grid[1], dynamic_dims(func))
    elem = BY_DATA_FORMAT[fmt].element_bytes
    r = tirx.Var("r", "int32")
    row, col = row0 + r, view.col
    source = tirx.FloorDiv(r, TILE) * (TILE * TILE) + tirx.FloorMod(tirx.FloorDiv(r, 16), 2) * 512 + (
        tirx.FloorMod(r, 16) * 16)
    place = (tirx.FloorMod(tirx.FloorDiv(row, 16), 2) * 2 + tirx.FloorMod(tirx.FloorDiv(col, 16), 2)) * 256 + (
        tirx.FloorMod(row, 16) * 16 + tirx.FloorMod(col, 16))  # the element's index in its tile
    k = analyzer.simplify(tirx.FloorMod(place, 32))  # its place in face 1: the same address modulo 32 elements
    value = tirx.Var(f"{name}_element", "float32")
    scratch = ptr + tirx.const(256 * elem, "uint32")
    move = seq([
        keep_span(stmt, tirx.Bind(value, call(Intrin.LOAD_ELEMENT, ptr, analyzer.simplify(source), tirx.StringImm(fmt),
                                              dtype="float32"))),
        evaluate(Intrin.STORE_TILE_ELEMENT, scratch, tirx.FloorDiv(k, 16), tirx.FloorMod(k, 16), 1, value,
                 tirx.StringImm(fmt), like=stmt),
        evaluate(Intrin.NOC_WRITE_ROW, analyzer.simplify(tirx.FloorDiv(row, TILE) * nt + tirx.FloorDiv(col, TILE)),
                 tensor.buffer.data, tirx.Cast("uint32", analyzer.simplify(place * elem)),
                 scratch + tirx.Cast("uint32", k * elem), tirx.const(elem, "uint32"), like=stmt),
        evaluate(Intrin.NOC_WRITES_FLUSHED, like=stmt),
    ])
    if overhanging_axes(tensor, analyzer)[0]:
        move = keep_span(stmt, tirx.IfThenElse(analyzer.simplify(view.bound_row + r < view.bound_rows), move, None))
    if valid is not None:
        move = keep_span(stmt, tirx.IfThenElse(r < valid, move, None))
    return keep_span(stmt, tirx.For(r, 0, view.rows, tirx.ForKind.SERIAL, move))


def _part_of_block(cb: CBDesc, block) -> tuple[int, int] | None:
    """(first tile row, first tile column) of a write's block region that is a part of whole tiles of the CB's
    block (``T.copy(l[0:32, 0:128], Y[..])`` of a [32, 256] block), or None (the whole block, a vector, a block
    stored by columns, a part not starting at a tile)."""
    if cb.vector or not cb.block_tiles[0] or len(block.buffer.shape) != 2:
        return None
    starts, extents = [const_int(x) for x in block.starts], [const_int(x) for x in block.extents]
    if None in starts or None in extents or any(x % TILE for x in starts):
        return None
    if starts == [0, 0] and [-(-e // TILE) for e in extents] == list(cb.block_tiles):
        return None
    return starts[0] // TILE, starts[1] // TILE


def _tile_transfers(stmt, func, cb: CBDesc, tensor, acc: AccessorDesc, reading: bool, analyzer: arith.Analyzer,
                    ptr, scratch=None, part: tuple[int, int] | None = None) -> tuple[tirx.Stmt, int]:
    """(the moves of the tiles of the slice, row by row of the block, each a page of the tensor and
    of the CB, stored row by row, or column by column for a block of ``tt.column_major_blocks``;
    the number of pages). A slice of part of a tile whose other elements are the tensor's moves its
    face-row runs instead (:mod:`tilelang_tt.ir.tile_runs`), the misaligned ones through the kernel's
    scratch at ``scratch``. A write of ``part`` of the block (its first tile row and column) moves the part's
    tiles from their pages of the whole block, which it waits for and pops (all of them: the CB's pages are
    the block's)."""
    column, flat = vector_layout(func, tensor.buffer)
    view = matrix_slice(tensor, column, flat)
    rows, cols = -(-view.rows // TILE), -(-view.cols // TILE)
    # tiles of the tensor's matrix view (A3 recorded them; expressions of the dynamic sizes where they decide them)
    nt = expr_of(acc.tile_grid[1], dynamic_dims(func))
    overhang = overhanging_axes(tensor, analyzer, column, flat=flat)
    # a flat vector that may pass the end of its row (of whole tiles: LayoutAwareWorkPartitionTT checked it):
    # the tiles past it hold the next row's elements, which are not the slice's
    in_row = flat and not analyzer.can_prove(tensor.starts[-1] + tensor.extents[-1] <= tensor.buffer.shape[-1])
    by_columns = cb.name in Attr.COLUMN_MAJOR_BLOCKS.read(func)
    columns = columns_of(tensor.buffer, column, flat)
    if part is not None and (by_columns or is_partial(view, columns, analyzer)):
        part = None
    if is_partial(view, columns, analyzer):
        storage = stored(func, tensor.buffer).storage
        if storage:
            raise error(PASS, func, stmt, f"the slice of `{tensor.buffer.name}` covers part of a tile, and "
                        f"`{tensor.buffer.name}` is stored as {storage}: a run of a block floating point tile's "
                        "elements needs its rows' shared exponents, not a part of its bytes",
                        f"store `{tensor.buffer.name}` in its own dtype (drop dtype={storage!r} from its "
                        "BufferLayout), or give the block whole tiles")
        return run_transfers(stmt, tensor, view, columns, nt, (rows, cols), cb.page_size, by_columns, reading,
                             overhang, analyzer, ptr, Attr.ARCH.read(func).dram_alignment, scratch), rows * cols
    # the slice starts at a whole tile (else it is partial): its first tile, and its row among the tiles that bound it
    row0, col0, bound_row0 = (analyzer.simplify(tirx.FloorDiv(x, TILE)) for x in (view.row, view.col, view.bound_row))
    bound_rows = ceildiv(view.bound_rows, TILE)
    xfer = Intrin.NOC_READ_PAGE if reading else Intrin.NOC_WRITE_PAGE

    def page(r, c):
        tile_id = analyzer.simplify((row0 + r) * nt + col0 + c)
        position = (c * rows + r) if by_columns else (r * cols + c)
        if part is not None:  # the part's tile in the whole block's pages
            position = (part[0] + r) * cb.block_tiles[1] + part[1] + c
        offset = tirx.Cast("uint32", position * cb.page_size)
        transfer = evaluate(xfer, tile_id, tensor.buffer.data, ptr + offset, like=stmt)
        inside = [cond for cond, hangs in ((bound_row0 + r < bound_rows, overhang[0]), (col0 + c < nt, overhang[1]),
                                           (tensor.starts[-1] + (r if column else c) * TILE < tensor.buffer.shape[-1],
                                            in_row)) if hangs]
        if not inside:
            return transfer
        # A block reaching past the tensor (or a flat vector past its row): tiles outside it are not
        # moved; the reader fills their CB pages with zeros (TileLang's value of an out-of-bounds load).
        zeros = evaluate(Intrin.NOC_READ_ZEROS, ptr + offset, cb.page_size, like=stmt) if reading else None
        cond = functools.reduce(tirx.And, inside)
        return keep_span(stmt, tirx.IfThenElse(analyzer.simplify(cond), transfer, zeros))

    def loop_rows(r):
        if cols == 1:
            return page(r, 0)
        var = tirx.Var("c", "int32")
        return tirx.For(var, 0, cols, tirx.ForKind.SERIAL, page(r, var))

    pages = cb.block_pages if part is not None else rows * cols
    if rows == 1:
        return loop_rows(0), (cb.block_pages if part is not None else cols)
    rvar = tirx.Var("r", "int32")
    return tirx.For(rvar, 0, rows, tirx.ForKind.SERIAL, loop_rows(rvar)), pages


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
        transfers = _row_transfers(stmt, func, cb, tensor, block, reading, analyzer, ptr, valid, scratch)
        pages = cb.block_pages
    elif element_column(func, tensor, cb.vector, reading):
        transfers = _column_writes(stmt, func, cb, tensor, acc, analyzer, ptr, valid)
        pages = cb.block_pages
    else:
        if valid is not None:
            raise error(PASS, func, stmt, f"the writer writes some rows of a block into `{tensor.buffer.name}`, which "
                        f"is laid out in {acc.layout} tiles (a tile is written whole)",
                        f"leave `{tensor.buffer.name}` to the default layout (rows are chosen for it), or store "
                        "whole blocks")
        transfers, pages = _tile_transfers(stmt, func, cb, tensor, acc, reading, analyzer, ptr, scratch,
                                           part=None if reading else _part_of_block(cb, block))
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
        moved = _multicast(mc, mcast_args[mc.cb], ptr, pages * cb.page_size, moved, stmt, flush=not overlapped)
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


def _generate(stmt, func, cbs: dict[str, CBDesc], accessors: dict[str, AccessorDesc],
              analyzer: arith.Analyzer) -> tirx.Stmt:
    """The reader fills a block with a value of the element's indices, element by element (at
    its place in tile layout), between reserving and pushing the CB pages; the tensor elements the
    value reads are read first (:func:`~tilelang_tt.ir.elements.fetch_elements`), those at the
    element's index (a vector's) per element, into the face of its first tile the vector leaves empty."""
    region, i, j, value = stmt.value.args
    block = as_region(region)
    cb = cbs[block.buffer.name]
    ptr = tirx.Var(f"l1_{block.buffer.name}", "uint32")
    # the elements read at the element's index (a vector's, s[i] = S[by * 32 + i, k]) are read per
    # element, into a face of the first tile the vector leaves empty (a column fills faces 0 and 2 in
    # its column 0, a row faces 0 and 1 in its row 0); the others once, before
    indexed = [load for load in tensor_loads(value) if any(
        uses_var(x, v) for x in load.indices for v in (i, j) if isinstance(v, tirx.Var))]
    held = [tirx.Var(f"{load.buffer.name}_element", load.dtype) for load in indexed]
    for load, var in zip(indexed, held):
        value = _replace_tensor_load(value, load, var)
    reads, (value,) = fetch_elements(PASS, stmt, func, [value], accessors, analyzer, ptr)
    per_element = []
    if indexed:
        face = {COL: 1, ROW: 2}[cb.vector]  # a vector by the C2 rule (ops/generate.py)
        scratch = ptr + tirx.const(face * 256 * BY_DATA_FORMAT[cb.data_format].element_bytes, "uint32")
        per_element, elements = fetch_elements(PASS, stmt, func, indexed, accessors, analyzer, scratch)
        value = tirx.stmt_functor.substitute(value, dict(zip(held, elements)))
    rows, cols = matrix_extents(block, cb.vector == COL)
    store = evaluate(Intrin.STORE_TILE_ELEMENT, ptr, i, j, cb.block_tiles[1], value,
                     tirx.StringImm(cb.data_format), like=stmt)
    if per_element:
        store = seq([*per_element, store])
    for var, extent in ((j, cols), (i, rows)):  # a vector has the constant 0 for its other index
        if isinstance(var, tirx.Var):
            store = tirx.For(var, 0, extent, tirx.ForKind.SERIAL, store)
    return seq([
        evaluate(Intrin.CB_RESERVE_BACK, cb.index, cb.block_pages, like=stmt),
        keep_span(stmt, tirx.Bind(ptr, call(Intrin.GET_WRITE_PTR, cb.index, dtype="uint32"))),
        *reads,
        keep_span(stmt, store),
        evaluate(Intrin.CB_PUSH_BACK, cb.index, cb.block_pages, like=stmt),
    ])


def _replace_tensor_load(expr, load: tirx.BufferLoad, by: tirx.Var):
    """``expr`` with the tensor element ``load`` (the same object) replaced by ``by``."""
    stmt = tirx.stmt_functor.ir_transform(tirx.Evaluate(expr), None, lambda n: by if n.same_as(load) else None,
                                          ["tirx.BufferLoad"])
    return stmt.value


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
            return _generate(node, func, cbs, accessors, analyzer)
        return None

    body = lowered(func.body)
    if _overlaps_multicast(body):  # the last multicast's data leaves L1 before the kernel ends
        body = seq([body, evaluate(Intrin.NOC_WRITE_BARRIER)])
    return func.with_body(body)


def _overlaps_multicast(body) -> bool:
    """Whether a multicast of ``body`` is flushed only by the next block's read (:func:`_multicast`)."""
    found = []

    def visit(node):
        if isinstance(node, tirx.IfThenElse) and isinstance(node.then_case, tirx.SeqStmt):
            calls = [stmt_intrin(s) for s in node.then_case.seq]
            if Intrin.MCAST_WRITE in calls and calls[-1] != Intrin.NOC_WRITES_FLUSHED:
                found.append(node)

    tirx.stmt_functor.post_order_visit(body, visit)
    return bool(found)


def LowerCBIntrinsics():
    return prim_func_pass(_transform, PASS)
