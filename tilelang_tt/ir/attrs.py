"""Single source of truth for every ``tt.*`` attribute key and the structured values they carry.

No other module spells a ``"tt.`` literal of an attribute (the intrinsics' are
:mod:`tilelang_tt.ir.intrin`): passes and codegen read and write attributes through :class:`Attr`
and convert values with the ``to_tvm``/``from_tvm`` helpers of the dataclasses below. Values are
stored on PrimFuncs as plain TVM containers (maps, arrays, strings, ints) so they print in
TVMScript and survive structural equality.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import tilelang  # noqa: F401  (tilelang must be imported before tvm)
from tvm import runtime, tirx

from tilelang_tt.contract.formats import BLOCK_FORMATS, BY_DATA_FORMAT, DATA_FORMATS, Format, tile_bytes
from tilelang_tt.contract.formula import from_json, to_json
from tilelang_tt.contract.plan import (  # noqa: F401  (the vocabulary attributes and the plan share)
    CHAIN_ARGS,
    MCAST_ARGS,
    ArgKind,
    MeshSplit,
    MeshTensor,
    MulticastDesc,
    Policy,
    WorkItem,
    WorkPolicy,
    tile_grid,
)


class _DocumentedKey(str, enum.Enum):
    """A string enum whose members are (value, docstring) pairs."""

    def __new__(cls, value: str, doc: str):
        obj = str.__new__(cls, value)
        obj._value_ = value
        obj.__doc__ = doc
        return obj


class Attr(_DocumentedKey):
    """Function- and buffer-level attribute keys (spec §1)."""

    # PrimFunc level
    CORE_GRID = ("tt.core_grid", "[gx, gy]: logical compute grid used (x = columns, y = rows).")
    CORE_RANGES = ("tt.core_ranges", "Active core ranges: list of [[x0, y0], [x1, y1]] inclusive.")
    PARTITION_MODE = ("tt.partition_mode", '"global" or "local_shard": how work is split over cores.')
    GRID_TILES = ("tt.grid_tiles", "[Mt, Nt]: output tile counts along M (rows) and N (columns).")
    BLOCK_GRID = ("tt.block_grid", "[By, Bx]: TileLang block grid (T.Kernel extents) along M and N.")
    BLOCK_TILES = ("tt.block_tiles", "[bmt, bnt]: tiles per block along M and N.")
    WORK_PARTITION = ("tt.work_partition", "Per active core: {core, start_id, count, width, shard} over block ids "
                                           "(a WorkItem, as the plan's work_partition entries).")
    WORK_POLICY = ("tt.work_policy", "How a core walks its blocks: {policy, stride, shard_blocks} (WorkPolicy).")
    MULTICAST = ("tt.multicast", "CB name -> {axis, sender_semaphore, receiver_semaphore, groups}: blocks the first "
                                 "core of a core row/column reads once and multicasts to the others (MulticastDesc); "
                                 "groups: the cores sharing the block, the sender first, and the rectangle "
                                 "{cores, near, far} in logical core coordinates (MulticastGroup).")
    RUNTIME_ARGS = ("tt.runtime_args", "Ordered runtime argument descriptors of a kernel.")
    TILE_DFG = ("tt.tile_dfg", "Tile dataflow graph: CB nodes with producer/consumer roles and buffers.")
    BUFFER_ACCESS = ("tt.buffer_access", 'Parameter name -> "read" | "write" | "readwrite": whether the reader '
                                         "moves it into CBs, the writer CBs into it, or both (BuildTileDFGTT, from "
                                         "the dataflow; the plan's buffer access).")
    CB_DESC = ("tt.cb_desc", "CB name -> {index, page_size, num_pages, data_format, ...}.")
    COLUMN_MAJOR_BLOCKS = ("tt.column_major_blocks", "Names of the blocks whose tiles the reader stores column by "
                           "column: the B of transpose_B gemms (LowerTTTileIntrinsics), so that matmul_block steps "
                           "through B's columns as adjacent tiles.")
    KERNEL_ROLE = ("tt.kernel_role", '"monolithic", "reader", "compute" or "writer".')
    LAYOUT_DESC = ("tt.layout_desc", "Buffer name -> layout (memory, layout, dtype, tile shape, sharding).")
    TENSOR_ACCESSOR = ("tt.tensor_accessor", "Buffer name -> abstract TensorAccessor (bound late, D2).")
    CORE_MAP = ("tt.core_map", '{"m": launch tag of the block row (by), "n": launch tag of the block column (bx)}.')
    COMPUTE_CONFIG = ("tt.compute_config", "Compute kernel config: fp32_dest_acc_en, math fidelity, DST budget.")
    ARCH = ("tt.arch", "Target architecture name (wormhole_b0 or blackhole); InferTTLayout records it, every later "
                       "pass reads it from the function (passes.common.arch_of).")
    SOURCE_FUNC = ("tt.source_func", "Name of the user's PrimFunc a split kernel came from.")
    ACCUMULATE = ("tt.accumulate", "AttrStmt key: the body accumulates a gemm into the node's buffer in DST "
                                   "(value 0: from zero; 1: on top of its current value, reloaded from its CB; "
                                   "2: over a K loop with partial sums kept in its CB between K steps).")
    READ_WHEN = ("tt.read_when", "AttrStmt key around a tt.read_to_cb: the reader moves the slice only when the "
                                 "value (which may read tensor elements: a block-sparse mask) holds, else fills the "
                                 "block with zeros; compute and writer do not see it.")
    VALID_ROWS = ("tt.valid_rows", "AttrStmt key around a T.copy of a block into a tensor: the writer writes only the "
                                   "block's first `value` rows (a guarded store `if i < valid: C[row + i, ..] = ..`; "
                                   "the value may read tensor elements); reader and compute do not see it.")
    REDUCTION = ("tt.reduction", "Global tensors summed into by several blocks (T.atomic_add): {buffers, axes, blocks, "
                                 "semaphore} (a Reduction; LowerAtomicAddTT, the semaphore from "
                                 "LayoutAwareWorkPartitionTT).")
    MESH = ("tt.mesh", "The block rows (or columns) split over a mesh of devices (SplitMeshTT): {shape, axis, blocks, tensors: "
                       "[{buffer, distribution, dim, shape}]} (a MeshSplit); the kernel is then one device's.")
    ARTIFACT_SOURCES = (
        "tt.artifact_sources",
        "JSON {file name: text} of a compiled kernel, carried from the TileLang backend's pipeline to its codegen.",
    )


class AccumulateMode(enum.IntEnum):
    """Value of a ``tt.accumulate`` scope (how the gemm accumulator starts and where it lives)."""

    FRESH = 0  # from zero, in DST over the whole K loop
    RELOAD = 1  # on top of the accumulator's current value, reloaded from its CB
    SPILL = 2  # over a K loop, partial sums kept in the accumulator's CB between K steps
    L1_ACC = 3  # as SPILL, but the packer adds each K step's sums to the CB's (pack_reconfig_l1_acc)


@dataclass(frozen=True)
class Reduction:
    """The tensors several blocks sum into (``T.atomic_add``) and how the blocks take turns. The
    summing ``axes`` (grid loop variables no destination depends on) are the innermost grid
    dimensions, so the ``blocks`` blocks adding into one region have consecutive ids; block ``b``
    with ``b % blocks != 0`` reads the tensors after block ``b - 1`` signalled ``semaphore`` (-1
    until the work partition allocates it). No summing axes: ``blocks`` is 1, each region has one
    block."""

    buffers: tuple[tirx.Buffer, ...]
    axes: tuple[tirx.Var, ...]
    blocks: int
    semaphore: int = -1

    def summed(self, buffer: tirx.Buffer) -> bool:
        return any(buffer.same_as(b) for b in self.buffers)

    def to_attr(self) -> dict:
        return {"buffers": list(self.buffers), "axes": list(self.axes), "blocks": self.blocks,
                "semaphore": self.semaphore}

    @staticmethod
    def of(func: tirx.PrimFunc) -> Reduction | None:
        d = get(func, Attr.REDUCTION)
        if d is None:
            return None
        return Reduction(tuple(d["buffers"]), tuple(d["axes"]), int(d["blocks"]), int(d["semaphore"]))


class KernelRole(str, enum.Enum):
    MONOLITHIC = "monolithic"
    READER = "reader"
    COMPUTE = "compute"
    WRITER = "writer"


class PartitionMode(str, enum.Enum):
    GLOBAL = "global"
    LOCAL_SHARD = "local_shard"


class MemorySpace(str, enum.Enum):
    DRAM = "DRAM"
    L1 = "L1"


class MemoryLayout(str, enum.Enum):
    INTERLEAVED = "interleaved"
    HEIGHT_SHARDED = "height_sharded"
    WIDTH_SHARDED = "width_sharded"
    BLOCK_SHARDED = "block_sharded"
    ROW_MAJOR = "row_major"  # interleaved pages of one row each (ttnn's ROW_MAJOR_LAYOUT), not tiles


def _to_py(value):
    """TVM container/imm -> plain Python (TIR variables stay themselves)."""
    if isinstance(value, (tirx.Var, tirx.Buffer)):
        return value
    if isinstance(value, tirx.IntImm):
        return bool(value.value) if value.dtype == "bool" else int(value.value)
    if isinstance(value, tirx.FloatImm):
        return float(value.value)
    if isinstance(value, tirx.StringImm):
        return value.value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, Mapping):
        return {str(k): _to_py(v) for k, v in value.items()}
    if isinstance(value, Sequence):
        return [_to_py(v) for v in value]
    raise TypeError(f"cannot convert attribute value of type {type(value).__name__}")


def to_py(value):
    """Public converter of a TVM attribute value to plain Python (dicts, lists, ints, strs)."""
    return _to_py(value)


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
class CBDesc:
    """``tt.cb_desc`` entry: conceptual circular buffer geometry (spec A2, D1)."""

    name: str
    index: int
    page_size: int
    num_pages: int
    data_format: str
    block_pages: int
    block_tiles: tuple[int, int] = (0, 0)  # (rows, cols) of 32x32 tiles in one block
    vector: str = ""  # "row": data in row 0 of each tile; "col": data in column 0; "": full tiles
    producer: str = ""
    consumer: str = ""
    buffer: str = ""
    source: str = ""  # "file:line:column" of the buffer's allocation in the user's kernel (errors.location_string)

    def to_dict(self) -> dict:
        return {
            "index": self.index,
            "page_size": self.page_size,
            "num_pages": self.num_pages,
            "data_format": self.data_format,
            "block_pages": self.block_pages,
            "block_tiles": list(self.block_tiles),
            "vector": self.vector,
            "producer": self.producer,
            "consumer": self.consumer,
            "buffer": self.buffer,
            "source": self.source,
        }

    @staticmethod
    def from_dict(name: str, d: dict) -> CBDesc:
        return CBDesc(name=name, **(d | {"block_tiles": tuple(d["block_tiles"])}))


@dataclass(frozen=True)
class RuntimeArg:
    """One runtime argument of a kernel. ``var`` is the TIR variable that stands for it in the
    kernel's IR (FinalizePersistentSignatureTT makes it; passes and codegen find an argument by
    this object, never by its name)."""

    name: str
    kind: ArgKind
    buffer: str = ""
    value: int = 0
    cb: str = ""
    what: str = ""
    dim: str = ""
    var: tirx.Var | None = field(default=None, compare=False)

    def to_dict(self) -> dict:
        """The plan's (``tt.plan.json``) form: no variable."""
        out = {"name": self.name, "kind": ArgKind(self.kind).value}
        if self.kind == ArgKind.BUFFER_ADDRESS:
            out["buffer"] = self.buffer
        if self.kind == ArgKind.CONST:
            out["value"] = self.value
        if self.kind == ArgKind.MCAST:
            out |= {"cb": self.cb, "what": self.what}
        if self.kind == ArgKind.CHAIN:
            out["what"] = self.what
        if self.kind == ArgKind.DIM:
            out["dim"] = self.dim
        return out

    def to_attr(self) -> dict:
        """The ``tt.runtime_args`` form: the plan's and the variable."""
        return self.to_dict() | {"var": self.var}

    @staticmethod
    def from_dict(d: dict) -> RuntimeArg:
        return RuntimeArg(d["name"], ArgKind(d["kind"]), d.get("buffer", ""), int(d.get("value", 0)),
                          d.get("cb", ""), d.get("what", ""), d.get("dim", ""), d.get("var"))


def runtime_args(func: tirx.PrimFunc) -> list[RuntimeArg]:
    """A kernel's ``tt.runtime_args``, in order."""
    return [RuntimeArg.from_dict(d) for d in get(func, Attr.RUNTIME_ARGS, [])]


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


def get(func: tirx.PrimFunc, key: Attr, default=None):
    """Read a function attribute as plain Python."""
    attrs = func.attrs
    if attrs is None or key.value not in attrs:
        return default
    return _to_py(attrs[key.value])


def has(func: tirx.PrimFunc, key: Attr) -> bool:
    return func.attrs is not None and key.value in func.attrs


def with_attrs(func: tirx.PrimFunc, updates: dict[Attr, object]) -> tirx.PrimFunc:
    """Return ``func`` with the given attributes set (values are plain Python)."""
    for key, value in updates.items():
        func = func.with_attr(key.value, _to_tvm(value))
    return func


def _to_tvm(value):
    if isinstance(value, (tirx.Var, tirx.Buffer)):
        return value
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, bool):
        return tirx.IntImm("bool", value)
    if isinstance(value, int):
        return tirx.IntImm("int64", value) if abs(value) >= 2**31 else tirx.IntImm("int32", value)
    if isinstance(value, str):
        return runtime.convert(value)
    if isinstance(value, dict):
        return runtime.convert({k: _to_tvm(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return runtime.convert([_to_tvm(v) for v in value])
    raise TypeError(f"cannot store attribute value of type {type(value).__name__}")
