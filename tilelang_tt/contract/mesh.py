"""A program for a mesh of chips: how SplitMeshTT cuts the block grid into one panel per device
(:class:`MeshSplit`, the ``tt.mesh`` attribute), how each tensor is distributed over the devices
(:class:`MeshTensor`), the sum across the devices of a tensor their blocks add into
(:class:`MeshCollective`) and the plan's ``mesh`` (:class:`PlanMesh`: the split and each device's
panel and work, :class:`MeshDevice`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tilelang_tt.contract.buffers import PlanBuffer
from tilelang_tt.contract.kernels import ComputeConfig, DataMovementConfig, PlanKernel
from tilelang_tt.contract.reading import (
    PlanError,
    read_int,
    read_ints,
    read_list,
    read_object,
    read_pair,
    read_str,
)
from tilelang_tt.contract.vocabulary import Core, WorkItem, WorkPolicy

DISTRIBUTIONS = ("sharded", "replicated", "partial")
MESH_AXES = ("blockIdx.z", "blockIdx.y", "blockIdx.x")  # the block-grid dimensions a mesh may split
# The mesh_axis of a kernel no dimension of which is split: every device runs the whole grid on its own copy of
# every tensor (tt-metal's MeshWorkload over the whole mesh with replicated MeshBuffers; ttnn's
# ReplicateTensorToMesh), as a tensor-parallel layer runs its norms on every chip's copy of the residual stream.
REPLICATE = "replicate"
COLLECTIVES = ("all_reduce", "reduce_scatter")  # what the devices' partial sums become (MeshCollective)
# The semaphores of a combine (one of each on every combine core of every device), counting the tiles
# that arrived: partial sums from the previous and the next chip of the line, totals from either side, and
# the owner's totals written (the forward core telling the backward core, which relays them backward).
# Global semaphores (tt-metal's CreateGlobalSemaphore), each 0 from before any combine program runs.
COLLECTIVE_SEMAPHORES = ("partial_from_prev", "partial_from_next", "total_from_prev", "total_from_next",
                         "total_written")
# The directions a combine core sends in along the line (CombineCore.directions).
COMBINE_DIRECTIONS = ("forward", "backward")


@dataclass(frozen=True)
class MeshTensor:
    """How a tensor is distributed over a mesh's devices: ``sharded`` along dimension ``dim`` (each
    device holds its ``shape[dim] / devices`` consecutive rows there, in device order, as ttnn's
    ``ShardTensorToMesh(dim)``), ``replicated`` (``dim`` -1: every device holds all of it), or
    ``partial`` (``dim`` -1: every device holds a whole partial sum; the host writes the tensor's
    value to device 0 and zeros to the others, and the mesh's :class:`MeshCollective` sums them).
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


def fabric_config(shape: Core) -> str:
    """The tt-fabric config a sum across a ``shape`` mesh asks for (tt::tt_fabric::FabricConfig,
    ttnn.FabricConfig): a 1-D fabric, on a 2-D mesh too, since every packet of the combine goes one hop,
    to a neighbour on the collective's line (fabric.hpp, append_fabric_connection_rt_args: under 1-D the
    sender and receiver chips must be adjacent)."""
    return "FABRIC_1D"


def line_of(shape: Core) -> tuple[Core, ...]:
    """The chips of a (rows, cols) mesh as a line whose every step is a link between neighbours:
    row 0 left to right, row 1 right to left, and so on (a snake through the mesh)."""
    rows, cols = shape
    return tuple((r, c if r % 2 == 0 else cols - 1 - c) for r in range(rows) for c in range(cols))


@dataclass(frozen=True)
class CombineCore:
    """A core of the combine program (the same on every device) and the ``directions`` it sends in
    (:data:`COMBINE_DIRECTIONS`): ``forward`` sums the tiles flowing towards the line's end and those its chip
    owns (it holds the fabric connection to the next chip), ``backward`` the tiles flowing towards the line's
    start (the connection to the previous chip)."""

    core: Core
    directions: tuple[str, ...]

    def to_json(self) -> dict:
        return {"core": list(self.core), "directions": list(self.directions)}

    @staticmethod
    def from_json(d: object, where: str) -> CombineCore:
        d = read_object(d, where, ("core", "directions"))
        directions = tuple(read_str(x, f"{where}.directions[{i}]", COMBINE_DIRECTIONS)
                           for i, x in enumerate(read_list(d["directions"], f"{where}.directions")))
        return CombineCore(read_pair(d["core"], f"{where}.core"), directions)


# One core per direction: a fabric router's sender channel takes one worker at a time (tt-metal 0.81.1
# tt_metal/fabric/impl/kernels/edm_fabric/fabric_erisc_router.cpp, "Connecting Workers to Channels"), and the
# emulated mesh has one link between neighbours (an n300's one link for user kernels), so a chip has one
# connection each way: ttnn's line reduce-scatter likewise gives each direction of each link its own worker
# (reduce_scatter_minimal_async line program: "2 senders (reader + core + writer) per direction per link").
COMBINE_CORES = (CombineCore((0, 0), ("forward",)), CombineCore((1, 0), ("backward",)))


@dataclass(frozen=True)
class MeshCollective:
    """The sum across the devices of ``buffer``, which every device's blocks added into
    (``T.atomic_add`` along the grid dimension the mesh splits): after each device has summed its own
    blocks (its partial, the ``partial`` distribution), a combine program adds the partials over the
    fabric along ``line`` (:func:`line_of`; each step a link): panel ``p`` of the buffer's tiles (tile
    ``t`` is in panel ``t * devices // tiles``) flows from both ends of the line to the chip at line
    position ``owners[p]``, each chip adding its partial to what came from the previous chip (the
    previous chip's sum first), the owner adding the next chip's sum last: a fixed order, the same bits
    whatever the arrival order and whichever core adds. ``all_reduce`` then sends each panel's total from
    its owner along the line to every chip (each holds the whole sum; owner of panel ``p`` line position
    ``p``); ``reduce_scatter`` leaves panel ``p`` on device ``p`` (row-major; its rows of the buffer).
    ``cores`` (:class:`CombineCore`) run the combine on every device, each direction on exactly one of them
    (:data:`COMBINE_CORES`; one core may take both). ``semaphores`` (:data:`COLLECTIVE_SEMAPHORES`) are
    global semaphores on the ``cores`` (``main.cpp`` creates them with ``CreateGlobalSemaphore`` before the
    combine programs: one L1 word at the same address on every core of every device, 0 before a
    neighbour's first increment can arrive), recorded in the plan as ``{"name", "kind": "global",
    "initial_value": 0}``."""

    kind: str
    buffer: str
    line: tuple[Core, ...]
    owners: tuple[int, ...]
    semaphores: tuple[str, ...] = COLLECTIVE_SEMAPHORES
    cores: tuple[CombineCore, ...] = COMBINE_CORES

    @property
    def links(self) -> tuple[tuple[Core, Core], ...]:
        """The links the combine uses: each pair of consecutive chips of the line."""
        return tuple(zip(self.line, self.line[1:], strict=False))

    @property
    def row(self) -> int:
        """How many chips of the line run straight at a time (a row of the mesh: :func:`line_of` turns at each
        row's end), the farthest a 1-D multicast goes along it."""
        turns = [i for i in range(1, len(self.line) - 1)
                 if self.line[i - 1][0] != self.line[i + 1][0] and self.line[i - 1][1] != self.line[i + 1][1]]
        return len(self.line) if not turns else turns[0] + 1

    def core_of(self, direction: str) -> CombineCore:
        """The combine core sending in ``direction``."""
        return next(c for c in self.cores if direction in c.directions)

    @staticmethod
    def of(kind: str, buffer: str, shape: Core, cores: tuple[CombineCore, ...] = COMBINE_CORES) -> MeshCollective:
        line = line_of(shape)
        devices = len(line)
        owners = (tuple(range(devices)) if kind == "all_reduce"
                  else tuple(line.index((p // shape[1], p % shape[1])) for p in range(devices)))
        return MeshCollective(kind, buffer, line, owners, cores=cores)

    def to_json(self) -> dict:
        return {"kind": self.kind, "buffer": self.buffer, "line": [list(c) for c in self.line],
                "links": [[list(a), list(b)] for a, b in self.links], "owners": list(self.owners),
                "semaphores": [{"name": name, "kind": "global", "initial_value": 0} for name in self.semaphores],
                "cores": [c.to_json() for c in self.cores]}

    @staticmethod
    def from_json(d: object, shape: Core, buffers: Sequence[str]) -> MeshCollective:
        d = read_object(d, "mesh.collective", ("kind", "buffer", "line", "links", "owners", "semaphores", "cores"))
        kind = read_str(d["kind"], "mesh.collective.kind", COLLECTIVES)
        buffer = read_str(d["buffer"], "mesh.collective.buffer", list(buffers))
        cores = tuple(CombineCore.from_json(c, f"mesh.collective.cores[{i}]")
                      for i, c in enumerate(read_list(d["cores"], "mesh.collective.cores")))
        directions = sorted(x for c in cores for x in c.directions)
        if directions != sorted(COMBINE_DIRECTIONS) or len({c.core for c in cores}) != len(cores):
            raise PlanError(f"mesh.collective.cores: distinct cores sending each of {list(COMBINE_DIRECTIONS)} "
                            f"once, got {[c.to_json() for c in cores]}")
        expected = MeshCollective.of(kind, buffer, shape, cores)
        got = {"line": [list(c) for c in read_list(d["line"], "mesh.collective.line")],
               "links": d["links"], "owners": d["owners"], "semaphores": d["semaphores"]}
        for key, value in expected.to_json().items():
            if key in got and got[key] != value:
                raise PlanError(f"mesh.collective.{key}: a {kind} over the {shape[0]}x{shape[1]} mesh has "
                                f"{value}, got {got[key]!r}")
        return expected


# The combine program's CBs on each combine core: (index, name, pages); the sources are
# tilelang_tt.codegen.collective's. A tile's operands (the previous chip's sum, this chip's partial, the next
# chip's sum) each have their own CB of 2 * COMBINE_GROUP pages, which the reader fills ahead of compute; the
# writer reads the totals it sends on COMBINE_GROUP at a time (per barrier) into the stage CB.
COMBINE_GROUP = 4
COMBINE_INPUT_CBS = ((0, "combine_prev", 2 * COMBINE_GROUP), (1, "combine_own", 2 * COMBINE_GROUP),
                     (2, "combine_next", 2 * COMBINE_GROUP))
COMBINE_CBS = (*COMBINE_INPUT_CBS, (16, "combine_out", 2), (17, "combine_stage", COMBINE_GROUP))


def combine_kernels(collective: MeshCollective, buffer: PlanBuffer, accessor_args: Sequence[int]) -> tuple[PlanKernel, ...]:
    """The combine program's kernels (their compile-time arguments as main.cpp sets them; the runtime
    arguments are the device's and core's, tilelang_tt.codegen.collective says which): ``buffer`` is the
    summed tensor, ``accessor_args`` its TensorAccessorArgs (the receive buffer, DRAM-interleaved with the
    same pages, has the same)."""
    tiles, devices, page = buffer.num_pages, len(collective.line), buffer.page_size
    inputs = tuple(index for index, _, _ in COMBINE_INPUT_CBS)
    (cb_out, _, _), (cb_stage, _, _) = COMBINE_CBS[len(inputs):]
    fp32 = buffer.format.element_bytes == 4
    accessors = (*accessor_args, *accessor_args)
    return (
        PlanKernel("reader", "combine_reader.cpp", (tiles, devices, page, COMBINE_GROUP, *inputs, *accessors), (),
                   DataMovementConfig.of("reader")),
        PlanKernel("compute", "combine_compute.cpp", (tiles, devices, *inputs, cb_out), (),
                   ComputeConfig("HiFi4", True, False, tuple(name for _, name, _ in COMBINE_INPUT_CBS) if fp32 else ())),
        PlanKernel("writer", "combine_writer.cpp",
                   (tiles, devices, page, COMBINE_GROUP, collective.row, cb_out, cb_stage,
                    int(collective.kind == "all_reduce"), *accessors), (),
                   DataMovementConfig.of("writer")),
    )


@dataclass(frozen=True)
class MeshSplit:
    """``tt.mesh`` (SplitMeshTT): the block grid's ``blocks`` rows (``axis`` a row dimension,
    ``blockIdx.z``/``blockIdx.y``) or columns (``blockIdx.x``) are cut into contiguous panels along
    the grid dimension ``axis``, one per device of the ``shape`` (rows, cols) mesh, row-major;
    ``tensors`` say how each parameter is distributed; ``collective`` sums a tensor whose blocks
    add into it along ``axis`` across the devices (None: no block sums across devices). ``axis``
    :data:`REPLICATE`: nothing is cut, every device runs all ``blocks`` rows on its own copy of every
    tensor (all ``replicated``)."""

    shape: Core
    axis: str
    blocks: int
    tensors: tuple[MeshTensor, ...]
    collective: MeshCollective | None = None

    @property
    def devices(self) -> int:
        return self.shape[0] * self.shape[1]

    def to_attr(self) -> dict:
        d = {"shape": list(self.shape), "axis": self.axis, "blocks": self.blocks,
             "tensors": [t.to_json() for t in self.tensors]}
        if self.collective is not None:  # the rest follows from the shape (MeshCollective.of)
            d["collective"] = {"kind": self.collective.kind, "buffer": self.collective.buffer}
        return d

    @staticmethod
    def from_attr(d: Mapping) -> MeshSplit:
        shape = tuple(int(x) for x in d["shape"])
        tensors = tuple(MeshTensor(t["buffer"], t["distribution"], int(t["dim"]), tuple(int(x) for x in t["shape"]))
                        for t in d["tensors"])
        collective = (MeshCollective.of(str(d["collective"]["kind"]), str(d["collective"]["buffer"]), shape)
                      if "collective" in d else None)
        return MeshSplit(shape, str(d["axis"]), int(d["blocks"]), tensors, collective)


def split_columns(axis: str) -> bool:
    """Whether a mesh split along grid dimension ``axis`` cuts the block grid's columns (else its rows, or
    nothing: :data:`REPLICATE`)."""
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
    collective: MeshCollective | None = None

    def to_json(self, local_shard: bool) -> dict:
        d = {"shape": list(self.shape), "axis": self.axis, "blocks": self.blocks,
             "devices": [d.to_json(local_shard) for d in self.devices],
             "tensors": [t.to_json() for t in self.tensors]}
        if self.collective is not None:
            d["collective"] = self.collective.to_json()
        return d

    def tensor(self, buffer: str) -> MeshTensor:
        return next(t for t in self.tensors if t.buffer == buffer)

    @staticmethod
    def of(split: MeshSplit, block_grid: Core, work: Sequence[WorkItem]) -> PlanMesh:
        """The mesh of ``split``: device ``i`` (row-major) computes the ``i``-th panel of
        ``block_grid``'s rows (or columns) of each device's program, over its cores' ``work``
        (the same partition on every device); replicated, every device all of the rows."""
        per = block_grid[1 if split_columns(split.axis) else 0]
        devices = tuple(MeshDevice((i // split.shape[1], i % split.shape[1]), _panel(split.axis, i, per), tuple(work))
                        for i in range(split.devices))
        return PlanMesh(split.shape, split.axis, split.blocks, devices, split.tensors, split.collective)

    @property
    def columns(self) -> bool:
        return split_columns(self.axis)

    @property
    def replicated(self) -> bool:
        """Whether every device runs the whole grid on its own copy of every tensor (:data:`REPLICATE`)."""
        return self.axis == REPLICATE

    @staticmethod
    def from_json(d: object, buffers: Sequence[PlanBuffer], block_grid: Core) -> PlanMesh:
        d = read_object(d, "mesh", ("shape", "axis", "blocks", "devices", "tensors"), ("collective",))
        shape = read_pair(d["shape"], "mesh.shape", low=1)
        axis = read_str(d["axis"], "mesh.axis", (*MESH_AXES, REPLICATE))
        count = shape[0] * shape[1]
        per = block_grid[1] if split_columns(axis) else block_grid[0]
        what = "block columns" if split_columns(axis) else "block rows"
        blocks = read_int(d["blocks"], "mesh.blocks", low=1)
        if axis == REPLICATE and blocks != per:
            raise PlanError(f"mesh.blocks {blocks} is not the {per} {what} every device of a replicated mesh runs")
        if axis != REPLICATE and blocks != count * per:
            raise PlanError(f"mesh.blocks {blocks} is not the {count} devices' {per} {what} each")
        devices = []
        for i, x in enumerate(read_list(d["devices"], "mesh.devices")):
            where = f"mesh.devices[{i}]"
            x = read_object(x, where, ("coord", "panel", "work_partition"))
            coord, panel = read_pair(x["coord"], f"{where}.coord"), read_pair(x["panel"], f"{where}.panel")
            if coord != (i // shape[1], i % shape[1]) or panel != _panel(axis, i, per):
                raise PlanError(f"{where}: device {i} of the {shape[0]}x{shape[1]} mesh is at "
                                f"{[i // shape[1], i % shape[1]]} with the panel {list(_panel(axis, i, per))} of {what}, "
                                f"got {list(coord)} and {list(panel)}")
            work = tuple(WorkItem.from_json(w, f"{where}.work_partition[{j}]", ())
                         for j, w in enumerate(read_list(x["work_partition"], f"{where}.work_partition")))
            devices.append(MeshDevice(coord, panel, work))
        if len(devices) != count:
            raise PlanError(f"mesh.devices: {len(devices)} devices for a {shape[0]}x{shape[1]} mesh")
        tensors = []
        for i, (t, buf) in enumerate(zip(read_list(d["tensors"], "mesh.tensors"), buffers, strict=False)):
            where = f"mesh.tensors[{i}]"
            t = read_object(t, where, ("buffer", "distribution", "dim", "shape"))
            name = read_str(t["buffer"], f"{where}.buffer", [buf.name])
            kind = read_str(t["distribution"], f"{where}.distribution", DISTRIBUTIONS)
            if kind != "sharded" and t["dim"] != -1:
                raise PlanError(f"{where}: a {kind} tensor has dim -1, got {t['dim']!r}")
            dim = -1 if kind != "sharded" else read_int(t["dim"], f"{where}.dim", high=len(buf.shape) - 1)
            whole = read_ints(t["shape"], f"{where}.shape", len(buf.shape), low=1)
            local = list(whole)
            if kind == "sharded":
                local[dim] = whole[dim] // count
            if tuple(local) != tuple(buf.shape) or (kind == "sharded" and whole[dim] % count):
                raise PlanError(f"{where}: a {kind} {list(whole)} tensor on {count} devices is not the buffer "
                                f"{name!r} of shape {list(buf.shape)} on each")
            if axis == REPLICATE and kind != "replicated":
                raise PlanError(f"{where}: every tensor of a replicated mesh is replicated, got {kind}")
            tensors.append(MeshTensor(name, kind, dim, whole))
        if len(tensors) != len(buffers):
            raise PlanError(f"mesh.tensors: {len(tensors)} entries for {len(buffers)} buffers")
        collective = (MeshCollective.from_json(d["collective"], shape, [t.buffer for t in tensors])
                      if "collective" in d else None)
        partial = [t.buffer for t in tensors if t.distribution == "partial"]
        if partial != ([] if collective is None else [collective.buffer]):
            raise PlanError(f"mesh: the partial tensors {partial} are not the one the collective sums "
                            f"({None if collective is None else collective.buffer!r})")
        return PlanMesh(shape, axis, blocks, tuple(devices), tuple(tensors), collective)


def _panel(axis: str, device: int, per: int) -> tuple[int, int]:
    """(first, count) of the block rows or columns device ``device`` computes, ``per`` of them each:
    its own panel, or all of them when the mesh replicates (:data:`REPLICATE`)."""
    return (0, per) if axis == REPLICATE else (device * per, per)
