"""The page moves of one slice between a tensor and a CB block, in a reader or writer (D3 LowerCBIntrinsics).

A slice of a tensor in tiles moves tile by tile (:func:`tile_transfers`): tile (row, col) of a region starting at
(r0, c0) is ``(r0 / 32 + row) * Nt + c0 / 32 + col`` in the tensor's row-major tile grid (its matrix view), a page
of the CB block each, row-major (column-major for a block of ``tt.column_major_blocks``); a slice of part of a
tile moves its face-row runs (:mod:`tilelang_tt.ir.tile_runs`). A slice of a row-major tensor moves row by row
through the block's staging CB (:func:`row_transfers`). A column vector block written into one column of a tensor
of more columns in tiles (``ir.slices.element_column``: per-row scales) is written an element per row, from face 1
of its first tile, at the address matching the destination's modulo 32 elements (:func:`column_writes`):

    for r in range(32):
        S_element = T.tt.load_element(l1_S_l, r // 16 * 512 + r % 16 * 16, "Float32")
        T.tt.store_tile_element(l1_S_l + 1024, <place % 32> // 16, <place % 32> % 16, 1, S_element, "Float32")
        T.tt.noc_async_write_row(by + r // 32, S.data, <place> * 4, l1_S_l + 1024 + <place % 32> * 4, 4)
        T.tt.noc_async_writes_flushed()

Each returns the transfers alone, addressed from ``ptr`` (the variable holding the block's L1 address); the CB
protocol around them is the pass's. Errors name ``pass_name``.
"""

from __future__ import annotations

import functools

import tilelang  # noqa: F401
from tvm import arith, tirx

from tilelang_tt.contract.formats import BY_DATA_FORMAT, DATA_FORMATS
from tilelang_tt.contract.formula import ceildiv
from tilelang_tt.ir.attrs import Attr, CBDesc
from tilelang_tt.ir.common import TILE, const_int, dynamic_dims, error, evaluate, expr_of, keep_span, seq
from tilelang_tt.ir.elements import stored
from tilelang_tt.ir.intrin import Intrin, call
from tilelang_tt.ir.slices import matrix_slice, overhanging_axes, row_slice, vector_layout
from tilelang_tt.ir.tensors import AccessorDesc
from tilelang_tt.ir.tile_runs import SCRATCH, aligned, columns_of, is_partial, no_scratch, run_transfers, staged_move


def row_transfers(pass_name: str, stmt, func, cb: CBDesc, tensor, block, reading: bool, analyzer: arith.Analyzer,
                  ptr, valid=None, scratch=None) -> tirx.Stmt:
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
        raise error(pass_name, func, stmt, f"the slice of the row-major tensor `{name}` takes rows along several dimensions",
                    "slice one leading dimension (the rows) and the last one (the columns); index the others")
    width, height = cb.block_tiles[1] * TILE, cb.block_tiles[0] * TILE
    if view.cols > width or view.rows > height:
        raise error(pass_name, func, stmt, f"the slice of the row-major tensor `{name}` is {view.rows}x{view.cols}, the "
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


def column_writes(pass_name: str, stmt, func, cb: CBDesc, tensor, acc: AccessorDesc, analyzer: arith.Analyzer,
                  ptr, valid=None) -> tirx.Stmt:
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
        raise error(pass_name, func, stmt, f"the writer writes a column of `{name}` (stored as {stored_as}) an element per "
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


def part_of_block(cb: CBDesc, block) -> tuple[int, int] | None:
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


def tile_transfers(pass_name: str, stmt, func, cb: CBDesc, tensor, acc: AccessorDesc, reading: bool,
                   analyzer: arith.Analyzer, ptr, scratch=None, part: tuple[int, int] | None = None) -> tuple[tirx.Stmt, int]:
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
            raise error(pass_name, func, stmt, f"the slice of `{tensor.buffer.name}` covers part of a tile, and "
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
