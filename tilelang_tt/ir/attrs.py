"""Single source of truth for every ``tt.*`` attribute key and the structured values they carry.

No other module spells a ``"tt.`` literal: passes and codegen read and write attributes through
:class:`Attr` and convert values with the ``to_tvm``/``from_tvm`` helpers of the dataclasses
below. Values are stored on PrimFuncs as plain TVM containers (maps, arrays, strings, ints) so
they print in TVMScript and survive structural equality.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import tilelang  # noqa: F401  (tilelang must be imported before tvm)
from tvm import ir, runtime, tirx
from tvm.ir import register_op_attr as tvm_register_op_attr

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


class Operand(str, enum.Enum):
    """Kinds of intrinsic arguments, as an :class:`Intrin` declares them (its ``schema``)."""

    BUFFER = "buffer"  # the data Var (handle) of a block or tensor
    REGION = "region"  # a tl.region call: a slice of a block or tensor
    CB = "cb"  # a circular buffer id, a constant (codegen prints the CB's name)
    SEMAPHORE = "semaphore"  # a semaphore id, a constant (codegen prints its name)
    INT = "int"  # an integer constant
    BOOL = "bool"  # a boolean constant
    FLOAT = "float"  # a float constant
    STR = "str"  # a string constant: an op, kind or format name
    EXPR = "expr"  # any expression (loop and block variables, runtime arguments, element values)


@dataclass(frozen=True)
class IntrinArg:
    name: str
    kind: Operand
    variadic: bool = False  # the last argument, written ``name*``: zero or more of ``kind``


class Intrin(_DocumentedKey):
    """TIR intrinsics of the TT lowering (spec §2), registered as TVM ops at import. Each member is
    (op name, description, argument schema ``"name: kind, ..."`` with kinds of :class:`Operand`);
    :func:`call` checks every call against the schema."""

    def __new__(cls, value: str, doc: str, schema: str):
        obj = str.__new__(cls, value)
        obj._value_ = value
        obj.__doc__ = doc
        obj.schema = tuple(IntrinArg(name.strip().rstrip("*"), Operand(kind.strip()), name.strip().endswith("*"))
                           for name, kind in (arg.split(":") for arg in schema.split(",") if arg.strip()))
        assert not any(arg.variadic for arg in obj.schema[:-1]), f"{value}: only the last argument may be variadic"
        return obj

    def positions(self, kind: Operand) -> tuple[int, ...]:
        """The positions of the arguments of ``kind``."""
        return tuple(k for k, arg in enumerate(self.schema) if arg.kind == kind)

    # abstract, protocol-less (C1-C2)
    READ_TO_CB = ("tt.read_to_cb", "read_to_cb(src_region, cb_region): global tensor slice -> CB block.",
                  "src: region, cb: region")
    WRITE_FROM_CB = ("tt.write_from_cb", "write_from_cb(cb_region, dst_region): CB block -> global slice.",
                     "cb: region, dst: region")
    MM_MMA = ("tt.mm.mma", "mma(a, b, c, m0, n0, sm, sn, transpose_b, first): C[m0:+sm, n0:+sn] (+)= A @ B in DST.",
              "a: buffer, b: buffer, c: buffer, m0: expr, n0: expr, sm: int, sn: int, transpose_b: bool, first: expr")
    PACK_BLOCK = ("tt.pack_block", "pack_block(c, m0, n0, sm, sn): the accumulator sub-block is final; pack it.",
                  "c: buffer, m0: expr, n0: expr, sm: int, sn: int")
    TILE_ELTWISE = ("tt.tile.eltwise", "eltwise(out, i, j, value, *also): out[i, j] = value over the block, tile by "
                    "tile, and the same tiles into each block of ``also`` of out's geometry (FuseBlockCopiesTT); "
                    "into a block of one tile column where out has several, each row's tiles summed into its "
                    "row's tile (Reduce.fuse_row_sums).",
                    "out: buffer, i: expr, j: expr, value: expr, also*: buffer")
    TILE_REDUCE = ("tt.tile.reduce", 'reduce(kind, src, dst, dim, clear): kind "sum"|"max" along dim (1 = per row).',
                   "kind: str, src: buffer, dst: buffer, dim: int, clear: bool")
    GENERATE_BLOCK = ("tt.generate_block", "generate_block(cb_region, i, j, value): the reader fills the block with "
                                           "value(i, j), an expression of the element's indices, loop variables and "
                                           "block coordinates only (a causal mask, an iota).",
                      "cb: region, i: expr, j: expr, value: expr")
    # reader/writer protocol (D3)
    CB_RESERVE_BACK = ("tt.cb_reserve_back", "cb_reserve_back(cb, pages)", "cb: cb, pages: int")
    CB_PUSH_BACK = ("tt.cb_push_back", "cb_push_back(cb, pages)", "cb: cb, pages: int")
    CB_WAIT_FRONT = ("tt.cb_wait_front", "cb_wait_front(cb, pages)", "cb: cb, pages: int")
    CB_POP_FRONT = ("tt.cb_pop_front", "cb_pop_front(cb, pages)", "cb: cb, pages: int")
    GET_WRITE_PTR = ("tt.get_write_ptr", "get_write_ptr(cb) -> L1 address", "cb: cb")
    GET_READ_PTR = ("tt.get_read_ptr", "get_read_ptr(cb) -> L1 address", "cb: cb")
    NOC_READ_PAGE = ("tt.noc_async_read_page", "noc_async_read_page(page_id, accessor_buffer, l1_addr)",
                     "page: expr, tensor: buffer, l1_addr: expr")
    NOC_WRITE_PAGE = ("tt.noc_async_write_page", "noc_async_write_page(page_id, accessor_buffer, l1_addr)",
                      "page: expr, tensor: buffer, l1_addr: expr")
    NOC_READ_ROW = ("tt.noc_async_read_row", "noc_async_read(accessor.get_noc_addr(page_id, offset), l1_addr, bytes): "
                                             "part of one page (a row) of a row-major tensor",
                    "page: expr, tensor: buffer, offset: expr, l1_addr: expr, bytes: expr")
    NOC_WRITE_ROW = ("tt.noc_async_write_row", "noc_async_write(l1_addr, accessor.get_noc_addr(page_id, offset), "
                                               "bytes): part of one page (a row) of a row-major tensor",
                     "page: expr, tensor: buffer, offset: expr, l1_addr: expr, bytes: expr")
    NOC_READ_BARRIER = ("tt.noc_async_read_barrier", "noc_async_read_barrier()", "")
    NOC_WRITE_BARRIER = ("tt.noc_async_write_barrier", "noc_async_write_barrier()", "")
    NOC_WRITES_FLUSHED = ("tt.noc_async_writes_flushed", "noc_async_writes_flushed(): the data of every issued write "
                                                         "has left L1 (its source may be reused)", "")
    NOC_READ_ZEROS = ("tt.noc_async_read_zeros", "noc_async_read_zeros(l1_addr, bytes): zero an L1 range from the core's "
                                                  "zero region (MEM_ZEROS_BASE)", "l1_addr: expr, bytes: expr")
    MCAST_WRITE = ("tt.noc_async_write_multicast", "noc_async_write_multicast(l1_addr, x0, y0, x1, y1, bytes, num_dests): "
                                                    "the block at l1_addr to the same address of every core of the NOC "
                                                    "rectangle but the sender's own, linked to the flag multicast that "
                                                    "follows it (one path reservation for both, as ttnn's matmul senders)",
                   "l1_addr: expr, x0: expr, y0: expr, x1: expr, y1: expr, bytes: int, num_dests: expr")
    SEM_WAIT = ("tt.noc_semaphore_wait", "noc_semaphore_wait(semaphore, value): block until the local semaphore == value",
                "semaphore: semaphore, value: expr")
    SEM_WAIT_MIN = ("tt.noc_semaphore_wait_min", "noc_semaphore_wait_min(semaphore, value): block until the local "
                                                  "semaphore >= value", "semaphore: semaphore, value: expr")
    SEM_SET = ("tt.noc_semaphore_set", "noc_semaphore_set(semaphore, value): set the local semaphore",
               "semaphore: semaphore, value: expr")
    SEM_INC = ("tt.noc_semaphore_inc", "noc_semaphore_inc(noc_x, noc_y, semaphore, incr): add to a remote core's semaphore",
               "noc_x: expr, noc_y: expr, semaphore: semaphore, incr: int")
    SEM_SET_MCAST = ("tt.noc_semaphore_set_multicast", "noc_semaphore_set_multicast(semaphore, x0, y0, x1, y1, num_dests): "
                                                       "copy the local semaphore to every core of the NOC rectangle",
                     "semaphore: semaphore, x0: expr, y0: expr, x1: expr, y1: expr, num_dests: expr")
    FILL_SCALER = ("tt.fill_scaler", "fill_scaler(cb, value): reader pushes one tile of `value` (reduce scaler).",
                   "cb: cb, value: float")
    STORE_TILE_ELEMENT = ("tt.store_tile_element", "store_tile_element(l1_addr, i, j, tile_cols, value, format): element "
                                                   "(i, j) of a block of tile_cols tiles per row, at its place in tile "
                                                   'layout, in format "Float16_b" or "Float32".',
                          "l1_addr: expr, i: expr, j: expr, tile_cols: int, value: expr, format: str")
    WIDEN_BYTES = ("tt.widen_bytes", "widen_bytes(l1_addr, pages): each 2048-byte page at l1_addr holds a tile of "
                                     "bytes (UInt8) in its first 1024: rewritten in place as the bfloat16 tile of the "
                                     "same values (a mask block)", "l1_addr: expr, pages: int")
    LOAD_ELEMENT = ("tt.load_element", "load_element(l1_addr, index, format) -> float: element `index` of an array in "
                                       "data format `format` (Float16_b, Float32, Int32, UInt32, UInt16) at l1_addr",
                    "l1_addr: expr, index: expr, format: str")
    # compute engine init (D4)
    HW_STARTUP = ("tt.engine.init_common", "compute_kernel_hw_startup(in0, in1, out[, reverse])",
                  "in0: cb, in1: cb, out: cb, reverse: bool")
    MATMUL_INIT = ("tt.fpu.matmul_init", "matmul_init(in0, in1, transpose)", "in0: cb, in1: cb, transpose: bool")
    MATMUL_BLOCK_INIT = ("tt.fpu.matmul_block_init", "matmul_block_init(in0, in1, transpose, ct_dim, rt_dim, kt_dim): "
                                                      "the matmul of an rt_dim x ct_dim output block over kt_dim",
                         "in0: cb, in1: cb, transpose: bool, ct_dim: int, rt_dim: int, kt_dim: int")
    BINARY_INIT = ("tt.fpu.binary_init", "<op>_init(in0, in1): add_init, sub_init, mul_init", "op: str, in0: cb, in1: cb")
    BINARY_BCAST_INIT = ("tt.fpu.binary_bcast_init", "<op>_bcast_<kind>s_init(in0, in1): in1 a per-row (kind "
                                                     '"col") or per-column ("row") vector', "op: str, kind: str, in0: cb, in1: cb")
    # compute tile ops and DST (D5)
    MATMUL_TILES = ("tt.fpu.matmul_tiles", "matmul_tiles(in0, in1, i0, i1, dst)",
                    "in0: cb, in1: cb, tile0: expr, tile1: expr, dst: expr")
    MATMUL_BLOCK = ("tt.fpu.matmul_block", "matmul_block(in0, in1, i0, i1, dst, transpose, ct_dim, rt_dim, kt_dim): one "
                                           "K step of the block, DST[dst + r * ct_dim + c] += in0[i0 + r * kt_dim] x "
                                           "in1[i1 + c] (in1's tiles transposed with transpose)",
                    "in0: cb, in1: cb, tile0: expr, tile1: expr, dst: expr, transpose: bool, ct_dim: int, rt_dim: int, "
                    "kt_dim: int")
    BINARY_TILES = ("tt.fpu.binary_tiles", "<op>_tiles(in0, in1, i0, i1, dst)",
                    "op: str, in0: cb, in1: cb, tile0: expr, tile1: expr, dst: expr")
    BINARY_BCAST_TILES = ("tt.fpu.binary_bcast_tiles", "<op>_tiles_bcast_<kind>s(in0, in1, i0, i1, dst): in0 op the "
                                                       "vector tile of in1 spread over the tile",
                          "op: str, kind: str, in0: cb, in1: cb, tile0: expr, tile1: expr, dst: expr")
    COPY_INIT = ("tt.copy_init", "copy_init(cb): unpack tiles of cb into DST", "cb: cb")
    COPY_TILE = ("tt.copy_tile", "copy_tile(cb, tile, dst)", "cb: cb, tile: expr, dst: expr")
    WHERE_INIT = ("tt.sfpu.where_init", "where_tile_init()", "")
    WHERE_TILE = ("tt.sfpu.where", "where_tile<format>(cond, a, b, out): cond != 0 ? a : b on DST tiles",
                  "format: str, cond: expr, a: expr, b: expr, out: expr")
    TRANSPOSE_INIT = ("tt.transpose_init", "transpose_init(cb): unpack tiles of cb transposed into DST", "cb: cb")
    TRANSPOSE_TILE = ("tt.transpose_tile", "transpose_tile(cb, tile, dst): the tile transposed (B[w, h] = A[h, w])",
                      "cb: cb, tile: expr, dst: expr")
    BCAST_INIT = ("tt.bcast_init", 'unary_bcast_init<kind>(cb): kind "row"|"col"', "kind: str, cb: cb")
    BCAST_TILE = ("tt.bcast_tile", "unary_bcast<kind>(cb, tile, dst): a row/column vector tile broadcast into DST",
                  "kind: str, cb: cb, tile: expr, dst: expr")
    SFPU_INIT = ("tt.sfpu.init", 'init of the SFPU op (kind, op) of tilelang_tt.ops.sfpu: kind "unary"|"binary"|'
                                 '"scalar"|"fill"', "kind: str, op: str")
    SFPU_UNARY = ("tt.sfpu.unary", "<op>_tile(dst): a unary SFPU op of tilelang_tt.ops.sfpu", "op: str, dst: expr")
    SFPU_SCALAR = ("tt.sfpu.scalar", "<op>_unary_tile(dst, float bits): add/sub/mul/div/rsub with a scalar",
                   "op: str, dst: expr, bits: int")
    SFPU_BINARY = ("tt.sfpu.binary", "<op>_binary_tile(d0, d1, dout) / binary_max_tile / binary_min_tile",
                   "op: str, dst0: expr, dst1: expr, dst_out: expr")
    FILL_TILE = ("tt.sfpu.fill", "fill_tile(dst, value)", "dst: expr, value: float")
    REDUCE_INIT = ("tt.reduce_init", "reduce_init<kind, dim>(cb, scaler_cb, out_cb)",
                   "kind: str, dim: str, cb: cb, scaler_cb: cb, out_cb: cb")
    REDUCE_TILE = ("tt.reduce_tile", "reduce_tile<kind, dim>(cb, scaler_cb, tile, scaler_tile, dst)",
                   "kind: str, dim: str, cb: cb, scaler_cb: cb, tile: expr, scaler_tile: int, dst: int")
    PACK_RECONFIG = ("tt.pack_reconfig", "pack_reconfig_data_format(cb): the next packs go to cb's format", "cb: cb")
    UNPACK_RECONFIG = ("tt.unpack_reconfig", "reconfig_data_format(srca_cb, srcb_cb): unpacker source formats",
                       "srca: cb, srcb: cb")
    REDUCE_UNINIT = ("tt.reduce_uninit", "reduce_uninit(): restore the packer after a reduce", "")
    DST_ACQUIRE = ("tt.dst.acquire", "tile_regs_acquire()", "")
    DST_COMMIT = ("tt.dst.commit", "tile_regs_commit()", "")
    DST_WAIT = ("tt.dst.wait", "tile_regs_wait()", "")
    DST_RELEASE = ("tt.dst.release", "tile_regs_release()", "")
    PACK_TILE = ("tt.pack_tile", "pack_tile(dst, cb)", "dst: expr, cb: cb")
    PACK_TILE_AT = ("tt.pack_tile_at", "pack_tile<true>(dst, cb, index): into page ``index`` of the pages reserved, "
                                       "out of order", "dst: expr, cb: cb, index: expr")
    PACK_L1_ACC = ("tt.pack_reconfig_l1_acc", "pack_reconfig_l1_acc(enable): the packer adds to the tiles in L1 "
                                              "instead of overwriting them (1) or not (0)", "enable: expr")
    # layout conversion of row-major blocks (D5)
    TILIZE_INIT = ("tt.tilize_init", "tilize_init(icb, block, ocb)", "icb: cb, block: int, ocb: cb")
    TILIZE_BLOCK = ("tt.tilize_block", "tilize_block(icb, block, ocb): 32 rows of `block` tiles' width -> block tiles",
                    "icb: cb, block: int, ocb: cb")
    TILIZE_UNINIT = ("tt.tilize_uninit", "tilize_uninit(icb, ocb)", "icb: cb, ocb: cb")
    PACK_UNTILIZE_INIT = ("tt.pack_untilize_init", "pack_untilize_init<block_ct_dim, full_ct_dim>(icb, ocb)",
                          "block_ct_dim: int, full_ct_dim: int, icb: cb, ocb: cb")
    PACK_UNTILIZE_BLOCK = ("tt.pack_untilize_block", "pack_untilize_block<block_ct_dim, full_ct_dim>(icb, 1, ocb, "
                                                     "block_c_index): block_ct_dim tiles -> their rows, at column block "
                                                     "block_c_index of a full_ct_dim-tile-wide row",
                           "block_ct_dim: int, full_ct_dim: int, icb: cb, ocb: cb, block_c_index: expr")
    PACK_UNTILIZE_UNINIT = ("tt.pack_untilize_uninit", "pack_untilize_uninit(ocb)", "ocb: cb")


def _register_intrinsics() -> None:
    known = set(ir.Op.list_op_names())
    for intrin in Intrin:
        if intrin.value in known:
            continue
        tvm_register_op_attr(intrin.value, "TCallEffectKind", tirx.CallEffectKind.Opaque)
        tvm_register_op_attr(intrin.value, "TScriptPrinterName", intrin.value)


def intrin_op(intrin: Intrin):
    return ir.Op.get(intrin.value)


def call(intrin: Intrin, *args, dtype: str = "void") -> tirx.Call:
    """The call of ``intrin``; Python ints, bools and strings become TIR constants. In debug
    (``__debug__``, Python without -O) the arguments are checked against the intrinsic's schema."""
    values = [_arg(a) for a in args]
    if __debug__:
        check_args(intrin, values)
    return tirx.Call(dtype, intrin_op(intrin), values)


def _fits(value, kind: Operand) -> bool:
    if kind == Operand.BUFFER:
        return isinstance(value, tirx.Var) and str(value.dtype) == "handle"
    if kind == Operand.REGION:
        return isinstance(value, tirx.Call) and isinstance(value.op, ir.Op) and value.op.name == "tl.region"
    if kind in (Operand.CB, Operand.SEMAPHORE, Operand.INT):
        return isinstance(value, tirx.IntImm) and str(value.dtype) != "bool"
    if kind == Operand.BOOL:
        return isinstance(value, tirx.IntImm) and str(value.dtype) == "bool"
    if kind == Operand.FLOAT:
        return isinstance(value, tirx.FloatImm)
    if kind == Operand.STR:
        return isinstance(value, tirx.StringImm)
    return isinstance(value, tirx.PrimExpr)


def check_args(intrin: Intrin, args) -> None:
    """Raise TypeError (a compiler bug) when the TIR values ``args`` do not match ``intrin``'s schema."""
    names = [a.name + ("*" if a.variadic else "") + ": " + a.kind.value for a in intrin.schema]
    signature = f"{intrin.value}({', '.join(names)})"
    schema = list(intrin.schema)
    if schema and schema[-1].variadic:
        fixed = len(schema) - 1
        if len(args) < fixed:
            raise TypeError(f"{signature} takes at least {fixed} arguments, got {len(args)}: {list(args)}")
        schema = schema[:fixed] + [schema[-1]] * (len(args) - fixed)
    if len(args) != len(schema):
        raise TypeError(f"{signature} takes {len(schema)} arguments, got {len(args)}: {list(args)}")
    for value, arg in zip(args, schema):
        if not _fits(value, arg.kind):
            raise TypeError(f"{signature}: `{arg.name}` must be {arg.kind.value}, got {value!r}")


def call_intrin(expr) -> Intrin | None:
    """The :class:`Intrin` of a call expression, or None."""
    if isinstance(expr, tirx.Call) and isinstance(expr.op, ir.Op):
        try:
            return Intrin(expr.op.name)
        except ValueError:
            return None
    return None


def _arg(a):
    if isinstance(a, bool):
        return tirx.IntImm("bool", a)
    if isinstance(a, int):
        return tirx.IntImm("int32", a)
    if isinstance(a, str):
        return tirx.StringImm(a)
    return a


_register_intrinsics()
