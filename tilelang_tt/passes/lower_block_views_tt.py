"""LowerBlockViewsTT (front, after MapParameterViewsTT): a view of an on-chip block (``T.reshape`` of a
shared block or a fragment) becomes accesses of the block itself.

``T.reshape(x_frag, [m, g, s])`` is a second buffer on the block's memory, its elements the block's in
row-major order. On Tenstorrent a block is tiles of its own 2-D shape and no second shape can sit on the
same pages, so every use of the view is rewritten as uses of the block:

* an element ``view[idx]`` (in ``T.Parallel``, a named value) is the block's element at the same flat
  position, ``block[delinearized(linearized(idx))]``;
* a ``T.copy`` between a slice of the view and another block is the element copy it stands for, a
  ``T.Parallel`` nest over the slice's extents; one with a global tensor, when the view keeps the block's
  shape (but extents of 1);
* a reduction of a view ``[m, g, s]`` of an ``[m, g * s]`` block along its last dimension (per-group
  scales: ``T.reduce_absmax(T.reshape(x, [m, g, s]), amax, dim=2)`` into an ``[m, g]`` block) is, per
  group (one at a time, in two blocks), the block with the other groups' columns set to the reduction's identity, reduced along its
  rows into a vector, and that vector stored into the group's column of the result. The masks come
  from the column index alone (generated blocks); ``g`` passes over the block.

Reads: loads, stores and ``tl.region`` slices of buffers whose data is an on-chip block's but which are
not the block (TileLang's ``T.reshape`` / ``T.view`` of a block). Writes: their rewrites; the masked
blocks and group vectors the reductions need, allocated beside the kernel's blocks. After: no buffer
but a block uses a block's memory.
Errors: a view that changes the dtype or the number of elements, or whose shape or the block's is not
static; a copy between a tensor and a view that regroups its block's elements (the reader and writer
move a tensor's blocks in the block's own shape); a view used by another tile op (``T.gemm``, ``T.fill``...), a
reduction of a view other than along
its last dimension of an ``[m, g, s]`` view of an ``[m, g * s]`` block into a whole ``[m, g]`` block, or a
copy whose two slices do not have the same extents (leaving out extents of 1).

    Before: x_r = T.Buffer((8, 4, 128), data=x.data)             (x: (8, 512))
            T.reduce(T.region(x_r[0, 0, 0], 1, 8, 4, 128), T.region(amax[0, 0], 2, 8, 4), "absmax", 2, True)
    After:  for i, j in T.Parallel(8, 512):
                x_group[i, j] = T.if_then_else(j // 128 == 0, x[i, j], T.bfloat16(0))
            T.reduce(T.region(x_group[0, 0], 1, 8, 512), T.region(x_absmax[0], 2, 8), "absmax", 1, True)
            for i, j in T.Parallel(8, 4):
                amax[i, j] = x_absmax[i]
            ... (groups 1, 2, 3 in the same two blocks: amax[i, j] = T.if_then_else(j == 1, x_absmax[i], amax[i, j]))
"""

from __future__ import annotations

import math

import tilelang  # noqa: F401
from tvm import arith, ir, tirx

from tilelang_tt.ir.common import (
    READ,
    WRITE,
    allocate_in_root,
    as_region,
    const_int,
    const_shape,
    error,
    first_stmt_using,
    is_cb_buffer,
    is_global_buffer,
    keep_span,
    kernel_names,
    make_region,
    prim_func_pass,
    seq,
    suffix_products,
    tile_op_name,
    unique_name,
    views_of,
)

PASS = "LowerBlockViewsTT"
HINT = ("use `{block}` in its own shape (a reduction per group: T.reduce of the block masked to the group's "
        "columns with T.if_then_else(j // s == g, x[i, j], 0)), or allocate a block of the other shape and pass the "
        "tensors it is filled from in that shape (reshaped on the host)")
# the value a reduction's masked-out elements take: the kind's identity
IDENTITY = {"sum": 0.0, "abssum": 0.0, "absmax": 0.0, "max": -math.inf, "min": math.inf}


class _View:
    """A view ``view`` of the on-chip block ``block``, elements in the same row-major order."""

    def __init__(self, view: tirx.Buffer, block: tirx.Buffer, analyzer):
        self.view, self.block, self.analyzer = view, block, analyzer
        self.view_dims, self.block_dims = const_shape(view), const_shape(block)

    def element(self, indices) -> list[tirx.PrimExpr]:
        """The block's indices of the view's element at ``indices``."""
        flat = sum((i * s for i, s in zip(indices, suffix_products(self.view_dims))), tirx.const(0, "int32"))
        out = []
        for d, (dim, step) in enumerate(zip(self.block_dims, suffix_products(self.block_dims))):
            digit = tirx.floordiv(flat, step) if step != 1 else flat
            out.append(self.analyzer.simplify(digit if d == 0 else tirx.floormod(digit, dim)))
        return out


def _views(func: tirx.PrimFunc) -> dict[tirx.Buffer, tirx.Buffer]:
    """Every buffer on an on-chip block's memory that is not the block -> the block."""
    owner = {}

    def allocated(node):
        if isinstance(node, tirx.SBlock):
            owner.update({b.data: b for b in node.alloc_buffers if is_cb_buffer(b)})

    tirx.stmt_functor.post_order_visit(func.body, allocated)
    return views_of(func.body, owner)


def _check(func, view: tirx.Buffer, block: tirx.Buffer) -> None:
    vshape, bshape = const_shape(view), const_shape(block)
    if vshape is None or bshape is None or math.prod(vshape) != math.prod(bshape) or view.dtype != block.dtype:
        raise error(PASS, func, first_stmt_using(func.body, view),
                    f"`{view.name}` {list(view.shape)} {view.dtype} is a view of the on-chip block `{block.name}` "
                    f"{list(block.shape)} {block.dtype} (T.reshape, T.view) that changes its dtype or its number of "
                    "elements, or whose shape is not static: a block is tiles of its own shape and dtype",
                    HINT.format(block=block.name))


def _parallel(loops: list[tuple[tirx.Var, int]], body: tirx.Stmt, like) -> tirx.Stmt:
    for var, extent in reversed(loops):
        body = keep_span(like, tirx.For(var, 0, extent, tirx.ForKind.PARALLEL, body))
    return body


class _Rewriter:
    def __init__(self, func, views: dict[tirx.Buffer, _View]):
        self.func, self.views = func, views
        self.names = kernel_names(func)
        self.pending: list[tirx.Buffer] = []

    def refuse(self, stmt, view: _View, what: str):
        raise error(PASS, self.func, stmt,
                    f"{what} the view `{view.view.name}` {view.view_dims} of the on-chip block `{view.block.name}` "
                    f"{view.block_dims} (T.reshape): a block is tiles of its own shape, and this use of another "
                    "shape has no form over them (element accesses, copies and reductions along the last "
                    "dimension of an [m, g, s] view of an [m, g * s] block have)", HINT.format(block=view.block.name))

    def new_block(self, base: str, shape: list[int], dtype: str) -> tirx.Buffer:
        name = unique_name(base, self.names)
        self.names.add(name)
        buf = tirx.decl_buffer(shape, dtype, name, scope="local.fragment")
        self.pending.append(buf)
        return buf

    def statement(self, stmt: tirx.Evaluate) -> tirx.Stmt | None:
        op = tile_op_name(stmt)
        regions = [as_region(a) for a in stmt.value.args] if op is not None else []
        used = [r for r in regions if r is not None and r.buffer in self.views]
        if not used:
            return None
        if op == "copy":
            return self.copy(stmt, *regions[:2])
        if op == "reduce" and regions[0] is not None and regions[0].buffer in self.views and len(used) == 1:
            return self.reduce(stmt, regions[0], regions[1])
        self.refuse(stmt, self.views[used[0].buffer], f"`T.{op}` uses")

    def copy(self, stmt, src, dst) -> tirx.Stmt:
        """The element copy of ``src`` into ``dst``, one loop per extent above 1 (in order on both)."""
        view = self.views[src.buffer] if src.buffer in self.views else self.views[dst.buffer]
        spans = [[d for d, e in enumerate(r.extents) if const_int(e) != 1] for r in (src, dst)]
        sizes = [[const_int(r.extents[d]) for d in dims] for r, dims in zip((src, dst), spans)]
        if sizes[0] != sizes[1] or None in sizes[0]:
            self.refuse(stmt, view, f"`T.copy` between slices of extents {[str(e) for e in src.extents]} and "
                        f"{[str(e) for e in dst.extents]}, one of them")
        tensor = next((r.buffer for r in (src, dst) if is_global_buffer(r.buffer)), None)
        if tensor is not None and [d for d in view.block_dims if d != 1] != sizes[0]:
            # the block's elements at computed positions of the tensor's slice: no block of it
            raise error(PASS, self.func, stmt,
                        f"`T.copy` between the tensor `{tensor.name}` and the view `{view.view.name}` "
                        f"{view.view_dims} of the on-chip block `{view.block.name}` {view.block_dims} (T.reshape): "
                        "the reader and writer move blocks of a tensor in the block's own shape, and the view "
                        "regroups its elements", f"allocate `{view.block.name}` in the shape {sizes[0]} it is "
                        "copied in, and pass the tensors it is filled from in that shape (reshaped on the host), "
                        "copied with T.copy")
        loops = [(tirx.Var(f"v{k}", "int32"), n) for k, n in enumerate(sizes[0])]

        def indices(region, dims):
            out = list(region.starts)
            for (var, _), d in zip(loops, dims):
                out[d] = out[d] + var
            return out

        value = self.load(src.buffer, indices(src, spans[0]))
        if value.dtype != dst.buffer.dtype:
            value = tirx.Cast(dst.buffer.dtype, value)
        store = self.store(dst.buffer, value, indices(dst, spans[1]), stmt)
        return _parallel(loops, store, stmt)

    def reduce(self, stmt, src, dst) -> tirx.Stmt:
        """Per group: the block masked to the group's columns, reduced into a vector stored into the
        group's column of ``dst``."""
        view = self.views[src.buffer]
        kind, dim, clear = str(stmt.value.args[2].value), const_int(stmt.value.args[3]), stmt.value.args[4]
        vdims, bdims = view.view_dims, view.block_dims
        whole = [const_int(e) for e in src.extents] == vdims and all(const_int(s) == 0 for s in src.starts)
        dst_whole = [const_int(e) for e in dst.extents] == const_shape(dst.buffer) and all(
            const_int(s) == 0 for s in dst.starts)
        if dim < 0:
            dim += len(vdims)
        fits = (len(vdims) == 3 and len(bdims) == 2 and vdims[0] == bdims[0] and vdims[1] * vdims[2] == bdims[1]
                and dim == 2 and whole and dst_whole and const_shape(dst.buffer) == vdims[:2] and kind in IDENTITY
                and const_int(clear) == 1)
        if not fits:
            self.refuse(stmt, view, f"`T.reduce_{kind}` along dimension {dim} of")
        rows, groups, size = vdims
        block, out = view.block, dst.buffer
        stmts = []
        masked = self.new_block(f"{block.name}_group", bdims, block.dtype)  # one group at a time
        vector = self.new_block(f"{block.name}_{kind}", [rows], out.dtype)
        for g in range(groups):
            i, j = tirx.Var("i", "int32"), tirx.Var("j", "int32")
            keep = tirx.EQ(tirx.floordiv(j, size), g)
            value = tirx.Call(block.dtype, ir.Op.get("tirx.if_then_else"),
                              [keep, tirx.BufferLoad(block, [i, j]), tirx.const(IDENTITY[kind], block.dtype)])
            stmts.append(_parallel([(i, rows), (j, bdims[1])], keep_span(stmt, tirx.BufferStore(masked, value, [i, j])),
                                   stmt))
            stmts.append(keep_span(stmt, tirx.Evaluate(tirx.Call("handle", ir.Op.get("tl.tileop.reduce"), [
                make_region(masked, [0, 0], bdims, READ), make_region(vector, [0], [rows], WRITE),
                tirx.StringImm(kind), tirx.IntImm("int32", 1), tirx.IntImm("bool", True)]))))
            r, c = tirx.Var("i", "int32"), tirx.Var("j", "int32")
            merged = tirx.BufferLoad(vector, [r])  # the first group fills every column, the others their own
            if g > 0:
                merged = tirx.Call(out.dtype, ir.Op.get("tirx.if_then_else"),
                                   [tirx.EQ(c, g), merged, tirx.BufferLoad(out, [r, c])])
            stmts.append(_parallel([(r, rows), (c, groups)], keep_span(stmt, tirx.BufferStore(out, merged, [r, c])),
                                   stmt))
        return seq(stmts)

    def load(self, buf, indices) -> tirx.BufferLoad:
        if buf in self.views:
            return tirx.BufferLoad(self.views[buf].block, self.views[buf].element(indices))
        return tirx.BufferLoad(buf, indices)

    def store(self, buf, value, indices, like) -> tirx.Stmt:
        if buf in self.views:
            buf, indices = self.views[buf].block, self.views[buf].element(indices)
        return keep_span(like, tirx.BufferStore(buf, value, indices))


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    views = _views(func)
    if not views:
        return func
    for view, block in views.items():
        _check(func, view, block)
    analyzer = arith.Analyzer()
    rewriter = _Rewriter(func, {view: _View(view, block, analyzer) for view, block in views.items()})

    def pre(node):  # a tile op's slices of a view are read whole, before their loads are rewritten
        if isinstance(node, tirx.For):  # the loops' ranges simplify the block's indices of an element
            analyzer.bind(node.loop_var, ir.Range.from_min_extent(node.min, node.extent))
            return None
        return rewriter.statement(node) if isinstance(node, tirx.Evaluate) else None

    def post(node):
        if isinstance(node, tirx.BufferLoad) and node.buffer in rewriter.views:
            return rewriter.load(node.buffer, list(node.indices))
        if isinstance(node, tirx.BufferStore) and node.buffer in rewriter.views:
            return rewriter.store(node.buffer, node.value, list(node.indices), node)
        return None

    body = tirx.stmt_functor.ir_transform(func.body, pre, post, ["tirx.For", "tirx.Evaluate", "tirx.BufferLoad",
                                                                  "tirx.BufferStore"])
    return func.with_body(allocate_in_root(body, rewriter.pending))


def LowerBlockViewsTT():
    return prim_func_pass(_transform, PASS)
