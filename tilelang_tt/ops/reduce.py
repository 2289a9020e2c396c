"""Reductions: ``T.reduce_sum`` / ``T.reduce_max`` of a block along rows or columns.

C2: ``T.reduce_sum/max(X, v, dim, clear)`` → ``tt.tile.reduce("sum"|"max", X, v, dim, clear)``.
D4: ``compute_kernel_hw_startup(X, scaler, v)`` when it is the first op; its init is never hoisted.
D5: per result tile, ``reduce_tile`` over the source tiles into DST 0 with the scaler CB (a tile
of 1.0 the reader pushes once), one result tile per acquire, combined with the old value
(``binary_max_tile``/``add_binary_tile``) when the reduce does not clear.
A reduction along an extent of 1 (``[n, 1]`` along dim 1, ``[1, n]`` along dim 0) is a copy of the
block's one element per result (combined with the old value without ``clear``): C2 lowers it as a
``tt.tile.eltwise`` instead.
Errors: other reductions, integer blocks, a vector source, a result of the wrong orientation.
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.attrs import Intrin
from tilelang_tt.ops.base import Engine, TileOp, register
from tilelang_tt.ops.sfpu import SfpuKind, sfpu_op
from tilelang_tt.passes.common import COL, ROW, as_region, evaluate, seq, serial


class Reduce(TileOp):
    tile_ops = ("reduce",)
    intrin = Intrin.TILE_REDUCE

    def lower(self, ctx, stmt):
        args = stmt.value.args
        src, dst = as_region(args[0]), as_region(args[1])
        kind, dim, clear = args[2].value, int(args[3]), bool(args[4])
        if kind not in ("sum", "max"):
            raise ctx.error(stmt, f"T.reduce_{kind} is not supported", "use T.reduce_sum or T.reduce_max")
        ctx.check_compute_dtypes(stmt, (src.buffer, dst.buffer))
        unit = len(src.buffer.shape) == 2 and int(src.buffer.shape[dim % 2]) == 1  # a [n, 1] block along dim 1 ...
        if not unit and (len(src.buffer.shape) != 2 or ctx.block_kind(src.buffer) != ""):
            raise ctx.error(stmt, f"T.reduce of `{src.buffer.name}` {[int(d) for d in src.buffer.shape]}: the source "
                                  "is a vector",
                            "reduce a 2-D block of whole 32x32 tiles (rows and columns both multiples of 32)")
        dim = dim % 2
        want = COL if dim == 1 else ROW
        if ctx.block_kind(dst.buffer) != want:
            raise ctx.error(stmt, f"the result `{dst.buffer.name}` of a reduction along dim {dim} must be a "
                                  f"{'per-row' if dim == 1 else 'per-column'} vector",
                            f"allocate it as T.alloc_fragment(({int(src.buffer.shape[1 - dim])},), ...)")
        if unit:  # ... or [1, n] along dim 0: a vector of the result's orientation (its shape's), want
            return _reduce_one(ctx, stmt, kind, src.buffer, dst.buffer, clear)
        return evaluate(Intrin.TILE_REDUCE, kind, src.buffer.data, dst.buffer.data, dim, clear, like=stmt)

    def accesses(self, stmt, data_names):
        _, src, dst, _, clear = stmt.value.args
        return [data_names[src]] + ([] if bool(clear) else [data_names[dst]]), data_names[dst]

    def cb_accesses(self, ctx, stmt, data_names):
        reads, write = self.accesses(stmt, data_names)
        return reads + [ctx.scaler], write

    def engine(self, ctx, stmt):
        return Engine(("reduce",))

    def startup(self, ctx, stmt):
        _, src, dst, _, _ = stmt.value.args
        return ctx.index(src.name), ctx.index(ctx.scaler), ctx.index(dst.name), False

    def expand(self, ctx, stmt):
        kind, src_var, dst_var, dim, clear = stmt.value.args
        kind, dim, clear = kind.value, int(dim), bool(clear)
        src, dst, scaler = ctx.cb(src_var.name), ctx.cb(dst_var.name), ctx.cb(ctx.scaler)
        rows, cols = src.block_tiles
        outer, inner = (rows, cols) if dim == 1 else (cols, rows)
        rdim = "row" if dim == 1 else "col"

        def tile(o, n):
            return ctx.analyzer.simplify(o * cols + n if dim == 1 else n * cols + o)

        def one(o):
            stmts = [evaluate(Intrin.DST_ACQUIRE, like=stmt),
                     evaluate(Intrin.UNPACK_RECONFIG, scaler.index, src.index, like=stmt),
                     evaluate(Intrin.REDUCE_INIT, kind, rdim, src.index, scaler.index, dst.index, like=stmt),
                     serial("n", inner, lambda n: evaluate(Intrin.REDUCE_TILE, kind, rdim, src.index, scaler.index,
                                                           tile(o, n), 0, 0, like=stmt), like=stmt),
                     evaluate(Intrin.REDUCE_UNINIT, like=stmt)]
            if not clear:  # the old value into DST 1, combined into DST 0
                combine = sfpu_op(SfpuKind.BINARY, "max" if kind == "max" else "add")
                stmts += [evaluate(Intrin.COPY_INIT, dst.index, like=stmt),
                          evaluate(Intrin.COPY_TILE, dst.index, o, 1, like=stmt),
                          evaluate(Intrin.SFPU_INIT, combine.kind.value, combine.name, like=stmt),
                          evaluate(Intrin.SFPU_BINARY, combine.name, 0, 1, 0, like=stmt)]
            return seq(stmts + ctx.pack(dst, 1, lambda t: t, stmt))

        return serial("o", outer, one, like=stmt)


def _reduce_one(ctx, stmt, kind: str, src, dst, clear: bool):
    """A reduction along an extent of 1 (a [n, 1] block along its rows, a [1, n] one along its columns): each
    result is its one element. The block is a vector of the result's orientation; the result is that vector, or
    with ``clear=False`` its maximum or sum with the old value: an element-wise value."""
    def value(i, j):
        x = ctx.load(src, i, j)
        x = x if x.dtype == dst.dtype else tirx.Cast(dst.dtype, x)
        if clear:
            return x
        old = ctx.load(dst, i, j)
        return tirx.Max(old, x) if kind == "max" else tirx.Add(old, x)

    return ctx.eltwise_from(stmt, dst, value)


REDUCE = register(Reduce())
