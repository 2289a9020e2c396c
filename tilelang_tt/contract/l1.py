"""One model of each core's L1, as tt-metal 0.81.1 and the emulator allocate it.

Standard library only. The compiler's check (F VerifyTTIR) and the plan view (``inspect_plan``,
``tilelang-tt plan show``) both ask :func:`l1_use` with plain values: the circular buffers each
core creates, in creation order, and the L1-resident buffers, in allocation order. One core's L1
(tilelang_tt/emulator/runtime: ``Device::allocate_l1``, ``allocate_sharded``, ``Device::add_cb``)::

    0 ....... l1_unreserved_base | CBs ->            <- L1 buffers | l1_total
      firmware (reserved)          bottom-up           top-down, the same addresses on every core

* an L1 buffer takes ``align(pages per core * align(page_size))`` bytes of every core (``align``:
  up to ``arch.l1_alignment``), below the buffers allocated before it. Interleaved: pages round
  robin over the L1 banks, one per worker core, ``ceil(pages / banks)`` per core (tt-metal
  shuffles which core is which bank; the emulator has no interleaved L1 buffers). Sharded
  (``BufferDistributionSpec``: the shard grid's cores in ROW_MAJOR order, ROUND_ROBIN_1D, shard
  ``s`` on core ``s % cores`` at slot ``s // cores``): ``ceil(shards / cores) * shard pages``
  (``max_num_dev_pages_per_core``);
* circular buffers go bottom-up from ``l1_unreserved_base``, each at the next multiple of the DRAM
  alignment (tt-metal ``ProgramImpl::allocate_circular_buffers``: DRAM reads and writes need it);
* the program fits when no core's last CB ends past the lowest L1 buffer and the L1 buffers stay
  above the unreserved base; otherwise the emulator and tt-metal stop with an L1 overflow.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from tilelang_tt.contract.arch import get_arch
from tilelang_tt.contract.buffers import INTERLEAVED, LAYOUTS, LayoutDesc, MemoryLayout, MemorySpace

Core = tuple[int, int]


def align(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def row_major(grid: tuple[int, int]) -> list[Core]:
    """The cores (x, y) of a grid, x fastest."""
    return [(x, y) for y in range(grid[1]) for x in range(grid[0])]


@dataclass(frozen=True)
class CircularBuffer:
    """One circular buffer of a core: ``num_pages`` pages of ``page_size`` bytes."""

    page_size: int
    num_pages: int

    def __post_init__(self) -> None:
        if self.page_size < 1 or self.num_pages < 1:
            raise ValueError(f"a circular buffer needs a positive page size and page count, not {self}")

    @property
    def size(self) -> int:
        return self.page_size * self.num_pages


@dataclass(frozen=True)
class L1Buffer:
    """An L1-resident buffer of ``num_pages`` pages of ``page_size`` bytes. Interleaved: pages round
    robin over the L1 banks, one per worker core. Sharded (the other ``LAYOUTS``): the tensor, a
    matrix of ``tensor_pages`` (rows, cols) pages, cut into shards of ``shard_pages`` on the cores
    of ``shard_grid`` (x, y)."""

    name: str
    page_size: int
    num_pages: int
    layout: str = INTERLEAVED
    tensor_pages: tuple[int, int] | None = None
    shard_pages: tuple[int, int] | None = None
    shard_grid: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        if self.page_size < 1 or self.num_pages < 1:
            raise ValueError(f"L1 buffer `{self.name}` needs a positive page size and page count")
        sharding = (self.tensor_pages, self.shard_pages, self.shard_grid)
        if self.layout == INTERLEAVED:
            if sharding != (None, None, None):
                raise ValueError(f"interleaved L1 buffer `{self.name}` has tensor_pages/shard_pages/shard_grid")
            return
        if self.layout not in LAYOUTS:
            raise ValueError(f"L1 buffer `{self.name}` has layout {self.layout!r}; use one of {list(LAYOUTS)}")
        if any(s is None or len(s) != 2 or min(s) < 1 for s in sharding):
            raise ValueError(f"sharded L1 buffer `{self.name}` needs tensor_pages, shard_pages and shard_grid, "
                             "each two positive integers")
        if math.prod(self.tensor_pages) != self.num_pages:
            raise ValueError(f"L1 buffer `{self.name}` has {self.num_pages} pages, but its tensor_pages "
                             f"{self.tensor_pages} make {math.prod(self.tensor_pages)}")

    @property
    def sharded(self) -> bool:
        return self.layout != INTERLEAVED

    def aligned_page_size(self, arch: str) -> int:
        return align(self.page_size, get_arch(arch).l1_alignment)

    @property
    def num_shards(self) -> int:
        return math.prod(-(-t // s) for t, s in zip(self.tensor_pages, self.shard_pages))

    def cores(self, arch: str) -> list[Core]:
        """The cores holding its pages: the shard grid's, else every worker core (an L1 bank each)."""
        return row_major(self.shard_grid if self.sharded else get_arch(arch).grid)

    def pages_per_core(self, arch: str) -> int:
        """Page slots it takes on every core (tt-metal's pages per bank)."""
        banks = len(self.cores(arch))
        if self.sharded:
            return -(-self.num_shards // banks) * math.prod(self.shard_pages)
        return -(-self.num_pages // banks)

    def bytes_per_core(self, arch: str) -> int:
        return align(self.pages_per_core(arch) * self.aligned_page_size(arch), get_arch(arch).l1_alignment)


@dataclass(frozen=True)
class PlacedBuffer:
    """An L1 buffer where the allocator put it: ``size`` bytes from L1 offset ``address`` on every
    core (below ``arch.l1_unreserved_base`` when it does not fit)."""

    buffer: L1Buffer
    address: int
    size: int
    cores: tuple[Core, ...]


@dataclass(frozen=True)
class CoreL1:
    """One core's L1 in bytes: the reserved base, its CB region (alignment padding included) and the
    L1 buffers' region (the same on every core)."""

    core: Core
    reserved: int
    cbs: int
    buffers: int
    capacity: int

    @property
    def allocated(self) -> int:
        """Bytes of CBs and L1 buffers."""
        return self.cbs + self.buffers

    @property
    def used(self) -> int:
        return self.reserved + self.allocated

    @property
    def free(self) -> int:
        return self.capacity - self.used

    @property
    def available(self) -> int:
        """Bytes above the reserved base, for CBs and L1 buffers."""
        return self.capacity - self.reserved

    @property
    def fits(self) -> bool:
        return self.free >= 0

    def __str__(self) -> str:
        return (f"CBs {self.cbs} bytes + L1 buffers {self.buffers} bytes {'<=' if self.fits else '>'} "
                f"{self.available} bytes available on core ({self.core[0]}, {self.core[1]})")


@dataclass(frozen=True)
class L1Use:
    """The L1 of every core a program touches (its CB cores and the cores holding L1 buffers), in
    row-major order, and the L1 buffers in allocation order."""

    arch: str
    reserved: int
    capacity: int
    buffers: tuple[PlacedBuffer, ...]
    cores: tuple[CoreL1, ...]

    @property
    def available(self) -> int:
        """Bytes of a core above the reserved base, for CBs and L1 buffers."""
        return self.capacity - self.reserved

    @property
    def fits(self) -> bool:
        return self.unplaced is None and all(core.fits for core in self.cores)

    @property
    def worst(self) -> CoreL1 | None:
        """The core using the most L1 (the first in row-major order on a tie)."""
        return max(self.cores, key=lambda core: core.used, default=None)

    @property
    def unplaced(self) -> PlacedBuffer | None:
        """The first L1 buffer reaching below the unreserved base, where the allocator fails."""
        return next((placed for placed in self.buffers if placed.address < self.reserved), None)

    def core(self, xy: Core) -> CoreL1:
        return next(core for core in self.cores if core.core == tuple(xy))


def cores_in_ranges(ranges: Iterable[tuple[Sequence[int], Sequence[int]]]) -> list[Core]:
    """The cores of inclusive (start, end) core ranges, in range order, each row-major."""
    cores: dict[Core, None] = {}
    for start, end in ranges:
        for y in range(start[1], end[1] + 1):
            cores |= dict.fromkeys((x, y) for x in range(start[0], end[0] + 1))
    return list(cores)


def from_layout(layout: LayoutDesc) -> L1Buffer | None:
    """The L1 buffer of a tensor laid out as ``layout`` (a ``tt.layout_desc`` entry or a plan
    buffer), ``None`` in DRAM: its pages over its tile grid (a rank-1 column is its (n, 1) view)
    and, sharded, its shards of ``shard_shape`` elements (whole tiles) on ``shard_grid``."""
    if layout.memory != MemorySpace.L1:
        return None
    rows, cols = layout.tile_grid
    if layout.layout == MemoryLayout.INTERLEAVED:
        return L1Buffer(layout.buffer, layout.page_size, rows * cols)
    (shard_rows, shard_cols), (tile_rows, tile_cols) = layout.shard_shape, layout.tile_shape
    return L1Buffer(layout.buffer, layout.page_size, rows * cols, MemoryLayout(layout.layout).value, (rows, cols),
                    (shard_rows // tile_rows, shard_cols // tile_cols), tuple(layout.shard_grid))


def l1_use(arch: str, cbs: Mapping[Core, Sequence[CircularBuffer]], buffers: Sequence[L1Buffer]) -> L1Use:
    """Each core's L1 when the host allocates ``buffers`` in order and then creates ``cbs[core]``
    in order on each core."""
    facts = get_arch(arch)
    placed, bottom = [], facts.l1_total
    for buffer in buffers:
        size = buffer.bytes_per_core(arch)
        bottom -= size
        placed.append(PlacedBuffer(buffer, bottom, size, tuple(buffer.cores(arch))))
    cores = set(cbs) | {core for p in placed for core in p.cores}
    outside = sorted(core for core in cores if not (0 <= core[0] < facts.grid[0] and 0 <= core[1] < facts.grid[1]))
    if outside:
        raise ValueError(f"cores {outside} are outside the {facts.grid[0]}x{facts.grid[1]} worker grid of {arch}")
    out = []
    for core in sorted(cores, key=lambda c: (c[1], c[0])):
        top = facts.l1_unreserved_base
        for cb in cbs.get(core, ()):
            top = align(top, max(facts.l1_alignment, facts.dram_alignment)) + cb.size  # CBs at the DRAM alignment
        out.append(CoreL1(core, facts.l1_unreserved_base, top - facts.l1_unreserved_base, facts.l1_total - bottom,
                          facts.l1_total))
    return L1Use(arch, facts.l1_unreserved_base, facts.l1_total, tuple(placed), tuple(out))
