"""The reading side of ``tt.plan.json`` (DEVELOPERS.md, Contract 1): a typed view, checked on load.

:meth:`Plan.from_json` reads a loaded plan into frozen dataclasses and checks every field it
reads: types, ranges and enumerations, and the references between entries (the buffers runtime
args and tensor accessors name, the CBs of multicasts, one kernel per role, each core's runtime
values against its kernel's runtime-arg list, accessor args inside their kernel's compile-time
args). Anything else is a :class:`PlanError` naming the entry. The two symbolic per-core runtime
values, ``"@A"`` (:class:`BufferAddress`) and ``{"noc_x": [x, y]}`` (:class:`NocCoord`), are
written (``to_json``) and read (:func:`runtime_value`) here only.

The work-partition and runtime-argument vocabulary (:class:`Policy`, :class:`WorkItem`,
:class:`WorkPolicy`, :class:`MulticastDesc`, :class:`MulticastGroup`, :data:`MCAST_ARGS`,
:class:`ArgKind`) is what the compiler's attributes and the plan share.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tilelang_tt.contract.arch import ARCHS, Arch
from tilelang_tt.contract.formats import BLOCK_FORMATS, BLOCK_STORABLE, BY_DATA_FORMAT, FORMATS, Format, tile_bytes
from tilelang_tt.contract.formula import Formula, FormulaError, ceildiv, evaluate, from_json, to_json

SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).resolve().parents[1] / "schema" / "tt.plan.schema.json"
ROLES = ("reader", "compute", "writer")
KERNEL_SOURCES = tuple(f"{role}.cpp" for role in ROLES)
ACCESS = ("read", "write", "readwrite")
MEMORIES = ("DRAM", "L1")
INTERLEAVED = "interleaved"
ROW_MAJOR = "row_major"  # interleaved pages of one row (the last dimension) each, not tiles
LAYOUTS = (INTERLEAVED, "height_sharded", "width_sharded", "block_sharded", ROW_MAJOR)
UNSHARDED = (INTERLEAVED, ROW_MAJOR)
BLOCK_BY_DATA_FORMAT = {f.data_format: f for f in BLOCK_FORMATS.values()}
PARTITION_MODES = ("global", "local_shard")
MATH_FIDELITIES = ("LoFi", "HiFi2", "HiFi3", "HiFi4")
DATA_MOVEMENT = {"reader": ("RISCV_1", "RISCV_1_default"), "writer": ("RISCV_0", "RISCV_0_default")}
MCAST_AXES = ("x", "y", "xy")
U32_MAX = 2**32 - 1

Core = tuple[int, int]


class PlanError(ValueError):
    """A dict that is not a valid ``tt.plan.json``; the message names the entry and what is wrong."""


# ---- the vocabulary the compiler's attributes and the plan share ----


class Policy(str, enum.Enum):
    """Work partition policies (block id = by * Bx + bx, row-major over the T.Kernel grid)."""

    CONTIGUOUS = "contiguous"  # core i: blocks start_id .. start_id + count - 1
    ROW_MAJOR = "row_major"  # round-robin in row-major order: core i: blocks i, i + P, i + 2P, ...
    # round-robin, every other round reversed: core i: blocks i, 2P - 1 - i, 2P + i, 4P - 1 - i, ...
    ZIGZAG = "zigzag"
    BLOCK = "block"  # a rectangle of the block grid: `count` blocks in rows of `width` from start_id
    LOCAL_SHARD = "local_shard"  # the blocks of the output shard the core holds (a rectangle)


@dataclass(frozen=True)
class WorkItem:
    """One core's share of the block grid: ``count`` blocks from ``start_id`` (rows of ``width``
    blocks for the rectangle policies; 0 otherwise). ``shard`` is the (row, col) of the shard a
    core owns under ``local_shard``."""

    core: tuple[int, int]
    start_id: int
    count: int
    width: int = 0
    shard: tuple[int, int] = (0, 0)

    @staticmethod
    def from_plan(entry: dict) -> WorkItem:
        """From a ``work_partition`` entry of ``tt.plan.json`` (``width``/``shard`` only when used)."""
        return WorkItem(tuple(entry["core"]), from_json(entry["start_id"]), from_json(entry["count"]), entry.get("width", 0),
                        tuple(entry.get("shard", (0, 0))))

    def to_plan(self, local_shard: bool) -> dict:
        """The ``work_partition`` entry: ``width`` when set, ``shard`` under ``local_shard``."""
        entry = {"core": list(self.core), "start_id": to_json(self.start_id), "count": to_json(self.count)}
        if self.width:
            entry["width"] = self.width
        if local_shard:
            entry["shard"] = list(self.shard)
        return entry


@dataclass(frozen=True)
class WorkPolicy:
    """``tt.work_policy``: ``stride`` is the block-id step of ``row_major`` and ``zigzag`` (the core count);
    ``shard_blocks`` the (rows, cols) of blocks per shard of ``local_shard``."""

    policy: Policy
    stride: int = 1
    shard_blocks: tuple[int, int] = (0, 0)

    def to_dict(self) -> dict:
        return {"policy": self.policy.value, "stride": self.stride, "shard_blocks": list(self.shard_blocks)}

    @staticmethod
    def from_dict(d: dict) -> WorkPolicy:
        return WorkPolicy(Policy(d["policy"]), int(d["stride"]), tuple(d["shard_blocks"]))

    def block_id(self, n, start_id, width, bx_total: int):
        """Block id (row * Bx + bx) of a core's ``n``-th block under the id-walking policies. ``n``,
        ``start_id`` and ``width`` are ints, or TIR expressions of the kernel's loop counter and
        runtime arguments: this one definition is what :meth:`blocks` evaluates and what codegen
        prints into the persistent loop."""
        if self.policy == Policy.BLOCK and bx_total > 1:  # rows of `width` blocks; with one column width is 1
            return start_id + ((n // width) * bx_total + n % width)
        if self.policy == Policy.ROW_MAJOR:
            return start_id + n * self.stride
        if self.policy == Policy.ZIGZAG:  # round n: core start_id's block, counted from the round's far end when n is odd
            return n * self.stride + start_id + (n % 2) * (self.stride - 1 - 2 * start_id)
        return start_id + n

    @staticmethod
    def coords(block_id, bx_total: int):
        """(row, bx) of a block id (ints or TIR expressions)."""
        return (block_id, 0) if bx_total == 1 else (block_id // bx_total, block_id % bx_total)

    def shard_coords(self, n, shard_y, shard_x, width):
        """(row, bx) of a core's ``n``-th block under ``local_shard`` (ints or TIR expressions)."""
        sby, sbx = self.shard_blocks
        return shard_y * sby + n // width, shard_x * sbx + n % width

    def blocks(self, item: WorkItem, block_grid: tuple[int, int]) -> list[tuple[int, int]]:
        """The (by, bx) blocks a core walks, in order: the contract of codegen's persistent loop."""
        bx_total = block_grid[1]
        if self.policy == Policy.LOCAL_SHARD:
            return [self.shard_coords(n, item.shard[0], item.shard[1], item.width) for n in range(item.count)]
        return [self.coords(self.block_id(n, item.start_id, item.width, bx_total), bx_total)
                for n in range(item.count)]


@dataclass(frozen=True)
class MulticastGroup:
    """The cores sharing one multicast block: ``cores`` in row-major order (by y, then x), the
    first the sender, which reads the block and multicasts it to the rectangle from ``near`` to
    ``far`` (inclusive corners, logical core coordinates) that holds them all."""

    cores: tuple[Core, ...]
    near: Core
    far: Core

    @property
    def sender(self) -> Core:
        return self.cores[0]

    @staticmethod
    def of(cores: Sequence[Core]) -> MulticastGroup:
        """The group of ``cores``: sorted row-major, the smallest rectangle around them."""
        ordered = tuple(sorted((tuple(c) for c in cores), key=lambda c: (c[1], c[0])))
        return MulticastGroup(ordered, (min(c[0] for c in ordered), min(c[1] for c in ordered)),
                              (max(c[0] for c in ordered), max(c[1] for c in ordered)))

    def to_dict(self) -> dict:
        return {"cores": [list(c) for c in self.cores], "near": list(self.near), "far": list(self.far)}

    @staticmethod
    def from_dict(d: dict) -> MulticastGroup:
        return MulticastGroup(tuple(tuple(c) for c in d["cores"]), tuple(d["near"]), tuple(d["far"]))


@dataclass(frozen=True)
class MulticastDesc:
    """``tt.multicast`` entry: the block of CB ``cb`` is the same for every core of a core row
    (``axis`` "x": the cores along x share it), column ("y") or the whole grid ("xy"); the first
    core of each of its ``groups`` reads it and multicasts it to the others, handshaking through
    two semaphores. The plan's ``multicast`` entry (:meth:`to_dict`) leaves the groups out: each
    core's runtime values carry them."""

    cb: str
    axis: str
    sender_semaphore: int
    receiver_semaphore: int
    groups: tuple[MulticastGroup, ...] = ()

    def to_dict(self) -> dict:
        """The plan's form (without the groups)."""
        return {"axis": self.axis, "sender_semaphore": self.sender_semaphore,
                "receiver_semaphore": self.receiver_semaphore}

    def to_attr(self) -> dict:
        """The ``tt.multicast`` form: the plan's and the groups."""
        return self.to_dict() | {"groups": [g.to_dict() for g in self.groups]}

    @staticmethod
    def from_dict(cb: str, d: dict) -> MulticastDesc:
        """From the ``tt.multicast`` form (:meth:`to_attr`)."""
        return MulticastDesc(cb, d["axis"], int(d["sender_semaphore"]), int(d["receiver_semaphore"]),
                             tuple(MulticastGroup.from_dict(g) for g in d["groups"]))

    def group(self, core: Core) -> MulticastGroup:
        """The group ``core`` belongs to."""
        return next(g for g in self.groups if tuple(core) in g.cores)

    def arg(self, what: str) -> str:
        """Name of one of this multicast's runtime args (see :data:`MCAST_ARGS`)."""
        return f"{self.cb}_mcast_{what}"


# Per multicast CB, the reader's runtime args in order: whether this core sends, the NOC (x, y) of
# its group's sender, the NOC rectangle of the group (start/end as the reader's NOC expects) and the
# receivers: the cores of the rectangle but the sender, which the multicast reaches (the sender's own
# slot already holds the block: no loopback).
MCAST_ARGS = ("sender", "sender_x", "sender_y", "start_x", "start_y", "end_x", "end_y", "receivers")
# The writer's runtime args of a reduction (blocks taking turns to sum into a tensor): the NOC (x, y)
# of its own core and of the core holding the block after its last one (which it signals).
CHAIN_ARGS = ("self_x", "self_y", "next_x", "next_y")


class ArgKind(str, enum.Enum):
    """Kinds of kernel runtime arguments (their per-core values are computed by the plan)."""

    BUFFER_ADDRESS = "buffer_address"  # device address of `buffer`
    START_ID = "start_id"  # first block of the core's work
    COUNT = "count"  # blocks of the core's work
    WIDTH = "width"  # blocks per row of the core's rectangle (block / local_shard policies)
    SHARD_Y = "shard_y"  # shard row the core owns (local_shard)
    SHARD_X = "shard_x"  # shard column the core owns (local_shard)
    MCAST = "mcast"  # multicast argument `what` (MCAST_ARGS) of CB `cb`
    CONST = "const"  # `value`
    DIM = "dim"  # the size `dim` (a dynamic dimension of the plan's "dims"), read from the tensors
    CHAIN = "chain"  # reduction argument `what` (CHAIN_ARGS)


# ---- per-core runtime values ----


@dataclass(frozen=True)
class BufferAddress:
    """``"@<buffer>"``: the device address of a plan buffer, known once the host allocates it."""

    buffer: str

    def to_json(self) -> str:
        return f"@{self.buffer}"


@dataclass(frozen=True)
class NocCoord:
    """``{"noc_x": [x, y]}`` / ``{"noc_y": [x, y]}``: coordinate ``axis`` ("x" or "y") of logical
    core ``core`` on the NOC (``worker_core_from_logical_core``)."""

    axis: str
    core: Core

    def to_json(self) -> dict:
        return {f"noc_{self.axis}": list(self.core)}


ArgValue = int | BufferAddress | NocCoord | Formula


def runtime_value(value: object, buffers: Sequence[str], where: str, dims: Sequence[str] = ()) -> ArgValue:
    """One per-core runtime value of a plan: an unsigned 32-bit integer, ``"@<buffer>"`` for a
    buffer among ``buffers``, ``{"noc_x" | "noc_y": [x, y]}``, or in a plan with dynamic sizes
    the formula of one (``"m"``, ``"(m + 127) // 128 * 2"``) over the plan's ``dims``."""
    if isinstance(value, str) and not value.startswith("@") and dims:
        return _size(value, where, dims)
    if isinstance(value, str):
        if not value.startswith("@") or value[1:] not in buffers:
            raise PlanError(f"{where}: {value!r} is not '@<buffer>' for a buffer of the plan")
        return BufferAddress(value[1:])
    if isinstance(value, dict):
        if len(value) != 1 or next(iter(value)) not in ("noc_x", "noc_y"):
            raise PlanError(f"{where}: {value!r} is not {{'noc_x' | 'noc_y': [x, y]}}")
        ((key, core),) = value.items()
        return NocCoord(key[-1], _pair(core, f"{where}.{key}"))
    return _int(value, where)


# ---- checked reading of JSON values ----


def _object(value: object, where: str, required: Sequence[str], optional: Sequence[str] = ()) -> dict:
    if not isinstance(value, dict):
        raise PlanError(f"{where}: expected an object, got {value!r}")
    missing = [key for key in required if key not in value]
    unknown = sorted(set(value) - set(required) - set(optional))
    if missing or unknown:
        raise PlanError(f"{where}: " + "; ".join(
            ([f"missing {missing}"] if missing else []) + ([f"unknown keys {unknown}"] if unknown else [])))
    return value


def _list(value: object, where: str) -> list:
    if not isinstance(value, list):
        raise PlanError(f"{where}: expected a list, got {value!r}")
    return value


def _int(value: object, where: str, low: int = 0, high: int = U32_MAX) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        expected = "an unsigned 32-bit integer" if (low, high) == (0, U32_MAX) else f"an integer in [{low}, {high}]"
        raise PlanError(f"{where}: expected {expected}, got {value!r}")
    return value


def _size(value: object, where: str, dims: Sequence[str], low: int = 0) -> int | Formula:
    """An integer, or in a plan with dynamic sizes (``dims``) the text of a formula of them."""
    if not isinstance(value, str) or not dims:
        return _int(value, where, low)
    try:
        formula = Formula.parse(value)
    except FormulaError as err:
        raise PlanError(f"{where}: {err}") from None
    unknown = sorted(formula.names - set(dims)) if isinstance(formula, Formula) else []
    if unknown:
        raise PlanError(f"{where}: {value!r} names {unknown}, which are not dims of the plan {list(dims)}")
    return formula if isinstance(formula, Formula) else _int(formula, where, low)


def _sizes(value: object, where: str, dims: Sequence[str], length: int | None = None,
           low: int = 0) -> tuple[int | Formula, ...]:
    values = _list(value, where)
    if length is not None and len(values) != length:
        raise PlanError(f"{where}: expected {length} integers, got {value!r}")
    return tuple(_size(v, f"{where}[{i}]", dims, low) for i, v in enumerate(values))


def _ints(value: object, where: str, length: int | None = None, low: int = 0) -> tuple[int, ...]:
    values = _list(value, where)
    if length is not None and len(values) != length:
        raise PlanError(f"{where}: expected {length} integers, got {value!r}")
    return tuple(_int(v, f"{where}[{i}]", low) for i, v in enumerate(values))


def _pair(value: object, where: str, low: int = 0) -> Core:
    return _ints(value, where, 2, low)


def _str(value: object, where: str, choices: Sequence[str] | None = None) -> str:
    if not isinstance(value, str) or (choices is not None and value not in choices):
        expected = f"one of {list(choices)}" if choices is not None else "a string"
        raise PlanError(f"{where}: expected {expected}, got {value!r}")
    return value


def _bool(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        raise PlanError(f"{where}: expected true or false, got {value!r}")
    return value


def _unique(names: Sequence, what: str) -> None:
    repeated = sorted({n for n in names if list(names).count(n) > 1}, key=str)
    if repeated:
        raise PlanError(f"{what} {repeated} appear more than once")


# ---- plan entries ----


def tile_grid(shape: Sequence[int], tile_shape: Sequence[int], column: bool = False,
              flat: bool = False) -> tuple[int, int]:
    """Tiles along rows and columns of a tensor's matrix view: its matrices (the last two
    dimensions) stacked along the leading ones, each padded to whole tiles; rank 1 is a row, or
    a column with ``column`` (:func:`matrix_dims`), and so is a ``flat`` tensor."""
    batch, rows, cols = matrix_dims(shape, column, flat)
    return batch * ceildiv(rows, tile_shape[0]), ceildiv(cols, tile_shape[1])


def matrix_dims(shape: Sequence[int], column: bool = False, flat: bool = False) -> tuple[int, int, int]:
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
class PlanBuffer:
    """A kernel parameter: pages are tiles, row-major over its tile grid."""

    name: str
    param_index: int
    shape: tuple[int, ...]
    dtype: str  # the kernel's (and the host tensors') dtype
    format: Format  # its "data_format": its dtype's, or a block floating point storage of a float dtype
    access: str  # read | write | readwrite
    memory: str  # DRAM | L1
    layout: str  # interleaved | height_sharded | width_sharded | block_sharded
    tile_shape: tuple[int, int]
    page_size: int
    num_pages: int
    shard_grid: Core | None = None  # cores (DRAM: (banks, 1)) holding the shards
    shard_shape: tuple[int, int] | None = None  # elements, whole tiles
    column: bool = False  # a rank-1 (or flat) tensor laid out as the column (n, 1), not the row (1, n)
    flat: bool = False  # laid out as the rank-1 tensor of its elements (row-major order)

    KEYS = ("name", "param_index", "shape", "dtype", "data_format", "access", "memory", "layout", "tile_shape",
            "page_size", "num_pages")

    @property
    def is_input(self) -> bool:
        return self.access != "write"

    @property
    def is_output(self) -> bool:
        return self.access != "read"

    @property
    def sharded(self) -> bool:
        return self.layout not in UNSHARDED

    @property
    def row_major(self) -> bool:
        """Pages are rows of the last dimension (the host writes and reads them as they are)."""
        return self.layout == ROW_MAJOR

    @property
    def matrix_dims(self) -> tuple[int, int, int]:
        return matrix_dims(self.shape, self.column, self.flat)

    @property
    def tile_grid(self) -> tuple[int, int]:
        return tile_grid(self.shape, self.tile_shape, self.column, self.flat)

    @property
    def device_shape(self) -> tuple[int, ...]:
        """The shape of the tensor the device lays out in tiles: (n, 1) for a rank-1 column
        (the same elements as ``shape``, in the same order), (n,) / (n, 1) for a flat tensor of
        n elements, else ``shape``."""
        shape = (math.prod(self.shape),) if self.flat else self.shape
        return (shape[0], 1) if self.column else shape

    @staticmethod
    def from_json(d: object, where: str, dims: Sequence[str] = ()) -> PlanBuffer:
        d = _object(d, where, PlanBuffer.KEYS, ("shard_grid", "shard_shape", "column", "flat"))
        name = _str(d["name"], f"{where}.name")
        where = f"buffer {name!r}"
        dtype = _str(d["dtype"], f"{where}: dtype", list(FORMATS))
        fmt = FORMATS[dtype]
        layout = _str(d["layout"], f"{where}: layout", LAYOUTS)
        block = BLOCK_BY_DATA_FORMAT.get(d["data_format"])
        if block is not None and (dtype not in BLOCK_STORABLE or layout == ROW_MAJOR):
            raise PlanError(f"{where}: data_format {d['data_format']!r} (block floating point) stores {BLOCK_STORABLE} "
                            f"tensors in tiles, not a {layout} {dtype} buffer")
        if block is None and d["data_format"] != fmt.data_format:
            raise PlanError(f"{where}: data_format {d['data_format']!r} is not {fmt.data_format!r}, the format of "
                            f"its dtype {dtype} (a buffer holds one element per datum, in its dtype, or block "
                            f"floating point: {sorted(BLOCK_BY_DATA_FORMAT)})")
        fmt = block or fmt
        sharded = layout not in UNSHARDED
        if sharded != ("shard_grid" in d) or sharded != ("shard_shape" in d):
            raise PlanError(f"{where}: a sharded buffer has a shard_grid and a shard_shape, an interleaved one "
                            f"neither; this one is {layout}")
        buffer = PlanBuffer(
            name=name, param_index=_int(d["param_index"], f"{where}: param_index"),
            shape=_sizes(d["shape"], f"{where}: shape", dims, low=1), dtype=dtype, format=fmt,
            access=_str(d["access"], f"{where}: access", ACCESS),
            memory=_str(d["memory"], f"{where}: memory", MEMORIES), layout=layout,
            tile_shape=_pair(d["tile_shape"], f"{where}: tile_shape", low=1),
            page_size=_int(d["page_size"], f"{where}: page_size", low=1),
            num_pages=_size(d["num_pages"], f"{where}: num_pages", dims, low=1),
            shard_grid=_pair(d["shard_grid"], f"{where}: shard_grid", low=1) if sharded else None,
            shard_shape=_pair(d["shard_shape"], f"{where}: shard_shape", low=1) if sharded else None,
            column=_bool(d["column"], f"{where}: column") if "column" in d else False,
            flat=_bool(d["flat"], f"{where}: flat") if "flat" in d else False,
        )
        if not buffer.shape:
            raise PlanError(f"{where}: a buffer has at least one dimension")
        if buffer.column and len(buffer.shape) != 1 and not buffer.flat:
            raise PlanError(f"{where}: column is a layout of rank-1 (or flat) tensors; its shape is "
                            f"{list(buffer.shape)}")
        if buffer.flat and (buffer.sharded or buffer.row_major or len(buffer.shape) < 2):
            raise PlanError(f"{where}: flat is a layout of interleaved tensors of rank 2 or more in tiles")
        if buffer.row_major:
            rows, row_bytes = math.prod(buffer.shape[:-1]), buffer.shape[-1] * fmt.element_bytes
            if buffer.memory != "DRAM" or buffer.column:
                raise PlanError(f"{where}: a row-major buffer is a DRAM tensor of rows, not {buffer.memory}"
                                + (" in a column" if buffer.column else ""))
            if (buffer.num_pages, buffer.page_size) != (rows, row_bytes):
                raise PlanError(f"{where}: a row-major {list(buffer.shape)} {dtype} buffer has {rows} pages (rows) of "
                                f"{row_bytes} bytes, not {buffer.num_pages} of {buffer.page_size}")
            return buffer
        tiles = math.prod(buffer.tile_grid)
        if buffer.num_pages != tiles:
            raise PlanError(f"{where}: num_pages {buffer.num_pages} but its shape {list(buffer.shape)} holds "
                            f"{tiles} tiles of {buffer.tile_shape[0]}x{buffer.tile_shape[1]}")
        page = tile_bytes(fmt, math.prod(buffer.tile_shape))
        if buffer.page_size != page:
            what = f"{dtype} {fmt.data_format}" if fmt.block else dtype
            raise PlanError(f"{where}: page_size {buffer.page_size} is not one {what} tile ({page} bytes)")
        return buffer


@dataclass(frozen=True)
class PlanCB:
    """A circular buffer, the same on every active core."""

    index: int
    name: str
    page_size: int
    num_pages: int
    format: Format  # of its data_format
    producer: str
    consumer: str
    buffer: str  # the plan buffer it stages, "" for an intermediate

    @property
    def data_format(self) -> str:
        return self.format.data_format

    @property
    def size(self) -> int:
        return self.page_size * self.num_pages

    @staticmethod
    def from_json(d: object, where: str, arch: Arch, buffers: Sequence[str]) -> PlanCB:
        d = _object(d, where, ("index", "name", "page_size", "num_pages", "data_format", "producer", "consumer",
                               "buffer"))
        where = f"CB {_str(d['name'], f'{where}.name')!r}"
        if d["buffer"] != "" and d["buffer"] not in buffers:
            raise PlanError(f"{where}: buffer {d['buffer']!r} is not a buffer of the plan")
        return PlanCB(
            index=_int(d["index"], f"{where}: index ({arch.name} has {arch.num_cbs} CBs)", high=arch.num_cbs - 1),
            name=d["name"], page_size=_int(d["page_size"], f"{where}: page_size", low=1),
            num_pages=_int(d["num_pages"], f"{where}: num_pages", low=1),
            format=BY_DATA_FORMAT[_str(d["data_format"], f"{where}: data_format", list(BY_DATA_FORMAT))],
            producer=_str(d["producer"], f"{where}: producer", ROLES),
            consumer=_str(d["consumer"], f"{where}: consumer", ROLES), buffer=d["buffer"],
        )


@dataclass(frozen=True)
class PlanAccessor:
    """TensorAccessorArgs of ``buffer`` at ``cta_offset`` of ``kernel``'s compile-time args; a
    sharded one also has ``num_common_runtime_args`` bank coordinates at ``crta_offset``."""

    buffer: str
    kernel: str
    cta_offset: int
    compile_time_args: tuple[int, ...]
    crta_offset: int | None = None
    num_common_runtime_args: int = 0

    @property
    def sharded(self) -> bool:
        return self.crta_offset is not None

    @staticmethod
    def from_json(d: object, where: str, buffers: Sequence[str]) -> PlanAccessor:
        d = _object(d, where, ("buffer", "kernel", "cta_offset", "compile_time_args"),
                    ("crta_offset", "num_common_runtime_args"))
        where = f"tensor accessor of {_str(d['buffer'], f'{where}.buffer', buffers)!r}"
        if ("crta_offset" in d) != ("num_common_runtime_args" in d):
            raise PlanError(f"{where}: crta_offset and num_common_runtime_args go together")
        args = _ints(d["compile_time_args"], f"{where}: compile_time_args")
        if not args:
            raise PlanError(f"{where}: no compile_time_args")
        sharded = "crta_offset" in d
        return PlanAccessor(
            buffer=d["buffer"], kernel=_str(d["kernel"], f"{where}: kernel", tuple(DATA_MOVEMENT)),
            cta_offset=_int(d["cta_offset"], f"{where}: cta_offset"), compile_time_args=args,
            crta_offset=_int(d["crta_offset"], f"{where}: crta_offset") if sharded else None,
            num_common_runtime_args=_int(d["num_common_runtime_args"], f"{where}: num_common_runtime_args", low=1)
            if sharded else 0,
        )


@dataclass(frozen=True)
class ArgSpec:
    """One entry of a kernel's runtime-arg list: what the per-core value at its position is."""

    name: str
    kind: ArgKind
    buffer: str = ""  # buffer_address
    value: int = 0  # const
    cb: str = ""  # mcast
    what: str = ""  # mcast: one of MCAST_ARGS; chain: one of CHAIN_ARGS
    dim: str = ""  # dim

    KEYS = {ArgKind.BUFFER_ADDRESS: ("buffer",), ArgKind.CONST: ("value",), ArgKind.MCAST: ("cb", "what"),
            ArgKind.DIM: ("dim",), ArgKind.CHAIN: ("what",)}
    WHAT = {ArgKind.MCAST: MCAST_ARGS, ArgKind.CHAIN: CHAIN_ARGS}

    @staticmethod
    def from_json(d: object, where: str, buffers: Sequence[str], cbs: Sequence[str],
                  dims: Sequence[str] = ()) -> ArgSpec:
        d = _object(d, where, ("name", "kind"), ("buffer", "value", "cb", "what", "dim"))
        kind = ArgKind(_str(d["kind"], f"{where}.kind", [k.value for k in ArgKind]))
        d = _object(d, f"{where} ({kind.value})", ("name", "kind", *ArgSpec.KEYS.get(kind, ())))
        return ArgSpec(
            name=_str(d["name"], f"{where}.name"), kind=kind,
            buffer=_str(d["buffer"], f"{where}.buffer", buffers) if kind == ArgKind.BUFFER_ADDRESS else "",
            value=_int(d["value"], f"{where}.value") if kind == ArgKind.CONST else 0,
            cb=_str(d["cb"], f"{where}.cb", cbs) if kind == ArgKind.MCAST else "",
            what=_str(d["what"], f"{where}.what", ArgSpec.WHAT[kind]) if kind in ArgSpec.WHAT else "",
            dim=_str(d["dim"], f"{where}.dim", dims) if kind == ArgKind.DIM else "",
        )

    def admits(self, value: ArgValue) -> bool:
        """Whether ``value`` is a per-core value of this argument."""
        if self.kind == ArgKind.BUFFER_ADDRESS:
            return value == BufferAddress(self.buffer)
        if self.kind in ArgSpec.WHAT and self.what[-2:] in ("_x", "_y"):
            return isinstance(value, NocCoord) and value.axis == self.what[-1]
        if self.kind == ArgKind.DIM:  # its formula (its name), or its value in a bound plan
            return value == Formula.name(self.dim) or isinstance(value, int)
        if self.kind in (ArgKind.START_ID, ArgKind.COUNT):  # formulas of the dims in a dynamic plan
            return isinstance(value, (int, Formula))
        return isinstance(value, int)


@dataclass(frozen=True)
class ComputeConfig:
    math_fidelity: str
    fp32_dest_acc_en: bool
    math_approx_mode: bool
    unpack_to_dest: tuple[str, ...] = ()  # CBs unpacked straight to DST (UnpackToDestFp32): int32 operands


@dataclass(frozen=True)
class DataMovementConfig:
    processor: str  # RISCV_0 | RISCV_1
    noc: str  # RISCV_0_default | RISCV_1_default


@dataclass(frozen=True)
class BankCoords:
    """A common runtime arg of a data-movement kernel: the ``count`` packed bank NOC coordinates of
    sharded ``buffer``, which the host knows once it allocates the buffer."""

    buffer: str
    count: int

    @staticmethod
    def from_json(d: object, where: str, buffers: Sequence[str]) -> BankCoords:
        d = _object(d, where, ("kind", "buffer", "count"))
        _str(d["kind"], f"{where}.kind", ("bank_coords",))
        return BankCoords(_str(d["buffer"], f"{where}.buffer", buffers), _int(d["count"], f"{where}.count", low=1))


@dataclass(frozen=True)
class PlanKernel:
    role: str
    source: str
    compile_time_args: tuple[int, ...]
    runtime_args: tuple[ArgSpec, ...]
    config: ComputeConfig | DataMovementConfig
    common_runtime_args: tuple[BankCoords, ...] = ()

    CONFIG_KEYS = {"compute": ("math_fidelity", "fp32_dest_acc_en", "math_approx_mode", "unpack_to_dest"),
                   "reader": ("processor", "noc", "common_runtime_args"),
                   "writer": ("processor", "noc", "common_runtime_args")}

    @staticmethod
    def from_json(d: object, where: str, buffers: Sequence[str], cbs: Sequence[str],
                  dims: Sequence[str] = ()) -> PlanKernel:
        keys = ("role", "source", "compile_time_args", "runtime_args")
        d = _object(d, where, ("role",), {k for v in PlanKernel.CONFIG_KEYS.values() for k in v} | set(keys))
        role = _str(d["role"], f"{where}.role", ROLES)
        where = f"{role} kernel"
        d = _object(d, where, (*keys, *PlanKernel.CONFIG_KEYS[role]))
        if role == "compute":
            config = ComputeConfig(_str(d["math_fidelity"], f"{where}: math_fidelity", MATH_FIDELITIES),
                                   _bool(d["fp32_dest_acc_en"], f"{where}: fp32_dest_acc_en"),
                                   _bool(d["math_approx_mode"], f"{where}: math_approx_mode"),
                                   tuple(_str(c, f"{where}: unpack_to_dest[{i}]", cbs)
                                         for i, c in enumerate(_list(d["unpack_to_dest"], f"{where}: unpack_to_dest"))))
            common = ()
        else:
            processors, nocs = zip(*DATA_MOVEMENT.values())
            config = DataMovementConfig(_str(d["processor"], f"{where}: processor", processors),
                                        _str(d["noc"], f"{where}: noc", nocs))
            common = tuple(BankCoords.from_json(c, f"{where}: common_runtime_args[{i}]", buffers)
                           for i, c in enumerate(_list(d["common_runtime_args"], f"{where}: common_runtime_args")))
        return PlanKernel(
            role=role, source=_str(d["source"], f"{where}: source", KERNEL_SOURCES),
            compile_time_args=_ints(d["compile_time_args"], f"{where}: compile_time_args"),
            runtime_args=tuple(ArgSpec.from_json(a, f"{where}: runtime_args[{i}]", buffers, cbs, dims)
                               for i, a in enumerate(_list(d["runtime_args"], f"{where}: runtime_args"))),
            config=config, common_runtime_args=common,
        )


@dataclass(frozen=True)
class CoreArgs:
    """The runtime values of one core, per kernel role, in the order of the kernel's runtime args."""

    core: Core
    values: Mapping[str, tuple[ArgValue, ...]]


@dataclass(frozen=True)
class PlanReduction:
    """Blocks summing into ``buffers`` (T.atomic_add) take turns: each ``blocks`` consecutive block
    ids add into one region, block ``b`` after block ``b - 1``, ordered by ``semaphore``."""

    buffers: tuple[str, ...]
    blocks: int
    semaphore: int

    def to_json(self) -> dict:
        return {"buffers": list(self.buffers), "blocks": self.blocks, "semaphore": self.semaphore}

    @staticmethod
    def from_json(d: object, buffers: Sequence[str], semaphores: Sequence[int]) -> PlanReduction:
        d = _object(d, "reduction", ("buffers", "blocks", "semaphore"))
        names = tuple(_str(b, f"reduction.buffers[{i}]", buffers) for i, b in enumerate(_list(d["buffers"], "reduction.buffers")))
        if d["semaphore"] not in semaphores:
            raise PlanError(f"reduction: semaphore {d['semaphore']!r} is not a semaphore id of the plan {list(semaphores)}")
        return PlanReduction(names, _int(d["blocks"], "reduction.blocks", low=2), int(d["semaphore"]))


DISTRIBUTIONS = ("sharded", "replicated")
MESH_AXES = ("blockIdx.z", "blockIdx.y", "blockIdx.x")  # the block-grid dimensions a mesh may split


@dataclass(frozen=True)
class MeshTensor:
    """How a tensor is distributed over a mesh's devices: ``sharded`` along dimension ``dim`` (each
    device holds its ``shape[dim] / devices`` consecutive rows there, in device order, as ttnn's
    ``ShardTensorToMesh(dim)``), or ``replicated`` (``dim`` -1: every device holds all of it).
    ``shape`` is the whole tensor's; the plan's buffer shape is one device's."""

    buffer: str
    distribution: str
    dim: int
    shape: tuple[int, ...]

    def to_json(self) -> dict:
        return {"buffer": self.buffer, "distribution": self.distribution, "dim": self.dim, "shape": list(self.shape)}

    def device_slice(self, device: int, devices: int) -> tuple[int, int] | None:
        """(start, stop) along ``dim`` of the shard of device ``device`` (row-major over the mesh);
        None when replicated."""
        if self.distribution != "sharded":
            return None
        rows = self.shape[self.dim] // devices
        return device * rows, (device + 1) * rows


@dataclass(frozen=True)
class MeshSplit:
    """``tt.mesh`` (SplitMeshTT): the block grid's ``blocks`` rows (``axis`` a row dimension,
    ``blockIdx.z``/``blockIdx.y``) or columns (``blockIdx.x``) are cut into contiguous panels along
    the grid dimension ``axis``, one per device of the ``shape`` (rows, cols) mesh, row-major;
    ``tensors`` say how each parameter is distributed."""

    shape: Core
    axis: str
    blocks: int
    tensors: tuple[MeshTensor, ...]

    @property
    def devices(self) -> int:
        return self.shape[0] * self.shape[1]

    def to_attr(self) -> dict:
        return {"shape": list(self.shape), "axis": self.axis, "blocks": self.blocks,
                "tensors": [t.to_json() for t in self.tensors]}

    @staticmethod
    def from_attr(d: Mapping) -> MeshSplit:
        return MeshSplit(tuple(d["shape"]), d["axis"], int(d["blocks"]),
                         tuple(MeshTensor(t["buffer"], t["distribution"], int(t["dim"]), tuple(t["shape"]))
                               for t in d["tensors"]))


def split_columns(axis: str) -> bool:
    """Whether a mesh split along grid dimension ``axis`` cuts the block grid's columns (else its rows)."""
    return axis == "blockIdx.x"


@dataclass(frozen=True)
class MeshDevice:
    """One device of a mesh: its ``coord`` (row, col), the ``panel`` (first, count) of block rows
    (or columns, :func:`split_columns`) of the whole grid it computes, and its cores'
    ``work_partition`` over them, in block ids of the device (its panel's first row or column is
    0; every device's program is the same)."""

    coord: Core
    panel: tuple[int, int]
    work_partition: tuple[WorkItem, ...]

    def to_json(self, local_shard: bool) -> dict:
        return {"coord": list(self.coord), "panel": list(self.panel),
                "work_partition": [w.to_plan(local_shard) for w in self.work_partition]}

    def blocks(self, policy: WorkPolicy, block_grid: tuple[int, int], columns: bool) -> list[tuple[int, int]]:
        """The (row, bx) blocks of the whole grid this device's cores compute."""
        first = self.panel[0]
        return [(row, first + bx) if columns else (first + row, bx)
                for item in self.work_partition for row, bx in policy.blocks(item, block_grid)]


@dataclass(frozen=True)
class PlanMesh:
    """The plan's ``mesh``: a :class:`MeshSplit` with its devices (row-major over ``shape``)."""

    shape: Core
    axis: str
    blocks: int
    devices: tuple[MeshDevice, ...]
    tensors: tuple[MeshTensor, ...]

    def to_json(self, local_shard: bool) -> dict:
        return {"shape": list(self.shape), "axis": self.axis, "blocks": self.blocks,
                "devices": [d.to_json(local_shard) for d in self.devices],
                "tensors": [t.to_json() for t in self.tensors]}

    def tensor(self, buffer: str) -> MeshTensor:
        return next(t for t in self.tensors if t.buffer == buffer)

    @property
    def columns(self) -> bool:
        return split_columns(self.axis)

    @staticmethod
    def from_json(d: object, buffers: Sequence[PlanBuffer], block_grid: Core) -> PlanMesh:
        d = _object(d, "mesh", ("shape", "axis", "blocks", "devices", "tensors"))
        shape = _pair(d["shape"], "mesh.shape", low=1)
        axis = _str(d["axis"], "mesh.axis", MESH_AXES)
        count = shape[0] * shape[1]
        per = block_grid[1] if split_columns(axis) else block_grid[0]
        what = "block columns" if split_columns(axis) else "block rows"
        blocks = _int(d["blocks"], "mesh.blocks", low=1)
        if blocks != count * per:
            raise PlanError(f"mesh.blocks {blocks} is not the {count} devices' {per} {what} each")
        devices = []
        for i, x in enumerate(_list(d["devices"], "mesh.devices")):
            where = f"mesh.devices[{i}]"
            x = _object(x, where, ("coord", "panel", "work_partition"))
            coord, panel = _pair(x["coord"], f"{where}.coord"), _pair(x["panel"], f"{where}.panel")
            if coord != (i // shape[1], i % shape[1]) or panel != (i * per, per):
                raise PlanError(f"{where}: device {i} of the {shape[0]}x{shape[1]} mesh is at "
                                f"{[i // shape[1], i % shape[1]]} with the panel {[i * per, per]} of {what}, "
                                f"got {list(coord)} and {list(panel)}")
            work = tuple(_work_item(w, f"{where}.work_partition[{j}]", ())
                         for j, w in enumerate(_list(x["work_partition"], f"{where}.work_partition")))
            devices.append(MeshDevice(coord, panel, work))
        if len(devices) != count:
            raise PlanError(f"mesh.devices: {len(devices)} devices for a {shape[0]}x{shape[1]} mesh")
        tensors = []
        for i, (t, buf) in enumerate(zip(_list(d["tensors"], "mesh.tensors"), buffers, strict=False)):
            where = f"mesh.tensors[{i}]"
            t = _object(t, where, ("buffer", "distribution", "dim", "shape"))
            name = _str(t["buffer"], f"{where}.buffer", [buf.name])
            kind = _str(t["distribution"], f"{where}.distribution", DISTRIBUTIONS)
            if kind == "replicated" and t["dim"] != -1:
                raise PlanError(f"{where}: a replicated tensor has dim -1, got {t['dim']!r}")
            dim = -1 if kind == "replicated" else _int(t["dim"], f"{where}.dim", high=len(buf.shape) - 1)
            whole = _ints(t["shape"], f"{where}.shape", len(buf.shape), low=1)
            local = list(whole)
            if kind == "sharded":
                local[dim] = whole[dim] // count
            if tuple(local) != tuple(buf.shape) or (kind == "sharded" and whole[dim] % count):
                raise PlanError(f"{where}: a {kind} {list(whole)} tensor on {count} devices is not the buffer "
                                f"{name!r} of shape {list(buf.shape)} on each")
            tensors.append(MeshTensor(name, kind, dim, whole))
        if len(tensors) != len(buffers):
            raise PlanError(f"mesh.tensors: {len(tensors)} entries for {len(buffers)} buffers")
        return PlanMesh(shape, axis, blocks, tuple(devices), tuple(tensors))


@dataclass(frozen=True)
class Semaphore:
    """Allocated on every active core; ``id`` is its position in the plan (kernels get ids as constants)."""

    id: int
    name: str
    initial_value: int

    @staticmethod
    def from_json(d: object, where: str) -> Semaphore:
        d = _object(d, where, ("id", "name", "initial_value"))
        return Semaphore(_int(d["id"], f"{where}.id"), _str(d["name"], f"{where}.name"),
                         _int(d["initial_value"], f"{where}.initial_value"))


@dataclass(frozen=True)
class CoreRange:
    start: Core  # inclusive
    end: Core

    @staticmethod
    def from_json(d: object, where: str) -> CoreRange:
        d = _object(d, where, ("start", "end"))
        return CoreRange(_pair(d["start"], f"{where}.start"), _pair(d["end"], f"{where}.end"))


def _work_item(d: object, where: str, dims: Sequence[str]) -> WorkItem:
    d = _object(d, where, ("core", "start_id", "count"), ("width", "shard"))
    return WorkItem(_pair(d["core"], f"{where}.core"), _size(d["start_id"], f"{where}.start_id", dims),
                    # a plan with dynamic sizes keeps every core: some may get no block for small sizes
                    _size(d["count"], f"{where}.count", dims, low=0 if dims else 1),
                    _int(d.get("width", 0), f"{where}.width"),
                    _pair(d.get("shard", [0, 0]), f"{where}.shard"))


def _work_policy(d: object) -> WorkPolicy:
    d = _object(d, "work_policy", ("policy", "stride", "shard_blocks"))
    return WorkPolicy(Policy(_str(d["policy"], "work_policy.policy", [p.value for p in Policy])),
                      _int(d["stride"], "work_policy.stride", low=1), _pair(d["shard_blocks"], "work_policy.shard_blocks"))


def _multicast(d: object, where: str, cbs: Sequence[str], semaphores: Sequence[int]) -> MulticastDesc:
    d = _object(d, where, ("cb", "axis", "sender_semaphore", "receiver_semaphore"))
    for key in ("sender_semaphore", "receiver_semaphore"):
        if d[key] not in semaphores:
            raise PlanError(f"{where}: {key} {d[key]!r} is not a semaphore id of the plan {list(semaphores)}")
    return MulticastDesc(_str(d["cb"], f"{where}.cb", cbs), _str(d["axis"], f"{where}.axis", MCAST_AXES),
                         d["sender_semaphore"], d["receiver_semaphore"])


def _check_accessor_args(kernel: PlanKernel, accessors: Sequence[PlanAccessor]) -> None:
    """Each accessor's args stand at its offset of the kernel's compile-time args, without overlap."""
    end = 0
    for accessor in sorted((a for a in accessors if a.kernel == kernel.role), key=lambda a: a.cta_offset):
        width = len(accessor.compile_time_args)
        found = list(kernel.compile_time_args[accessor.cta_offset: accessor.cta_offset + width])
        if accessor.cta_offset < end or found != list(accessor.compile_time_args):
            raise PlanError(f"{kernel.role} compile-time args {found} at offset {accessor.cta_offset} differ from the "
                            f"TensorAccessorArgs of {accessor.buffer!r} {list(accessor.compile_time_args)}")
        end = accessor.cta_offset + width


@dataclass(frozen=True)
class PlanDim:
    """A dynamic size (``T.dynamic("m")``): the host reads it from axis ``axis`` of ``buffer``."""

    name: str
    buffer: str
    axis: int

    @staticmethod
    def from_json(d: object, where: str) -> PlanDim:
        d = _object(d, where, ("name", "buffer", "axis"))
        name = _str(d["name"], f"{where}.name")
        if not name.isidentifier():
            raise PlanError(f"{where}: the dim name {name!r} is not an identifier")
        return PlanDim(name, _str(d["buffer"], f"{where}.buffer"), _int(d["axis"], f"{where}.axis"))


@dataclass(frozen=True)
class Plan:
    """A checked ``tt.plan.json``. Sequences keep the plan's order."""

    kernel_name: str
    arch: Arch
    core_grid: Core
    core_ranges: tuple[CoreRange, ...]
    partition_mode: str
    grid_tiles: Core
    block_grid: Core
    block_tiles: Core
    work_policy: WorkPolicy
    work_partition: tuple[WorkItem, ...]
    buffers: tuple[PlanBuffer, ...]
    cbs: tuple[PlanCB, ...]
    tensor_accessors: tuple[PlanAccessor, ...]
    kernels: tuple[PlanKernel, ...]
    runtime_args: tuple[CoreArgs, ...]
    semaphores: tuple[Semaphore, ...]
    multicast: tuple[MulticastDesc, ...]
    dims: tuple[PlanDim, ...] = ()  # dynamic sizes; the plan's formulas name them
    reduction: PlanReduction | None = None  # blocks taking turns to sum into tensors
    mesh: PlanMesh | None = None  # a mesh of devices, each running the plan over its block rows

    KEYS = ("schema_version", "kernel_name", "arch", "device_grid", "core_grid", "core_ranges", "partition_mode",
            "grid_tiles", "block_grid", "block_tiles", "work_policy", "work_partition", "buffers", "cbs",
            "tensor_accessors", "kernels", "runtime_args", "semaphores", "multicast")

    @property
    def device_grid(self) -> Core:
        return self.arch.grid

    @property
    def host_buffers(self) -> tuple[PlanBuffer, ...]:
        """The buffers as the host's tensors hold them: on a mesh, whole (each ``shape`` the mesh
        tensor's; the plan's are one device's), else the buffers themselves."""
        if self.mesh is None:
            return self.buffers
        return tuple(dataclasses.replace(b, shape=self.mesh.tensor(b.name).shape) for b in self.buffers)

    @property
    def inputs(self) -> tuple[PlanBuffer, ...]:
        """The buffers the host uploads (access read or readwrite), in parameter order."""
        return tuple(b for b in self.buffers if b.is_input)

    @property
    def outputs(self) -> tuple[PlanBuffer, ...]:
        """The buffers the host reads back (access write or readwrite), in parameter order."""
        return tuple(b for b in self.buffers if b.is_output)

    def kernel(self, role: str) -> PlanKernel:
        return next(k for k in self.kernels if k.role == role)

    @property
    def unpacked_to_dest(self) -> tuple[int, ...]:
        """The indices of the CBs compute unpacks straight to DST (``UnpackToDestMode::UnpackToDestFp32``)."""
        index = {cb.name: cb.index for cb in self.cbs}
        return tuple(index[name] for name in self.kernel("compute").config.unpack_to_dest)

    @staticmethod
    def from_json(d: object) -> Plan:
        """The checked view of a loaded ``tt.plan.json``, else a :class:`PlanError`."""
        d = _object(d, "the plan", Plan.KEYS, ("dims", "reduction", "mesh"))
        if d["schema_version"] != SCHEMA_VERSION:
            raise PlanError(f"schema_version {d['schema_version']!r}: this reader knows version {SCHEMA_VERSION}")
        arch = ARCHS[_str(d["arch"], "arch", list(ARCHS))]
        if _pair(d["device_grid"], "device_grid") != arch.grid:
            raise PlanError(f"device_grid {d['device_grid']} is not the {arch.name} worker grid {list(arch.grid)}")
        dims = tuple(PlanDim.from_json(x, f"dims[{i}]") for i, x in enumerate(_list(d.get("dims", []), "dims")))
        dim_names = [x.name for x in dims]
        _unique(dim_names, "dims")
        buffers = tuple(PlanBuffer.from_json(b, f"buffers[{i}]", dim_names)
                        for i, b in enumerate(_list(d["buffers"], "buffers")))
        names = [b.name for b in buffers]
        _unique(names, "buffer names")
        cbs = tuple(PlanCB.from_json(c, f"cbs[{i}]", arch, names) for i, c in enumerate(_list(d["cbs"], "cbs")))
        _unique([c.index for c in cbs], "CB indices")
        _unique([c.name for c in cbs], "CB names")
        cb_names = [c.name for c in cbs]
        accessors = tuple(PlanAccessor.from_json(a, f"tensor_accessors[{i}]", names)
                          for i, a in enumerate(_list(d["tensor_accessors"], "tensor_accessors")))
        kernels = tuple(PlanKernel.from_json(k, f"kernels[{i}]", names, cb_names, dim_names)
                        for i, k in enumerate(_list(d["kernels"], "kernels")))
        if sorted(k.role for k in kernels) != sorted(ROLES):
            raise PlanError(f"the plan must have exactly one reader, compute and writer kernel, got "
                            f"{[k.role for k in kernels]}")
        for kernel in kernels:
            _check_accessor_args(kernel, accessors)
        semaphores = tuple(Semaphore.from_json(s, f"semaphores[{i}]")
                           for i, s in enumerate(_list(d["semaphores"], "semaphores")))
        for position, semaphore in enumerate(semaphores):
            if semaphore.id != position:
                raise PlanError(f"semaphore ids must be 0, 1, ... in plan order; entry {position} has {semaphore.id}")
        plan = Plan(
            kernel_name=_str(d["kernel_name"], "kernel_name"), arch=arch,
            core_grid=_pair(d["core_grid"], "core_grid", low=1),
            core_ranges=tuple(CoreRange.from_json(r, f"core_ranges[{i}]")
                              for i, r in enumerate(_list(d["core_ranges"], "core_ranges"))),
            partition_mode=_str(d["partition_mode"], "partition_mode", PARTITION_MODES),
            grid_tiles=_sizes(d["grid_tiles"], "grid_tiles", dim_names, 2),
            block_grid=_sizes(d["block_grid"], "block_grid", dim_names, 2),
            block_tiles=_pair(d["block_tiles"], "block_tiles"), work_policy=_work_policy(d["work_policy"]),
            work_partition=tuple(_work_item(w, f"work_partition[{i}]", dim_names)
                                 for i, w in enumerate(_list(d["work_partition"], "work_partition"))),
            buffers=buffers, cbs=cbs, tensor_accessors=accessors, kernels=kernels,
            runtime_args=tuple(_core_args(e, f"runtime_args[{i}]", kernels, names, dim_names)
                               for i, e in enumerate(_list(d["runtime_args"], "runtime_args"))),
            semaphores=semaphores,
            multicast=tuple(_multicast(m, f"multicast[{i}]", cb_names, [s.id for s in semaphores])
                            for i, m in enumerate(_list(d["multicast"], "multicast"))),
            dims=dims,
            reduction=PlanReduction.from_json(d["reduction"], names, [s.id for s in semaphores])
            if "reduction" in d else None,
        )
        if "mesh" in d:
            if dims:
                raise PlanError("mesh: a plan with dynamic sizes (dims) runs on one device")
            plan = dataclasses.replace(plan, mesh=PlanMesh.from_json(d["mesh"], buffers, plan.block_grid))
        plan._check_cores()
        return plan

    def _check_cores(self) -> None:
        gx, gy = self.arch.grid
        cores = [("core_ranges", r.start) for r in self.core_ranges] + [("core_ranges", r.end) for r in self.core_ranges]
        cores += [("work_partition", w.core) for w in self.work_partition]
        cores += [("runtime_args", e.core) for e in self.runtime_args]
        for where, (x, y) in cores:
            if x >= gx or y >= gy:
                raise PlanError(f"{where}: core ({x}, {y}) is outside the {gx}x{gy} worker grid of {self.arch.name}")
        _unique([w.core for w in self.work_partition], "work_partition cores")
        _unique([e.core for e in self.runtime_args], "runtime_args cores")


class SizeError(ValueError):
    """Tensors a program with dynamic sizes cannot run on: the message names the parameter, the
    axis and the size."""


def dim_values(plan: Mapping, shapes: Mapping[str, Sequence[int]]) -> dict[str, int]:
    """The value of each dynamic size of ``plan`` (a ``tt.plan.json`` dict with ``"dims"``) read
    from ``shapes`` (buffer name -> shape of the tensor given for it; outputs may be missing):
    every tensor given must have its buffer's rank, static extents and one value per size; every
    size is a positive int32 (the kernels compute with it in 32 bits)."""
    dims, found = [d["name"] for d in plan.get("dims", [])], {}
    for buffer in plan["buffers"]:
        name, shape = buffer["name"], shapes.get(buffer["name"])
        if shape is None:
            continue
        shape = tuple(int(x) for x in shape)
        expected = buffer["shape"]
        if len(shape) != len(expected):
            raise SizeError(f"`{name}` has shape {list(shape)}, the kernel takes a rank-{len(expected)} tensor "
                            f"{[str(e) for e in expected]}")
        for axis, (size, extent) in enumerate(zip(shape, expected)):
            if isinstance(extent, int):
                if size != extent:
                    raise SizeError(f"`{name}`.shape[{axis}] is {size}, the kernel was compiled for {extent}")
                continue
            if not 1 <= size < 2**31:
                raise SizeError(f"the size {extent} = {size} (`{name}`.shape[{axis}]) is not in [1, 2^31): the "
                                "program serves sizes of at least 1 that 32-bit arithmetic holds")
            first = found.setdefault(extent, (size, name, axis))
            if first[0] != size:
                raise SizeError(f"the size {extent} is {first[0]} (`{first[1]}`.shape[{first[2]}]) and {size} "
                                f"(`{name}`.shape[{axis}]): the kernel declares them equal")
    missing = [d for d in dims if d not in found]
    if missing:
        where = [f"`{d['buffer']}`" for d in plan["dims"] if d["name"] in missing]
        raise SizeError(f"the sizes {missing} are read from {', '.join(where)}: pass those tensors")
    return {d: found[d][0] for d in dims}


def bind_dims(plan: Mapping, values: Mapping[str, int]) -> dict:
    """``plan`` with every formula of its dynamic sizes computed for ``values``
    (:func:`dim_values`): a plan of ints, checked by :meth:`Plan.from_json` as a static one (its
    ``dims`` stay: the kernels' size arguments name them).
    A buffer over the device's DRAM is a :class:`SizeError` naming it and the sizes."""

    def value(v):
        return evaluate(Formula.parse(v), values) if isinstance(v, str) else v

    def arg(v):
        return value(v) if isinstance(v, str) and not v.startswith("@") else v

    arch = ARCHS[plan["arch"]]
    dram = arch.num_dram_banks * arch.dram_bank_size
    bound = dict(plan)  # "dims" stays: the kernels' size arguments name them
    bound["buffers"] = []
    for buffer in plan["buffers"]:
        entry = buffer | {"shape": [value(x) for x in buffer["shape"]], "num_pages": value(buffer["num_pages"])}
        if entry["num_pages"] * entry["page_size"] > dram:
            sizes = ", ".join(f"{k} = {v}" for k, v in values.items())
            raise SizeError(f"`{buffer['name']}` {entry['shape']} needs {entry['num_pages'] * entry['page_size']} bytes "
                            f"for {sizes}, more than the {dram} bytes of DRAM of {arch.name}")
        bound["buffers"].append(entry)
    bound["grid_tiles"] = [value(x) for x in plan["grid_tiles"]]
    bound["block_grid"] = [value(x) for x in plan["block_grid"]]
    bound["work_partition"] = [w | {"start_id": value(w["start_id"]), "count": value(w["count"])}
                               for w in plan["work_partition"]]
    bound["runtime_args"] = [{k: (v if k == "core" else [arg(x) for x in v]) for k, v in e.items()}
                             for e in plan["runtime_args"]]
    return bound


def _core_args(d: object, where: str, kernels: Sequence[PlanKernel], buffers: Sequence[str],
               dims: Sequence[str]) -> CoreArgs:
    d = _object(d, where, ("core", *ROLES))
    core = _pair(d["core"], f"{where}.core")
    values = {}
    for kernel in kernels:
        what = f"runtime args of the {kernel.role} kernel on core ({core[0]}, {core[1]})"
        given = _list(d[kernel.role], what)
        if len(given) != len(kernel.runtime_args):
            raise PlanError(f"{what}: {len(given)} values for its {len(kernel.runtime_args)} runtime args")
        parsed = tuple(runtime_value(v, buffers, f"runtime arg {i} of {kernel.role} on core ({core[0]}, {core[1]})", dims)
                       for i, v in enumerate(given))
        for i, (spec, value) in enumerate(zip(kernel.runtime_args, parsed)):
            if not spec.admits(value):
                raise PlanError(f"runtime arg {i} of {kernel.role} on core ({core[0]}, {core[1]}): {given[i]!r} is "
                                f"not a value of {spec.name!r} ({spec.kind.value})")
        values[kernel.role] = parsed
    return CoreArgs(core, values)
