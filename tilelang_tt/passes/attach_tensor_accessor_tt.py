"""A3 AttachTensorAccessorTT: abstract TensorAccessor descriptors for global buffers.

Reads: ``tt.layout_desc``. Writes: ``tt.tensor_accessor`` = {buffer: AccessorDesc} with
memory, layout, page size, page count (tiles; rows of a row-major tensor) and tile grid, and for a sharded tensor the shard shape in
pages and the number of banks (shard cores or DRAM banks) holding it; ``kernel`` empty and
``cta_offset`` -1 until D2 binds them to a reader/writer's compile-time argument slots.
Before/after: TIR unchanged.

    After: "tt.tensor_accessor": {"A": {"memory": "DRAM", "layout": "interleaved", "page_size": 2048,
                                         "num_pages": 32, "tile_grid": [8, 4], "cta_offset": -1, ...}}
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.attrs import Attr
from tilelang_tt.ir.tensors import AccessorDesc
from tilelang_tt.ir.common import TILE, prim_func_pass

PASS = "AttachTensorAccessorTT"


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    accessors = {}
    for name, layout in Attr.LAYOUT_DESC.read(func).items():
        rows, cols = layout.tile_grid
        sharded = {}
        if layout.shard_grid is not None:
            sharded = {"shard_tiles": (layout.shard_shape[0] // TILE, layout.shard_shape[1] // TILE),
                       "num_banks": layout.shard_grid[0] * layout.shard_grid[1]}
        accessors[name] = AccessorDesc(
            buffer=name, memory=layout.memory.value, layout=layout.layout.value, page_size=layout.page_size,
            num_pages=layout.num_pages, tile_grid=(rows, cols), **sharded,
        )
    return Attr.TENSOR_ACCESSOR.write(func, accessors)


def AttachTensorAccessorTT():
    return prim_func_pass(_transform, PASS)
