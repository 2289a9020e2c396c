"""User-facing buffer layouts: where a kernel parameter lives and how it is split over cores.

A tensor is a matrix of 32x32 tiles (leading dimensions of an N-D tensor fold into its rows: ND
sharding is projected onto the 2-D compute plane). By default it is interleaved over the DRAM
banks. A sharded tensor is cut into equal shards of ``shard_shape`` elements, placed on the cores
of ``shard_grid`` (or over the DRAM banks when ``memory="DRAM"``):

* ``height_sharded``: shards of whole rows, ``shard_shape = (rows, N)``;
* ``width_sharded``: shards of whole columns, ``shard_shape = (M, cols)``;
* ``block_sharded``: a 2-D grid of ``(rows, cols)`` shards, shard ``(i, j)`` on core ``(j, i)``.

``layout="row_major"`` keeps a DRAM tensor in rows instead of tiles (ttnn's ``ROW_MAJOR_LAYOUT``:
a page is one row of the last dimension, pages interleaved over the banks); the reader reads rows
and compute tilizes them, and the other way on the way out (tilelang_tt.ops.tilize).

``dtype="bfloat8_b"`` or ``"bfloat4_b"`` stores a bfloat16 / float32 tensor as block floating
point tiles (tilelang_tt.contract.formats): a shared exponent per 16 values, converted by the host,
unpacked by compute; the kernel computes in the parameter's own dtype. Block formats are tiles:
not with ``layout="row_major"``.

Shards are numbered row-major over the tensor and placed round-robin on the cores of the grid in
row-major order (tt-metal's ``BufferDistributionSpec`` with ``ShardOrientation::ROW_MAJOR`` and
``ShardDistributionStrategy::ROUND_ROBIN_1D``); :func:`shard_cores` and :func:`shard_of_core`
are that placement, the only one the compiler, the plan and the host program use.

    layouts = {"A": BufferLayout(memory="L1", layout="height_sharded", shard_grid=(8, 1))}
    tilelang_tt.compile(kernel, layouts=layouts)          # or: annotate_layouts(kernel, A=...)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from tilelang_tt.contract.formats import BLOCK_FORMATS
from tilelang_tt.ir.attrs import Attr, CollectionSpec
from tilelang_tt.contract.buffers import MemoryLayout, MemorySpace

TILE = 32


class LayoutError(ValueError):
    """An invalid buffer layout; the message names the buffer, the problem and a fix."""


def _round_up(n: int, to: int) -> int:
    return -(-n // to) * to


@dataclass(frozen=True)
class BufferLayout:
    """Memory, layout, sharding and storage format of one kernel parameter (defaults: interleaved
    DRAM, the parameter's dtype)."""

    memory: str = MemorySpace.DRAM.value
    layout: str = MemoryLayout.INTERLEAVED.value
    shard_grid: tuple[int, int] | None = None  # (x, y) cores holding the shards
    shard_shape: tuple[int, int] | None = None  # (rows, cols) elements per shard; derived when None
    dtype: str | None = None  # a block floating point storage (BLOCK_FORMATS), else the parameter's dtype

    def __post_init__(self) -> None:
        memories = [m.value for m in MemorySpace]
        layouts = [m.value for m in MemoryLayout]
        if self.memory not in memories:
            raise LayoutError(f"memory={self.memory!r} is not a memory space: use one of {memories}")
        if self.layout not in layouts:
            raise LayoutError(f"layout={self.layout!r} is not a layout: use one of {layouts}")
        if self.dtype is not None and self.dtype not in BLOCK_FORMATS:
            raise LayoutError(f"dtype={self.dtype!r} is not a storage format: use one of {sorted(BLOCK_FORMATS)} "
                              "(block floating point), or leave dtype out to store the parameter's own dtype")
        if self.dtype is not None and self.layout == MemoryLayout.ROW_MAJOR.value:
            raise LayoutError(f"dtype={self.dtype!r} is block floating point, a format of 32x32 tiles (an exponent "
                              "per 16 values of a face row): not with layout='row_major'; use layout='interleaved' "
                              "or a sharded layout")
        if self.layout in (MemoryLayout.INTERLEAVED.value, MemoryLayout.ROW_MAJOR.value):
            if self.layout == MemoryLayout.ROW_MAJOR.value and self.memory != MemorySpace.DRAM.value:
                raise LayoutError("a row-major tensor is interleaved in DRAM: use memory='DRAM' with "
                                  "layout='row_major', or a sharded L1 layout of tiles")
            if self.memory != MemorySpace.DRAM.value:
                raise LayoutError("an L1 tensor must be sharded: use layout='height_sharded', 'width_sharded' "
                                  "or 'block_sharded' with memory='L1', or keep it interleaved in DRAM")
            if self.shard_grid is not None or self.shard_shape is not None:
                raise LayoutError("shard_grid/shard_shape are given for an interleaved layout: "
                                  "choose a sharded layout or drop them")
            return
        if self.shard_grid is None:
            raise LayoutError(f"layout={self.layout!r} needs shard_grid=(x, y): the cores holding the shards")
        grid = tuple(self.shard_grid)
        if len(grid) != 2 or any(not isinstance(g, int) or g < 1 for g in grid):
            raise LayoutError(f"shard_grid={self.shard_grid!r} is not two positive integers (x, y), e.g. (8, 1)")
        object.__setattr__(self, "shard_grid", grid)
        if self.shard_shape is not None:
            shape = tuple(self.shard_shape)
            if len(shape) != 2 or any(not isinstance(s, int) or s < 1 or s % TILE for s in shape):
                raise LayoutError(f"shard_shape={self.shard_shape!r} is not (rows, cols) multiples of 32")
            object.__setattr__(self, "shard_shape", shape)

    @property
    def sharded(self) -> bool:
        return self.layout not in (MemoryLayout.INTERLEAVED.value, MemoryLayout.ROW_MAJOR.value)

    def resolve_shard_shape(self, rows: int, cols: int) -> tuple[int, int]:
        """The shard shape for a (rows, cols) matrix: the given one, else the smallest tile-aligned
        shards that cover the matrix with the grid's cores."""
        if self.shard_shape is not None:
            return self.shard_shape
        gx, gy = self.shard_grid
        if self.layout == MemoryLayout.HEIGHT_SHARDED.value:
            return _round_up(-(-rows // (gx * gy)), TILE), _round_up(cols, TILE)
        if self.layout == MemoryLayout.WIDTH_SHARDED.value:
            return _round_up(rows, TILE), _round_up(-(-cols // (gx * gy)), TILE)
        return _round_up(-(-rows // gy), TILE), _round_up(-(-cols // gx), TILE)


def shard_grid_shape(tile_grid: tuple[int, int], shard_tiles: tuple[int, int]) -> tuple[int, int]:
    """(shard rows, shard cols) covering a tensor of ``tile_grid`` tiles with shards of ``shard_tiles``."""
    return -(-tile_grid[0] // shard_tiles[0]), -(-tile_grid[1] // shard_tiles[1])


def squeeze_shape_ranks(tensor: tuple[int, ...], shard: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The (tensor, shard) shapes in pages tt-metal's BufferDistributionSpec keeps (and its
    TensorAccessorArgs report): from the innermost dimension, a dimension folds into its inner
    neighbour when every dimension folded so far is whole in the shard, or when the shard takes one
    of it and the inner neighbour divides evenly; e.g. height sharding (8, 4) / (1, 4) -> (32,) / (4,)."""
    tensor_dims: list[int] = []  # innermost first
    shard_dims: list[int] = []
    whole = inner_divides = False
    seen_tensor = seen_shard = 1
    volume_tensor, volume_shard = math.prod(tensor), math.prod(shard)
    for dim in range(-1, -len(shard) - 1, -1):
        t, s = tensor[dim], shard[dim]
        if dim < -1 and (whole or (s == 1 and inner_divides)):
            tensor_dims[-1] *= t
            shard_dims[-1] *= s
        else:
            tensor_dims.append(t)
            shard_dims.append(s)
            whole = True
        whole = whole and t == s
        inner_divides = t % s == 0
        seen_tensor, seen_shard = seen_tensor * t, seen_shard * s
        if seen_tensor == volume_tensor and seen_shard == volume_shard:
            break
    for dim in range(-len(shard) - 1, -len(tensor) - 1, -1):
        tensor_dims[-1] *= tensor[dim]
    return tuple(reversed(tensor_dims)), tuple(reversed(shard_dims))


def shard_cores(grid: tuple[int, int]) -> list[tuple[int, int]]:
    """The cores of a shard grid in placement order (row-major: ShardOrientation::ROW_MAJOR)."""
    return [(x, y) for y in range(grid[1]) for x in range(grid[0])]


def shard_of_core(tile_grid: tuple[int, int], shard_tiles: tuple[int, int],
                  grid: tuple[int, int]) -> dict[tuple[int, int], list[tuple[int, int]]]:
    """core (x, y) -> the shards (row, col) it holds: shard ``s`` (row-major over the tensor) lives on
    core ``s % cores`` at slot ``s // cores`` (ROUND_ROBIN_1D)."""
    rows, cols = shard_grid_shape(tile_grid, shard_tiles)
    cores = shard_cores(grid)
    out: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for s in range(rows * cols):
        out.setdefault(cores[s % len(cores)], []).append((s // cols, s % cols))
    return out


def _requested(name: str, d: Mapping) -> BufferLayout:
    try:
        return BufferLayout(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in d.items()})
    except (LayoutError, TypeError) as err:
        raise LayoutError(f"invalid layout for `{name}`: {err}") from None


# Before InferTTLayout, ``tt.layout_desc`` holds the layouts the user asked for (annotate_layouts), each
# BufferLayout's fields that are set; InferTTLayout reads them and replaces them with every parameter's
# LayoutDesc (Attr.LAYOUT_DESC). A layout stored by hand that is no BufferLayout reads as a LayoutError.
LAYOUT_REQUESTS: CollectionSpec[Mapping[str, BufferLayout]] = CollectionSpec(
    Attr.LAYOUT_DESC.key, "Parameter name -> the BufferLayout the user asked for (before InferTTLayout).",
    lambda table: {name: _requested(name, d) for name, d in table.items()},
    lambda table: {name: {k: v for k, v in layout.__dict__.items() if v is not None} for name, layout in table.items()},
    {})


def annotate_layouts(func, **layouts: BufferLayout):
    """``func`` (a TileLang ``@T.prim_func``) with layouts for some of its parameters:
    ``annotate_layouts(kernel, A=BufferLayout(memory="L1", layout="height_sharded", shard_grid=(8, 1)))``.
    The same as the ``layouts`` compile option; InferTTLayout validates them against the kernel."""
    for name, layout in layouts.items():
        if not isinstance(layout, BufferLayout):
            raise LayoutError(f"{name}={layout!r} is not a BufferLayout")
    return LAYOUT_REQUESTS.write(func, {**LAYOUT_REQUESTS.read(func), **layouts})
