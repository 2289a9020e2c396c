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
other than a proven multiple of that (a block starting at column 8 of bfloat16 values: 16 bytes) is
refused at the statement (:func:`check_aligned`): moving it needs a staging copy on the RISC, not built."""

from __future__ import annotations

import math

import tilelang  # noqa: F401
from tvm import arith, tirx

from tilelang_tt.contract.formats import DATA_FORMATS
from tilelang_tt.ir.common import TILE, evaluate, keep_span, seq
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.ir.slices import MatrixSlice

FACE = 16  # the side of a face of a tile (constants.hpp FACE_HEIGHT, FACE_WIDTH)


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


def check_aligned(tensor_offset, l1_offset, alignment: int, analyzer: arith.Analyzer, refuse) -> None:
    """Calls ``refuse(difference)`` unless the analyzer proves a run's byte offset in its tensor page
    (``tensor_offset``; pages start at multiples of the DRAM alignment) and in its CB (``l1_offset``,
    from the CB's base) equal modulo ``alignment``; ``difference`` is their difference when it is a
    constant modulo ``alignment``, else None (module docstring)."""
    delta = analyzer.simplify(tirx.FloorMod(tensor_offset - l1_offset, alignment))
    if isinstance(delta, tirx.IntImm) and delta.value == 0:
        return
    refuse(delta.value if isinstance(delta, tirx.IntImm) else None)


def _element(r, c):
    """The index in its tile page of element (r, c) of a tile (module docstring)."""
    return (tirx.FloorDiv(r, FACE) * 2 + tirx.FloorDiv(c, FACE)) * (FACE * FACE) + tirx.FloorMod(r, FACE) * FACE + \
        tirx.FloorMod(c, FACE)


def run_transfers(stmt, tensor, view: MatrixSlice, columns, nt, block_tiles: tuple[int, int], page_size: int,
                  by_columns: bool, reading: bool, overhang: tuple[bool, bool], analyzer: arith.Analyzer,
                  ptr, alignment: int, refuse) -> tirx.Stmt:
    """The reads (``reading``) or writes of the runs of a slice (``view``, its matrix view; ``columns``
    the view's columns, ``nt`` its tile columns) between the tensor and the block at ``ptr`` (its CB
    pages: ``block_tiles`` of ``page_size`` bytes, row by row, or column by column with
    ``by_columns``); ``overhang``: whether the slice may pass the tensor's end along rows, columns.
    The reader's zero fill comes first (module docstring). A run whose offsets in the tensor page and
    in the block differ modulo ``alignment`` calls ``refuse`` (:func:`check_aligned`)."""
    elem = DATA_FORMATS[str(tensor.buffer.dtype)][1]
    i = tirx.Var("i", "int32") if view.rows > 1 else tirx.const(0, "int32")  # a row of the slice: no loop
    row = view.row + i

    def run(j0, j1):
        """The move of the elements [j0, j1) of row i of the slice (j0, j1 in the block's columns)."""
        j0, j1 = (tirx.const(j, "int32") if isinstance(j, int) else j for j in (j0, j1))
        col = view.col + j0
        tile = analyzer.simplify(tirx.FloorDiv(row, TILE) * nt + tirx.FloorDiv(col, TILE))
        offset = analyzer.simplify(_element(tirx.FloorMod(row, TILE), tirx.FloorMod(col, TILE)) * elem)
        r, c = tirx.FloorDiv(i, TILE), tirx.FloorDiv(j0, TILE)
        page = c * block_tiles[0] + r if by_columns else r * block_tiles[1] + c
        at = analyzer.simplify(page * page_size + _element(tirx.FloorMod(i, TILE), tirx.FloorMod(j0, TILE)) * elem)
        check_aligned(offset, at, alignment, analyzer, refuse)
        count = j1 - j0
        if overhang[1]:  # clipped at the tensor's last column
            count = analyzer.simplify(tirx.Min(count, columns - col))
        nbytes = tirx.Cast("uint32", analyzer.simplify(count * elem))
        move = evaluate(Intrin.NOC_READ_ROW if reading else Intrin.NOC_WRITE_ROW, tile, tensor.buffer.data,
                        tirx.Cast("uint32", offset), ptr + tirx.Cast("uint32", at), nbytes, like=stmt)
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
