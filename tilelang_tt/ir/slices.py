"""Global tensor slices as the passes see them: the ``T.copy`` transfers between tensors and
on-chip blocks, the matrix view of a slice (leading dimensions folded into rows; a rank-1 tensor a
row, or the column InferTTLayout chose for it), the ``T.Kernel`` grid loops and bound variables its
indices are made of, and whether a slice may reach past its tensor's end; a copy between two tensors
made a copy through a block (:func:`global_copy`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import tilelang  # noqa: F401
from tvm import arith, ir, tirx

from tilelang_tt.ir.attrs import Attr
from tilelang_tt.ir.intrin import Intrin, call_intrin
from tilelang_tt.contract.formula import ceildiv
from tilelang_tt.ir.common import (
    COL,
    READ,
    TILE,
    WRITE,
    Region,
    as_region,
    const_int,
    contains,
    is_cb_buffer,
    is_global_buffer,
    keep_span,
    make_region,
    seq,
    simplify,
    tile_op_name,
    unique_name,
)


def matrix_extents(region: Region, column: bool = False) -> tuple[int, int]:
    """(rows, cols) of an on-chip block seen as a matrix: rank-1 blocks are rows (1, n), or with
    ``column`` (a per-row vector, ``tt.cb_desc`` ``vector`` "col") columns (n, 1)."""
    ext = region.extents
    if len(ext) == 1:
        return (ext[0], 1) if column else (1, ext[0])
    return ext[-2], ext[-1]


@dataclass(frozen=True)
class MatrixSlice:
    """A slice of a global tensor in the tensor's matrix view, where the leading dimensions are
    folded into the rows (the layout InferTTLayout gives an ND tensor: a (B, M, N) tensor is a
    (B*Mp, N) matrix of tiles, Mp = M padded to whole tiles).

    ``row``/``col``: the first element row and column; ``rows``/``cols``: the extents.
    ``bound_row``/``bound_rows``: the slice's first row counted within the rows that bound it, and
    how many those are — its own matrix for a slice inside one matrix ``A[b, i:i+bm, :]`` (rows past
    ``M`` would be the next matrix's), the tensor's rows for a 2-D tensor."""

    row: tirx.PrimExpr
    col: tirx.PrimExpr
    rows: int
    cols: int
    bound_row: tirx.PrimExpr
    bound_rows: int | tirx.PrimExpr  # an expression of the dynamic sizes when they decide it


def vector_layout(func: tirx.PrimFunc, tensor: tirx.Buffer) -> tuple[bool, bool]:
    """(column, flat) of a global tensor's layout (``tt.layout_desc``): the view arguments of
    :func:`matrix_slice` and :func:`overhanging_axes`."""
    desc = Attr.LAYOUT_DESC.read(func).get(tensor.name)
    return (False, False) if desc is None else (desc.column, desc.flat)


def element_column(func: tirx.PrimFunc, tensor: Region, vector: str, reading: bool) -> bool:
    """Whether a copy writes a column vector block (its CB's ``vector``, ``tt.cb_desc``: "col") into one
    column of a tensor of more columns laid out in tiles (per-row scales ``S[by * 32:by * 32 + 32, c]``):
    the other columns of its tiles are other blocks' (or the tensor's) values, so the writer writes an
    element per row (LowerCBIntrinsics) where a tile would overwrite them."""
    return (not reading and vector == COL and len(tensor.buffer.shape) >= 2
            and vector_layout(func, tensor.buffer) == (False, False) and not is_row_major(func, tensor.buffer)
            and const_int(tensor.extents[-1]) == 1 and const_int(tensor.buffer.shape[-1]) != 1)


def is_row_major(func: tirx.PrimFunc, tensor: tirx.Buffer) -> bool:
    """Whether InferTTLayout laid the global ``tensor`` out in rows (``"layout": "row_major"``):
    its slices are :func:`row_slice` s, not blocks of tiles."""
    desc = Attr.LAYOUT_DESC.read(func).get(tensor.name)
    return desc is not None and desc.row_major


def matrix_slice(region: Region, column: bool = False, flat: bool = False) -> MatrixSlice | None:
    """The matrix view of a global tensor slice; None when the slice is not one rectangle of it
    (it spans several matrices without covering their rows and later leading dimensions whole).

    The first dimension (before the last) whose extent exceeds 1, ``k``, carries the rows; the
    dimensions between ``k`` and the columns must be whole, those before ``k`` are single indices.
    Every matrix starts at a whole tile (its rows padded): a slice over several matrices needs
    their rows to be whole tiles. A rank-1 tensor is the row (1, n): the slice is columns; with
    ``column`` (:func:`vector_layout`) the column (n, 1): the slice is rows of column 0. A ``flat``
    tensor (InferTTLayout laid it out as the rank-1 tensor of its elements) is that rank-1 tensor:
    the slice, a vector along the last dimension, starts at its first element's row-major offset.
    """
    shape = [extent(d) for d in region.buffer.shape]
    starts, extents = region.starts, region.extents
    if flat:
        if any(e != 1 for e in extents[:-1]):
            return None
        offset = starts[0]
        for d in range(1, len(shape)):
            offset = offset * shape[d] + starts[d]
        zero, offset = tirx.IntImm("int32", 0), simplify(offset)
        if column:
            return MatrixSlice(offset, zero, extents[-1], 1, offset, math.prod(shape))
        return MatrixSlice(zero, offset, 1, extents[-1], zero, 1)
    if len(shape) == 1:
        zero = tirx.IntImm("int32", 0)
        if column:
            return MatrixSlice(starts[0], zero, extents[0], 1, starts[0], shape[0])
        return MatrixSlice(zero, starts[0], 1, extents[0], zero, 1)
    last_row = len(shape) - 2
    k = next((d for d in range(last_row) if extents[d] > 1), last_row)
    for d in range(k + 1, last_row + 1):
        if not _equal(extents[d], shape[d]) or const_int(starts[d]) != 0:
            return None
    padded = list(shape)
    padded[last_row] = ceildiv(shape[last_row], TILE) * TILE
    if k < last_row and not _equal(padded[last_row], shape[last_row]):
        return None  # the padding rows of each matrix would sit inside the block
    shape = padded
    inner = math.prod(shape[k + 1:last_row + 1])
    row = starts[0]
    for d in range(1, k + 1):
        row = row * shape[d] + starts[d]
    bound_rows = shape[k] * inner if k < last_row else extent(region.buffer.shape[last_row])  # a matrix: its real rows
    return MatrixSlice(simplify(row * inner), starts[-1], extents[k] * inner, extents[-1],
                       simplify(starts[k] * inner), bound_rows)


def extent(dim: tirx.PrimExpr) -> int | tirx.PrimExpr:
    """A tensor extent: an int, or the expression of a dynamic size (``T.dynamic``)."""
    const = const_int(dim)
    return dim if const is None else const


def _equal(a, b) -> bool:
    """Whether two extents are provably equal (a dynamic size equals only itself)."""
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return bool(arith.Analyzer().can_prove_equal(a, b))


@dataclass(frozen=True)
class RowSlice:
    """A slice of a row-major tensor (a page is one row of the last dimension): ``rows`` pages,
    the first ``page`` and each ``stride`` pages after the previous, ``cols`` elements of each from
    element ``col``. ``bound_row``/``bound_rows``: the first row's index along the axis the rows
    run along, and that axis' extent (rows past it are outside the tensor); ``axis``: that axis."""

    page: tirx.PrimExpr
    stride: int | tirx.PrimExpr
    rows: int
    col: tirx.PrimExpr
    cols: int
    bound_row: tirx.PrimExpr
    bound_rows: int | tirx.PrimExpr
    axis: int


def row_slice(region: Region) -> RowSlice | None:
    """The rows of a row-major tensor a slice takes: the rows run along its one leading dimension
    of extent above 1 (the last leading one when none: a single row); None when several leading
    dimensions have extents above 1 and are not one run of strided rows. A per-head slice
    ``Q[b, s0:s0 + 64, h, :]`` of a (B, S, H, D) tensor is 64 rows H pages apart from page
    (b * S + s0) * H + h; several leading dimensions are one run when each after the first spans
    exactly the step of the one before (``out[n, 0:8, 0:8, :]`` of an (N, 8, 8, F) tensor: 64
    consecutive rows), the run counted along the first of them (``axis``)."""
    shape = [extent(d) for d in region.buffer.shape]
    starts, extents = region.starts, region.extents
    if len(shape) == 1:
        zero = tirx.IntImm("int32", 0)
        return RowSlice(zero, 1, 1, starts[0], extents[0], zero, 1, 0)
    wide = [d for d in range(len(shape) - 1) if extents[d] > 1]
    strides = [math.prod(shape[d + 1:-1]) for d in range(len(shape) - 1)]
    if any(not _equal(strides[a], extents[b] * strides[b]) for a, b in zip(wide, wide[1:])):
        return None
    k = wide[-1] if wide else len(shape) - 2  # the innermost: the run's stride
    first = wide[0] if wide else k  # the outermost: rows past its extent are outside the tensor
    page = sum((starts[d] * strides[d] for d in range(1, len(shape) - 1)), starts[0] * strides[0])
    if first == k:  # one leading dimension wide (or none): its own rows
        return RowSlice(simplify(page), strides[k], extents[k], starts[-1], extents[-1], starts[k], shape[k], k)
    rows = math.prod(extents[d] for d in wide)
    bound_row = sum((starts[d] * (strides[d] // strides[k]) for d in wide[1:]), starts[first] * (strides[first] // strides[k]))
    return RowSlice(simplify(page), strides[k], rows, starts[-1], extents[-1], simplify(bound_row),
                    shape[first] * (strides[first] // strides[k]), first)


def selects(expr):
    """``expr`` with each ``T.if_then_else`` as a Select, which the analyzer bounds (a scan's
    selection chain ``T.if_then_else(row >= offsets[1], 1, T.if_then_else(..., 0, 0))`` is in
    [0, 1]); for analysis only: a Select evaluates both values."""
    def post(node):
        if isinstance(node, tirx.Call) and isinstance(node.op, ir.Op) and node.op.name == "tirx.if_then_else":
            return tirx.Select(*node.args)
        return None

    return tirx.stmt_functor.ir_transform(tirx.Evaluate(expr), None, post, ["tirx.Call"]).value


def leading_overhang(region: Region, analyzer: arith.Analyzer, rows_axis: int | None = None) -> int | None:
    """The first leading (batch) dimension whose index may fall past the tensor's extent, but for
    ``rows_axis`` (the axis a row-major slice's rows run along: the reader zero-fills and the writer
    drops the rows past its end)."""
    for d in range(len(region.buffer.shape) - 2):
        if d != rows_axis and not analyzer.can_prove(
                selects(region.starts[d]) + region.extents[d] <= region.buffer.shape[d]):
            return d
    return None


def tensor_copies(func: tirx.PrimFunc) -> list[tuple[tirx.Stmt, Region, Region, bool]]:
    """(statement, global slice, on-chip block, whether it reads) of every ``T.copy`` between a
    global tensor and an on-chip block, in program order."""
    out = []

    def visit(node):
        if tile_op_name(node) == "copy":
            src, dst = (as_region(a) for a in node.value.args[:2])
            if src is None or dst is None:
                return
            if is_global_buffer(src.buffer) and is_cb_buffer(dst.buffer):
                out.append((node, src, dst, True))
            elif is_cb_buffer(src.buffer) and is_global_buffer(dst.buffer):
                out.append((node, dst, src, False))

    tirx.stmt_functor.post_order_visit(func.body, visit)
    return out


def block_grid_loops(func: tirx.PrimFunc) -> dict[str, tirx.For]:
    """thread tag -> the ``T.Kernel`` grid loop binding it."""
    loops: dict[str, tirx.For] = {}

    def visit(node):
        if isinstance(node, tirx.For) and node.thread_binding is not None:
            tag = str(node.thread_binding.thread_tag)
            if tag.startswith("blockIdx."):
                loops[tag] = node

    tirx.stmt_functor.post_order_visit(func.body, visit)
    return loops


def bound_values(body) -> dict:
    """Every variable a ``Bind`` names (``row = by * bm``) -> its value in terms of the loop and
    launch variables (earlier names expanded)."""
    values = {}

    def visit(node):
        if isinstance(node, tirx.Bind):
            values[node.var] = tirx.stmt_functor.substitute(node.value, values)
        return True

    tirx.stmt_functor.pre_order_visit(body, visit)
    return values


def assume_range(var: tirx.Var, extent: tirx.PrimExpr) -> tirx.Evaluate:
    """``T.assume(var >= 0 and var < extent)``: the range of a variable bound to a value whose range
    the analyzer cannot see (a block coordinate recovered from the core's block id), which
    :func:`bound_analyzer` binds the variable to instead of its value."""
    return tirx.Evaluate(tirx.assume(tirx.And(tirx.GE(var, tirx.const(0, var.dtype)), tirx.LT(var, extent))))


def is_assume(stmt) -> bool:
    """Whether ``stmt`` is a ``T.assume``: a fact for the analyzer, no code."""
    return (isinstance(stmt, tirx.Evaluate) and isinstance(stmt.value, tirx.Call) and isinstance(stmt.value.op, ir.Op)
            and stmt.value.op.name == "tirx.assume")


def assumed_ranges(body) -> dict[tirx.Var, ir.Range]:
    """Variable -> its range, for each :func:`assume_range` statement in ``body``."""
    ranges = {}

    def visit(node):
        if is_assume(node):
            cond = node.value.args[0]
            if (isinstance(cond, tirx.And) and isinstance(cond.a, tirx.GE) and isinstance(cond.b, tirx.LT)
                    and isinstance(cond.a.a, tirx.Var) and cond.a.a.same_as(cond.b.a) and const_int(cond.a.b) == 0):
                ranges[cond.a.a] = ir.Range.from_min_extent(0, cond.b.b)

    tirx.stmt_functor.post_order_visit(body, visit)
    return ranges


def bound_analyzer(body) -> arith.Analyzer:
    """An analyzer knowing the range of every loop and core-launch variable of ``body`` (each
    variable object is bound once, so binding them all up front is sound), the range of every
    variable an :func:`assume_range` states, and the value of every other bound variable but those
    reading memory (tensor elements, elements read into L1). Outer loops are bound first: an inner
    loop's extent may depend on them (a causal K loop up to the query block)."""
    analyzer = arith.Analyzer()
    assumed = assumed_ranges(body)

    def visit(node):
        if isinstance(node, tirx.For):
            analyzer.bind(node.loop_var, ir.Range.from_min_extent(node.min, node.extent))
        elif isinstance(node, tirx.AttrStmt) and node.attr_key == "thread_extent" and isinstance(node.node, tirx.IterVar):
            analyzer.bind(node.node.var, ir.Range.from_min_extent(0, node.value))
        elif isinstance(node, tirx.Bind) and node.var in assumed:
            analyzer.bind(node.var, assumed[node.var])
        elif isinstance(node, tirx.Bind) and not _reads_memory(node.value):
            analyzer.bind(node.var, node.value)
        return True

    tirx.stmt_functor.pre_order_visit(body, visit)
    return analyzer


def _reads_memory(expr) -> bool:
    """Whether ``expr`` reads a tensor element or L1 (an element a kernel read): a value the
    analyzer must not copy to where the variable is used, where the memory may hold another."""
    return contains(expr, lambda n: (isinstance(n, tirx.BufferLoad) and n.buffer.scope() == "global") or (
        call_intrin(n) == Intrin.LOAD_ELEMENT))


def overhanging_axes(region: Region, analyzer: arith.Analyzer, column: bool = False,
                     row_major: bool = False, flat: bool = False) -> tuple[bool, bool]:
    """(rows, cols): whether the matrix view of a global tensor slice (``column``: as in
    :func:`matrix_slice`; ``row_major``: its :func:`row_slice`) may reach past the tensor's end
    along that axis (a last block that does not divide the shape, or a partial last tile); rows
    past the end of the slice's own matrix count as past the end."""
    view = row_slice(region) if row_major else matrix_slice(region, column, flat)
    cols = 1 if column else math.prod(region.buffer.shape) if flat else region.buffer.shape[-1]
    return (not analyzer.can_prove(view.bound_row + view.rows <= view.bound_rows),
            not analyzer.can_prove(view.col + view.cols <= cols))


def global_copy(stmt, names: set[str], allocated: list[tirx.Buffer]) -> tirx.Stmt | None:
    """``T.copy(X[..], Y[..])`` between two global tensors (the attention backward's dQ cast): through
    a block, ``T.copy(X[..], X_s); T.copy(X_s, Y[..])``, and a fragment of Y's dtype between them when
    the dtypes differ (compute casts); None for any other statement. The block has the slice's extents
    above 1 (at most two); its name is added to ``names``, the blocks made to ``allocated``
    (LegalizeGlobalAccessTT)."""
    if tile_op_name(stmt) != "copy":
        return None
    src, dst = (as_region(a) for a in stmt.value.args[:2])
    if src is None or dst is None or not is_global_buffer(src.buffer) or not is_global_buffer(dst.buffer):
        return None
    shape = [int(e) for e in src.extents if int(e) != 1] or [1]
    if len(shape) > 2 or [int(e) for e in dst.extents if int(e) != 1] != [d for d in shape if d != 1]:
        return None

    def block(like: tirx.Buffer, dtype, scope: str) -> tirx.Buffer:
        name = unique_name(f"{like.name}_{'s' if scope == 'shared.dyn' else 'l'}", names)
        names.add(name)
        allocated.append(tirx.decl_buffer(shape, dtype, name, scope=scope))
        return allocated[-1]

    def whole(buf, mask):
        return make_region(buf, [0] * len(shape), shape, mask)

    def copy(src, dst) -> tirx.Stmt:
        return keep_span(stmt, tirx.Evaluate(tirx.Call("handle", ir.Op.get("tl.tileop.copy"), [src, dst])))

    staged = block(src.buffer, src.buffer.dtype, "shared.dyn")
    copies = [copy(stmt.value.args[0], whole(staged, WRITE))]
    if src.buffer.dtype != dst.buffer.dtype:
        cast = block(dst.buffer, dst.buffer.dtype, "local.fragment")
        copies.append(copy(whole(staged, READ), whole(cast, WRITE)))
        staged = cast
    copies.append(copy(whole(staged, READ), stmt.value.args[1]))
    return seq(copies)
