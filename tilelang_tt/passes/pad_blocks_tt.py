"""PadBlocksTT (front, after WidenMaskBlocksTT): on-chip blocks of any shape become blocks of whole
32x32 tiles, their padding masked where it would change a result.

A Tenstorrent block is a matrix of 32x32 tiles. A block whose shape is not (``[4, 64]``, ``[16,
128]``, ``[64, 136]``, ``[1]``, rank 3 and 4 such as ``[2, 64, 32]`` or ``[1, 16, 1, 16]``) is
padded: its matrix view (:mod:`tilelang_tt.ir.padding`: dimensions of extent 1 dropped, those before
the last two stacking matrices) is allocated as ``ceil(rows / 32) x ceil(cols / 32)`` tiles, the valid
values at the top left of each matrix. Blocks of fewer than 32 rows that CoarsenRowBlocksTT groups
never reach this pass: grouping moves and computes 32 / rows times less.

What changes, statement by statement:

* loads and stores of a padded block index its matrix (rank 3 and 4: the row of the stacked
  matrices, ``b * rows + i``);
* a ``T.Parallel`` nest storing into a padded block over its whole shape runs over the padded
  shape (the padding is computed on like the rest and holds what it holds: element-wise values
  never carry it into a valid position), the loops over a stack of matrices fused into one loop
  over their rows;
* ``T.copy`` between a tensor and a padded block keeps the tensor's slice and takes the valid part
  of the block: the reader moves the slice and zero-fills the rest of the tiles, the writer writes
  the slice only (LowerCBIntrinsics; InferTTLayout lays a tensor out in rows where a slice covers
  part of a tile that holds other values). Every other tile op covers the whole padded block, and a
  ``T.gemm``'s M, N and K are the padded ones;
* a reduction along a padded axis reads the block with its padding set to the reduction's neutral
  value (0 for a sum, -inf for a max, +inf for a min), so does a reversed ``T.cumsum`` (0: the padding
  after a value is added into it), and a ``T.gemm`` whose contracted extent K
  is padded reads A and B with their padding along K set to 0: a new block ``<X>_masked`` computed
  right before it, ``T.if_then_else(j < cols, X[i, j], neutral)`` (a mask the reader generates,
  ``where_tile`` in compute). A sum's or a contraction's mask is left out where the padding is
  already 0: the block comes from tensors (the reader's zeros), zero fills, copies of such blocks and
  values that are 0 where their operands are (products, sums, differences, casts).

Writes ``tt.padded_blocks`` (block name -> its valid [rows, cols]; the masks too), for the plan's
account of what the padding costs. Errors: a block stacking matrices whose rows are not whole
tiles, a reduction of stacked matrices, a tile op on part of a rank 3 or 4 block.

    Before: o_s = T.sblock_alloc_buffer((4, 64), "bfloat16", scope="shared.dyn")
            lse = T.sblock_alloc_buffer((4, 128), "bfloat16", scope="local.fragment")
            T.copy(T.region(part_lse[b, h, 0, 0], 1, 1, 1, 4, 128), T.region(lse[0, 0], 2, 4, 128))
            T.reduce(T.region(lse[0, 0], 1, 4, 128), T.region(peak[0], 2, 128), "max", 0, T.bool(True))
            for i, d in T.parallel(4, 64): o_s[i, d] = T.Cast("bfloat16", o[i, d])
    After:  o_s = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="shared.dyn")
            lse = T.sblock_alloc_buffer((32, 128), "bfloat16", scope="local.fragment")
            lse_masked = T.sblock_alloc_buffer((32, 128), "bfloat16", scope="local.fragment")
            T.copy(T.region(part_lse[b, h, 0, 0], 1, 1, 1, 4, 128), T.region(lse[0, 0], 2, 4, 128))
            for i, j in T.parallel(32, 128):
                lse_masked[i, j] = T.if_then_else(i < 4, lse[i, j], T.Cast("bfloat16", -T.infinity("float32")))
            T.reduce(T.region(lse_masked[0, 0], 1, 32, 128), T.region(peak[0], 2, 128), "max", 0, T.bool(True))
            for i, d in T.parallel(32, 64): o_s[i, d] = T.Cast("bfloat16", o[i, d])
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import tilelang  # noqa: F401
import tilelang.language as T
from tvm import arith, ir, tirx

from tilelang_tt.ir.attrs import Attr
from tilelang_tt.ir.common import (
    READ,
    TILE,
    allocations,
    as_region,
    const_int,
    error,
    first_stmt_using,
    is_cb_buffer,
    is_global_buffer,
    keep_span,
    kernel_names,
    make_region,
    parallel_nest,
    prim_func_pass,
    seq,
    stores,
    tile_op_name,
    unique_name,
)
from tilelang_tt.ir.padding import BlockMatrix, block_matrix, stacked_rows_error, zero_padded

PASS = "PadBlocksTT"
GEMM_M, GEMM_N, GEMM_K = 5, 6, 7  # T.gemm's (A, B, C, trans_A, trans_B, M, N, K, ...) arguments
NEUTRAL = {"sum": 0.0, "abssum": 0.0, "absmax": 0.0, "max": -math.inf, "min": math.inf}


@dataclass(frozen=True)
class _Padded:
    """A padded block: the buffer it was, the buffer of whole tiles it is, its matrix view."""

    old: tirx.Buffer
    new: tirx.Buffer
    matrix: BlockMatrix

    def index(self, indices) -> list:
        """The element ``old[indices]`` in ``new``."""
        return self.matrix.element(indices)

    def axis_padded(self, axis: int) -> bool:
        """Whether the matrix has padding along ``axis`` (0: rows, 1: columns)."""
        rows, cols = self.matrix.valid
        extent, new = (rows, self.new.shape[0]) if axis == 0 else (cols, self.new.shape[-1])
        return int(new) != extent

    def matrix_dim(self, dim: int) -> int | None:
        """The axis of the matrix (0: rows, 1: columns) a dimension of the old shape is, or None
        (a dimension of extent 1, or one stacking matrices)."""
        rank = len(self.old.shape)
        dim %= rank
        if rank <= 2:
            return dim if rank == 2 else 1
        if dim == self.matrix.col_dim:
            return 1
        return 0 if self.matrix.kept and dim == self.matrix.kept[-1] and self.matrix.stack == 1 else None


def _neutral(kind: str, dtype: str) -> tirx.PrimExpr:
    value = NEUTRAL[kind]
    if math.isinf(value):
        return tirx.Cast(dtype, T.infinity("float32") * (1.0 if value > 0 else -1.0))
    return tirx.const(value, dtype)


class _Pad:
    def __init__(self, func: tirx.PrimFunc, padded_blocks: dict[tirx.Buffer, _Padded]):
        self.func = func
        self.blocks = padded_blocks
        self.names = kernel_names(func)
        self.zero = zero_padded(func, set(padded_blocks))
        self.masks: list[tirx.Buffer] = []  # mask blocks made, allocated beside the kernel's blocks
        self.placed = 0
        self.valid: dict[str, list[int]] = {p.new.name: list(p.matrix.valid) for p in padded_blocks.values()}

    def fail(self, node, message: str, hint: str):
        return error(PASS, self.func, node, message, hint)

    # -- statements --------------------------------------------------------------------------------
    def run(self, body: tirx.Stmt) -> tirx.Stmt:
        return tirx.stmt_functor.ir_transform(body, self.pre, self.post,
                                              ["tirx.For", "tirx.Evaluate", "tirx.BufferLoad", "tirx.BufferStore",
                                               "tirx.SBlock"])

    def pre(self, node):
        if isinstance(node, tirx.For) and node.kind == tirx.ForKind.PARALLEL:
            return self.nest(node)
        if isinstance(node, tirx.Evaluate) and tile_op_name(node) is not None:
            return self.tile_op(node)
        return None

    def post(self, node):
        if isinstance(node, (tirx.BufferLoad, tirx.BufferStore)) and node.buffer in self.blocks:
            return self.access(node)
        if isinstance(node, tirx.SBlock) and any(b in self.blocks for b in node.alloc_buffers):
            allocs = [self.blocks[b].new if b in self.blocks else b for b in node.alloc_buffers]
            allocs += self.masks[self.placed:]  # the masks made inside it
            self.placed = len(self.masks)
            return tirx.SBlock(node.iter_vars, node.reads, node.writes, node.name_hint, node.body, node.init, allocs,
                               node.match_buffers, node.annotations)
        return None

    def access(self, node, analyzer: arith.Analyzer | None = None):
        p = self.blocks[node.buffer]
        indices = p.index(node.indices)
        if analyzer is not None:
            indices = [analyzer.simplify(x) for x in indices]
        if isinstance(node, tirx.BufferLoad):
            return tirx.BufferLoad(p.new, indices)
        return keep_span(node, tirx.BufferStore(p.new, node.value, indices))

    # -- T.Parallel nests --------------------------------------------------------------------------
    def nest(self, loop: tirx.For) -> tirx.Stmt:
        """The nest over the padded shape of the padded blocks it stores (module docstring); a nest
        that does not cover such a block whole keeps its loops (the later passes judge it)."""
        loops, body = parallel_nest(loop)
        extents = {lp.loop_var: int(lp.extent) for lp in loops if const_int(lp.extent) is not None}
        wanted: dict[tirx.Var, int] = {}
        fused: tuple[list[tirx.Var], int] | None = None
        covers = True
        for store in stores(body):
            p = self.blocks.get(store.buffer)
            if p is None:
                continue
            need, stack = _nest_extents(p, store.indices, extents)
            if need is None:
                covers = False
                break
            for var, extent in need.items():
                if wanted.setdefault(var, extent) != extent:
                    covers = False
            if stack is not None:
                fused = fused or stack
                covers = covers and [v.name for v in fused[0]] == [v.name for v in stack[0]]
        if covers and fused is not None and not _adjacent(loops, fused[0]):
            covers = False
        analyzer = arith.Analyzer()
        vmap: dict[tirx.Var, tirx.PrimExpr] = {}
        new_loops = []
        for lp in loops:
            var = lp.loop_var
            if covers and fused is not None and any(var.same_as(v) for v in fused[0]):
                stacked, total = fused
                if not var.same_as(stacked[0]):
                    continue  # fused into the first loop of the stack
                r = tirx.Var(f"{var.name}_rows", var.dtype)
                analyzer.bind(r, ir.Range.from_min_extent(0, total))
                inner = total
                for v in stacked:  # v = (r // (the extents inside v)) % (v's extent)
                    inner //= extents[v]
                    vmap[v] = tirx.floormod(tirx.floordiv(r, inner), extents[v])
                new_loops.append(keep_span(lp, tirx.For(r, lp.min, total, lp.kind, lp.body, lp.thread_binding,
                                                        lp.annotations)))
                continue
            extent = wanted.get(var, int(lp.extent)) if covers else lp.extent
            analyzer.bind(var, ir.Range.from_min_extent(0, extent))
            new_loops.append(keep_span(lp, tirx.For(var, lp.min, extent, lp.kind, lp.body, lp.thread_binding,
                                                    lp.annotations)))
        if vmap:
            body = tirx.stmt_functor.substitute(body, vmap)
        body = tirx.stmt_functor.ir_transform(
            body, None, lambda n: self.access(n, analyzer) if n.buffer in self.blocks else None,
            ["tirx.BufferLoad", "tirx.BufferStore"])
        for lp in reversed(new_loops):
            body = keep_span(lp, tirx.For(lp.loop_var, lp.min, lp.extent, lp.kind, body, lp.thread_binding,
                                          lp.annotations))
        return body

    # -- tile ops ----------------------------------------------------------------------------------
    def tile_op(self, stmt: tirx.Evaluate) -> tirx.Stmt | None:
        op, args = tile_op_name(stmt), list(stmt.value.args)
        regions = {k: r for k, a in enumerate(args) if isinstance(a, tirx.Call) and (r := as_region(a)) is not None}
        mine = [k for k, r in regions.items() if r.buffer in self.blocks]
        if not mine:
            return None
        # a copy with a tensor (whose slice's extents may be expressions, which as_region does not read)
        tensor_copy = op == "copy" and any(isinstance(a, tirx.Call) and isinstance(a.args[0], tirx.BufferLoad) and
                                           is_global_buffer(a.args[0].buffer) for a in args[:2])
        before, masked = [], {}
        if op == "reduce":
            before, masked = self.masked_reduce(stmt, args, regions)
        elif op == "gemm":
            before, masked = self.masked_gemm(stmt, args, regions)
        elif op == "cumsum":
            before, masked = self.masked_scan(stmt, args, regions)
        for k in mine:
            args[k] = masked[k] if k in masked else self.region(stmt, regions[k], int(args[k].args[1]),
                                                                 whole=not tensor_copy)
        if op == "gemm":  # M, N and K of the padded blocks
            (a, b, c) = (as_region(args[k]).buffer.shape for k in range(3))
            for k, extent in ((GEMM_M, c[0]), (GEMM_N, c[1]), (GEMM_K, a[0] if bool(args[3]) else a[1])):
                args[k] = tirx.IntImm(args[k].dtype, int(extent))
        new = keep_span(stmt, tirx.Evaluate(tirx.Call(stmt.value.dtype, stmt.value.op, args)))
        return seq([*before, new])

    def region(self, stmt, region, mask: int, whole: bool) -> tirx.Call:
        """The region of a padded block. One covering the block: the whole padded block, or
        (``whole`` False: the block side of a copy with a tensor) its valid values. One covering part
        of it: the same part (of a rank 2 block; a block of rank 3 or 4 is refused)."""
        p = self.blocks[region.buffer]
        shape = [int(d) for d in p.new.shape]
        covers = all(const_int(s) == 0 for s in region.starts) and [int(e) for e in region.extents] == list(
            p.matrix.shape)
        if covers and whole:
            return make_region(p.new, [0] * len(shape), shape, mask)
        if covers:
            return make_region(p.new, [0] * len(shape), list(p.matrix.valid)[-len(shape):], mask)
        if len(p.old.shape) <= 2:
            return make_region(p.new, list(region.starts), list(region.extents), mask)
        raise self.fail(stmt, f"`T.{tile_op_name(stmt)}` moves part of the block `{p.old.name}` "
                              f"{list(p.matrix.shape)}: a block of rank {len(p.old.shape)} moves whole",
                        "copy the whole block, or allocate the part as a block of its own")

    def masked(self, stmt, p: _Padded, axes: list[int], kind: str) -> tuple[tirx.Stmt, tirx.Buffer]:
        """(the statement computing ``<X>_masked``: the padded block with its padding along ``axes``
        set to ``kind``'s neutral value, the new block)."""
        name = unique_name(f"{p.old.name}_masked", self.names)
        self.names.add(name)
        shape = [int(d) for d in p.new.shape]
        buf = tirx.decl_buffer(shape, p.new.dtype, name, scope="local.fragment")
        self.masks.append(buf)
        self.valid[name] = list(p.matrix.valid)
        i, j = tirx.Var("i", "int32"), tirx.Var("j", "int32")
        rows, cols = p.matrix.valid
        conds = [c for axis, c in ((0, i < rows), (1, j < cols)) if axis in axes]
        cond = conds[0] if len(conds) == 1 else tirx.And(conds[0], conds[1])
        value = tirx.Call(str(p.new.dtype), ir.Op.get("tirx.if_then_else"),
                          [cond, tirx.BufferLoad(p.new, [i, j]), _neutral(kind, str(p.new.dtype))])
        store = keep_span(stmt, tirx.BufferStore(buf, value, [i, j]))
        inner = keep_span(stmt, tirx.For(j, 0, shape[1], tirx.ForKind.PARALLEL, store))
        return keep_span(stmt, tirx.For(i, 0, shape[0], tirx.ForKind.PARALLEL, inner)), buf

    def masked_reduce(self, stmt, args: list, regions) -> tuple[list, dict]:
        """(the mask before a reduction along a padded axis, {0: the masked block's region});
        ``args``' dim becomes the axis of the matrix."""
        p = self.blocks.get(regions[0].buffer)
        if p is None:
            return [], {}
        kind = str(args[2].value)
        if p.matrix.stack > 1:
            raise self.fail(stmt, f"T.reduce_{kind} of `{p.old.name}` {list(p.matrix.shape)}, which stacks "
                                  f"{p.matrix.stack} matrices: a reduction runs over one matrix",
                            "reduce each matrix in a block of rank 2 of its own")
        axis = p.matrix_dim(int(args[3]))
        if axis is None:
            raise self.fail(stmt, f"T.reduce_{kind} of `{p.old.name}` {list(p.matrix.shape)} along dim "
                                  f"{int(args[3])}, of extent 1",
                            "reduce along a dimension of the block's rows or columns")
        args[3] = tirx.IntImm(args[3].dtype, axis)
        if not p.axis_padded(axis) or (NEUTRAL.get(kind) == 0.0 and p.old in self.zero):
            return [], {}
        if kind not in NEUTRAL:
            raise self.fail(stmt, f"T.reduce_{kind} along the padded {('rows', 'columns')[axis]} of `{p.old.name}` "
                                  f"{list(p.matrix.shape)}: no neutral value to pad it with",
                            "reduce a block whose reduced extent is a multiple of 32")
        mask, buf = self.masked(stmt, p, [axis], kind)
        return [mask], {0: make_region(buf, [0, 0], [int(d) for d in buf.shape], READ)}

    def masked_scan(self, stmt, args: list, regions) -> tuple[list, dict]:
        """(the mask before a reversed T.cumsum along a padded axis, {0: the masked block's region}): a reversed
        scan adds the padding after a valid value into it, unless the padding is 0 already (a forward scan adds
        only what comes before)."""
        p = self.blocks.get(regions[0].buffer)
        if p is None or not bool(args[3]) or p.matrix.stack > 1 or len(p.new.shape) != 2:
            return [], {}  # a vector's scan is refused as such (ops/scan.py)
        axis = p.matrix_dim(int(args[2]))
        if axis is None or not p.axis_padded(axis) or p.old in self.zero:
            return [], {}
        mask, buf = self.masked(stmt, p, [axis], "sum")
        return [mask], {0: make_region(buf, [0, 0], [int(d) for d in buf.shape], READ)}

    def masked_gemm(self, stmt, args: list, regions) -> tuple[list, dict]:
        """(the masks before a T.gemm whose K is padded, {0 and/or 1: the masked blocks' regions}):
        A's and B's padding along K set to 0, unless it is 0 already."""
        before, masked = [], {}
        for k, transposed, contracted in ((0, bool(args[3]), 1), (1, bool(args[4]), 0)):
            p = self.blocks.get(regions[k].buffer)
            if p is None:
                continue
            axis = 1 - contracted if transposed else contracted
            if p.axis_padded(axis) and p.old not in self.zero:
                mask, buf = self.masked(stmt, p, [axis], "sum")
                masked[k] = make_region(buf, [0, 0], [int(d) for d in buf.shape], READ)
                before.append(mask)
        return before, masked


def _nest_extents(p: _Padded, indices, extents: dict) -> tuple[dict | None, tuple | None]:
    """(loop var -> its extent over the padded shape, or None when the store does not cover the
    block whole; (the loops over a stack of matrices, their rows together) or None)."""
    shape = [int(d) for d in p.old.shape]
    need: dict[tirx.Var, int] = {}
    loop_of = {}
    for d, index in enumerate(indices):
        var = next((v for v in extents if isinstance(index, tirx.Var) and index.same_as(v)), None)
        if var is None:
            if shape[d] != 1:
                return None, None
            continue
        if extents[var] != shape[d]:
            return None, None
        loop_of[d] = var
    new_shape = [int(d) for d in p.new.shape]
    if len(shape) <= 2:
        for d, var in loop_of.items():
            need[var] = new_shape[d] if len(shape) == 2 else new_shape[0]
        return need, None
    if p.matrix.col_dim in loop_of:
        need[loop_of[p.matrix.col_dim]] = new_shape[-1]
    kept = [loop_of[d] for d in p.matrix.kept if d in loop_of]
    if p.matrix.stack == 1:
        if kept:
            need[kept[-1]] = new_shape[0]
        return need, None
    if len(kept) != len(p.matrix.kept):
        return None, None
    return need, (kept, p.matrix.stack * p.matrix.rows)


def _adjacent(loops: list[tirx.For], stacked: list[tirx.Var]) -> bool:
    """Whether the loops over a stack of matrices are consecutive loops of the nest, in order."""
    vars_ = [lp.loop_var for lp in loops]
    first = next((k for k, v in enumerate(vars_) if v.same_as(stacked[0])), None)
    return first is not None and all(k + first < len(vars_) and vars_[k + first].same_as(v)
                                     for k, v in enumerate(stacked))


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    blocks: dict[tirx.Buffer, _Padded] = {}
    for buf in allocations(func):
        if not is_cb_buffer(buf) or any(const_int(d) is None for d in buf.shape):
            continue
        matrix = block_matrix(buf.shape)
        if matrix.is_whole:
            continue
        why = stacked_rows_error(matrix)
        if why is not None:
            raise error(PASS, func, first_stmt_using(func.body, buf) or buf,
                        f"the block `{buf.name}` {list(matrix.shape)} cannot be padded to whole tiles: {why}",
                        f"give each matrix rows in multiples of {TILE}, or keep one matrix per block")
        new = tirx.decl_buffer(list(matrix.padded_shape), buf.dtype, buf.name, scope=buf.scope(), span=buf.span)
        blocks[buf] = _Padded(buf, new, matrix)
    if not blocks:
        return func
    pad = _Pad(func, blocks)
    body = pad.run(func.body)
    body = tirx.stmt_functor.substitute(body, {p.old.data: p.new.data for p in blocks.values()})
    return Attr.PADDED_BLOCKS.write(func.with_body(body), dict(sorted(pad.valid.items())))


def PadBlocksTT():
    return prim_func_pass(_transform, PASS)
