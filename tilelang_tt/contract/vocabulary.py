"""The vocabulary the compiler's attributes and the plan share: how cores walk the block grid
(:class:`Policy`, :class:`WorkItem`, :class:`WorkPolicy`), multicast groups (:class:`MulticastGroup`,
:class:`MulticastDesc`, :data:`MCAST_ARGS`), the kinds of kernel runtime arguments (:class:`ArgKind`,
:data:`CHAIN_ARGS`) and the per-core runtime values of the plan: ints, ``"@A"``
(:class:`BufferAddress`) and ``{"noc_x": [x, y]}`` (:class:`NocCoord`), written (``to_json``) and
read (:func:`runtime_value`) here only.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from tilelang_tt.contract.formula import Formula, from_json, to_json
from tilelang_tt.contract.reading import (
    PlanError,
    read_int,
    read_object,
    read_pair,
    read_size,
    read_str,
)

MCAST_AXES = ("x", "y", "xy")

Core = tuple[int, int]  # (x, y) of a logical core
Entry = TypeVar("Entry")


def plan_entry(entry: type[Entry], record) -> Entry:
    """The plan's ``entry`` of a compiler's ``record`` that extends that type (``ir.attrs.CBDesc``
    a ``PlanCB``, ``RuntimeArg`` an ``ArgSpec``, ``ComputeKernelConfig`` a ``ComputeConfig``): its
    fields of the plan, the rest left out."""
    return entry(**{f.name: getattr(record, f.name) for f in dataclasses.fields(entry)})


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
        """From a ``tt.work_partition`` entry, the plan's form (``width``/``shard`` only when used)."""
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

    @staticmethod
    def from_json(d: object, where: str, dims: Sequence[str]) -> WorkItem:
        """A checked ``work_partition`` entry; ``start_id`` and ``count`` may be formulas of ``dims``."""
        d = read_object(d, where, ("core", "start_id", "count"), ("width", "shard"))
        return WorkItem(read_pair(d["core"], f"{where}.core"), read_size(d["start_id"], f"{where}.start_id", dims),
                        # a plan with dynamic sizes keeps every core: some may get no block for small sizes
                        read_size(d["count"], f"{where}.count", dims, low=0 if dims else 1),
                        read_int(d.get("width", 0), f"{where}.width"),
                        read_pair(d.get("shard", [0, 0]), f"{where}.shard"))


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

    @staticmethod
    def from_json(d: object) -> WorkPolicy:
        """The plan's checked ``work_policy``."""
        d = read_object(d, "work_policy", ("policy", "stride", "shard_blocks"))
        return WorkPolicy(Policy(read_str(d["policy"], "work_policy.policy", [p.value for p in Policy])),
                          read_int(d["stride"], "work_policy.stride", low=1),
                          read_pair(d["shard_blocks"], "work_policy.shard_blocks"))

    def block_id(self, n, start_id, width, bx_total: int):
        """Block id (row * Bx + bx) of a core's ``n``-th block under the id-walking policies. ``n``,
        ``start_id`` and ``width`` are ints, or TIR expressions of the kernel's loop counter and
        runtime arguments: this one definition is what :meth:`blocks` evaluates and what
        MaterializeCoreLoopTT binds in the per-core loop."""
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
        """The (by, bx) blocks a core walks, in order: the contract of the per-core loop (MaterializeCoreLoopTT)."""
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
    two semaphores. The plan's ``multicast`` entry (:meth:`to_json`) leaves the groups out: each
    core's runtime values carry them."""

    cb: str
    axis: str
    sender_semaphore: int
    receiver_semaphore: int
    groups: tuple[MulticastGroup, ...] = ()

    def to_dict(self) -> dict:
        """The ``tt.multicast`` entry's fields but the groups (the table's key is the CB)."""
        return {"axis": self.axis, "sender_semaphore": self.sender_semaphore,
                "receiver_semaphore": self.receiver_semaphore}

    def to_attr(self) -> dict:
        """The ``tt.multicast`` form: :meth:`to_dict` and the groups."""
        return self.to_dict() | {"groups": [g.to_dict() for g in self.groups]}

    @staticmethod
    def from_dict(cb: str, d: dict) -> MulticastDesc:
        """From the ``tt.multicast`` form (:meth:`to_attr`)."""
        return MulticastDesc(cb, d["axis"], int(d["sender_semaphore"]), int(d["receiver_semaphore"]),
                             tuple(MulticastGroup.from_dict(g) for g in d["groups"]))

    def to_json(self) -> dict:
        """The plan's ``multicast`` entry: the CB and :meth:`to_dict` (no groups)."""
        return {"cb": self.cb} | self.to_dict()

    @staticmethod
    def from_json(d: object, where: str, cbs: Sequence[str], semaphores: Sequence[int]) -> MulticastDesc:
        """A checked ``multicast`` entry of the plan (its CB and semaphores among the plan's)."""
        d = read_object(d, where, ("cb", "axis", "sender_semaphore", "receiver_semaphore"))
        for key in ("sender_semaphore", "receiver_semaphore"):
            if d[key] not in semaphores:
                raise PlanError(f"{where}: {key} {d[key]!r} is not a semaphore id of the plan {list(semaphores)}")
        return MulticastDesc(read_str(d["cb"], f"{where}.cb", cbs), read_str(d["axis"], f"{where}.axis", MCAST_AXES),
                             d["sender_semaphore"], d["receiver_semaphore"])

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
        return read_size(value, where, dims)
    if isinstance(value, str):
        if not value.startswith("@") or value[1:] not in buffers:
            raise PlanError(f"{where}: {value!r} is not '@<buffer>' for a buffer of the plan")
        return BufferAddress(value[1:])
    if isinstance(value, dict):
        if len(value) != 1 or next(iter(value)) not in ("noc_x", "noc_y"):
            raise PlanError(f"{where}: {value!r} is not {{'noc_x' | 'noc_y': [x, y]}}")
        ((key, core),) = value.items()
        return NocCoord(key[-1], read_pair(core, f"{where}.{key}"))
    return read_int(value, where)


def runtime_value_json(value: ArgValue) -> int | str | dict:
    """The plan's text of a per-core runtime value: what :func:`runtime_value` reads back."""
    return value.to_json() if isinstance(value, (BufferAddress, NocCoord)) else to_json(value)
