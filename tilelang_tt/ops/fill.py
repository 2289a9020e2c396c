"""Fills: ``T.fill(X, v)`` / ``T.clear(X)``, and the constants of every element-wise value.

C2: a fill of a block no gemm accumulates into → ``tt.tile.eltwise(X, i, j, v)`` (a cleared
accumulator is the gemm family's: :func:`cleared_block`).
D5: a constant is ``fill_tile(dst, v)`` (SFPU init ``fill_tile_init``); an integer one of an int32
value ``fill_tile_int``; a value of float scalar parameters (``T.fill(x, scale)``) ``fill_tile_bitcast`` of
its float32 bits (:mod:`tilelang_tt.ops.eltwise`).
Errors: a fill of a global tensor region of a size known only at run time, any other non-constant value, a
fraction into an int32 block, other integer blocks.
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.ops.base import INTEGER_DTYPES, TileOp, constant, register, runtime_scalar
from tilelang_tt.ops.sfpu import SfpuKind, sfpu_op
from tilelang_tt.ir.common import as_region, evaluate, float_constant, float_scalar_params, is_cb_buffer, tile_op_name


class Fill(TileOp):
    tile_ops = ("fill",)

    def lower(self, ctx, stmt):
        region = as_region(stmt.value.args[0])
        if region is None or not is_cb_buffer(region.buffer):
            # a global region of static extents is a filled block copied there (StoreGlobalFillsTT)
            raise ctx.error(stmt, "T.fill of a global tensor region whose size is known only at run time",
                            "fill an on-chip block of static shape and T.copy it into the region")
        value = float_constant(stmt.value.args[1])
        scalar = stmt.value.args[1]
        if value is None and str(region.buffer.dtype) not in INTEGER_DTYPES and runtime_scalar(
                scalar, float_scalar_params(ctx.func)):  # a value of float scalar parameters: fill_tile_bitcast
            ctx.check_compute_dtypes(stmt, (region.buffer,))
            return ctx.eltwise_from(stmt, region.buffer, lambda i, j: scalar)
        if value is None:
            raise ctx.error(stmt, "T.fill with a non-constant value",
                            "fill with a constant, or a float block with a float scalar parameter")
        ctx.check_compute_dtypes(stmt, (region.buffer,), integer=True)
        if str(region.buffer.dtype) in INTEGER_DTYPES:
            if value != int(value):
                raise ctx.error(stmt, f"T.fill of the int32 block `{region.buffer.name}` with {value}",
                                "fill an int32 block with an integer")
            return ctx.eltwise_from(stmt, region.buffer, lambda i, j: tirx.IntImm("int32", int(value)))
        return ctx.eltwise_from(stmt, region.buffer, lambda i, j: tirx.FloatImm("float32", value))


def cleared_block(stmt) -> tirx.Buffer | None:
    """The block a ``T.clear``/``T.fill(.., 0)`` statement zeroes, if it is one."""
    if tile_op_name(stmt) != "fill":
        return None
    region = as_region(stmt.value.args[0])
    value = stmt.value.args[1]
    if region is None or not is_cb_buffer(region.buffer):
        return None
    if isinstance(value, (tirx.IntImm, tirx.FloatImm)) and float(value.value) == 0.0:
        return region.buffer
    return None


class ConstantOperand:
    """An element-wise value's operand rule (see tilelang_tt.ops.eltwise.TileProgram) for a
    constant: one DST tile filled with it."""

    def match(self, prog, e):
        return constant(e)

    def need(self, prog, value) -> int:
        return 1

    def compile(self, prog, value, base) -> None:
        prog.sfpu(sfpu_op(SfpuKind.FILL, "fill"), lambda tg, tl: evaluate(
            Intrin.FILL_TILE, prog.slot(tl, base), tirx.FloatImm("float32", value), like=prog.like))


FILL = register(Fill())
CONSTANT_OPERAND = ConstantOperand()
