"""WidenMaskBlocksTT (after LowerParallelReductionsTT): an on-chip block of a mask (uint8 or bool)
is a bfloat16 block of the same values.

Compute works on float tiles: a byte-per-element block would reach DST as integers it cannot
compare. A block of dtype uint8 or bool that is filled only by ``T.copy`` from a tensor and read
only in element-wise values (flash decoding's ``visible[j] != 0``) becomes a bfloat16 block (values
0..255 are exact): the reader reads the tensor's bytes and widens them in place
(LowerCBIntrinsics), and the values read it as floats — ``m[j] != 0`` compares ``m[j]`` with 0.0,
``T.if_then_else(m[j], ..)`` tests ``m[j] != 0.0``, a cast of it to a float is the float. A bool
block compute fills, element-wise stores of conditions (``mask[i] = x[i] > 0``; sglang's sparse
attention: ``mask[i] = idx[i] >= 0``), is a bfloat16 block of 1.0 where the condition holds and 0.0
elsewhere: each store becomes ``T.if_then_else(cond, 1.0, 0.0)`` (the SFPU's comparisons compute
those values), its reads as above. A block that mixes both writes, or is read or written by another
tile op, is left as it is. Other integer blocks are left as they are (compute on them is refused by
name). Reads/writes no attribute.

    Before: visible = T.alloc_fragment((64,), "uint8")
            T.copy(kv_mask[b, kb * 64:(kb + 1) * 64, g], visible)
            for i, j in T.Parallel(4, 64): s[i, j] = T.if_then_else(visible[j] != T.uint8(0), s[i, j], -inf)
    After:  visible = T.alloc_fragment((64,), "bfloat16")
            T.copy(kv_mask[b, kb * 64:(kb + 1) * 64, g], visible)
            for i, j in T.Parallel(4, 64): s[i, j] = T.if_then_else(visible[j] != T.bfloat16(0), s[i, j], -inf)

    Before: keep = T.alloc_fragment((32, 64), "bool")
            for i, j in T.Parallel(32, 64): keep[i, j] = x[i, j] > T.float32(0)
    After:  keep = T.alloc_fragment((32, 64), "bfloat16")
            for i, j in T.Parallel(32, 64): keep[i, j] = T.if_then_else(x[i, j] > T.float32(0), T.bfloat16(1),
                                                                        T.bfloat16(0))
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import ir, tirx

from tilelang_tt.ir.common import (
    allocations,
    as_region,
    is_cb_buffer,
    is_global_buffer,
    keep_span,
    loads,
    prim_func_pass,
    tile_op_name,
)

PASS = "WidenMaskBlocksTT"
MASK_DTYPES = ("uint8", "bool")
WIDE = "bfloat16"
INTEGERS = ("int32",)  # the blocks whose comparisons the SFPU's integer ops compute (tilelang_tt/ops/eltwise.py)
COMPARES = (tirx.EQ, tirx.NE, tirx.LT, tirx.LE, tirx.GT, tirx.GE)


def _masks(func: tirx.PrimFunc) -> list[tirx.Buffer]:
    """The mask blocks: written only by T.copy from a tensor, or only by stores of conditions, and read
    only by element-wise values."""
    candidates = [b for b in allocations(func) if is_cb_buffer(b) and str(b.dtype) in MASK_DTYPES]
    if not candidates:
        return []
    bad: list = []

    def visit(node):
        name = tile_op_name(node)
        if name is not None:
            regions = [as_region(a) for a in node.value.args if as_region(a) is not None]
            if name == "copy" and len(regions) == 2 and is_global_buffer(regions[0].buffer):
                copied.append(regions[1].buffer)
                return  # a read of the tensor into the block
            bad.extend(r.buffer for r in regions)
        elif isinstance(node, tirx.BufferStore):
            condition = str(node.buffer.dtype) == "bool" and str(node.value.dtype) == "bool"
            (stored if condition else bad).append(node.buffer)

    copied: list = []
    stored: list = []
    tirx.stmt_functor.post_order_visit(func.body, visit)
    return [b for b in candidates if not any(b.same_as(x) for x in bad) and not (
        any(b.same_as(x) for x in copied) and any(b.same_as(x) for x in stored))]


def _widened(expr, loads: dict):
    """``expr`` reading the widened blocks: each load ``Cast(old dtype, wide load)``, then the casts
    folded where the value is compared, tested or converted to a float."""
    def load(node):
        new = loads.get(node.buffer)
        return tirx.Cast(node.dtype, tirx.BufferLoad(new, node.indices)) if new is not None else None

    def fold(node):
        def wide(x):  # the wide load under integer casts of it (TileLang compares masks as int32)
            while isinstance(x, tirx.Cast) and not str(x.dtype).startswith(("float", "bfloat")):
                if str(x.value.dtype) == WIDE:
                    return x.value
                x = x.value
            return None

        if isinstance(node, COMPARES):
            a, b = wide(node.a), wide(node.b)
            if a is not None or b is not None:
                return type(node)(a if a is not None else tirx.Cast(WIDE, node.a),
                                  b if b is not None else tirx.Cast(WIDE, node.b))
        if isinstance(node, tirx.Cast) and wide(node.value) is not None and str(node.dtype).startswith(
                ("float", "bfloat")):
            return tirx.Cast(node.dtype, wide(node.value))
        if isinstance(node, tirx.Call) and isinstance(node.op, ir.Op) and node.op.name == "tirx.if_then_else" \
                and wide(node.args[0]) is not None:
            cond = tirx.NE(wide(node.args[0]), tirx.const(0.0, WIDE))
            return tirx.Call(node.dtype, node.op, [cond, node.args[1], node.args[2]])
        return None

    stmt = tirx.stmt_functor.ir_transform(tirx.Evaluate(expr), None, load, ["tirx.BufferLoad"])
    return tirx.stmt_functor.ir_transform(stmt, None, fold, ["tirx.EQ", "tirx.NE", "tirx.LT", "tirx.LE", "tirx.GT",
                                                             "tirx.GE", "tirx.Cast", "tirx.Call"]).value


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    masks = _masks(func)
    if not masks:
        return func
    wide = {b: tirx.decl_buffer(b.shape, WIDE, b.name, scope=b.scope()) for b in masks}

    def post(node):
        if isinstance(node, tirx.BufferStore) and node.buffer in wide:  # a condition stored: 1.0 or 0.0
            if any(str(n.buffer.dtype) in INTEGERS for n in loads(node.value)):  # the int32 1 or 0, converted
                value = tirx.Cast(WIDE, tirx.Cast("int32", node.value))
            else:
                value = tirx.Call(WIDE, ir.Op.get("tirx.if_then_else"), [node.value, tirx.const(1.0, WIDE),
                                                                         tirx.const(0.0, WIDE)])
            return keep_span(node, tirx.BufferStore(wide[node.buffer], _widened(value, wide), node.indices))
        if isinstance(node, tirx.BufferStore):
            return keep_span(node, tirx.BufferStore(node.buffer, _widened(node.value, wide), node.indices))
        if isinstance(node, tirx.Evaluate) and tile_op_name(node) == "copy":
            args = [tirx.Call(a.dtype, a.op, [tirx.BufferLoad(wide[a.args[0].buffer], a.args[0].indices),
                                              *a.args[1:]]) if as_region(a) is not None and a.args[0].buffer in wide
                    else a for a in node.value.args]
            return keep_span(node, tirx.Evaluate(tirx.Call(node.value.dtype, node.value.op, args)))
        if isinstance(node, tirx.SBlock) and any(b in wide for b in node.alloc_buffers):
            return tirx.SBlock(node.iter_vars, node.reads, node.writes, node.name_hint, node.body, node.init,
                               [wide.get(b, b) for b in node.alloc_buffers], node.match_buffers, node.annotations)
        return None

    return func.with_body(tirx.stmt_functor.ir_transform(func.body, None, post,
                                                         ["tirx.BufferStore", "tirx.Evaluate", "tirx.SBlock"]))


def WidenMaskBlocksTT():
    return prim_func_pass(_transform, PASS)
