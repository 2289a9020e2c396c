"""LowerBlockReshapesTT (after LowerParallelReductionsTT): a row of an on-chip block copied into a
vector is a masked sum down the block's rows.

``T.copy(parts[s, :], v)`` (or ``for i in T.Parallel(n): v[i] = parts[s, i]``) moves row ``s`` of
an ``[R, n]`` block into the vector ``v`` of ``n`` values. On Tenstorrent a block is tiles, and a
vector holds its values in row 0 of its tiles (a row vector) or in column 0 (a column, one value
per row of the blocks it meets): row ``s`` must move to row 0, or turn into a column. Both are a
sum over the rows of the block with every row but ``s`` masked to zero, which the tile engine does
(``T.reduce_sum`` along the rows, or, for a column, along the columns of the transposed block):
``x + 0 + ... + 0`` is ``x`` exactly, whatever ``x`` is (infinities included; the mask selects,
never multiplies). Which form follows from how the kernel uses ``v`` (``ir.common.vector_kinds``).
A copy between blocks of the same tiles (``[1, n]`` into a row vector of ``n``) stays a copy
(tilelang_tt.ops.copy).

Reads: on-chip ``T.copy`` statements and 1-D ``T.Parallel`` stores between a 2-D block and a
vector. Writes: each as a ``T.Parallel`` nest masking the block into a new block and a
``T.reduce`` of that into the vector; the new blocks are allocated beside the kernel's.
Before: copies from a row of a block into a vector. After: none (but those between blocks of the
same tiles).
Errors: a row of a float32 block (the FPU reads float32 as TF32: the row would be rounded).

    Before: T.copy(T.region(parts[s, 0], 1, 1, 128), T.region(v[0], 2, 128))    (v a row vector)
    After:  for i, j in T.Parallel(4, 128):
                parts_row[i, j] = T.if_then_else(i == s, parts[i, j], T.float32(0))
            T.reduce(T.region(parts_row[0, 0], 1, 4, 128), T.region(v[0], 2, 128), "sum", 0, True)
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import ir, tirx

from tilelang_tt.ir.common import (
    COL,
    READ,
    WRITE,
    allocate_in_root,
    as_region,
    const_int,
    error,
    is_cb_buffer,
    keep_span,
    kernel_names,
    make_region,
    parallel_nest,
    prim_func_pass,
    seq,
    tile_op_name,
    unique_name,
    uses_var,
    vector_kinds,
)

PASS = "LowerBlockReshapesTT"


def _row_copy(stmt) -> tuple[tirx.Buffer, tirx.PrimExpr, tirx.Buffer] | None:
    """(block, row, vector) of ``T.copy(block[row, :], vector)``: a whole row of a 2-D on-chip block
    into a whole on-chip vector of as many values; None for any other statement."""
    if tile_op_name(stmt) != "copy":
        return None
    src, dst = (as_region(a) for a in stmt.value.args[:2])
    if src is None or dst is None or not (is_cb_buffer(src.buffer) and is_cb_buffer(dst.buffer)):
        return None
    block, vector = src.buffer, dst.buffer
    if len(block.shape) != 2 or len(vector.shape) != 1 or const_int(vector.shape[0]) != const_int(block.shape[1]):
        return None
    whole_row = list(src.extents) == [1, int(block.shape[1])] and const_int(src.starts[1]) == 0
    if not whole_row or list(dst.extents) != [int(vector.shape[0])] or const_int(dst.starts[0]) != 0:
        return None
    return block, src.starts[0], vector


def _row_store(loop: tirx.For) -> tuple[tirx.Buffer, tirx.PrimExpr, tirx.Buffer] | None:
    """(block, row, vector) of ``for i in T.Parallel(n): vector[i] = block[row, i]`` (a cast
    allowed), ``row`` not depending on ``i``, both on-chip of ``n`` values a row; else None."""
    loops, body = parallel_nest(loop)
    if len(loops) != 1 or not isinstance(body, tirx.BufferStore):
        return None
    i = loops[0].loop_var
    value = body.value.value if isinstance(body.value, tirx.Cast) else body.value
    if not isinstance(value, tirx.BufferLoad) or len(value.indices) != 2 or len(body.indices) != 1:
        return None
    block, vector = value.buffer, body.buffer
    if not (is_cb_buffer(block) and is_cb_buffer(vector)) or not body.indices[0].same_as(i) or \
            not value.indices[1].same_as(i) or uses_var(value.indices[0], i):
        return None
    n = const_int(loops[0].extent)
    if n is None or const_int(loops[0].min) != 0 or n != const_int(block.shape[1]) or n != const_int(vector.shape[0]):
        return None
    return block, value.indices[0], vector


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    kinds = vector_kinds(func)
    names = kernel_names(func)
    pending: list[tirx.Buffer] = []

    def rewrite(stmt, found) -> tirx.Stmt:
        block, row, vector = found
        rows, n = int(block.shape[0]), int(block.shape[1])
        if rows == 1 and kinds.get(vector) != COL:
            return None  # the same tiles: a copy (tilelang_tt.ops.copy)
        if str(block.dtype) == "float32":
            raise error(PASS, func, stmt,
                        f"row {row} of the float32 block `{block.name}` {list(block.shape)} moved into the vector "
                        f"`{vector.name}`: the tile engine moves a row within its tiles only through the FPU's source "
                        "registers, which hold 19 bits of a float32 value (TF32): the row would come back rounded",
                        f"keep `{block.name}` bfloat16 (its values pass exactly), or copy the row from the tensor "
                        f"it came from straight into `{vector.name}` (T.copy(X[r, :], v))")
        column = kinds.get(vector) == COL  # the row becomes a column: the block read transposed
        shape = [n, rows] if column else [rows, n]
        name = unique_name(f"{block.name}_row", names)
        names.add(name)
        masked = tirx.decl_buffer(shape, vector.dtype, name, scope="local.fragment")
        pending.append(masked)
        a, b = tirx.Var("i", "int32"), tirx.Var("j", "int32")
        r, c = (b, a) if column else (a, b)
        element = tirx.BufferLoad(block, [r, c])
        if element.dtype != vector.dtype:
            element = tirx.Cast(vector.dtype, element)
        value = tirx.Call(vector.dtype, ir.Op.get("tirx.if_then_else"),
                          [tirx.EQ(r, row), element, tirx.const(0, vector.dtype)])
        nest = keep_span(stmt, tirx.BufferStore(masked, value, [a, b]))
        for var, extent in reversed(list(zip((a, b), shape))):
            nest = keep_span(stmt, tirx.For(var, 0, extent, tirx.ForKind.PARALLEL, nest))
        reduce = keep_span(stmt, tirx.Evaluate(tirx.Call("handle", ir.Op.get("tl.tileop.reduce"), [
            make_region(masked, [0, 0], shape, READ), make_region(vector, [0], [n], WRITE),
            tirx.StringImm("sum"), tirx.IntImm("int32", 1 if column else 0), tirx.IntImm("bool", True)])))
        return seq([nest, reduce])

    def post(node):
        if isinstance(node, tirx.For) and node.kind == tirx.ForKind.PARALLEL:
            found = _row_store(node)
        elif isinstance(node, tirx.Evaluate):
            found = _row_copy(node)
        else:
            return None
        return rewrite(node, found) if found is not None else None

    body = tirx.stmt_functor.ir_transform(func.body, None, post, ["tirx.For", "tirx.Evaluate"])
    if body.same_as(func.body):
        return func
    return func.with_body(allocate_in_root(body, pending))


def LowerBlockReshapesTT():
    return prim_func_pass(_transform, PASS)
