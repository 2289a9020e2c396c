"""A1 InferTTLayout: normalize every global buffer's layout (spec §1, §5).

Reads: the PrimFunc's ``buffer_map``, user layouts (:class:`tilelang_tt.BufferLayout`: the
``layouts`` option, or a ``tt.layout_desc`` attribute from ``tilelang_tt.annotate_layouts``).
Writes: ``tt.arch`` (the target architecture's name: the passes after this one read it from the
function, ``passes.common.arch_of``) and ``tt.layout_desc`` = {buffer name: LayoutDesc dict} for every
global parameter.
Sharded layouts get their shard shape resolved on the tensor seen as a matrix (leading dimensions
folded into rows: ND sharding projected onto the compute plane); every core of the shard grid
(or DRAM bank) must hold exactly one shard.
Before: a TileLang kernel. After: the same TIR; every parameter has a layout: by default
interleaved DRAM, its own dtype (bfloat16 unless declared), 32×32 tiles. Vectors: a rank-1
tensor (n,) is a row vector laid out as (1, n) (its data in row 0 of each tile), (1, n) and (n, 1)
tensors occupy row 0 / column 0 of their tiles.
A tensor whose extents are not multiples of 32 is padded to whole tiles (zeros, like TileLang's
out-of-bounds loads), each matrix of an ND tensor on its own (ttnn's padded shape: a (B, 40, 64)
tensor is B matrices of 2 x 2 tiles): BuildTileDFGTT checks that the padding cannot reach a valid
result.
Errors: dynamic shapes, rank-1 tensors used as columns, unsupported dtypes, invalid or unplaceable
layouts, views of a parameter (``T.Tensor(shape, X.data)``: a second shape for X's memory, which
is laid out in tiles of X's own shape).

    Before: def main(A: T.Tensor((256, 128), "bfloat16"), ...)
    After:  T.func_attr({"tt.arch": "wormhole_b0",
                         "tt.layout_desc": {"A": {"memory": "DRAM", "layout": "interleaved", ...}}})
"""

from __future__ import annotations


import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.contract.arch import Arch, get_arch
from tilelang_tt.attrs import DATA_FORMATS, Attr, LayoutDesc, MemoryLayout, MemorySpace, get, with_attrs
from tilelang_tt.layout import BufferLayout, LayoutError, shard_grid_shape
from tilelang_tt.passes.common import COL, TILE, dtype_hint, error, first_stmt_using, prim_func_pass, vector_kinds

PASS = "InferTTLayout"


def _layout_of(func: tirx.PrimFunc, buf: tirx.Buffer, override: dict | None, kinds: dict[str, str],
               arch: Arch) -> LayoutDesc:
    shape = []
    for dim in buf.shape:
        if not isinstance(dim, tirx.IntImm):
            raise error(
                PASS, func, buf, f"buffer `{buf.name}` has a dynamic shape {list(buf.shape)}",
                "Tenstorrent kernels are compiled for static shapes: pass concrete sizes to the kernel factory",
            )
        shape.append(int(dim.value))
    if len(shape) == 1 and kinds.get(buf.name) == COL:
        raise error(PASS, func, buf, f"the rank-1 tensor `{buf.name}` is used as a column (one value per row)",
                    f"declare it as a ({shape[0]}, 1) tensor")
    dtype = str(buf.dtype)
    if dtype not in DATA_FORMATS:
        raise error(PASS, func, buf, f"buffer `{buf.name}` has unsupported dtype {dtype}", dtype_hint(dtype))
    desc = LayoutDesc(buffer=buf.name, shape=tuple(shape), dtype=dtype)
    if override is None:
        return desc
    rows, cols = desc.tile_grid[0] * TILE, desc.tile_grid[1] * TILE
    layout = _buffer_layout(func, buf, override)
    if not layout.sharded:
        return desc
    gx, gy = layout.shard_grid
    limit = (arch.num_dram_banks, 1) if layout.memory == MemorySpace.DRAM.value else arch.grid
    where = f"{arch.name} has {arch.num_dram_banks} DRAM banks" if layout.memory == MemorySpace.DRAM.value else (
        f"the {arch.name} worker grid is {arch.grid}")
    if gx > limit[0] or gy > limit[1]:
        raise error(PASS, func, buf, f"the shard grid {layout.shard_grid} of `{buf.name}` does not fit: {where}",
                    f"use a shard_grid of at most {limit}")
    shard = layout.resolve_shard_shape(rows, cols)
    shard_tiles = (shard[0] // TILE, shard[1] // TILE)
    srows, scols = shard_grid_shape(desc.tile_grid, shard_tiles)
    if srows * scols != gx * gy:
        raise error(PASS, func, buf,
                    f"`{buf.name}` ({rows}x{cols} as a matrix) in {shard[0]}x{shard[1]} shards makes "
                    f"{srows}x{scols} = {srows * scols} shards for the {gx * gy} cores of shard_grid {layout.shard_grid}",
                    "give every core of the shard grid exactly one shard: adjust shard_grid or shard_shape")
    if layout.layout == MemoryLayout.BLOCK_SHARDED.value and (scols, srows) != (gx, gy):
        raise error(PASS, func, buf, f"block sharding of `{buf.name}` makes a {srows}x{scols} grid of shards, "
                    f"not the {gy}x{gx} (rows x cols) of shard_grid {layout.shard_grid}",
                    "choose shard_shape = (rows / grid_y, cols / grid_x), rounded up to multiples of 32")
    return LayoutDesc(buffer=buf.name, shape=tuple(shape), dtype=dtype, memory=MemorySpace(layout.memory),
                      layout=MemoryLayout(layout.layout), shard_grid=layout.shard_grid, shard_shape=shard)


def _buffer_layout(func, buf, override: dict) -> BufferLayout:
    try:
        return BufferLayout(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in override.items()})
    except (LayoutError, TypeError) as err:
        raise error(PASS, func, buf, f"invalid layout for `{buf.name}`: {err}",
                    "see tilelang_tt.BufferLayout: memory, layout, shard_grid, shard_shape") from None


def _check_views(func: tirx.PrimFunc, params: list[tirx.Buffer]) -> None:
    """Refuse a buffer on a parameter's memory that is not the parameter (TileLang's
    ``T.Tensor(shape, X.data)``), at the first statement that uses it."""
    owner = {buf.data: buf for buf in params}
    views: list[tirx.Buffer] = []
    tirx.stmt_functor.post_order_visit(func.body, lambda n: views.append(n.buffer) if isinstance(
        n, (tirx.BufferLoad, tirx.BufferStore)) and n.buffer.data in owner and not n.buffer.same_as(owner[n.buffer.data])
        else None)
    if not views:
        return
    view, param = views[0], owner[views[0].data]
    stmt = first_stmt_using(func.body, view)
    raise error(PASS, func, stmt,
                f"`{view.name}` {[int(d) for d in view.shape]} is a view of the parameter `{param.name}` "
                f"{[int(d) for d in param.shape]} (T.Tensor(shape, {param.name}.data)); views of parameters are not "
                "supported: a tensor lives in DRAM in tiles of its own shape",
                f"index `{param.name}` directly, or declare the parameter with the shape the kernel uses and reshape "
                "the tensor on the host")


def _transform(func: tirx.PrimFunc, mod, ctx, arch_name: str, layouts) -> tirx.PrimFunc:
    arch = get_arch(arch_name)
    overrides = dict(get(func, Attr.LAYOUT_DESC, {}))
    for name, layout in (layouts or {}).items():
        overrides[name] = {k: v for k, v in layout.__dict__.items() if v is not None}
    kinds = vector_kinds(func)
    params = [func.buffer_map[p] for p in func.params if p in func.buffer_map]
    _check_views(func, params)
    unknown = sorted(set(overrides) - {b.name for b in params})
    if unknown:
        raise error(PASS, func, None, f"layouts are given for {unknown}, which are not parameters of the kernel",
                    f"name parameters of the kernel: {[b.name for b in params]}")
    out = {buf.name: _layout_of(func, buf, overrides.get(buf.name), kinds, arch).to_dict() for buf in params}
    return with_attrs(func, {Attr.ARCH: arch.name, Attr.LAYOUT_DESC: out})


def InferTTLayout(arch: str = "wormhole_b0", layouts=None):
    return prim_func_pass(lambda f, m, c: _transform(f, m, c, arch, layouts), PASS)
