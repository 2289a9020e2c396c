"""A1 InferTTLayout: normalize every global buffer's layout (spec §1, §5).

Reads: the PrimFunc's ``buffer_map``, user layouts (:class:`tilelang_tt.BufferLayout`: the
``layouts`` option, or a ``tt.layout_desc`` attribute from ``tilelang_tt.annotate_layouts``).
Writes: ``tt.arch`` (the target architecture's name: the passes after this one read it from the
function, ``Attr.ARCH``) and ``tt.layout_desc`` = {buffer name: LayoutDesc dict} for every
global parameter.
Sharded layouts get their shard shape resolved on the tensor seen as a matrix (leading dimensions
folded into rows: ND sharding projected onto the compute plane); every core of the shard grid
(or DRAM bank) must hold exactly one shard.
Before: a TileLang kernel. After: the same TIR; every parameter has a layout: by default
interleaved DRAM, its own dtype (bfloat16 unless declared), 32×32 tiles. Vectors: (1, n) and
(n, 1) tensors occupy row 0 / column 0 of their tiles. A rank-1 tensor (n,) takes the view the
kernel uses it in (``ir.common.vector_kinds``, and the shape of the (1, n) / (n, 1) blocks
it is copied to or from): a row vector laid out as (1, n) (its data in row 0 of each tile), or,
used as a column (one value per row: ``Mean[bx * bm + i] = mean[i]``), a column laid out as
(n, 1) (``"column": true``; column 0 of each tile). Both pad by the same factor; the host
passes and receives the (n,) tensor either way.
A tensor of rank 3 or more that the kernel slices across its matrices (a head ``Q[b, s0:s0 + 64,
h, :]`` of a (B, S, H, D) tensor: 64 rows H * D elements apart, no block of tiles) is laid out in
rows (``"layout": "row_major"``, ttnn's ROW_MAJOR_LAYOUT): the reader reads the slice's rows and
compute tilizes them. It moves the same bytes as tiles would; the alternative, a transpose to
(B, H, S, D) by the host program, would read and write the whole tensor once more.
``BufferLayout(layout="row_major")`` asks for rows for any DRAM tensor.
``BufferLayout(dtype="bfloat8_b" | "bfloat4_b")`` stores a bfloat16 / float32 tensor as block floating
point tiles (``"storage"``: its ``data_format`` is ``Bfp8_b`` / ``Bfp4_b``, its page a tile of that
format); the kernel keeps computing in the parameter's dtype.
A tensor sliced at a row read from another tensor (the grouped GEMM's ``A[offsets[g] + .., ..]``:
any row, known on device), or written some rows of a block at a time (``tt.valid_rows``), is laid out
in rows too; so is a rank-1 tensor written some elements of a vector at a time (``tt.valid_rows`` of a
vector: its first elements), one row of all its elements.
A tensor of rank 2 or more that the kernel copies only as vectors along its last dimension, some
of them inside a tile of its matrix view (``lse[bz, by, bx * bm:(bx + 1) * bm]`` of a (B, H, S)
tensor: row ``by`` of a tile), is laid out flat (``"flat": true``): as the rank-1 tensor of its
elements, a row or (used per row) a column like a rank-1 tensor; the vector is then a run of whole
tiles. It pads 32 times, as rank-1 vectors do (rows and a transpose would not: a later step).
A tensor whose extents are not multiples of 32 is padded to whole tiles (zeros, like TileLang's
out-of-bounds loads), each matrix of an ND tensor on its own (ttnn's padded shape: a (B, 40, 64)
tensor is B matrices of 2 x 2 tiles): CheckPaddingTT checks that the padding cannot reach a valid
result.
A dynamic extent (``T.dynamic("m")``, a variable of the signature) is the formula ``m``: tile and
page counts are formulas of it (tilelang_tt.contract.formula), computed by the host from the
tensors; such a tensor is interleaved in tiles (shards need static sizes), or in rows where a slice
is no block of tiles (as above) and its last dimension is static (the page a row): the page count and
a slice's page stride are then formulas of the sizes.
A scalar parameter (``offset: T.int32``, ``scale: T.float32``) has no layout: the kernels receive it
as a runtime argument, as they do a dynamic size (a float as its float32 bits).
An extent that is an expression of sizes (``seq_len * 16``) is its formula, when a parameter has
each of its sizes as a whole extent (the host reads the sizes there, or solves them from it).
Errors: a dynamic extent that is an expression of a size no parameter has as a whole extent
(``m * 2`` alone), two dynamic sizes of one name, a
scalar parameter that is neither an integer of at most 32 bits nor a float32, bfloat16 or float16
(a float64), or is named as a dynamic size, a
dynamic tensor that is sharded, a column, asked for in rows, or in rows with a dynamic last
dimension, block floating point storage of a tensor that is not float, a rank-1 tensor used both as a row and as a column (at the copy that
uses it the second way), unsupported dtypes, invalid or unplaceable layouts (views of a parameter,
``T.Tensor(shape, X.data)``, are the parameter's accesses by now: MapParameterViewsTT).

    Before: def main(A: T.Tensor((256, 128), "bfloat16"), Mean: T.Tensor((256,), "float32"), ...)
    After:  T.func_attr({"tt.arch": "wormhole_b0",
                         "tt.layout_desc": {"A": {"memory": "DRAM", "layout": "interleaved", ...},
                                            "Mean": {..., "shape": [256], "column": True}}})
"""

from __future__ import annotations

import dataclasses

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.contract.arch import Arch, get_arch
from tilelang_tt.contract.formula import Formula
from tilelang_tt.contract.formats import BLOCK_STORABLE, DATA_FORMATS, STORED_AS
from tilelang_tt.ir.attrs import Attr, Scope
from tilelang_tt.contract.buffers import LayoutDesc, MemoryLayout, MemorySpace
from tilelang_tt.layout import LAYOUT_REQUESTS, BufferLayout, LayoutError, shard_grid_shape
from tilelang_tt.ir.slices import bound_analyzer, bound_values, matrix_slice
from tilelang_tt.ir.common import (
    COL,
    ROW,
    TILE,
    as_region,
    const_int,
    contains,
    dtype_hint,
    error,
    first_stmt_using,
    first_stmt_using_var,
    formula_of,
    is_cb_buffer,
    prim_func_pass,
    reads_tensor,
    tile_op_name,
    vector_kinds,
)

PASS = "InferTTLayout"


def _block_kind(block: tirx.Buffer, kinds: dict[tirx.Buffer, str]) -> str:
    """ROW, COL or "" (a block of whole tiles): how an on-chip block holds a vector."""
    shape = [int(d) for d in block.shape]
    if len(shape) == 1:
        return kinds.get(block, ROW)
    return ROW if shape[:-1] == [1] * (len(shape) - 1) else COL if shape[-1] == 1 else ""


def _vector_uses(func: tirx.PrimFunc, tensor: tirx.Buffer, kinds: dict[tirx.Buffer, str]) -> list[tuple[tirx.Stmt, str]]:
    """(statement, ROW or COL) of every use of the rank-1 ``tensor`` as a vector: each T.copy
    between it and an on-chip vector block, in program order, and the view ``vector_kinds`` gives
    the tensor itself when that is a column (an index by the row loop of a T.Parallel)."""
    uses: list[tuple[tirx.Stmt, str]] = []

    def visit(node):
        if tile_op_name(node) != "copy":
            return
        regions = [as_region(a) for a in node.value.args[:2]]
        if any(r is None for r in regions) or not any(r.buffer.same_as(tensor) for r in regions):
            return
        for region in regions:
            kind = _block_kind(region.buffer, kinds) if is_cb_buffer(region.buffer) else ""
            if kind:
                uses.append((node, kind))

    tirx.stmt_functor.post_order_visit(func.body, visit)
    if kinds.get(tensor) == COL and all(kind != COL for _, kind in uses):
        uses.append((first_stmt_using(func.body, tensor), COL))
    return uses


def _is_column(func: tirx.PrimFunc, tensor: tirx.Buffer, kinds: dict[tirx.Buffer, str]) -> bool:
    """Whether the kernel uses the rank-1 ``tensor`` as a column; a TTCompileError when it uses it
    both as a row and as a column (one layout serves one view)."""
    uses = _vector_uses(func, tensor, kinds)
    views = {kind for _, kind in uses}
    if views == {ROW, COL}:
        first = uses[0][1]
        stmt = next(stmt for stmt, kind in uses if kind != first)
        names = {ROW: "a row (one value per column)", COL: "a column (one value per row)"}
        second = ROW if first == COL else COL
        raise error(PASS, func, stmt,
                    f"the rank-1 tensor `{tensor.name}` is used as {names[first]} and here as {names[second]}: "
                    "a tensor has one layout in DRAM, row 0 or column 0 of its tiles",
                    f"pass the vector as two parameters, `{tensor.name}` used per row and a second one per column "
                    "(the same torch tensor may be passed for both)")
    return views == {COL}


def _layout_of(func: tirx.PrimFunc, buf: tirx.Buffer, requested: BufferLayout | None, kinds: dict[tirx.Buffer, str],
               arch: Arch) -> LayoutDesc:
    shape = tuple(_dim(func, buf, d) for d in buf.shape)
    column = len(shape) == 1 and _is_column(func, buf, kinds)
    if column and not isinstance(shape[0], int):
        raise error(PASS, func, buf, f"the rank-1 tensor `{buf.name}` {list(buf.shape)} is used as a column and has "
                    "a dynamic size: columns of a size known only at run time are not supported",
                    "give the tensor a static size")
    dtype = str(buf.dtype)
    if dtype not in DATA_FORMATS:
        raise error(PASS, func, buf, f"buffer `{buf.name}` has unsupported dtype {dtype}", dtype_hint(dtype))
    dtype = STORED_AS.get(dtype, dtype)
    desc = LayoutDesc(buffer=buf.name, shape=shape, dtype=dtype, column=column,
                      storage=_storage(func, buf, requested))
    dynamic = not all(isinstance(d, int) for d in shape)
    if requested is None and _is_flat(func, buf, kinds):  # vectors inside tiles: the tensor as its elements
        return dataclasses.replace(desc, flat=True, column=_is_column(func, buf, kinds))
    if requested is None:
        # rows where a slice of the kernel is no block of tiles (a head of a (B, S, H, D) tensor), or
        # starts at a row read from a tensor (the grouped GEMM's group offsets: any row)
        values = bound_values(func.body)
        rows_only = any((len(shape) > 2 and matrix_slice(region) is None) or (
            len(shape) >= 2 and reads_tensor(tirx.stmt_functor.substitute(region.starts[-2], values)))
            for region in _slices(func, buf)) or _rows_limited(func, buf, kinds) or (
            len(shape) >= 2 and _partial_tiles(func, buf, kinds))
        if rows_only and not isinstance(shape[-1], int):
            raise error(PASS, func, first_stmt_using(func.body, buf),
                        f"`{buf.name}` {list(buf.shape)} has a slice that is no block of tiles (rows of several "
                        "matrices, or part of a tile) and a last dimension known only at run time: its rows would be "
                        "pages of a size known only at run time, which are not supported",
                        "give the tensor a static last dimension, or slice it in whole tiles")
        return dataclasses.replace(desc, layout=MemoryLayout.ROW_MAJOR) if rows_only else desc
    if dynamic and requested.layout != MemoryLayout.INTERLEAVED.value:
        raise error(PASS, func, buf, f"`{buf.name}` {list(buf.shape)} has a dynamic shape and the layout "
                    f"{requested.layout!r}: shards and rows need sizes known when the kernel is compiled",
                    "keep the tensor interleaved in DRAM (the default), or give it static sizes")
    rows, cols = desc.tile_grid[0] * TILE, desc.tile_grid[1] * TILE
    if requested.layout == MemoryLayout.ROW_MAJOR.value:
        return dataclasses.replace(desc, layout=MemoryLayout.ROW_MAJOR)
    if not requested.sharded:
        return desc
    gx, gy = requested.shard_grid
    limit = (arch.num_dram_banks, 1) if requested.memory == MemorySpace.DRAM.value else arch.grid
    where = f"{arch.name} has {arch.num_dram_banks} DRAM banks" if requested.memory == MemorySpace.DRAM.value else (
        f"the {arch.name} worker grid is {arch.grid}")
    if gx > limit[0] or gy > limit[1]:
        raise error(PASS, func, buf, f"the shard grid {requested.shard_grid} of `{buf.name}` does not fit: {where}",
                    f"use a shard_grid of at most {limit}")
    shard = requested.resolve_shard_shape(rows, cols)
    shard_tiles = (shard[0] // TILE, shard[1] // TILE)
    srows, scols = shard_grid_shape(desc.tile_grid, shard_tiles)
    if srows * scols != gx * gy:
        raise error(PASS, func, buf,
                    f"`{buf.name}` ({rows}x{cols} as a matrix) in {shard[0]}x{shard[1]} shards makes "
                    f"{srows}x{scols} = {srows * scols} shards for the {gx * gy} cores of shard_grid {requested.shard_grid}",
                    "give every core of the shard grid exactly one shard: adjust shard_grid or shard_shape")
    if requested.layout == MemoryLayout.BLOCK_SHARDED.value and (scols, srows) != (gx, gy):
        raise error(PASS, func, buf, f"block sharding of `{buf.name}` makes a {srows}x{scols} grid of shards, "
                    f"not the {gy}x{gx} (rows x cols) of shard_grid {requested.shard_grid}",
                    "choose shard_shape = (rows / grid_y, cols / grid_x), rounded up to multiples of 32")
    return LayoutDesc(buffer=buf.name, shape=tuple(shape), dtype=dtype, memory=MemorySpace(requested.memory),
                      layout=MemoryLayout(requested.layout), shard_grid=requested.shard_grid, shard_shape=shard,
                      column=column, storage=desc.storage)


def _storage(func: tirx.PrimFunc, buf: tirx.Buffer, requested: BufferLayout | None) -> str | None:
    """The block floating point format a layout stores the tensor in (``BufferLayout(dtype=...)``),
    or None: its own dtype. Block formats hold floats: a bfloat16 or float32 parameter."""
    storage = requested.dtype if requested is not None else None
    if storage is not None and str(buf.dtype) not in BLOCK_STORABLE:
        raise error(PASS, func, buf, f"`{buf.name}` is {buf.dtype} and its layout stores it as {storage}, a block "
                    "floating point format of float values",
                    f"declare `{buf.name}` as one of {list(BLOCK_STORABLE)}, or drop dtype={storage!r} from its layout")
    return storage


def _is_flat(func: tirx.PrimFunc, tensor: tirx.Buffer, kinds: dict[tirx.Buffer, str]) -> bool:
    """Whether to lay a tensor of rank 2 or more out flat (as the rank-1 tensor of its elements):
    the kernel copies only vectors of it, along its last dimension (``lse[bz, by, bx * bm:(bx + 1) *
    bm]``: one value per query of a block), and some of them start inside a tile of the matrix view
    (at row ``by``), where a block of tiles cannot hold them without the rest of the tile. Flat,
    the vector is a run of the tensor's elements, at whole tiles when the last extent and the
    vector's start are multiples of 32 (LowerCBIntrinsics checks)."""
    regions = _slices(func, tensor)
    if len(tensor.shape) < 2 or not regions or any(e != 1 for r in regions for e in r.extents[:-1]):
        return False
    if len(_vector_uses(func, tensor, kinds)) < len(regions):
        return False  # a copy of it to or from a block of tiles
    analyzer = bound_analyzer(func.body)
    views = [matrix_slice(region) for region in regions]
    return any(view is not None and not analyzer.can_prove(tirx.FloorMod(view.row, TILE) == 0) for view in views)


def _dim(func: tirx.PrimFunc, buf: tirx.Buffer, dim: tirx.PrimExpr) -> int | Formula:
    """A static extent, or the dynamic dimension ``T.dynamic("m")`` (a variable) as the formula
    ``m``: one program serves every size, which the host reads from the tensors."""
    if isinstance(dim, tirx.IntImm):
        return int(dim.value)
    if isinstance(dim, tirx.Var):
        return Formula.name(dim.name)
    # an expression of sizes (``seq_len * heads``): each must be the whole extent of some axis,
    # where the host reads it; the host checks the expression's extent against the tensor
    alone = {d for param in func.params if param in func.buffer_map for d in func.buffer_map[param].shape
             if isinstance(d, tirx.Var)}
    names = set()
    tirx.stmt_functor.post_order_visit(dim, lambda n: names.add(n) if isinstance(n, tirx.Var) else None)
    if names <= alone:
        try:
            return formula_of(dim)
        except TypeError:
            pass
    raise error(PASS, func, buf, f"buffer `{buf.name}` has the shape {list(buf.shape)}, whose extent {dim} is an "
                "expression of dynamic sizes that no parameter's shape has as a whole extent",
                "declare each dynamic extent as its own T.dynamic variable, or give some parameter each size as a "
                "whole extent (the host reads each from the tensor)")


# The dtypes of scalar parameters: 32-bit runtime arguments, an integer's value or a float's float32 bits.
SCALAR_PARAM_DTYPES = ("int32", "uint32", "int16", "uint16", "int8", "uint8", "float32", "bfloat16", "float16")


def _check_dims(func: tirx.PrimFunc, params: list[tirx.Buffer]) -> None:
    """Dynamic dimensions and scalar parameters are named in the plan and the host programs: one
    variable per name; a scalar parameter is an integer of at most 32 bits or a float of at most 32
    (a runtime argument)."""
    seen: dict[str, tirx.Var] = {}
    for buf in params:
        for dim in buf.shape:
            if isinstance(dim, tirx.Var):
                if dim.name in seen and not seen[dim.name].same_as(dim):
                    raise error(PASS, func, buf, f"two dynamic sizes are both named `{dim.name}`",
                                "give each T.dynamic variable its own name")
                seen[dim.name] = dim
    for param in func.params:
        if param in func.buffer_map:
            continue
        if param.dtype not in SCALAR_PARAM_DTYPES:
            raise error(PASS, func, first_stmt_using_var(func.body, param) or func,
                        f"the scalar parameter `{param.name}: {param.dtype}` is neither an integer of at most 32 bits "
                        "nor a float32, bfloat16 or float16: kernels receive scalar parameters as 32-bit runtime "
                        "arguments", f"declare `{param.name}: T.float32` (or `T.int32` for an integer), or pass the "
                        "value in a one-element tensor")
        if param.name in seen:
            raise error(PASS, func, func, f"the scalar parameter `{param.name}` and a dynamic size share its name",
                        "give the scalar parameter and the T.dynamic variable different names")


def _rows_limited(func: tirx.PrimFunc, tensor: tirx.Buffer, kinds: dict[tirx.Buffer, str]) -> bool:
    """Whether the kernel writes some of a block's rows into ``tensor`` (``tt.valid_rows``), but for a
    column vector into one column (per-row scales: the writer writes an element per valid row into the
    tiles, LowerCBIntrinsics)."""
    def limited(n):
        if not (isinstance(n, tirx.AttrStmt) and n.attr_key == Scope.VALID_ROWS.value and n.node.same_as(tensor.data)):
            return False
        copies = _copies(n.body, tensor)
        return not copies or any(_block_kind(block.buffer, kinds) != COL or const_int(region.extents[-1]) != 1
                                 for region, block in copies)

    return contains(func.body, limited)


def _partial_tiles(func: tirx.PrimFunc, tensor: tirx.Buffer, kinds: dict[tirx.Buffer, str]) -> bool:
    """Whether a copy between ``tensor`` and a block (not a vector) moves part of a tile whose other
    rows or columns hold the tensor's values: a slice starting inside a tile (a block of 4 heads at
    row ``4 * g``, of 48 rows at row ``48 * by``), or ending inside one short of the end of its
    matrix (a padded block, PadBlocksTT). Rows move such a slice alone: the reader reads its rows
    and zero-fills the rest of the block's tiles, the writer writes its rows and columns."""
    analyzer = bound_analyzer(func.body)
    columns = tensor.shape[-1]
    for region, block in _copies(func.body, tensor):
        if _block_kind(block.buffer, kinds):
            continue  # a vector: its own view (rank 1, a column, flat)
        view = matrix_slice(region)
        if view is None:
            continue  # several matrices: laid out in rows anyway
        if not analyzer.can_prove(tirx.FloorMod(view.row, TILE) == 0) or (
                view.rows % TILE and not analyzer.can_prove(view.bound_row + view.rows >= view.bound_rows)) or (
                view.cols % TILE and not analyzer.can_prove(view.col + view.cols >= columns)):
            return True
    return False


def _copies(body: tirx.Stmt, tensor: tirx.Buffer) -> list[tuple]:
    """(the region of ``tensor``, the block's region) of every T.copy in ``body`` between ``tensor`` and a
    block."""
    pairs = []

    def visit(node):
        if tile_op_name(node) == "copy":
            regions = [as_region(a) for a in node.value.args[:2]]
            if all(r is not None for r in regions) and any(r.buffer.same_as(tensor) for r in regions):
                mine, other = regions if regions[0].buffer.same_as(tensor) else regions[::-1]
                if is_cb_buffer(other.buffer):
                    pairs.append((mine, other))

    tirx.stmt_functor.post_order_visit(body, visit)
    return pairs


def _slices(func: tirx.PrimFunc, tensor: tirx.Buffer) -> list:
    """The regions of ``tensor`` the kernel's copies move."""
    regions = []

    def visit(node):
        if tile_op_name(node) == "copy":
            regions.extend(r for r in map(as_region, node.value.args[:2]) if r is not None and r.buffer.same_as(tensor))

    tirx.stmt_functor.post_order_visit(func.body, visit)
    return regions


def _transform(func: tirx.PrimFunc, mod, ctx, arch_name: str, layouts) -> tirx.PrimFunc:
    arch = get_arch(arch_name)
    try:
        overrides = {**LAYOUT_REQUESTS.read(func), **(layouts or {})}
    except LayoutError as err:
        raise error(PASS, func, None, str(err),
                    "see tilelang_tt.BufferLayout: memory, layout, shard_grid, shard_shape, dtype") from None
    kinds = vector_kinds(func)
    params = [func.buffer_map[p] for p in func.params if p in func.buffer_map]
    _check_dims(func, params)
    unknown = sorted(set(overrides) - {b.name for b in params})
    if unknown:
        raise error(PASS, func, None, f"layouts are given for {unknown}, which are not parameters of the kernel",
                    f"name parameters of the kernel: {[b.name for b in params]}")
    out = {buf.name: _layout_of(func, buf, overrides.get(buf.name), kinds, arch) for buf in params}
    return Attr.LAYOUT_DESC.write(Attr.ARCH.write(func, arch), out)


def InferTTLayout(arch: str = "wormhole_b0", layouts=None):
    return prim_func_pass(lambda f, m, c: _transform(f, m, c, arch, layouts), PASS)
