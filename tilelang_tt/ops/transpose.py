"""Block transposes: ``T.transpose(X, Y)``, TileLang's tile op ``dst[j, i] = src[i, j]``.

C2: ``T.transpose(X, Y)`` of two on-chip blocks, X [M, N] and Y [N, M] → ``tt.tile.eltwise(Y, i, j,
X[j, i])``, the transposed element copy a ``T.Parallel`` nest ``Y[i, j] = X[j, i]`` also lowers to.
D5 compiles that operand as any element-wise value's (:class:`tilelang_tt.ops.copy.BlockOperand`):
output tile (r, c) of Y is tile (c, r) of X, unpacked into DST transposed by ``transpose_tile``
(tt-metal 0.81.1 ``hw/inc/api/compute/transpose.h``:109, ``B[w,h] = A[h,w]`` of a 32x32 tile; init
``transpose_init``:39; the emulator's ``api/compute/transpose.h``), then packed.
Errors: a transpose of a part of a block (a region), of blocks other than 2-D, or whose shapes are
not each other's transpose; dtypes as an on-chip copy's (:meth:`LowerContext.check_compute_dtypes`).
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.common import as_region, is_cb_buffer
from tilelang_tt.ops.base import TileOp, register

HINT = "T.transpose two whole on-chip 2-D blocks, X [M, N] into Y [N, M] (T.copy a slice into a block first)"


class Transpose(TileOp):
    tile_ops = ("transpose",)

    def lower(self, ctx, stmt):
        src, dst = (as_region(a) for a in stmt.value.args[:2])
        for region in (src, dst):
            if region is None or not is_cb_buffer(region.buffer) or len(region.buffer.shape) != 2:
                what = "a global tensor" if region is not None and not is_cb_buffer(region.buffer) else "a block"
                raise ctx.error(stmt, f"T.transpose of {what} that is not a 2-D on-chip block", HINT)
            if any(not (isinstance(s, tirx.IntImm) and int(s) == 0) for s in region.starts) or \
                    [int(e) for e in region.extents] != [int(d) for d in region.buffer.shape]:
                raise ctx.error(stmt, f"T.transpose of a part of `{region.buffer.name}` "
                                f"{[int(d) for d in region.buffer.shape]}", HINT)
        x, y = src.buffer, dst.buffer
        if [int(d) for d in y.shape] != [int(d) for d in reversed(x.shape)] or ctx.block_kind(x) or ctx.block_kind(y):
            raise ctx.error(stmt, f"T.transpose from `{x.name}` {[int(d) for d in x.shape]} to `{y.name}` "
                            f"{[int(d) for d in y.shape]}, which is not its transpose", HINT)
        ctx.check_compute_dtypes(stmt, (x, y), integer=True)
        return ctx.eltwise_from(stmt, y, lambda i, j: tirx.Cast(str(y.dtype), tirx.BufferLoad(x, [j, i])))


TRANSPOSE = register(Transpose())
