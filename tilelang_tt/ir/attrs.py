"""Every ``tt.*`` attribute of the TT lowering: its key, the typed value it holds, its read and write.

One pattern for all: each function attribute is an :class:`AttrSpec`, a member of :class:`Attr`,
that knows its key, what it holds and how its typed value is stored on a PrimFunc::

    cbs = Attr.CB_DESC.read(func)            # Mapping[str, CBDesc]: {} when func has none yet
    func = Attr.CB_DESC.write(func, cbs)     # func with the attribute set
    role = Attr.KERNEL_ROLE.read(func)       # a KernelRole, or None before SplitDeviceKernel
    Attr.TENSOR_ACCESSOR.has(func)           # whether func has it (VerifyTTIR's check)

A value is a frozen dataclass, an enum, a tuple, or a mapping by name of dataclasses for the
tables keyed by block or tensor (``tt.cb_desc``, ``tt.layout_desc``, ``tt.tensor_accessor``,
``tt.tile_dfg``, ``tt.multicast``). A collection (a table or a list) reads as empty when the
function lacks it, any other attribute as None. Passes, ops and codegen read and write attributes
only so; the questions several of them ask of one attribute are functions next to it in
``tilelang_tt.ir`` (``ir/dataflow.py`` for ``tt.tile_dfg``).

On the PrimFunc a value is stored as plain TVM containers (maps, arrays, strings, integers; TIR
variables and buffers as themselves), built by :func:`to_tvm` from each value's plain form (its
``to_dict``, keys in a fixed order) and read back through :func:`to_py`: attributes print in
TVMScript and survive structural equality. The keys of the scopes the lowering marks in a body
(``AttrStmt``) are :class:`Scope`; the intrinsics are :mod:`tilelang_tt.ir.intrin`. No other module
spells a ``"tt.`` literal.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import tilelang  # noqa: F401  (tilelang must be imported before tvm)
from tvm import runtime, tirx

from tilelang_tt.contract.arch import Arch, get_arch
from tilelang_tt.contract.formula import Formula, from_json, to_json
from tilelang_tt.contract.buffers import LayoutDesc
from tilelang_tt.contract.kernels import ArgSpec, ComputeConfig
from tilelang_tt.contract.mesh import MeshSplit
from tilelang_tt.contract.plan import CoreRange, PlanCB, Semaphore
from tilelang_tt.contract.vocabulary import ArgKind, Core, MulticastDesc, WorkItem, WorkPolicy
from tilelang_tt.ir.tensors import AccessorDesc


class Scope(str, enum.Enum):
    """Keys of the scopes (``AttrStmt``, ``T.attr``) the lowering marks in a kernel's body."""

    def __new__(cls, value: str, doc: str):
        obj = str.__new__(cls, value)
        obj._value_ = value
        obj.__doc__ = doc
        return obj

    ACCUMULATE = ("tt.accumulate", "The body accumulates a gemm into the node's buffer in DST (value 0: from zero; "
                                   "1: on top of its current value, reloaded from its CB; 2: over a K loop with "
                                   "partial sums kept in its CB between K steps; 3: as 2, summed by the packer in "
                                   "L1): AccumulateMode.")
    READ_WHEN = ("tt.read_when", "Around a tt.read_to_cb: the reader moves the slice only when the value (which may "
                                 "read tensor elements: a block-sparse mask) holds, else fills the block with zeros; "
                                 "compute and writer do not see it.")
    VALID_ROWS = ("tt.valid_rows", "Around a T.copy of a block into a tensor: the writer writes only the block's "
                                   "first `value` rows (a guarded store `if i < valid: C[row + i, ..] = ..`; the value "
                                   "may read tensor elements); reader and compute do not see it.")
    MULTI_STORE = ("tt.multi_store", "Around a T.copy of a block into a tensor, one of several copies of the block's "
                                     "value into tensors (the node: the block's data): the writer writes the CB's "
                                     "pages at each; value MultiStore flags: HANDS where compute hands the block on "
                                     "(the first; compute does not see the others), POPS where the writer pops it "
                                     "(the last).")


class AccumulateMode(enum.IntEnum):
    """Value of a ``tt.accumulate`` scope (how the gemm accumulator starts and where it lives)."""

    FRESH = 0  # from zero, in DST over the whole K loop
    RELOAD = 1  # on top of the accumulator's current value, reloaded from its CB
    SPILL = 2  # over a K loop, partial sums kept in the accumulator's CB between K steps
    L1_ACC = 3  # as SPILL, but the packer adds each K step's sums to the CB's (pack_reconfig_l1_acc)


class MultiStore(enum.IntFlag):
    """Value of a ``tt.multi_store`` scope: what the copy is among the copies of one value of a block."""

    HANDS = 1  # the first: compute hands the block on to the writer here
    POPS = 2  # the last: the writer pops the block's pages after writing them


@dataclass(frozen=True)
class Reduction:
    """The tensors several blocks sum into (``T.atomic_add``) and how the blocks take turns. The
    summing ``axes`` (grid loop variables no destination depends on) are the innermost grid
    dimensions, so the ``blocks`` blocks adding into one region have consecutive ids; block ``b``
    with ``b % blocks != 0`` reads the tensors after block ``b - 1`` signalled ``semaphore`` (-1
    until AllocateSemaphoresTT allocates it). No summing axes: ``blocks`` is 1, each region has one
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
    def from_attr(d: Mapping) -> Reduction:
        return Reduction(tuple(d["buffers"]), tuple(d["axes"]), int(d["blocks"]), int(d["semaphore"]))


class KernelRole(str, enum.Enum):
    MONOLITHIC = "monolithic"
    READER = "reader"
    COMPUTE = "compute"
    WRITER = "writer"


class PartitionMode(str, enum.Enum):
    GLOBAL = "global"
    LOCAL_SHARD = "local_shard"


def to_py(value):
    """A stored attribute value (TVM containers and immediates) as plain Python: dicts, lists,
    ints, bools, floats, strs; TIR variables and buffers stay themselves."""
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
        return {str(k): to_py(v) for k, v in value.items()}
    if isinstance(value, Sequence):
        return [to_py(v) for v in value]
    raise TypeError(f"cannot convert attribute value of type {type(value).__name__}")


def to_tvm(value):
    """The stored form of a plain Python value: maps, arrays, strings, integers (int32 IntImm, int64
    past 32 bits; bools as bool IntImm); TIR variables and buffers stay themselves."""
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
        return runtime.convert({k: to_tvm(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return runtime.convert([to_tvm(v) for v in value])
    raise TypeError(f"cannot store attribute value of type {type(value).__name__}")


@dataclass(frozen=True, kw_only=True)
class CBDesc(PlanCB):
    """``tt.cb_desc`` entry: conceptual circular buffer geometry (spec A2, D1): the plan's CB and
    what the passes decide it by."""

    block_pages: int
    block_tiles: tuple[int, int] = (0, 0)  # (rows, cols) of 32x32 tiles in one block
    vector: str = ""  # "row": data in row 0 of each tile; "col": data in column 0; "": full tiles
    source: str = ""  # "file:line:column" of the buffer's allocation in the user's kernel (errors.location_string)
    # pages compute pushes at a time into the block, in its row order (a gemm's sub-block: whole rows of its tiles or
    # a part of one), which the writer then drains as they come; 0: the whole block at once
    push_pages: int = 0
    # "file:line:column" of the user's statement the CB serves (NumberCBsTT: the first naming its block; "" for the
    # kernel's own CBs, the reduce scaler), by which the CB count error groups the CBs
    statement: str = ""

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
        } | ({"valid": list(self.valid)} if self.valid is not None else {}) \
            | ({"push_pages": self.push_pages} if self.push_pages else {}) \
            | ({"statement": self.statement} if self.statement else {})

    @staticmethod
    def from_dict(name: str, d: dict) -> CBDesc:
        valid = {"valid": tuple(d["valid"])} if "valid" in d else {}
        return CBDesc(name=name, **(d | {"block_tiles": tuple(d["block_tiles"])} | valid))


@dataclass(frozen=True)
class RuntimeArg(ArgSpec):
    """One runtime argument of a kernel: the plan's entry (:class:`ArgSpec`) and ``var``, the TIR
    variable that stands for it in the kernel's IR (FinalizePersistentSignatureTT makes it; passes
    and codegen find an argument by this object, never by its name)."""

    var: tirx.Var | None = field(default=None, compare=False)

    def to_attr(self) -> dict:
        """The ``tt.runtime_args`` form: the plan's and the variable."""
        return self.to_json() | {"var": self.var}

    @staticmethod
    def from_dict(d: dict) -> RuntimeArg:
        return RuntimeArg(d["name"], ArgKind(d["kind"]), d.get("buffer", ""), int(d.get("value", 0)),
                          d.get("cb", ""), d.get("what", ""), d.get("dim", ""), d.get("var"))


@dataclass(frozen=True)
class DFGNode:
    """``tt.tile_dfg`` entry: CB ``cb`` of the tile dataflow graph (BuildTileDFGTT). ``producer`` is
    the kernel role filling it (``"reader"``, ``"writer"`` for a block BalanceDataMovementTT gives
    the writer RISC, ``"compute"``), ``consumers`` the roles draining it (one), ``buffer`` the
    tensor it moves ("" for a block compute makes and uses). The CBs BuildTileDFGTT makes itself
    say why: ``kind`` "scaler" (the reduce scaler) or "scratch" (tensor elements a data-movement
    kernel reads for its addresses), ``handoff`` (on a block: the CB the writer drains in its
    place), ``tilize_from`` / ``untilize_to`` (on a block: the staging CB of rows of a row-major
    tensor compute tilizes it from / untilizes it into)."""

    cb: str
    producer: str
    consumers: tuple[str, ...]
    buffer: str = ""
    handoff: str = ""
    kind: str = ""
    tilize_from: str = ""
    untilize_to: str = ""

    def to_dict(self) -> dict:
        out = {"producer": self.producer, "consumers": list(self.consumers), "buffer": self.buffer}
        for key in ("handoff", "kind", "tilize_from", "untilize_to"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        return out

    @staticmethod
    def from_dict(cb: str, d: Mapping) -> DFGNode:
        return DFGNode(cb, d["producer"], tuple(d["consumers"]), d["buffer"], d.get("handoff", ""), d.get("kind", ""),
                       d.get("tilize_from", ""), d.get("untilize_to", ""))


@dataclass(frozen=True)
class CoreMap:
    """``tt.core_map``: the launch tags (``coreIdx.y``, ``coreIdx.x``) that carry the block row
    (``m``, TileLang's by) and the block column (``n``, bx)."""

    m: str
    n: str

    def to_dict(self) -> dict:
        return {"m": self.m, "n": self.n}

    @staticmethod
    def from_dict(d: Mapping) -> CoreMap:
        return CoreMap(d["m"], d["n"])


@dataclass(frozen=True, kw_only=True)
class ComputeKernelConfig(ComputeConfig):
    """``tt.compute_config`` (LowerTTTileIntrinsics; InsertDSTManagementTT adds to ``unpack_to_dest``):
    the compute kernel's configuration, named as ttnn's ``ComputeKernelConfig``: what tt-metal's
    ``ComputeConfig`` takes (the plan's kernel entry, :class:`~tilelang_tt.contract.kernels.ComputeConfig`)
    and the DST tiles one acquire holds in its mode (``dst_budget``, ``Arch.dst_budget``); ``fast_math``: the
    user allowed rewrites that change rounding (the compile option, TileLang's fast-math pass config): the passes
    before LowerTTTileIntrinsics take the option, it records the option here, and every pass after it reads it
    here, never the option (the contexts of ops/base.py: DSTContext, and SpillDSTTT's LowerContext)."""

    dst_budget: int
    fast_math: bool = False

    def to_dict(self) -> dict:
        return {"fp32_dest_acc_en": self.fp32_dest_acc_en, "math_fidelity": self.math_fidelity,
                "math_approx_mode": self.math_approx_mode, "dst_budget": self.dst_budget,
                "unpack_to_dest": list(self.unpack_to_dest), "fast_math": self.fast_math}

    @staticmethod
    def from_dict(d: Mapping) -> ComputeKernelConfig:
        return ComputeKernelConfig(fp32_dest_acc_en=bool(d["fp32_dest_acc_en"]), math_fidelity=d["math_fidelity"],
                                   math_approx_mode=bool(d["math_approx_mode"]), dst_budget=int(d["dst_budget"]),
                                   unpack_to_dest=tuple(d["unpack_to_dest"]), fast_math=bool(d["fast_math"]))


# -- the attributes ------------------------------------------------------------------------------
T = TypeVar("T")
V = TypeVar("V")


class AttrSpec(Generic[T]):
    """One ``tt.*`` function attribute: its ``key``, what it holds (``doc``), and its typed value.
    ``decode`` makes the value from the stored form as plain Python (:func:`to_py`); ``encode``
    gives the plain form of a value, which :func:`to_tvm` stores."""

    def __init__(self, key: str, doc: str, decode: Callable[[Any], T], encode: Callable[[T], Any]):
        self.key, self.doc = key, doc
        self._decode, self._encode = decode, encode

    def __repr__(self) -> str:
        return f"AttrSpec({self.key!r})"

    def has(self, func: tirx.PrimFunc) -> bool:
        return func.attrs is not None and self.key in func.attrs

    def read(self, func: tirx.PrimFunc) -> T | None:
        """The value ``func`` holds, None when it has none."""
        return self._decode(to_py(func.attrs[self.key])) if self.has(func) else None

    def write(self, func: tirx.PrimFunc, value: T) -> tirx.PrimFunc:
        """``func`` holding ``value``."""
        return func.with_attr(self.key, to_tvm(self._encode(value)))


class CollectionSpec(AttrSpec[T]):
    """An attribute holding a table or a list: it reads as the empty one when the function has none."""

    def __init__(self, key: str, doc: str, decode: Callable[[Any], T], encode: Callable[[T], Any], empty):
        super().__init__(key, doc, decode, encode)
        self._empty = empty

    def read(self, func: tirx.PrimFunc) -> T:
        return self._decode(to_py(func.attrs[self.key]) if self.has(func) else self._empty)


def _table(key: str, doc: str, entry: Callable[[str, Any], V],
           store: Callable[[V], Any]) -> CollectionSpec[Mapping[str, V]]:
    """A table by name (block, tensor, CB): ``entry(name, stored)`` each value, ``store(value)`` its form."""
    return CollectionSpec(key, doc, lambda d: {name: entry(name, e) for name, e in d.items()},
                          lambda table: {name: store(value) for name, value in table.items()}, {})


def _items(key: str, doc: str, item: Callable[[Any], V], store: Callable[[V], Any]) -> CollectionSpec[tuple[V, ...]]:
    """A list, in order: ``item(stored)`` each value, ``store(value)`` its form."""
    return CollectionSpec(key, doc, lambda d: tuple(item(e) for e in d), lambda values: [store(v) for v in values], [])


def _pair(key: str, doc: str) -> AttrSpec[tuple]:
    """Two integers (or formulas of the dynamic sizes, stored as their text)."""
    return AttrSpec(key, doc, lambda v: tuple(from_json(x) for x in v), lambda v: [to_json(x) for x in v])


def _enum(key: str, doc: str, kind: type[enum.Enum]) -> AttrSpec:
    return AttrSpec(key, doc, kind, lambda member: kind(member).value)


class Attr:
    """Every ``tt.*`` function attribute (spec §1), an :class:`AttrSpec` each: ``Attr.X.read(func)``,
    ``Attr.X.write(func, value)``, ``Attr.X.has(func)``, ``Attr.X.key``."""

    ARCH: AttrSpec[Arch] = AttrSpec(
        "tt.arch", "The target architecture (wormhole_b0 or blackhole), stored by name: InferTTLayout records it, "
        "every later pass reads it from the function.", get_arch, lambda arch: arch.name)
    LAYOUT_DESC: CollectionSpec[Mapping[str, LayoutDesc]] = _table(
        "tt.layout_desc", "Parameter name -> its layout (memory, layout, dtype, tile shape, sharding), InferTTLayout. "
        "Before it, the layouts the user asked for (tilelang_tt.layout.LAYOUT_REQUESTS).",
        LayoutDesc.from_dict, LayoutDesc.to_dict)
    CB_DESC: CollectionSpec[Mapping[str, CBDesc]] = _table(
        "tt.cb_desc", "Block name -> its circular buffer (PropagateTTLayout; producer, consumer from "
        "BuildTileDFGTT, index from NumberCBsTT).", CBDesc.from_dict, CBDesc.to_dict)
    PADDED_BLOCKS: CollectionSpec[Mapping[str, tuple[int, int]]] = _table(
        "tt.padded_blocks", "Block name -> (rows, cols): the valid values of an on-chip block PadBlocksTT padded to "
        "whole 32x32 tiles (its matrix view, tilelang_tt.ir.padding), the rest of its tiles padding; PropagateTTLayout "
        "gives its CB `valid`.", lambda name, valid: tuple(int(x) for x in valid), list)
    TENSOR_ACCESSOR: CollectionSpec[Mapping[str, AccessorDesc]] = _table(
        "tt.tensor_accessor", "Parameter name -> its abstract TensorAccessor (AttachTensorAccessorTT), bound to a "
        "kernel's compile-time args late (ConfigureTensorAccessorTT).", AccessorDesc.from_dict, AccessorDesc.to_dict)
    TILE_DFG: CollectionSpec[Mapping[str, DFGNode]] = _table(
        "tt.tile_dfg", "CB name -> its node of the tile dataflow graph (BuildTileDFGTT): producer, consumers, buffer; "
        "in dataflow order, the order NumberCBsTT numbers the CBs in.", DFGNode.from_dict, DFGNode.to_dict)
    BUFFER_ACCESS: CollectionSpec[Mapping[str, str]] = _table(
        "tt.buffer_access", 'Parameter name -> "read" | "write" | "readwrite": whether the reader moves it into CBs, '
        "the writer CBs into it, or both (BuildTileDFGTT, from the dataflow; the plan's buffer access).",
        lambda name, access: access, str)
    COLUMN_MAJOR_BLOCKS: CollectionSpec[tuple[str, ...]] = _items(
        "tt.column_major_blocks", "Names of the blocks whose tiles the reader stores column by column: the B of "
        "transpose_B gemms (LowerTTTileIntrinsics), so that matmul_block steps through B's columns as adjacent tiles.",
        str, str)
    COMPUTE_CONFIG: AttrSpec[ComputeKernelConfig] = AttrSpec(
        "tt.compute_config", "Compute kernel config: fp32_dest_acc_en, math fidelity, approximation, DST budget, the "
        "CBs unpacked to DST.", ComputeKernelConfig.from_dict, ComputeKernelConfig.to_dict)
    CORE_MAP: AttrSpec[CoreMap] = AttrSpec(
        "tt.core_map", '{"m": launch tag of the block row (by), "n": launch tag of the block column (bx)} '
        "(GridToCoreGrid).", CoreMap.from_dict, CoreMap.to_dict)
    REDUCTION: AttrSpec[Reduction] = AttrSpec(
        "tt.reduction", "Global tensors summed into by several blocks (T.atomic_add): {buffers, axes, blocks, "
        "semaphore} (LowerAtomicAddTT, the semaphore from AllocateSemaphoresTT).",
        Reduction.from_attr, Reduction.to_attr)
    MESH_AXIS: AttrSpec[str] = AttrSpec(
        "tt.mesh_axis", "The grid tag (blockIdx.x, y or z) a mesh of devices splits (ChooseMeshAxisTT, from the "
        "mesh_axis and mesh_reduce options or the grid), which SplitMeshTT cuts.", str, str)
    MESH: AttrSpec[MeshSplit] = AttrSpec(
        "tt.mesh", "The block rows (or columns) split over a mesh of devices (SplitMeshTT): {shape, axis, blocks, "
        "tensors: [{buffer, distribution, dim, shape}]}; the kernel is then one device's.",
        MeshSplit.from_attr, MeshSplit.to_attr)
    # the work partition (LayoutAwareWorkPartitionTT) and what its cores share (ChooseMulticastTT, AllocateSemaphoresTT)
    BLOCK_GRID: AttrSpec[tuple[int | Formula, int | Formula]] = _pair(
        "tt.block_grid", "[By, Bx]: TileLang block grid (T.Kernel extents) along M and N.")
    GRID_TILES: AttrSpec[tuple[int | Formula, int | Formula]] = _pair(
        "tt.grid_tiles", "[Mt, Nt]: output tile counts along M (rows) and N (columns).")
    BLOCK_TILES: AttrSpec[tuple[int, int]] = _pair("tt.block_tiles", "[bmt, bnt]: tiles per block along M and N.")
    CORE_GRID: AttrSpec[Core] = _pair(
        "tt.core_grid", "[gx, gy]: logical compute grid used (x = columns, y = rows).")
    CORE_RANGES: CollectionSpec[tuple[CoreRange, ...]] = _items(
        "tt.core_ranges", "Active core ranges: list of [[x0, y0], [x1, y1]] inclusive.",
        lambda r: CoreRange(tuple(r[0]), tuple(r[1])), lambda r: [list(r.start), list(r.end)])
    PARTITION_MODE: AttrSpec[PartitionMode] = _enum(
        "tt.partition_mode", '"global" or "local_shard": how work is split over cores.', PartitionMode)
    WORK_POLICY: AttrSpec[WorkPolicy] = AttrSpec(
        "tt.work_policy", "How a core walks its blocks: {policy, stride, shard_blocks}.",
        WorkPolicy.from_dict, WorkPolicy.to_dict)
    WORK_PARTITION: CollectionSpec[tuple[WorkItem, ...]] = _items(
        "tt.work_partition", "Per active core: {core, start_id, count, width, shard} over block ids (a WorkItem, as "
        "the plan's work_partition entries).", WorkItem.from_plan, lambda w: w.to_plan(local_shard=True))
    MULTICAST: CollectionSpec[Mapping[str, MulticastDesc]] = _table(
        "tt.multicast", "CB name -> {axis, sender_semaphore, receiver_semaphore, groups}: blocks the first core of a "
        "core row/column reads once and multicasts to the others (ChooseMulticastTT; the semaphores -1 until "
        "AllocateSemaphoresTT numbers them); groups: the cores sharing the block, the sender first, and the "
        "rectangle {cores, near, far} in logical core coordinates (MulticastGroup).",
        MulticastDesc.from_dict, MulticastDesc.to_attr)
    SEMAPHORES: CollectionSpec[tuple[Semaphore, ...]] = _items(
        "tt.semaphores", "The program's semaphores in id order, the plan's entries (AllocateSemaphoresTT): the host "
        "creates them in id order on every active core, a kernel declares those its calls name (sem_<name>).",
        lambda d: Semaphore.from_json(d, "tt.semaphores"), Semaphore.to_json)
    # the split kernels (SplitDeviceKernel and after)
    KERNEL_ROLE: AttrSpec[KernelRole] = _enum("tt.kernel_role", '"monolithic", "reader", "compute" or "writer".',
                                              KernelRole)
    SOURCE_FUNC: AttrSpec[str] = AttrSpec("tt.source_func", "Name of the user's PrimFunc a split kernel came from.",
                                          str, str)
    RUNTIME_ARGS: CollectionSpec[tuple[RuntimeArg, ...]] = _items(
        "tt.runtime_args", "Ordered runtime arguments of a kernel, each with the variable standing for it "
        "(FinalizePersistentSignatureTT).", RuntimeArg.from_dict, RuntimeArg.to_attr)
    ARTIFACT_SOURCES: AttrSpec[dict[str, str]] = AttrSpec(
        "tt.artifact_sources", "{file name: text} of a compiled kernel, carried from the TileLang backend's pipeline "
        "to its codegen (stored as JSON text).", json.loads, json.dumps)
