"""On-chip copies and casts: ``T.copy(X, Y)`` between blocks, and the block operands of every
element-wise value.

C2: ``T.copy(X_s, Y_l)`` of two on-chip blocks of one shape → ``tt.tile.eltwise(Y_l, i, j,
Cast(Y dtype, X_s[i, j]))`` (a copy or a cast; copies to and from DRAM are LowerSharedToCB's).
D5: a block operand is unpacked into DST with ``copy_tile``; a transposed one ``X[j, i]`` (X of the
transposed shape) with ``transpose_tile`` from tile (c, r) of X for output tile (r, c), a row vector
read into a column vector (or back) from its tile of the same index; a
per-row/per-column vector spread over a full block, or the first value of a per-row vector over a
row vector (a block of one row; the other way round too), with ``unary_bcast`` (inits ``copy_init`` /
``transpose_init`` / ``unary_bcast_init``).
A vector copied into a vector of the same tiles (``[1, n]`` into a row vector of ``n``) is
the same copy, and so are the first rows of a block copied into a block of those rows
(``T.copy(o[:4, :], o_s)``: its first tiles). Errors: a copy changing the block shape otherwise (a row of a block into a vector
is LowerBlockReshapesTT's); between integer and float blocks, integer blocks other
than int32.
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.ops.base import TileOp, register
from tilelang_tt.ir.common import as_region, const_int, evaluate


class Copy(TileOp):
    tile_ops = ("copy",)

    def lower(self, ctx, stmt):
        src, dst = (as_region(a) for a in stmt.value.args[:2])
        if not _same_tiles(ctx, src.buffer, dst.buffer) and not _leading_rows(ctx, src, dst):
            raise ctx.error(stmt, f"T.copy from `{src.buffer.name}` to `{dst.buffer.name}` changes the block shape",
                            "copy between on-chip blocks of the same shape, a vector into a vector of the same "
                            "values ([1, n] and a row vector of n), or a row of a block into a vector "
                            "(T.copy(X[r, :], v))")
        ctx.check_compute_dtypes(stmt, (src.buffer, dst.buffer), integer=True)
        return ctx.eltwise_from(stmt, dst.buffer,
                                lambda i, j: tirx.Cast(str(dst.buffer.dtype), ctx.load(src.buffer, i, j)))


def _same_tiles(ctx, src: tirx.Buffer, dst: tirx.Buffer) -> bool:
    """Whether two blocks hold their values in the same tiles: one shape, or vectors of one kind
    over the same tiles (a ``[1, n]`` block and a row vector of ``n``: row 0 of each tile; a
    ``[n, 1]`` block and a column vector: column 0)."""
    if ctx.block_kind(src) != ctx.block_kind(dst):
        return False
    if list(src.shape) == list(dst.shape):
        return True
    return bool(ctx.block_kind(src)) and ctx.cbs[src.name].block_tiles == ctx.cbs[dst.name].block_tiles


def _leading_rows(ctx, src, dst) -> bool:
    """Whether a copy takes the first rows of a block into a block of those rows (``T.copy(o[:4, :],
    o_s)``, ``o_s`` padded to whole tiles): every column of the source, the destination whole and of as
    many tile columns, so the destination's tiles are the source's first ones in the same order (its
    padding rows hold the source's next rows, not zeros: PadBlocksTT's ``zero_padded`` counts only
    whole copies)."""
    out = ctx.cbs[dst.buffer.name]
    rows, cols = ctx.cbs[src.buffer.name].block_tiles, out.block_tiles
    whole = [int(e) for e in dst.extents] == [int(d) for d in dst.buffer.shape]
    valid = list(out.valid) if out.valid is not None else [int(d) for d in dst.buffer.shape]  # the rest: padding
    return (len(src.buffer.shape) == len(dst.buffer.shape) == 2 and not ctx.block_kind(src.buffer)
            and not ctx.block_kind(dst.buffer) and whole and all(const_int(x) == 0 for x in src.starts)
            and [int(e) for e in src.extents] == valid and int(src.extents[1]) == int(src.buffer.shape[1])
            and cols[1] == rows[1] and cols[0] <= rows[0])


class BlockOperand:
    """An element-wise value's operand rule (see tilelang_tt.ops.eltwise.TileProgram) for a block
    element ``X[i, j]``, ``v[i]`` or ``v[j]``: one DST tile."""

    def match(self, prog, e):
        return e if isinstance(e, tirx.BufferLoad) else None

    def need(self, prog, load) -> int:
        return 1

    def compile(self, prog, load, base) -> None:
        ctx, like = prog.ctx, prog.like
        cb = ctx.cb(load.buffer.name)
        if is_transposed(load, prog.ij):  # X[j, i]: output tile (r, c) is tile (c, r) of X, transposed
            rows, cols = prog.out.block_tiles
            prog.op(("transpose", cb.index), evaluate(Intrin.TRANSPOSE_INIT, cb.index, like=like),
                    lambda tg, tl: evaluate(Intrin.TRANSPOSE_TILE, cb.index,
                                            ctx.analyzer.simplify((tg % cols) * rows + tg // cols),
                                            prog.slot(tl, base), like=like))
        elif is_transposed_vector(load, cb, prog.out):  # v[k] of a row vector into a column: tile t transposed
            prog.op(("transpose", cb.index), evaluate(Intrin.TRANSPOSE_INIT, cb.index, like=like),
                    lambda tg, tl: evaluate(Intrin.TRANSPOSE_TILE, cb.index, tg, prog.slot(tl, base), like=like))
        elif cb.vector and cb.vector != prog.out.vector:  # a per-row/per-column vector spread over the block
            prog.op(("bcast", cb.vector, cb.index), evaluate(Intrin.BCAST_INIT, cb.vector, cb.index, like=like),
                    lambda tg, tl: evaluate(Intrin.BCAST_TILE, cb.vector, cb.index, ctx.tile_at(cb, prog.out, tg),
                                            prog.slot(tl, base), like=like))
        else:
            prog.op(("copy", cb.index), evaluate(Intrin.COPY_INIT, cb.index, like=like),
                    lambda tg, tl: evaluate(Intrin.COPY_TILE, cb.index, ctx.tile_at(cb, prog.out, tg),
                                            prog.slot(tl, base), like=like))


def is_transposed(load: tirx.BufferLoad, ij) -> bool:
    """Whether a 2-D block element is read transposed, ``X[j, i]``, in a T.Parallel over (i, j)."""
    i, j = ij
    return (len(load.indices) == 2 and isinstance(i, tirx.Var) and isinstance(j, tirx.Var)
            and load.indices[0].same_as(j) and load.indices[1].same_as(i))


def is_transposed_vector(load: tirx.BufferLoad, operand, out) -> bool:
    """Whether a vector is read into a vector of the other kind element by element (``w[i] =
    v[i]``, ``v`` a row vector, ``w`` a column): tile t of one holds the values of tile t of the
    other in row 0 instead of column 0, one ``transpose_tile`` apart (the first value of a vector
    over the other kind, ``v[0]``, is a broadcast instead)."""
    return bool(operand.vector and out.vector and operand.vector != out.vector and len(load.indices) == 1
                and isinstance(load.indices[0], tirx.Var))


COPY = register(Copy())
BLOCK_OPERAND = BlockOperand()
