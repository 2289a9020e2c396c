"""Buffers: how a tensor is laid out on the device (:class:`LayoutDesc`, the compiler's
``tt.layout_desc`` entry) and a kernel parameter in the plan (:class:`PlanBuffer`: its layout, its
position and its access). The plan's buffer entry is the layout's own fields; its page size and
page count are computed from them, once, here (``page_size``, ``num_pages``).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass, fields

from tilelang_tt.contract.formats import (
    BLOCK_FORMATS,
    BLOCK_STORABLE,
    BY_DATA_FORMAT,
    DATA_FORMATS,
    FORMATS,
    Format,
    tile_bytes,
)
from tilelang_tt.contract.formula import Formula, ceildiv, from_json, to_json
from tilelang_tt.contract.reading import (
    PlanError,
    read_bool,
    read_int,
    read_object,
    read_pair,
    read_size,
    read_sizes,
    read_str,
)


class MemorySpace(str, enum.Enum):
    DRAM = "DRAM"
    L1 = "L1"


class MemoryLayout(str, enum.Enum):
    INTERLEAVED = "interleaved"
    HEIGHT_SHARDED = "height_sharded"
    WIDTH_SHARDED = "width_sharded"
    BLOCK_SHARDED = "block_sharded"
    ROW_MAJOR = "row_major"  # interleaved pages of one row each (ttnn's ROW_MAJOR_LAYOUT), not tiles


ACCESS = ("read", "write", "readwrite")
MEMORIES = tuple(m.value for m in MemorySpace)
LAYOUTS = tuple(m.value for m in MemoryLayout)
INTERLEAVED = MemoryLayout.INTERLEAVED.value
ROW_MAJOR = MemoryLayout.ROW_MAJOR.value  # interleaved pages of one row (the last dimension) each, not tiles
UNSHARDED = (INTERLEAVED, ROW_MAJOR)
BLOCK_BY_DATA_FORMAT = {f.data_format: f for f in BLOCK_FORMATS.values()}

Size = int | Formula  # a size known at compile time, or a formula of the plan's dynamic sizes


def tile_grid(shape: Sequence[Size], tile_shape: Sequence[int], column: bool = False,
              flat: bool = False) -> tuple[Size, Size]:
    """Tiles along rows and columns of a tensor's matrix view: its matrices (the last two
    dimensions) stacked along the leading ones, each padded to whole tiles; rank 1 is a row, or
    a column with ``column`` (:func:`matrix_dims`), and so is a ``flat`` tensor."""
    batch, rows, cols = matrix_dims(shape, column, flat)
    return batch * ceildiv(rows, tile_shape[0]), ceildiv(cols, tile_shape[1])


def matrix_dims(shape: Sequence[Size], column: bool = False, flat: bool = False) -> tuple[Size, Size, Size]:
    """(batch, rows, cols) of a tensor: the last two dims are the matrix, the rest batch. A
    rank-1 tensor (n,) is the row (1, n), or with ``column`` (the kernel uses it as one value per
    row: InferTTLayout's choice) the column (n, 1); both hold the same elements in the same order.
    A ``flat`` tensor (any rank, used only in vectors along its last dimension) is the rank-1
    tensor of its elements in row-major order."""
    if flat:
        shape = [math.prod(shape)]
    if len(shape) == 1:
        shape = [shape[0], 1] if column else [1, shape[0]]
    return math.prod(shape[:-2]), shape[-2], shape[-1]


@dataclass(frozen=True)
class LayoutDesc:
    """How tensor ``buffer`` is laid out (spec §1, §5): the ``tt.layout_desc`` entry InferTTLayout
    decides, and the layout part of the plan's buffer (:class:`PlanBuffer`). Pages are tiles,
    row-major over its tile grid, or rows of its last dimension (``row_major``)."""

    buffer: str
    shape: tuple[Size, ...]
    dtype: str  # the kernel's (and the host tensors') dtype
    memory: MemorySpace = MemorySpace.DRAM
    layout: MemoryLayout = MemoryLayout.INTERLEAVED
    tile_shape: tuple[int, int] = (32, 32)
    shard_grid: tuple[int, int] | None = None  # cores (DRAM: (banks, 1)) holding the shards
    shard_shape: tuple[int, int] | None = None  # elements per shard, whole tiles
    column: bool = False  # a rank-1 (or flat) tensor the kernel uses as a column: laid out as (n, 1)
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
        """Pages are rows of the last dimension (the host writes and reads them as they are)."""
        return self.layout == MemoryLayout.ROW_MAJOR

    @property
    def sharded(self) -> bool:
        return self.layout not in UNSHARDED

    @property
    def page_size(self) -> int:
        """Bytes of a page: a tile (of its storage format), or one row (the last dimension) of a
        row-major tensor."""
        if self.row_major:
            return self.shape[-1] * DATA_FORMATS[self.dtype][1]
        return tile_bytes(self.format, self.tile_shape[0] * self.tile_shape[1])

    @property
    def num_pages(self) -> Size:
        """Tiles of the tile grid, or rows (every index of the leading dimensions) when row-major."""
        rows, cols = self.tile_grid
        return math.prod(self.shape[:-1]) if self.row_major else rows * cols

    @property
    def tile_grid(self) -> tuple[Size, Size]:
        """Tiles along rows and columns of the tensor's matrix view: its matrices (the last two
        dimensions) stacked along the leading ones, each padded to whole tiles (ttnn's padded
        shape); a rank-1 tensor is a row vector (1, n), or a column (n, 1) with ``column``, and a
        dimension of extent 1 occupies one tile (row 0 or column 0 of it)."""
        return tile_grid(self.shape, self.tile_shape, self.column, self.flat)

    @property
    def matrix_dims(self) -> tuple[Size, Size, Size]:
        return matrix_dims(self.shape, self.column, self.flat)

    @property
    def device_shape(self) -> tuple[Size, ...]:
        """The shape of the tensor the device lays out in tiles: (n, 1) for a rank-1 column
        (the same elements as ``shape``, in the same order), (n,) / (n, 1) for a flat tensor of
        n elements, else ``shape``."""
        shape = (math.prod(self.shape),) if self.flat else self.shape
        return (shape[0], 1) if self.column else shape

    def to_dict(self) -> dict:
        """The ``tt.layout_desc`` form (keyed by the buffer's name)."""
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
        """From the ``tt.layout_desc`` form (:meth:`to_dict`)."""
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


@dataclass(frozen=True, kw_only=True)
class PlanBuffer(LayoutDesc):
    """A kernel parameter of the plan: its layout (the layout's ``buffer`` is its ``name``), its
    position among the parameters and whether the host uploads it, reads it back or both. A
    ``scratch`` buffer is a global tensor the kernel allocates (``T.alloc_global``) to pass data
    from one launch to the next (:mod:`tilelang_tt.launches`): the host allocates it, uploads
    nothing to it and reads nothing back; it is no parameter of the call (its ``param_index``
    follows the user's parameters)."""

    param_index: int
    access: str  # read | write | readwrite (tt.buffer_access)
    scratch: bool = False

    KEYS = ("name", "param_index", "shape", "dtype", "data_format", "access", "memory", "layout", "tile_shape",
            "page_size", "num_pages")

    @property
    def name(self) -> str:
        return self.buffer

    @property
    def is_input(self) -> bool:
        return self.access != "write" and not self.scratch

    @property
    def is_output(self) -> bool:
        return self.access != "read" and not self.scratch

    @staticmethod
    def of(layout: LayoutDesc, param_index: int, access: str, scratch: bool = False) -> PlanBuffer:
        """Parameter ``param_index`` laid out as ``layout``."""
        return PlanBuffer(**{f.name: getattr(layout, f.name) for f in fields(LayoutDesc)}, param_index=param_index,
                          access=access, scratch=scratch)

    def to_json(self) -> dict:
        entry = {"name": self.name, "param_index": self.param_index, "shape": [to_json(x) for x in self.shape],
                 "dtype": self.dtype, "data_format": self.data_format, "access": self.access,
                 "memory": MemorySpace(self.memory).value, "layout": MemoryLayout(self.layout).value,
                 "tile_shape": list(self.tile_shape), "page_size": self.page_size, "num_pages": to_json(self.num_pages)}
        if self.sharded:  # shards in elements of the tensor seen as a matrix, on these cores/banks
            entry |= {"shard_grid": list(self.shard_grid), "shard_shape": list(self.shard_shape)}
        if self.column:  # a rank-1 (or flat) tensor laid out as (n, 1) (InferTTLayout's choice)
            entry["column"] = True
        if self.flat:  # laid out as the rank-1 tensor of its elements (InferTTLayout's choice)
            entry["flat"] = True
        if self.scratch:  # allocated by the host for the kernel's launches, no parameter of the call
            entry["scratch"] = True
        return entry

    @staticmethod
    def from_json(d: object, where: str, dims: Sequence[str] = ()) -> PlanBuffer:
        """A checked ``buffers`` entry: its data format is its dtype's or a block floating point
        storage of it, and its page size and page count are those of its shape and layout."""
        d = read_object(d, where, PlanBuffer.KEYS, ("shard_grid", "shard_shape", "column", "flat", "scratch"))
        name = read_str(d["name"], f"{where}.name")
        where = f"buffer {name!r}"
        dtype = read_str(d["dtype"], f"{where}: dtype", list(FORMATS))
        layout = read_str(d["layout"], f"{where}: layout", LAYOUTS)
        block = BLOCK_BY_DATA_FORMAT.get(d["data_format"])
        if block is not None and (dtype not in BLOCK_STORABLE or layout == ROW_MAJOR):
            raise PlanError(f"{where}: data_format {d['data_format']!r} (block floating point) stores {BLOCK_STORABLE} "
                            f"tensors in tiles, not a {layout} {dtype} buffer")
        if block is None and d["data_format"] != FORMATS[dtype].data_format:
            raise PlanError(f"{where}: data_format {d['data_format']!r} is not {FORMATS[dtype].data_format!r}, the "
                            f"format of its dtype {dtype} (a buffer holds one element per datum, in its dtype, or "
                            f"block floating point: {sorted(BLOCK_BY_DATA_FORMAT)})")
        sharded = layout not in UNSHARDED
        if sharded != ("shard_grid" in d) or sharded != ("shard_shape" in d):
            raise PlanError(f"{where}: a sharded buffer has a shard_grid and a shard_shape, an interleaved one "
                            f"neither; this one is {layout}")
        buffer = PlanBuffer(
            buffer=name, param_index=read_int(d["param_index"], f"{where}: param_index"),
            shape=read_sizes(d["shape"], f"{where}: shape", dims, low=1), dtype=dtype,
            storage=None if block is None else block.dtype,
            access=read_str(d["access"], f"{where}: access", ACCESS),
            memory=MemorySpace(read_str(d["memory"], f"{where}: memory", MEMORIES)), layout=MemoryLayout(layout),
            tile_shape=read_pair(d["tile_shape"], f"{where}: tile_shape", low=1),
            shard_grid=read_pair(d["shard_grid"], f"{where}: shard_grid", low=1) if sharded else None,
            shard_shape=read_pair(d["shard_shape"], f"{where}: shard_shape", low=1) if sharded else None,
            column=read_bool(d["column"], f"{where}: column") if "column" in d else False,
            flat=read_bool(d["flat"], f"{where}: flat") if "flat" in d else False,
            scratch=read_bool(d["scratch"], f"{where}: scratch") if "scratch" in d else False,
        )
        page_size = read_int(d["page_size"], f"{where}: page_size", low=1)
        num_pages = read_size(d["num_pages"], f"{where}: num_pages", dims, low=1)
        buffer._check(page_size, num_pages)
        return buffer

    def _check(self, page_size: int, num_pages: Size) -> None:
        """The plan's ``page_size`` and ``num_pages`` are the layout's; the layout is one the host
        lays out (a column or a flat tensor of tiles, rows in DRAM)."""
        where, shape = f"buffer {self.name!r}", list(self.shape)
        if not self.shape:
            raise PlanError(f"{where}: a buffer has at least one dimension")
        if self.column and len(self.shape) != 1 and not self.flat:
            raise PlanError(f"{where}: column is a layout of rank-1 (or flat) tensors; its shape is {shape}")
        if self.flat and (self.sharded or self.row_major or len(self.shape) < 2):
            raise PlanError(f"{where}: flat is a layout of interleaved tensors of rank 2 or more in tiles")
        if self.row_major:
            if self.memory != MemorySpace.DRAM or self.column:
                raise PlanError(f"{where}: a row-major buffer is a DRAM tensor of rows, not {self.memory.value}"
                                + (" in a column" if self.column else ""))
            if (num_pages, page_size) != (self.num_pages, self.page_size):
                raise PlanError(f"{where}: a row-major {shape} {self.dtype} buffer has {self.num_pages} pages (rows) "
                                f"of {self.page_size} bytes, not {num_pages} of {page_size}")
            return
        if num_pages != self.num_pages:
            raise PlanError(f"{where}: num_pages {num_pages} but its shape {shape} holds {self.num_pages} tiles of "
                            f"{self.tile_shape[0]}x{self.tile_shape[1]}")
        if page_size != self.page_size:
            what = f"{self.dtype} {self.data_format}" if self.format.block else self.dtype
            raise PlanError(f"{where}: page_size {page_size} is not one {what} tile ({self.page_size} bytes)")
