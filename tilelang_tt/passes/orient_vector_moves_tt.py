"""A2b OrientVectorMovesTT: a vector block moved to or from a tensor slice lying the other way goes
through a vector block of the slice's kind.

A vector block holds its values in column 0 of its tiles (``vector`` "col": a per-row result, a
reduction along dim 1, a vector read per row in a ``T.Parallel`` nest) or in row 0 ("row": per
column). The reader and writer move tiles, or the face-row runs of a tile's rows (LowerCBIntrinsics),
unchanged: a column vector copied into a row of a tensor's matrix view (``T.copy(l, lse[b, h, s,
0:128])`` of a (B, H, S, N) tensor in tiles) would write row 0 of the block's tiles, the first value
and padding, and read the other way it would put a tensor row in row 0 of a block compute reads in
column 0; a row vector (a mask read per key, ``visible[j]``) read from a column of a tensor
(``kv_mask[b, s0:s0 + 128, g]``) likewise. So the copy moves a new block ``<v>_row`` (``<v>_col``) of
the slice's kind instead, and a ``T.Parallel`` copy between the two (compute transposes each tile:
``ops/copy.py``, a vector read into a vector of the other kind) stands after the read or before the
write. A float32 vector passes the transpose's 19-bit source registers (tf32, 10 mantissa bits).

Reads: ``tt.cb_desc`` (the blocks' vector kinds), ``tt.layout_desc`` (the slices' matrix views: flat
and column tensors, rows of row-major tensors, which this pass leaves alone).
Writes: ``tt.cb_desc`` entries of the new blocks (the vector's geometry, transposed). TIR: the copies
changed as above; the new blocks allocated beside the vectors. A copy under ``tt.valid_rows`` (some
of a block's elements) is left as it is (the writer's rule). Before this pass: A2's CB geometry;
after it, every vector block moved to or from a tensor in tiles lies along the slice it moves.

    Before: T.copy(T.region(l[0], 1, 128), T.region(lse[b, h, s, 0], 2, 1, 1, 1, 128))   # l: "col"
    After:  for k in T.parallel(128):
                l_row[k] = l[k]                                                     # l_row: "row"
            T.copy(T.region(l_row[0], 1, 128), T.region(lse[b, h, s, 0], 2, 1, 1, 1, 128))
"""

from __future__ import annotations

import dataclasses

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.attrs import Attr, Scope
from tilelang_tt.ir.common import (
    COL,
    READ,
    ROW,
    WRITE,
    as_region,
    const_int,
    is_cb_buffer,
    is_global_buffer,
    keep_span,
    kernel_names,
    make_region,
    prim_func_pass,
    seq,
    tile_op_name,
    unique_name,
)
from tilelang_tt.ir.slices import is_row_major, matrix_slice, vector_layout

PASS = "OrientVectorMovesTT"


def _slice_kind(func: tirx.PrimFunc, tensor) -> str | None:
    """Along which a slice of a tensor in tiles lies in its matrix view: ``row`` (part of one row, over
    several columns), ``col`` (part of one column, over several rows), else None."""
    if is_row_major(func, tensor.buffer):
        return None
    view = matrix_slice(tensor, *vector_layout(func, tensor.buffer))
    rows, cols = (None, None) if view is None else (const_int(view.rows), const_int(view.cols))
    if rows == 1 and cols not in (None, 1):
        return ROW
    if cols == 1 and rows not in (None, 1):
        return COL
    return None


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    cbs = dict(Attr.CB_DESC.read(func))
    taken = kernel_names(func)
    turned: dict = {}  # (vector block, kind) -> the block of that kind it moves through

    def turned_block(block: tirx.Buffer, kind: str) -> tirx.Buffer:
        if (block, kind) not in turned:
            name = unique_name(f"{block.name}_{kind}", taken)
            taken.add(name)
            turned[block, kind] = tirx.decl_buffer(block.shape, block.dtype, name, scope=block.scope())
            desc = cbs[block.name]
            cbs[name] = dataclasses.replace(desc, name=name, vector=kind, block_tiles=desc.block_tiles[::-1],
                                            valid=None if desc.valid is None else tuple(desc.valid[::-1]))
        return turned[block, kind]

    def copied(node, src: tirx.Buffer, dst: tirx.Buffer, n: int) -> tirx.Stmt:
        k = tirx.Var(unique_name("k", taken), "int32")
        taken.add(k.name)
        store = keep_span(node, tirx.BufferStore(dst, tirx.BufferLoad(src, [k]), [k]))
        return keep_span(node, tirx.For(k, 0, n, tirx.ForKind.PARALLEL, store))

    def pre(node):
        if isinstance(node, tirx.AttrStmt) and node.attr_key == Scope.VALID_ROWS.value:
            return node  # some of the block's elements: the writer's rule
        return None

    def post(node):
        if isinstance(node, tirx.SBlock) and any(b.same_as(a) for b, _ in turned for a in node.alloc_buffers):
            made = [t for a in node.alloc_buffers for (b, _), t in turned.items() if b.same_as(a)]
            return tirx.SBlock(node.iter_vars, node.reads, node.writes, node.name_hint, node.body, node.init,
                               [*node.alloc_buffers, *made], node.match_buffers, node.annotations)
        if tile_op_name(node) != "copy":
            return None
        src, dst = (as_region(a) for a in node.value.args[:2])
        if src is None or dst is None:
            return None
        reading = is_global_buffer(src.buffer) and is_cb_buffer(dst.buffer)
        if not reading and not (is_cb_buffer(src.buffer) and is_global_buffer(dst.buffer)):
            return None
        tensor, block = (src, dst) if reading else (dst, src)
        desc = cbs.get(block.buffer.name)
        kind = _slice_kind(func, tensor)
        if desc is None or not desc.vector or kind in (None, desc.vector) or len(block.buffer.shape) != 1:
            return None
        n = int(block.buffer.shape[0])
        if const_int(block.extents[0]) != n:
            return None  # part of the block: not this pass's form
        other = turned_block(block.buffer, kind)
        whole = make_region(other, [0], [n], WRITE if reading else READ)
        args = [node.value.args[0], whole] if reading else [whole, node.value.args[1]]
        move = keep_span(node, tirx.Evaluate(tirx.Call(node.value.dtype, node.value.op, [*args, *node.value.args[2:]])))
        if reading:
            return seq([move, copied(node, other, block.buffer, n)])
        return seq([copied(node, block.buffer, other, n), move])

    body = tirx.stmt_functor.ir_transform(func.body, pre, post, ["tirx.Evaluate", "tirx.SBlock", "tirx.AttrStmt"])
    if not turned:
        return func
    return Attr.CB_DESC.write(func.with_body(body), dict(sorted(cbs.items())))


def OrientVectorMovesTT():
    return prim_func_pass(_transform, PASS)
