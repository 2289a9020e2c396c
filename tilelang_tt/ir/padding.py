"""Blocks of any shape as whole 32x32 tiles: the matrix an on-chip block is, and the padded shape
that holds it (PadBlocksTT pads blocks to it; ``plan show`` reports what the padding costs).

A block is a matrix of tiles. Its shape maps to one so:

* ``(n,)``: a vector of ``ceil(n / 32) * 32`` values (a per-row or per-column vector by its use,
  ``tilelang_tt.ir.common.vector_kinds``): ``[1]`` is one tile holding one value, and so is
  ``(1, 1)`` (a row vector of 32);
* ``(r, c)``: ``ceil(r / 32) x ceil(c / 32)`` tiles, the valid values at the top left; a
  dimension of extent 1 stays 1 (``(1, c)`` is a row vector, ``(r, 1)`` a column vector: one
  tile row or column either way);
* rank 3 and more: the dimensions of extent 1 are dropped (``[1, 16, 1, 16]`` is the 16 x 16
  matrix, ``[64, 8, 1]`` the 64 x 8 one, ``[1, 1, 64]`` a row vector); of the others, the last two
  are the rows and columns of a matrix and those before them stack matrices, as a tensor's leading
  dimensions do (its matrix view, :mod:`tilelang_tt.ir.slices`): ``[2, 64, 32]`` is two 64 x 32
  matrices, the 128 x 32 matrix of 4 x 1 tiles. Stacked matrices must be whole tiles
  along their rows (each would else be padded on its own and the rows of the stack would not
  be one range): ``stacked_rows_error`` says so.

The padding of a block (the positions past its valid rows and columns) holds whatever the
operations computing the block leave there; PadBlocksTT makes it the neutral value where a
reduction or a contraction would read it."""

from __future__ import annotations

import math
from dataclasses import dataclass

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.common import TILE, WRITE, as_region, const_int, float_constant, is_global_buffer, tile_op_name


def whole_tiles(n: int) -> int:
    """``n`` rounded up to a multiple of 32."""
    return -(-n // TILE) * TILE


def padded(n: int) -> int:
    """A block extent rounded up to whole tiles; 1 stays 1 (a vector's short side)."""
    return n if n == 1 else whole_tiles(n)


@dataclass(frozen=True)
class BlockMatrix:
    """The matrix view of an on-chip block of ``shape``: ``kept`` the dimensions that index its
    rows, outermost first, and ``col_dim`` the one that indexes its columns (None: one column);
    ``rows``/``cols`` the valid extents of one matrix, ``stack`` how many matrices are stacked (the
    product of the kept dimensions but the last); ``padded_shape`` the block's shape in whole tiles
    (rank 1 or 2)."""

    shape: tuple[int, ...]
    kept: tuple[int, ...]
    col_dim: int | None
    rows: int
    cols: int
    stack: int

    @property
    def padded_shape(self) -> tuple[int, ...]:
        if len(self.shape) == 1:
            return (whole_tiles(self.cols),)
        if self.rows == 1 and self.cols == 1:
            return (1, TILE)  # one value: a row vector of one tile
        return (self.stack * padded(self.rows), padded(self.cols))

    @property
    def valid(self) -> tuple[int, int]:
        """(rows, cols) of valid values, the stacked matrices' rows together."""
        return (self.stack * self.rows, self.cols)

    def element(self, indices) -> list:
        """The indices of element ``indices`` of the block in its padded shape: rank 3 and more, the
        row of the stacked matrices (``b * rows + i``) and the column."""
        if len(self.shape) <= 2:
            return list(indices)
        row = tirx.IntImm("int32", 0)
        for d in self.kept:
            row = row * self.shape[d] + indices[d]
        return [row, indices[self.col_dim] if self.col_dim is not None else tirx.IntImm("int32", 0)]

    @property
    def is_whole(self) -> bool:
        """Whether the block is already made of whole tiles in its own shape (nothing to pad)."""
        return tuple(self.padded_shape) == self.shape


def block_matrix(shape) -> BlockMatrix:
    """The matrix view of a block of constant ``shape`` (module docstring)."""
    shape = tuple(int(d) for d in shape)
    if len(shape) == 1:
        return BlockMatrix(shape, (), 0, 1, shape[0], 1)
    if len(shape) == 2:
        return BlockMatrix(shape, (0,), 1, shape[0], shape[1], 1)
    kept = tuple(d for d in range(len(shape)) if shape[d] != 1)
    if not kept:
        return BlockMatrix(shape, (), None, 1, 1, 1)
    if len(kept) == 1:  # a vector: a row along the last dimension, else a column
        d = kept[0]
        return BlockMatrix(shape, (), d, 1, shape[d], 1) if d == len(shape) - 1 else BlockMatrix(
            shape, (d,), None, shape[d], 1, 1)
    rows, col = kept[:-1], kept[-1]
    return BlockMatrix(shape, rows, col, shape[rows[-1]], shape[col], math.prod(shape[d] for d in rows[:-1]))


def stacked_rows_error(matrix: BlockMatrix) -> str | None:
    """Why a block of stacked matrices cannot be padded (rows of each not whole tiles), or None."""
    if matrix.stack > 1 and matrix.rows % TILE:
        return (f"it stacks {matrix.stack} matrices of {matrix.rows} x {matrix.cols}, whose {matrix.rows} rows are "
                "not whole 32-row tiles (each matrix would be padded on its own)")
    return None


def zero_padded(func: tirx.PrimFunc, blocks: set[tirx.Buffer]) -> set[tirx.Buffer]:
    """The ``blocks`` (to be padded) whose padding is 0 wherever the kernel writes them: reads from
    tensors (the reader zero-fills past the slice), zero fills, copies of such blocks, and
    element-wise values that are 0 where the blocks they read are (products with one, sums,
    differences, casts of them); a greatest fixed point over the writes."""
    writes: dict[tirx.Buffer, list] = {b: [] for b in blocks}

    def visit(node):
        op = tile_op_name(node)
        if op is not None:
            regions = [as_region(a) for a in node.value.args if isinstance(a, tirx.Call)]
            regions = [r for r in regions if r is not None]
            if op == "copy" and len(regions) == 2 and regions[1].buffer in writes:
                src = regions[0].buffer
                whole = [const_int(e) for e in regions[0].extents] == [const_int(d) for d in src.shape]
                # part of a block (its first rows) brings the block's next rows into the padding
                writes[regions[1].buffer].append(("zero",) if is_global_buffer(src) else ("copy", src) if whole
                                                 else ("no",))
            elif op == "fill" and regions and regions[0].buffer in writes:
                writes[regions[0].buffer].append(("zero",) if float_constant(node.value.args[1]) == 0.0 else ("no",))
            else:
                for a in node.value.args:
                    r = as_region(a) if isinstance(a, tirx.Call) else None
                    if r is not None and r.buffer in writes and int(a.args[1]) & WRITE:
                        writes[r.buffer].append(("no",))
        elif isinstance(node, tirx.BufferStore) and node.buffer in writes:
            writes[node.buffer].append(("value", node.value))

    tirx.stmt_functor.post_order_visit(func.body, visit)
    zero = set(blocks)

    def keeps(expr) -> bool:
        if isinstance(expr, tirx.Cast):
            return keeps(expr.value)
        if isinstance(expr, tirx.BufferLoad):
            return expr.buffer in zero
        if isinstance(expr, tirx.Mul):
            return keeps(expr.a) or keeps(expr.b)
        if isinstance(expr, (tirx.Add, tirx.Sub)):
            return keeps(expr.a) and keeps(expr.b)
        return float_constant(expr) == 0.0

    changed = True
    while changed:
        changed = False
        for buf in list(zero):
            for write in writes[buf]:
                ok = write[0] == "zero" or (write[0] == "copy" and write[1] in zero) or (
                    write[0] == "value" and keeps(write[1]))
                if not ok:
                    zero.discard(buf)
                    changed = True
                    break
    return zero
