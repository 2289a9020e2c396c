"""Blocks of part of a tile, at any element offset: the NOC reads and writes of the face-row runs a
slice of a tensor in tile layout covers (LowerCBIntrinsics' moves of such a slice).

A tensor in DRAM in tile layout stores each 32 x 32 tile as a page of 4 faces of 16 x 16 (face 0
top left, 1 top right, 2 bottom left, 3 bottom right), each face row-major: element (r, c) of a tile
is element ``(r // 16 * 2 + c // 16) * 256 + r % 16 * 16 + c % 16`` of its page (tt-metal 0.81.1
``tt_metal/api/tt-metalium/constants.hpp``: TILE_HEIGHT = TILE_WIDTH = 32, FACE_HEIGHT = FACE_WIDTH = 16;
the same index as :func:`tilelang_tt.ir.elements._element_read`). So the elements of one row of a
slice that lie in one face row of the tensor are contiguous: a run, one NOC transaction.

The block sits in its CB padded to whole tiles (PadBlocksTT) at offset 0: element (i, j) of the slice
is element (i, j) of the block, whatever its place in the tensor's tiles (a slice starting at column 8
reads columns 8..15 of a tensor tile into columns 0..7 of its L1 tile). A run must also lie in one face
row of the block, so a row of the slice is cut where the tensor's face rows end and where the block's
do: at ``j % 16 == 0`` and at ``(col + j) % 16 == 0``. The cuts are fixed at compile time from what the
analyzer knows of ``col`` (``col = coeff * k + base``: the tensor's cuts sit at ``(base + j) % gcd(coeff,
16) == 0``, every one of them when 16 divides ``coeff``, a superset otherwise: runs then are shorter than
they could be, never wrong), and repeat every 16 columns: one period is unrolled, the periods looped.

The reader first zero-fills the block's pages when the runs leave some of them unwritten (its padding,
and the elements past the tensor's end, read as zeros: TileLang's value of an out-of-bounds load),
waits for that, then reads the runs; the
writer writes the runs alone and reads nothing, so blocks writing disjoint elements of one tile do not
race (LayoutAwareWorkPartitionTT refuses blocks writing the same elements). Runs past the tensor's end
(a last block that does not divide the shape) are clipped. Each run costs a NOC transaction (the
emulator charges each ``noc_async_read``/``noc_async_write`` its issue cost and its transfer,
runtime/dataflow.cpp ``noc_read``/``noc_write``).

A NOC transfer touching DRAM needs its source and destination at the same offset modulo the arch's
DRAM alignment (32 bytes on Wormhole, 64 on Blackhole; tt-metal issue #6695, pull requests #22061 and
#41849: a mismatch reads wrong data, no error; the emulator refuses it, runtime/dataflow.cpp
``check_noc_alignment``). A run whose place in the block differs from its place in the tensor tile by
other than a proven multiple of that (a block starting at column 8 of bfloat16 values: 16 bytes)
moves through the kernel's L1 scratch, the 64-byte ``<role>_scalars`` CB at the DRAM alignment
(:func:`needs_scratch` and :func:`scratch_roles` tell BuildTileDFGTT which kernels need one), as ttnn's readers of
unaligned rows do (tt-metal 0.81.1 wheel, ``ttnn/cpp/ttnn/operations/data_movement/slice/device/kernels/dataflow/
slice_reader_unary_unpad_dims_rm_interleaved_start_id.cpp``: a NOC read from the offset rounded down
to the alignment, then ``tt_memmove`` of ``data_movement/common/kernels/common.hpp``, whose fallback
copies the bytes on the RISC where the NOC cannot). A run lies in one face row of its page (16
elements, at a multiple of their bytes), so the span from its offset rounded down to the alignment to
its end fits the scratch (:func:`staged_move`):

* a read reads that span into the scratch (its start aligned in both), waits for it and copies the
  run's bytes from it into the block with the RISC (``tt.l1_copy``, in words of the element's size);
* a write copies the run's bytes from the block to their place in the scratch (the same offset modulo
  the alignment as their destination), writes those bytes alone from there, and waits until they have
  left the scratch before the next run reuses it. Only the run's own bytes are written, as every
  aligned run writes its own (and ``ir.transfers.column_writes`` one element): no page is read,
  patched and written back, so blocks writing parts of one face row from different cores do not race.

A staged run costs its NOC transaction (a read: its span's bytes, up to ``alignment - element``
more than the run), a barrier or flush, and the RISC's copy loop. A row of a row-major tensor moves the
same way in pieces of the scratch's size."""

from __future__ import annotations

import math

import tilelang  # noqa: F401
from tvm import arith, tirx

from tilelang_tt.contract.formats import DATA_FORMATS
from tilelang_tt.ir.attrs import Attr, Scope
from tilelang_tt.ir.branches import branch_values
from tilelang_tt.ir.common import TILE, Region, as_region, evaluate, keep_span, reads_tensor, seq, stmt_intrin
from tilelang_tt.ir.dataflow import ELEMENT_CHUNK
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.ir.slices import (MatrixSlice, bound_analyzer, bound_values, matrix_slice, row_slice,
                                   vector_layout)

FACE = 16  # the side of a face of a tile (constants.hpp FACE_HEIGHT, FACE_WIDTH)
SCRATCH = ELEMENT_CHUNK  # bytes of a data-movement kernel's scratch CB, a multiple of every DRAM alignment


def is_partial(view: MatrixSlice, columns, analyzer: arith.Analyzer) -> bool:
    """Whether a slice of a tensor in tiles (its matrix view; ``columns`` the view's columns) covers
    part of a tile whose other elements are the tensor's: it starts inside a tile, or its extent is
    not whole tiles and it ends short of the end of its matrix (a slice ending at the end moves its
    last tiles whole: their other elements are the tensor's padding)."""
    return (not analyzer.can_prove(tirx.FloorMod(view.row, TILE) == 0)
            or not analyzer.can_prove(tirx.FloorMod(view.col, TILE) == 0)
            or (view.rows % TILE and not analyzer.can_prove(view.bound_row + view.rows >= view.bound_rows))
            or (view.cols % TILE and not analyzer.can_prove(view.col + view.cols >= columns)))


def face_runs(start, extent: int, analyzer: arith.Analyzer) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(the runs [j0, j1) of one period of 16 columns, repeated ``extent // 16`` times at 16 * p;
    the runs after the last whole period) of a row of ``extent`` elements starting at column
    ``start`` of the tensor: cut where a face row of the block or of the tensor ends (module
    docstring). With fewer than 16 columns, every run is in the second list."""
    known = analyzer.modular_set(start)
    step = math.gcd(int(known.coeff), FACE)  # coeff 0: a constant start, gcd 16
    base = int(known.base) % step

    def cuts(lo: int, hi: int) -> list[tuple[int, int]]:
        points = [j for j in range(lo + 1, hi) if j % FACE == 0 or (base + j) % step == 0]
        edges = [lo, *points, hi]
        return list(zip(edges, edges[1:]))

    periods = extent // FACE
    if periods < 2:
        return [], cuts(0, extent)
    return cuts(0, FACE), cuts(periods * FACE, extent)


def aligned(tensor_offset, l1_offset, alignment: int, analyzer: arith.Analyzer) -> bool:
    """Whether the analyzer proves a run's byte offset in its tensor page and in its CB equal modulo
    ``alignment`` (pages start at multiples of it, CBs too: contract/l1.py)."""
    delta = analyzer.simplify(tirx.FloorMod(tensor_offset - l1_offset, alignment))
    return isinstance(delta, tirx.IntImm) and delta.value == 0


def scratch_roles(func: tirx.PrimFunc) -> list[str]:
    """The data-movement roles that need a scratch: those reading tensor elements for addresses (slice
    starts and written rows read from tensors: the grouped GEMM's group offsets), and those moving a
    run of part of a tile whose offsets in the tensor and the block differ modulo the DRAM alignment
    (:func:`needs_scratch`; such a slice is read by the reader: the writer
    reads whole tiles only, BalanceDataMovementTT)."""
    values = bound_values(func.body)
    analyzer = bound_analyzer(func.body)
    roles = set()

    def reads(expr) -> bool:
        return reads_tensor(tirx.stmt_functor.substitute(expr, values))

    def visit(node):
        intrin = stmt_intrin(node)
        if intrin in (Intrin.READ_TO_CB, Intrin.WRITE_FROM_CB):
            tensor = as_region(node.value.args[0 if intrin == Intrin.READ_TO_CB else 1])
            if any(reads(start) for start in tensor.starts) or needs_scratch(func, tensor, analyzer):
                roles.add("reader" if intrin == Intrin.READ_TO_CB else "writer")
        elif isinstance(node, tirx.AttrStmt) and node.attr_key == Scope.VALID_ROWS.value and reads(node.value):
            roles.add("writer")

    tirx.stmt_functor.post_order_visit(func.body, visit)
    if branch_values(func.body):  # the reader reads the values branches decide on
        roles.add("reader")
    return sorted(roles)


def no_scratch(what: str) -> Exception:
    """The error of a misaligned move in a kernel without a scratch CB: a compiler bug (BuildTileDFGTT
    gives one to every kernel :func:`needs_scratch` finds moving such a slice), reported as an internal
    compiler error."""
    return RuntimeError(f"{what} needs a staging copy, and the kernel has no scratch CB (BuildTileDFGTT's "
                        "needs_scratch did not find the move)")


def _element(r, c):
    """The index in its tile page of element (r, c) of a tile (module docstring)."""
    return (tirx.FloorDiv(r, FACE) * 2 + tirx.FloorDiv(c, FACE)) * (FACE * FACE) + tirx.FloorMod(r, FACE) * FACE + \
        tirx.FloorMod(c, FACE)


def _offsets(view: MatrixSlice, i, j0, elem: int):
    """(the byte offset in its tensor page, the byte offset in its block tile) of the run starting at
    element (i, j0) of the slice."""
    row, col = view.row + i, view.col + j0
    return (_element(tirx.FloorMod(row, TILE), tirx.FloorMod(col, TILE)) * elem,
            _element(tirx.FloorMod(i, TILE), tirx.FloorMod(j0, TILE)) * elem)


def stages(view: MatrixSlice, elem: int, alignment: int, analyzer: arith.Analyzer) -> bool:
    """Whether a move of a slice of part of a tile (its matrix view) has a run the analyzer does not
    prove aligned (module docstring): its kernel needs the scratch. The block's page of a run does
    not matter: pages are multiples of 64 bytes."""
    i = tirx.Var("i", "int32")
    period, rest = face_runs(view.col, view.cols, analyzer)
    p = tirx.Var("p", "int32")
    starts = [p * FACE + j0 for j0, _ in period] + [tirx.const(j0, "int32") for j0, _ in rest]
    return not all(aligned(*_offsets(view, i, j0, elem), alignment, analyzer) for j0 in starts)


def columns_of(tensor, column: bool, flat: bool):
    """The columns of a global tensor's matrix view (its layout's ``column``, ``flat``: slices.vector_layout)."""
    return 1 if column else math.prod(tensor.shape) if flat else tensor.shape[-1]


def needs_scratch(func: tirx.PrimFunc, tensor: Region, analyzer: arith.Analyzer) -> bool:
    """Whether the move of the global tensor slice ``tensor`` (a ``tt.read_to_cb`` / ``tt.write_from_cb``
    region) stages a run through its kernel's scratch: a slice of part of a tile of a tensor stored in
    tiles of its dtype with a run :func:`stages`, or a slice of a row-major tensor whose rows start
    at a column not proven at the DRAM alignment (``ir.transfers.row_transfers``)."""
    layout = Attr.LAYOUT_DESC.read(func).get(tensor.buffer.name)
    if layout is None or layout.storage:
        return False
    elem = DATA_FORMATS[str(tensor.buffer.dtype)][1]
    alignment = Attr.ARCH.read(func).dram_alignment
    if layout.row_major:  # each row one run, to a row of the block (whole tiles wide: aligned)
        rows = row_slice(tensor)
        return rows is not None and not aligned(rows.col * elem, 0, alignment, analyzer)
    column, flat = vector_layout(func, tensor.buffer)
    view = matrix_slice(tensor, column, flat)
    if view is None or not is_partial(view, columns_of(tensor.buffer, column, flat), analyzer):
        return False
    return stages(view, elem, alignment, analyzer)


def staged_move(stmt, page, tensor: tirx.Buffer, offset, l1, nbytes, reading: bool, scratch, elem: int,
                alignment: int, short: bool = False) -> tirx.Stmt:
    """The move of ``nbytes`` at byte ``offset`` of page ``page`` of ``tensor`` to or from the L1 at
    ``l1`` through the kernel's scratch at ``scratch`` (:data:`SCRATCH` bytes at the DRAM alignment):
    the span from ``offset`` rounded down to ``alignment`` (``skew`` bytes before it) is taken in
    pieces of the scratch's size, each at an aligned offset of the tensor and at the scratch's start,
    so every NOC transfer has its two addresses equal modulo the alignment (module docstring). A read
    reads a piece into the scratch, waits for it and copies the bytes of the move from it to ``l1``
    (``tt.l1_copy``); a write copies the bytes of a piece from ``l1`` to their place in the scratch,
    writes those bytes alone and waits until they have left it (no byte around them is written).
    ``short``: ``skew + nbytes`` fits the scratch (a run of a face row): one piece, no loop.

        off = <offset>; skew = off % 32
        noc_async_read(A.get_noc_addr(tile, off - skew), l1_scratch, skew + 16)     (a short read)
        noc_async_read_barrier(); l1_copy<uint16_t>(l1, l1_scratch + skew, 16)
    """
    def bound(name: str, value) -> tuple[tirx.Var, tirx.Stmt]:
        var = tirx.Var(f"{tensor.name}_{name}", "int32")
        return var, keep_span(stmt, tirx.Bind(var, value))

    off, bind_off = bound("offset", offset)
    skew, bind_skew = bound("skew", tirx.FloorMod(off, alignment))
    end = skew + nbytes  # the span's end, counted from its aligned start off - skew

    def u32(x):
        return tirx.Cast("uint32", x)

    def piece(lo, first, last):
        """The piece of the span from byte ``lo`` (a multiple of SCRATCH); the move's bytes in it
        [first, last), counted from the span's start."""
        into, there, count = u32(first - skew), u32(first - lo), u32(last - first)
        if reading:
            return seq([evaluate(Intrin.NOC_READ_ROW, page, tensor.data, u32(off - skew + lo), scratch, u32(last - lo),
                                 like=stmt),
                        evaluate(Intrin.NOC_READ_BARRIER, like=stmt),
                        evaluate(Intrin.L1_COPY, l1 + into, scratch + there, count, elem, like=stmt)])
        return seq([evaluate(Intrin.L1_COPY, scratch + there, l1 + into, count, elem, like=stmt),
                    evaluate(Intrin.NOC_WRITE_ROW, page, tensor.data, u32(off - skew + first), scratch + there, count,
                             like=stmt),
                    evaluate(Intrin.NOC_WRITES_FLUSHED, like=stmt)])  # the scratch is free for the next piece

    if short:
        if reading:
            moves = seq([evaluate(Intrin.NOC_READ_ROW, page, tensor.data, u32(off - skew), scratch, u32(end), like=stmt),
                         evaluate(Intrin.NOC_READ_BARRIER, like=stmt),
                         evaluate(Intrin.L1_COPY, l1, scratch + u32(skew), u32(nbytes), elem, like=stmt)])
        else:
            moves = seq([evaluate(Intrin.L1_COPY, scratch + u32(skew), l1, u32(nbytes), elem, like=stmt),
                         evaluate(Intrin.NOC_WRITE_ROW, page, tensor.data, u32(off), scratch + u32(skew), u32(nbytes),
                                  like=stmt),
                         evaluate(Intrin.NOC_WRITES_FLUSHED, like=stmt)])
        return seq([bind_off, bind_skew, moves])
    q = tirx.Var("q", "int32")
    lo = q * SCRATCH
    pieces = tirx.FloorDiv(end + (SCRATCH - 1), SCRATCH)
    loop = tirx.For(q, 0, pieces, tirx.ForKind.SERIAL, piece(lo, tirx.Max(lo, skew), tirx.Min(lo + SCRATCH, end)))
    return seq([bind_off, bind_skew, keep_span(stmt, loop)])


def run_transfers(stmt, tensor, view: MatrixSlice, columns, nt, block_tiles: tuple[int, int], page_size: int,
                  by_columns: bool, reading: bool, overhang: tuple[bool, bool], analyzer: arith.Analyzer,
                  ptr, alignment: int, scratch) -> tirx.Stmt:
    """The reads (``reading``) or writes of the runs of a slice (``view``, its matrix view; ``columns``
    the view's columns, ``nt`` its tile columns) between the tensor and the block at ``ptr`` (its CB
    pages: ``block_tiles`` of ``page_size`` bytes, row by row, or column by column with
    ``by_columns``); ``overhang``: whether the slice may pass the tensor's end along rows, columns.
    The reader's zero fill comes first (module docstring). A run whose offsets in the tensor page and
    in the block differ modulo ``alignment`` moves through the L1 at ``scratch`` (the kernel's scratch
    CB; None in a kernel without one)."""
    elem = DATA_FORMATS[str(tensor.buffer.dtype)][1]
    i = tirx.Var("i", "int32") if view.rows > 1 else tirx.const(0, "int32")  # a row of the slice: no loop
    row = view.row + i

    def run(j0, j1):
        """The move of the elements [j0, j1) of row i of the slice (j0, j1 in the block's columns)."""
        j0, j1 = (tirx.const(j, "int32") if isinstance(j, int) else j for j in (j0, j1))
        col = view.col + j0
        tile = analyzer.simplify(tirx.FloorDiv(row, TILE) * nt + tirx.FloorDiv(col, TILE))
        in_tensor, in_block = _offsets(view, i, j0, elem)
        offset = analyzer.simplify(in_tensor)
        r, c = tirx.FloorDiv(i, TILE), tirx.FloorDiv(j0, TILE)
        page = c * block_tiles[0] + r if by_columns else r * block_tiles[1] + c
        at = analyzer.simplify(page * page_size + in_block)
        count = j1 - j0
        if overhang[1]:  # clipped at the tensor's last column
            count = analyzer.simplify(tirx.Min(count, columns - col))
        nbytes = tirx.Cast("uint32", analyzer.simplify(count * elem))
        if aligned(offset, at, alignment, analyzer):
            move = evaluate(Intrin.NOC_READ_ROW if reading else Intrin.NOC_WRITE_ROW, tile, tensor.buffer.data,
                            tirx.Cast("uint32", offset), ptr + tirx.Cast("uint32", at), nbytes, like=stmt)
        elif scratch is not None:
            move = staged_move(stmt, tile, tensor.buffer, offset, ptr + tirx.Cast("uint32", at),
                               analyzer.simplify(count * elem), reading, scratch, elem, alignment, short=True)
        else:
            raise no_scratch(f"a run of the slice of `{tensor.buffer.name}`")
        if overhang[1]:
            move = keep_span(stmt, tirx.IfThenElse(analyzer.simplify(col < columns), move, None))
        return move

    period, rest = face_runs(view.col, view.cols, analyzer)
    moves = []
    if period:
        p = tirx.Var("p", "int32")
        body = seq([run(p * FACE + j0, p * FACE + j1) for j0, j1 in period])
        moves.append(keep_span(stmt, tirx.For(p, 0, view.cols // FACE, tirx.ForKind.SERIAL, body)))
    moves += [run(j0, j1) for j0, j1 in rest]
    body = seq(moves)
    if overhang[0]:  # rows past the tensor's (or their matrix's) end
        body = keep_span(stmt, tirx.IfThenElse(analyzer.simplify(view.bound_row + i < view.bound_rows), body, None))
    rows = body if view.rows == 1 else keep_span(stmt, tirx.For(i, 0, view.rows, tirx.ForKind.SERIAL, body))
    if not reading or not (view.rows % TILE or view.cols % TILE or any(overhang)):
        return rows  # (a read of whole tiles' worth of runs, all inside the tensor, leaves no element to zero)
    pages = block_tiles[0] * block_tiles[1]
    return seq([evaluate(Intrin.NOC_READ_ZEROS, ptr, tirx.Cast("uint32", pages * page_size), like=stmt),
                evaluate(Intrin.NOC_READ_BARRIER, like=stmt),  # the zeros land before the runs over them
                rows])
