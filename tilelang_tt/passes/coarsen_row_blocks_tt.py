"""CoarsenRowBlocksTT (front, after UniqueBufferNamesTT): blocks of fewer than 32 rows become
blocks of 32 rows.

TileLang's norm and softmax examples give each block one row by default (``blk_m = 1``:
``T.Kernel(T.ceildiv(M, blk_m))`` with ``(blk_m, N)`` shared/fragment blocks and ``(blk_m,)``
per-row vectors). A Tenstorrent block is made of 32x32 tiles. When every block works on its own
rows only, F = 32 / r consecutive blocks of r rows are independent and become one block of 32
rows: the grid axis ``v`` that picks the rows shrinks to ceil(E / F), every row block (an on-chip
buffer of r < 32 rows; a per-row vector of r values) grows to 32 rows, every global slice that
starts at row ``v * r`` spans 32 rows, and every ``T.Parallel`` nest over row blocks runs over 32
rows (block ``g = i // r`` of the group, its row ``i % r``). Of the three ways to fit r-row blocks
to tiles this one moves and computes least: the same tiles as ``blk_m = 32``, where padding each
block to a tile would move and compute 32 / r times as much, and row-major pages would add a
tilize per block.

A block works on its own rows when: each copy between a tensor and a row block moves the rows
the block index picks (start ``v * r + c``, extent r, along one axis) or whole row blocks; fills,
per-row reductions (``dim=1``) and the ``A``/``C`` operands of a gemm cover whole row blocks (``B``
is not a row block); a ``T.Parallel`` nest that reads a row block or ``v`` stores only into row
blocks or tensor rows of ``v``, and one using ``v`` touches a row block (else each block of the group
would store the same rows, from a nest over the group's rows); ``v`` appears nowhere else. Anything else (a reduction along the
rows, a row block stored into a buffer shared by the block's rows, ``v`` in a loop bound; row
blocks of different rows, or rows not dividing 32; two block indices picking rows) mixes rows: the
kernel is left as it is, and PadBlocksTT pads each of its blocks to whole tiles instead.

Reads/writes no attribute. A kernel without row blocks, or whose row blocks cannot be grouped, is
returned unchanged.

    Before: for bx in T.thread_binding(64, thread="blockIdx.x"):
                x = T.sblock_alloc_buffer((1, 128));  s = T.sblock_alloc_buffer((1,))
                T.copy(T.region(X[bx, 0], 1, 1, 128), T.region(x[0, 0], 2, 1, 128))
                T.reduce(T.region(x[0, 0], 1, 1, 128), T.region(s[0], 2, 1), "sum", 1, True)
                for i in T.parallel(1):
                    Mean[bx + i] = s[i]
    After:  for bx in T.thread_binding(2, thread="blockIdx.x"):
                x = T.sblock_alloc_buffer((32, 128));  s = T.sblock_alloc_buffer((32,))
                T.copy(T.region(X[bx * 32, 0], 1, 32, 128), T.region(x[0, 0], 2, 32, 128))
                T.reduce(T.region(x[0, 0], 1, 32, 128), T.region(s[0], 2, 32), "sum", 1, True)
                for i in T.parallel(32):
                    Mean[bx * 32 + i] = s[i]
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import arith, ir, tirx

from tilelang_tt.ir.common import (
    COL,
    TILE,
    allocations,
    as_region,
    const_int,
    contains,
    is_cb_buffer,
    is_global_buffer,
    keep_span,
    make_region,
    parallel_nest,
    prim_func_pass,
    rebuild_nest,
    tile_op_name,
    uses_var,
    vector_kinds,
)
from tilelang_tt.ir.slices import block_grid_loops

PASS = "CoarsenRowBlocksTT"


class _CannotGroup(Exception):
    """Why the row blocks of a kernel cannot be grouped (what mixes their rows): the kernel is left
    to PadBlocksTT."""


def _candidates(func: tirx.PrimFunc) -> dict[tirx.Buffer, int]:
    """On-chip buffers of fewer than 32 rows -> their rows: (r, n) buffers and per-row vectors (r,).
    A candidate is a row block only when the grid picks its rows (:func:`_row_blocks`); a (1, n)
    row vector (a column reduction's result, a bias row) is not one."""
    kinds = vector_kinds(func)
    out = {}
    for buf in allocations(func):
        shape = [const_int(d) for d in buf.shape]
        if not is_cb_buffer(buf) or None in shape:
            continue
        if (len(shape) == 2 or (len(shape) == 1 and kinds.get(buf) == COL)) and shape[0] < TILE:
            out[buf] = shape[0]
    return out


def _stride(start, v: tirx.Var) -> int | None:
    """How far ``start`` moves when ``v`` grows by one (None when not by a constant)."""
    return const_int(tirx.stmt_functor.substitute(start, {v: v + 1}) - start)


def _seeds(func: tirx.PrimFunc, candidates: dict[tirx.Buffer, int], v: tirx.Var) -> set[tirx.Buffer]:
    """Candidates copied from or to the rows ``v`` picks: a tensor slice whose one axis that
    depends on ``v`` starts at ``v * r + c`` with extent r, r the candidate's rows."""
    seeds = set()

    def visit(node):
        if isinstance(node, tirx.For) and node.kind == tirx.ForKind.PARALLEL:
            seeds.update(_element_seeds(node, candidates, v))
        if tile_op_name(node) != "copy":
            return
        regions = [as_region(a) for a in node.value.args[:2]]
        if any(r is None for r in regions):
            return
        for mine, other in (regions, regions[::-1]):
            buf = mine.buffer
            if buf not in candidates or not is_global_buffer(other.buffer):
                continue
            axes = [d for d, start in enumerate(other.starts) if uses_var(start, v)]
            # a tensor's last axis is a 2-D block's columns: a v picking columns of (r, n) blocks
            # (A[by * r, v * n] with n == r) does not pick their rows
            columns = len(buf.shape) == 2 and len(other.starts) >= 2 and axes == [len(other.starts) - 1]
            if len(axes) == 1 and not columns and \
                    other.extents[axes[0]] == candidates[buf] == _stride(other.starts[axes[0]], v):
                seeds.add(buf)

    tirx.stmt_functor.post_order_visit(func.body, visit)
    return seeds


def _element_seeds(loop: tirx.For, candidates: dict[tirx.Buffer, int], v: tirx.Var) -> list[tirx.Buffer]:
    """Candidates of the T.Parallel nest at ``loop`` indexed along their rows by a loop of r iterations
    that, with ``v``, indexes the rows of a tensor element the nest reads (``running[i] *= X[bx + i, j]``:
    scalar code over the row ``bx`` picks, ScalarRowsToBlocksTT's serial sweep); a store alone picks no
    rows (a block computed without ``v`` stored at its rows stays as it is)."""
    loops, body = parallel_nest(loop)
    accesses = []
    tirx.stmt_functor.post_order_visit(body, lambda n: accesses.append(n) if isinstance(
        n, (tirx.BufferLoad, tirx.BufferStore)) else None)
    out = []
    for lp in loops:
        r = const_int(lp.extent)
        picked = any(isinstance(n, tirx.BufferLoad) and is_global_buffer(n.buffer)
                     and len(axes := [x for x in n.indices if uses_var(x, v)]) == 1
                     and uses_var(axes[0], lp.loop_var) and _stride(axes[0], v) == r for n in accesses)
        if picked:
            out += [n.buffer for n in accesses if n.buffer in candidates and candidates[n.buffer] == r
                    and uses_var(n.indices[0], lp.loop_var)]
    return out


def _linked(node, candidates, rows: set) -> list[tirx.Buffer]:
    """Candidates that share the rows of a row block of ``rows`` in statement ``node``: the other
    operand of a copy, of a per-row reduction, A and C of a gemm; in a T.Parallel nest, the
    candidates indexed along their rows by the loop that indexes a row block's rows."""
    op = tile_op_name(node)
    pairs = {"copy": (0, 1), "reduce": (0, 1), "gemm": (0, 2), "cumsum": (0, 1)}
    if op in pairs:
        regions = [as_region(node.value.args[k]) for k in pairs[op]]
        bufs = [r.buffer for r in regions if r is not None and r.buffer in candidates]
        dim = {"reduce": 3, "cumsum": 2}.get(op)  # the argument naming the dimension reduced or scanned
        if dim is not None and int(node.value.args[dim]) not in (1, -1):
            return []
        return bufs if any(b in rows for b in bufs) else []
    if isinstance(node, tirx.For) and node.kind == tirx.ForKind.PARALLEL:
        loops, body = parallel_nest(node)
        accesses = []
        tirx.stmt_functor.post_order_visit(body, lambda n: accesses.append(n) if isinstance(
            n, (tirx.BufferLoad, tirx.BufferStore)) and n.buffer in candidates else None)
        out = []
        for lp in loops:
            along = [n.buffer for n in accesses if uses_var(n.indices[0], lp.loop_var)]
            if any(b in rows for b in along):
                out += along
        return out
    return []


def _row_blocks(func: tirx.PrimFunc, candidates: dict[tirx.Buffer, int], v: tirx.Var) -> set[tirx.Buffer]:
    """The candidates whose rows ``v`` picks: the seeds and, to a fixed point, the candidates
    linked to a row block."""
    rows = _seeds(func, candidates, v)
    while True:
        found = []
        tirx.stmt_functor.post_order_visit(func.body, lambda n: found.extend(_linked(n, candidates, rows)))
        new = {b for b in found if b not in rows}
        if not new:
            return rows
        rows |= new


class _Coarsen:
    def __init__(self, func: tirx.PrimFunc, rows: int, blocks: dict[tirx.Buffer, tirx.Buffer], grid: tirx.For):
        self.func, self.r, self.factor = func, rows, TILE // rows
        self.blocks = blocks  # row block -> the same block of 32 rows
        self.grid = grid
        self.v = grid.loop_var
        self.v_new = tirx.Var(self.v.name, self.v.dtype)
        self.analyzer = arith.Analyzer()
        self.analyzer.bind(self.v_new, ir.Range.from_min_extent(0, self._grid_extent()))

    def _grid_extent(self) -> int | tirx.PrimExpr:
        """ceil(E / F) of the grid axis' extent E: an int, or an expression of a dynamic E."""
        extent = self.grid.extent
        if isinstance(extent, tirx.IntImm):
            return -(-int(extent) // self.factor)
        return arith.Analyzer().simplify(tirx.floordiv(extent + (self.factor - 1), self.factor))

    def _touches_rows(self, node) -> bool:
        return contains(node, lambda n: isinstance(n, (tirx.BufferLoad, tirx.BufferStore)) and n.buffer in self.blocks)

    # -- statements --------------------------------------------------------------------------------
    def stmt(self, s):
        if isinstance(s, tirx.SeqStmt):
            return tirx.SeqStmt([self.stmt(x) for x in s.seq])
        if isinstance(s, tirx.For):
            if s.same_as(self.grid):
                binding = s.thread_binding
                dom = None if binding.dom is None else ir.Range.from_min_extent(0, self._grid_extent())
                var = self.v_new if binding.var.same_as(self.v) else binding.var
                binding = tirx.IterVar(dom, var, binding.iter_type, binding.thread_tag)
                return keep_span(s, tirx.For(self.v_new, s.min, self._grid_extent(), s.kind, self.stmt(s.body),
                                             binding, s.annotations))
            if s.kind == tirx.ForKind.PARALLEL:
                return self.nest(s)
            if uses_var(s.min, self.v) or uses_var(s.extent, self.v):
                raise _CannotGroup(f"the loop bound depends on the block index `{self.v.name}`")
            return keep_span(s, tirx.For(s.loop_var, s.min, s.extent, s.kind, self.stmt(s.body), s.thread_binding,
                                         s.annotations))
        if isinstance(s, tirx.SBlockRealize):
            return keep_span(s, tirx.SBlockRealize(s.iter_values, s.predicate, self.block(s.block)))
        if isinstance(s, tirx.AttrStmt):
            return keep_span(s, tirx.AttrStmt(s.node, s.attr_key, s.value, self.stmt(s.body)))
        if isinstance(s, tirx.Evaluate) and tile_op_name(s) is not None:
            return self.tile_op(s)
        if uses_var(s, self.v) or self._touches_rows(s):
            raise _CannotGroup(f"`{type(s).__name__}` statements over row blocks are not grouped")
        return s

    def block(self, b: tirx.SBlock) -> tirx.SBlock:
        allocs = [self.blocks[buf] if buf in self.blocks else buf for buf in b.alloc_buffers]
        return tirx.SBlock(b.iter_vars, b.reads, b.writes, b.name_hint, self.stmt(b.body), b.init, allocs,
                           b.match_buffers, b.annotations)

    # -- tile ops ----------------------------------------------------------------------------------
    def tile_op(self, s: tirx.Evaluate):
        op, args = tile_op_name(s), list(s.value.args)
        regions = {k: as_region(a) for k, a in enumerate(args)}
        rows = [k for k, reg in regions.items() if reg is not None and reg.buffer in self.blocks]
        if not rows:
            if uses_var(s, self.v):
                raise _CannotGroup(f"`T.{op}` uses the block index `{self.v.name}` without a row block")
            return s
        if op == "reduce" and (0 not in rows or int(args[3]) not in (1, -1)):
            raise _CannotGroup("the reduction runs along the rows of a row block")
        if op == "gemm" and (1 in rows or bool(args[3]) or 0 not in rows or 2 not in rows):
            raise _CannotGroup("a gemm groups rows only with row blocks as A and C (not B, not transposed)")
        if op == "cumsum" and int(args[2]) not in (1, -1):
            raise _CannotGroup("the scan runs along the rows of a row block")
        if op not in ("copy", "fill", "reduce", "gemm", "cumsum"):
            raise _CannotGroup(f"`T.{op}` over row blocks is not grouped")
        for k, reg in regions.items():
            if reg is None or not isinstance(args[k], tirx.Call):
                continue
            if reg.buffer in self.blocks:
                args[k] = self._row_region(s, reg, args[k])
            elif is_global_buffer(reg.buffer):
                args[k] = self._tensor_region(s, reg, args[k])
            elif uses_var(args[k], self.v):
                raise _CannotGroup(f"`{reg.buffer.name}` is indexed by the block index `{self.v.name}`")
        if op == "copy" and not all(regions[k].buffer in self.blocks or is_global_buffer(regions[k].buffer)
                                    for k in (0, 1)):
            raise _CannotGroup("a row block is copied to or from a buffer shared by the block's rows")
        return keep_span(s, tirx.Evaluate(tirx.Call(s.value.dtype, s.value.op, args)))

    def _row_region(self, s, reg, call: tirx.Call) -> tirx.Call:
        if const_int(reg.starts[0]) != 0 or reg.extents[0] != self.r:
            raise _CannotGroup(f"`T.{tile_op_name(s)}` covers part of the rows of `{reg.buffer.name}`")
        return make_region(self.blocks[reg.buffer], reg.starts, [TILE, *reg.extents[1:]], int(call.args[1]))

    def _tensor_region(self, s, reg, call: tirx.Call) -> tirx.Call:
        axes = [d for d, start in enumerate(reg.starts) if uses_var(start, self.v)]
        if not axes:
            if uses_var(call, self.v):
                raise _CannotGroup(f"the slice of `{reg.buffer.name}` depends on the block index `{self.v.name}`")
            raise _CannotGroup(f"every block moves the same rows of `{reg.buffer.name}`")
        if len(axes) > 1 or reg.extents[axes[0]] != self.r or _stride(reg.starts[axes[0]], self.v) != self.r:
            raise _CannotGroup(f"the slice of `{reg.buffer.name}` is not the {self.r} row(s) block "
                               f"`{self.v.name}` picks (start {self.v.name} * {self.r}, extent {self.r})")
        a = axes[0]
        starts = [self._sub(x, {self.v: self.v_new * self.factor}) for x in reg.starts]
        extents = [TILE if d == a else e for d, e in enumerate(reg.extents)]
        return make_region(reg.buffer, starts, extents, int(call.args[1]))

    def _sub(self, expr, vmap):
        return self.analyzer.simplify(tirx.stmt_functor.substitute(expr, vmap))

    # -- T.Parallel nests --------------------------------------------------------------------------
    def nest(self, loop: tirx.For):
        loops, body = parallel_nest(loop)
        if not self._touches_rows(body):
            if uses_var(body, self.v):  # every block of the group would store the same values at its rows
                raise _CannotGroup(f"a T.Parallel nest uses the block index `{self.v.name}` without a row block")
            return loop
        row = loops[0] if const_int(loops[0].extent) == self.r and self._row_loop(loops[0], body) else None
        rest = loops[1:] if row is not None else loops
        i = tirx.Var(row.loop_var.name if row is not None else "i", "int32")
        self.analyzer.bind(i, ir.Range.from_min_extent(0, TILE))
        g = i if self.r == 1 else tirx.floordiv(i, self.r)
        vmap = {self.v: self.v_new * self.factor + g}
        if row is not None:
            vmap[row.loop_var] = tirx.IntImm("int32", 0) if self.r == 1 else tirx.floormod(i, self.r)
        stores = []  # checked here: an exception raised inside TVM's visitor comes back out a RuntimeError
        tirx.stmt_functor.post_order_visit(body, lambda n: stores.append(n) if isinstance(n, tirx.BufferStore) else None)
        for n in stores:
            if n.buffer not in self.blocks and not is_global_buffer(n.buffer):
                raise _CannotGroup(f"`{n.buffer.name}` is stored from the rows of the block but has no row of its own")
            if is_global_buffer(n.buffer) and not any(uses_var(x, self.v) for x in n.indices):
                raise _CannotGroup(f"every block stores the same element of `{n.buffer.name}`")
        new_body = tirx.stmt_functor.ir_transform(
            body, None, lambda n: self._access(n, vmap, g), ["tirx.BufferLoad", "tirx.BufferStore"])
        new_body = tirx.stmt_functor.substitute(new_body, vmap)
        outer = keep_span(loop, tirx.For(i, 0, TILE, tirx.ForKind.PARALLEL,
                                         rebuild_nest(rest, new_body), None, loop.annotations))
        return outer

    def _row_loop(self, lp: tirx.For, body) -> bool:
        """Whether ``lp`` walks the rows: it is the first index of a row block in the nest."""
        return contains(body, lambda n: isinstance(n, (tirx.BufferLoad, tirx.BufferStore)) and n.buffer in self.blocks
                        and uses_var(n.indices[0], lp.loop_var))

    def _access(self, n, vmap, g):
        if is_global_buffer(n.buffer):
            indices = [self._sub(x, vmap) for x in n.indices]
            if isinstance(n, tirx.BufferLoad):
                return tirx.BufferLoad(n.buffer, indices)
            return keep_span(n, tirx.BufferStore(n.buffer, n.value, indices))
        if n.buffer not in self.blocks:
            return None
        first = self._sub(g * self.r + tirx.stmt_functor.substitute(n.indices[0], vmap), {})
        indices = [first, *n.indices[1:]]
        new = self.blocks[n.buffer]
        if isinstance(n, tirx.BufferLoad):
            return tirx.BufferLoad(new, indices)
        return keep_span(n, tirx.BufferStore(new, n.value, indices))


def _grouped(func: tirx.PrimFunc, candidates: dict[tirx.Buffer, int]) -> tirx.PrimFunc:
    """``func`` with its row blocks grouped into blocks of 32 rows; :class:`_CannotGroup` when a
    statement mixes their rows."""
    axes = {}  # the T.Kernel grid loop whose index picks the rows of row blocks -> those row blocks
    for grid in block_grid_loops(func).values():
        if const_int(grid.extent) != 1:
            blocks = _row_blocks(func, candidates, grid.loop_var)
            if blocks:
                axes[grid] = blocks
    if not axes:
        return func  # no grid index picks rows: vectors, or blocks PadBlocksTT pads
    if len(axes) > 1:
        a, b = (grid.loop_var.name for grid in axes)
        raise _CannotGroup(f"both block indices `{a}` and `{b}` pick the rows of blocks of fewer than "
                                 f"{TILE} rows")
    (grid, blocks), = axes.items()
    rows = {buf: candidates[buf] for buf in allocations(func) if buf in blocks}  # program order
    first = next(iter(rows))
    for buf, r in rows.items():
        if r != rows[first] or TILE % r:
            raise _CannotGroup(f"`{buf.name}` has {r} rows and `{first.name}` {rows[first]}" if r != rows[first]
                               else f"`{buf.name}` has {r} rows, which do not divide {TILE}")
    new = {buf: tirx.decl_buffer([TILE, *buf.shape[1:]], buf.dtype, buf.name,
                                 data=tirx.Var(buf.data.name, buf.data.type_annotation), scope=buf.scope(),
                                 span=buf.span) for buf in rows}
    body = _Coarsen(func, rows[first], new, grid).stmt(func.body)
    return tirx.PrimFunc(func.params, body, func.ret_type, func.buffer_map, func.attrs, func.span)


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    candidates = _candidates(func)
    if not candidates:
        return func
    try:
        return _grouped(func, candidates)
    except _CannotGroup:
        return func  # the blocks' rows mix: PadBlocksTT pads each block to whole tiles instead


def CoarsenRowBlocksTT():
    return prim_func_pass(_transform, PASS)
