"""How the kernel's tensors are stored and reached: the values of ``tt.layout_desc`` (:class:`LayoutDesc`,
InferTTLayout) and ``tt.tensor_accessor`` (:class:`AccessorDesc`, AttachTensorAccessorTT and
ConfigureTensorAccessorTT), read and written as ``Attr.LAYOUT_DESC`` / ``Attr.TENSOR_ACCESSOR``
(:mod:`tilelang_tt.ir.attrs`).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

from tilelang_tt.contract.formats import BLOCK_FORMATS, BY_DATA_FORMAT, DATA_FORMATS, Format, tile_bytes
from tilelang_tt.contract.formula import from_json, to_json
from tilelang_tt.contract.plan import tile_grid


class MemorySpace(str, enum.Enum):
    DRAM = "DRAM"
    L1 = "L1"


class MemoryLayout(str, enum.Enum):
    INTERLEAVED = "interleaved"
    HEIGHT_SHARDED = "height_sharded"
    WIDTH_SHARDED = "width_sharded"
    BLOCK_SHARDED = "block_sharded"
    ROW_MAJOR = "row_major"  # interleaved pages of one row each (ttnn's ROW_MAJOR_LAYOUT), not tiles

@dataclass(frozen=True)
class LayoutDesc:
    """``tt.layout_desc`` of one buffer (spec §1, §5)."""

    buffer: str
    shape: tuple[int, ...]
    dtype: str
    memory: MemorySpace = MemorySpace.DRAM
    layout: MemoryLayout = MemoryLayout.INTERLEAVED
    tile_shape: tuple[int, int] = (32, 32)
    shard_grid: tuple[int, int] | None = None
    shard_shape: tuple[int, int] | None = None
    column: bool = False  # a rank-1 tensor (n,) the kernel uses as a column: laid out as (n, 1)
    flat: bool = False  # a tensor used only in vectors along its last dimension: laid out as its elements (n,)
    storage: str | None = None  # stored in a block floating point format (BLOCK_FORMATS), not in its dtype

    @property
    def format(self) -> Format:
        """How its elements are stored: in its dtype, or in the block floating point ``storage``."""
        return BLOCK_FORMATS[self.storage] if self.storage else BY_DATA_FORMAT[DATA_FORMATS[self.dtype][0]]

    @property
    def data_format(self) -> str:
        return self.format.data_format

    @property
    def row_major(self) -> bool:
        return self.layout == MemoryLayout.ROW_MAJOR

    @property
    def page_size(self) -> int:
        """Bytes of a page: a tile (of its storage format), or one row (the last dimension) of a
        row-major tensor."""
        if self.row_major:
            return self.shape[-1] * DATA_FORMATS[self.dtype][1]
        return tile_bytes(self.format, self.tile_shape[0] * self.tile_shape[1])

    @property
    def num_pages(self) -> int:
        """Tiles of the tile grid, or rows (every index of the leading dimensions) when row-major."""
        rows, cols = self.tile_grid
        return math.prod(self.shape[:-1]) if self.row_major else rows * cols

    @property
    def tile_grid(self) -> tuple[int, int]:
        """Tiles along rows and columns of the tensor's matrix view: its matrices (the last two
        dimensions) stacked along the leading ones, each padded to whole tiles (ttnn's padded
        shape); a rank-1 tensor is a row vector (1, n), or a column (n, 1) with ``column``, and a
        dimension of extent 1 occupies one tile (row 0 or column 0 of it)."""
        return tile_grid(self.shape, self.tile_shape, self.column, self.flat)

    def to_dict(self) -> dict:
        out = {
            "memory": self.memory.value,
            "layout": self.layout.value,
            "dtype": self.dtype,
            "shape": [to_json(d) for d in self.shape],
            "tile_shape": list(self.tile_shape),
            "data_format": self.data_format,
            "page_size": self.page_size,
        }
        if self.shard_grid is not None:
            out["shard_grid"] = list(self.shard_grid)
            out["shard_shape"] = list(self.shard_shape)
        if self.column:
            out["column"] = True
        if self.flat:
            out["flat"] = True
        if self.storage:
            out["storage"] = self.storage
        return out

    @staticmethod
    def from_dict(buffer: str, d: dict) -> LayoutDesc:
        return LayoutDesc(
            buffer=buffer,
            shape=tuple(from_json(v) for v in d["shape"]),
            dtype=d["dtype"],
            memory=MemorySpace(d["memory"]),
            layout=MemoryLayout(d["layout"]),
            tile_shape=tuple(d["tile_shape"]),
            shard_grid=tuple(d["shard_grid"]) if "shard_grid" in d else None,
            shard_shape=tuple(d["shard_shape"]) if "shard_shape" in d else None,
            column=bool(d.get("column", False)),
            flat=bool(d.get("flat", False)),
            storage=d.get("storage"),
        )


@dataclass(frozen=True)
class AccessorDesc:
    """``tt.tensor_accessor``: abstract until D2 binds ``kernel`` and ``cta_offset``."""

    buffer: str
    memory: str
    layout: str
    page_size: int
    num_pages: int
    tile_grid: tuple[int, int]
    shard_tiles: tuple[int, int] = (0, 0)  # pages (tiles) per shard, rows x cols; (0, 0) when interleaved
    num_banks: int = 0  # cores (L1) or DRAM banks holding the shards
    kernel: str = ""
    cta_offset: int = -1
    compile_time_args: tuple[int, ...] = field(default_factory=tuple)
    crta_offset: int = -1  # first common runtime arg (the bank coordinates of a sharded tensor)
    num_common_runtime_args: int = 0

    @property
    def sharded(self) -> bool:
        return self.num_banks > 0

    def to_dict(self) -> dict:
        return {
            "memory": self.memory,
            "layout": self.layout,
            "page_size": self.page_size,
            "num_pages": to_json(self.num_pages),
            "tile_grid": [to_json(t) for t in self.tile_grid],
            "shard_tiles": list(self.shard_tiles),
            "num_banks": self.num_banks,
            "kernel": self.kernel,
            "cta_offset": self.cta_offset,
            "compile_time_args": list(self.compile_time_args),
            "crta_offset": self.crta_offset,
            "num_common_runtime_args": self.num_common_runtime_args,
        }

    @staticmethod
    def from_dict(buffer: str, d: dict) -> AccessorDesc:
        return AccessorDesc(
            buffer=buffer,
            memory=d["memory"],
            layout=d["layout"],
            page_size=int(d["page_size"]),
            num_pages=from_json(d["num_pages"]),
            tile_grid=tuple(from_json(t) for t in d["tile_grid"]),
            shard_tiles=tuple(d["shard_tiles"]),
            num_banks=int(d["num_banks"]),
            kernel=d["kernel"],
            cta_offset=int(d["cta_offset"]),
            compile_time_args=tuple(d["compile_time_args"]),
            crta_offset=int(d["crta_offset"]),
            num_common_runtime_args=int(d["num_common_runtime_args"]),
        )

