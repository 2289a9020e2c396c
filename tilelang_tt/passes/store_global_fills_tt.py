"""StoreGlobalFillsTT (front, after MapParameterViewsTT): a ``T.fill`` / ``T.clear`` of a global tensor
region is a store of a constant block.

TileLang kernels zero an output before other launches or blocks add into it (``T.clear(C)`` in one
``T.Kernel``, ``T.atomic_add`` into ``C`` in the next), or set a region to a constant. A Tenstorrent
kernel writes DRAM only from circular buffers: the fill becomes a new fragment ``<tensor>_fill`` of the
region's shape (its extents without those of 1), filled on chip (compute's ``fill_tile``), and a
``T.copy`` of it into the region, which the writer stores like any copy out: the slice, disjointness
and read-after-write checks of every store hold for it.

Reads: ``T.fill`` tile ops whose region is of a global buffer with static extents (a region of a size
known only at run time stays, refused by the fill's lowering). Writes: no attribute. TIR: the fill
replaced as below; the new fragment allocated in the innermost block around the fill (the
``T.Kernel``'s root block, which allocates its on-chip buffers). Before: a fill may write a global tensor; after: fills write on-chip
blocks only.

    Before: T.fill(T.region(C[by * 64, 0], 2, 64, 128), 0)
    After:  C_fill = T.sblock_alloc_buffer((64, 128), scope="local.fragment")
            T.fill(T.region(C_fill[0, 0], 2, 64, 128), 0)
            T.copy(T.region(C_fill[0, 0], 1, 64, 128), T.region(C[by * 64, 0], 2, 64, 128))
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import ir, tirx

from tilelang_tt.ir.common import (
    READ,
    WRITE,
    as_region,
    const_int,
    is_global_buffer,
    keep_span,
    kernel_names,
    make_region,
    prim_func_pass,
    seq,
    tile_op_name,
    unique_name,
)

PASS = "StoreGlobalFillsTT"


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    taken = kernel_names(func)
    made: list[list] = []  # per enclosing block (innermost last): the fragments made for the fills in it

    def pre(node):
        if isinstance(node, tirx.SBlock):
            made.append([])
        return None

    def post(node):
        if isinstance(node, tirx.SBlock):
            fills = made.pop()
            if not fills:
                return None
            return tirx.SBlock(node.iter_vars, node.reads, node.writes, node.name_hint, node.body, node.init,
                               [*node.alloc_buffers, *fills], node.match_buffers, node.annotations)
        if tile_op_name(node) != "fill" or not made:
            return None
        region = as_region(node.value.args[0])
        if region is None or not is_global_buffer(region.buffer):
            return None
        extents = [const_int(e) for e in region.extents]
        if any(e is None for e in extents):
            return None
        shape = [e for e in extents if e != 1] or [1]
        name = unique_name(f"{region.buffer.name}_fill", taken)
        taken.add(name)
        block = tirx.decl_buffer(shape, region.buffer.dtype, name, scope="local.fragment")
        made[-1].append(block)
        zeros = [0] * len(shape)
        fill = tirx.Call(node.value.dtype, node.value.op, [make_region(block, zeros, shape, WRITE),
                                                           *node.value.args[1:]])
        copy = tirx.Call("handle", ir.Op.get("tl.tileop.copy"), [
            make_region(block, zeros, shape, READ),
            make_region(region.buffer, list(region.starts), extents, WRITE)])
        return seq([keep_span(node, tirx.Evaluate(fill)), keep_span(node, tirx.Evaluate(copy))])

    body = tirx.stmt_functor.ir_transform(func.body, pre, post, ["tirx.SBlock", "tirx.Evaluate"])
    return func if body.same_as(func.body) else func.with_body(body)


def StoreGlobalFillsTT():
    return prim_func_pass(_transform, PASS)
