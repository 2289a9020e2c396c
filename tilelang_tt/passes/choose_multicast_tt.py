"""B1b ChooseMulticastTT: which blocks read from tensors the cores of a row, a column or the grid share.

Reads: the work partition B1 chose (``tt.work_policy``, ``tt.work_partition``, ``tt.core_grid``,
``tt.core_ranges``, ``tt.block_grid``), ``tt.reduction``, the ``blockIdx.x/y/z`` loops of
``T.Kernel`` and the ``T.copy`` transfers from global tensors (which block coordinates their slices,
and the loops and branches around them, depend on).
Writes: ``tt.multicast``: per multicast CB a MulticastDesc (axis and its groups of cores, each with
its sender and NOC rectangle in logical core coordinates; the two semaphores -1 until
AllocateSemaphoresTT numbers them). Errors: ``multicast="on"`` where nothing can be shared (cores
out of step, a block grid known only at run time, blocks that sum into a tensor, no block read the
same by a row or column of cores). Before/after: TIR unchanged.

Cores keep step when each walks a rectangle of the block grid of the same shape (the ``block``
partition with the core grid dividing the block grid): at every step the cores of a core row share
the block row (``by``, ``bz``) and those of a core column share ``bx``. A read whose slice does not
depend on ``bx`` is the same block for a whole core row: its CB is multicast along x (the row's
first core reads it and multicasts it to the others); one depending on neither ``by`` nor ``bz``
along y; one depending on neither to the whole grid ("xy"). A read inside a loop whose bounds (or a
branch whose condition) depend on a coordinate that differs within the group — a causal K loop up
to the query block — is not multicast: the cores would not keep step. Any other partition giving
every core the same number of blocks, on a full rectangle of cores, also keeps them in step, but a
core row no longer shares a block row: there only reads that depend on no block coordinate (an
attention's K and V for a one-head block grid) are multicast, to all the cores ("xy").
``multicast="auto"`` multicasts a CB where that is cheaper per block by the arch's figures
(:func:`multicast_pays`: the multicast's fixed costs against the DRAM reads it spares), ``"on"``
wherever it can, ``"off"`` never.

    Before: "tt.work_policy": {"policy": "block", ...}, "tt.core_grid": [8, 8]
            T.copy(A[by * 64, k * 32], A_s)   # the same for every bx: a core row shares it
    After:  "tt.multicast": {"A_s": {"axis": "x", "sender_semaphore": -1, "receiver_semaphore": -1,
                                     "groups": [{"cores": [[0, 0], [1, 0], ...], "near": [0, 0], "far": [7, 0]}, ...]}}
"""

from __future__ import annotations

import tilelang  # noqa: F401
import tvm
from tvm import tirx

from tilelang_tt.contract.arch import Arch
from tilelang_tt.contract.formula import Formula
from tilelang_tt.contract.vocabulary import Core, MulticastDesc, MulticastGroup, Policy
from tilelang_tt.ir.attrs import Attr, Reduction
from tilelang_tt.ir.common import error, prim_func_pass, tile_op_name, uses_var
from tilelang_tt.ir.dataflow import ROW_TAGS
from tilelang_tt.ir.slices import block_grid_loops, bound_values, tensor_copies

PASS = "ChooseMulticastTT"


def _controls(body, values: dict) -> dict:
    """T.copy statement -> the expressions that decide how often it runs: the bounds of the serial
    loops around it and the conditions of the branches around it (bound variables expanded with
    ``values``, from :func:`bound_values`)."""
    out = {}

    def walk(node, controls):
        if isinstance(node, tirx.SeqStmt):
            for s in node.seq:
                walk(s, controls)
        elif isinstance(node, tirx.For):
            bounds = [] if node.thread_binding is not None else [node.min, node.extent]
            walk(node.body, controls + [tirx.stmt_functor.substitute(e, values) for e in bounds])
        elif isinstance(node, tirx.IfThenElse):
            cond = [tirx.stmt_functor.substitute(node.condition, values)]
            walk(node.then_case, controls + cond)
            if node.else_case is not None:
                walk(node.else_case, controls + cond)
        elif isinstance(node, tirx.AttrStmt):
            walk(node.body, controls)
        elif isinstance(node, tirx.SBlockRealize):
            walk(node.block.body, controls)
        elif tile_op_name(node) == "copy":
            out[node] = controls

    walk(body, [])
    return out


def multicast_groups(axis: str, cores: list[Core]) -> tuple[MulticastGroup, ...]:
    """The groups of ``cores`` sharing a block multicast along ``axis``: the cores of a row (same
    y) for "x", of a column (same x) for "y", all of them for "xy"; ordered by their senders."""
    key = {"x": lambda c: c[1], "y": lambda c: c[0], "xy": lambda c: 0}[axis]
    members: dict[int, list[Core]] = {}
    for core in cores:
        members.setdefault(key(core), []).append(core)
    groups = (MulticastGroup.of(m) for m in members.values())
    return tuple(sorted(groups, key=lambda g: (g.sender[1], g.sender[0])))


def multicast_pays(arch: Arch, block_bytes: int, cores: int, group: int) -> bool:
    """Whether multicasting a block of ``block_bytes`` to each group of ``group`` of the ``cores`` cores that
    read it at every step takes fewer cycles per block than every core reading it from DRAM, as the
    emulator's timing model charges them (runtime/timing.hpp's table, from these :class:`Arch` fields;
    the CBs are double-buffered, so a block's latencies overlap the previous block and what counts is
    each step's occupancy):

    * every core reading: its DRAM read at the per-core rate (``dram_bytes_per_cycle``, NL's one-core
      2 KB reads), or all ``cores`` cores' reads at the DRAM's aggregate rate (``dram_bytes_per_s``,
      TR/Saturating_DRAM_bandwidth), whichever is longer;
    * multicasting: the senders' reads alike (one core of each group), against the sender's part of
      each block: the handshake (the receivers' ready increments reach it a ``noc_latency_cycles`` after
      they leave; it waits for them before it sends), the path reservation (``mcast_reserve_cycles``,
      NL's multicast spacing), the data at the NOC rate (``noc_bytes_per_cycle``) and its two NOC calls
      (the data's multicast and the ready flag's, ``noc_issue_cycles`` each). Left out: the reservation's
      per-hop part (2 x 9 cycles per core of the rectangle's extent, the emulator's kNocHop in
      runtime/timing.hpp, which no Arch field holds).

    So a small grid (the 2-8 cores of a mesh chip's panel) reads from DRAM on every core, where the DRAM
    keeps up with them; a grid whose reads saturate the DRAM multicasts. On Wormhole a 4 KB block (64 x 32
    bfloat16) pays on more than 41 cores reading it at each step, a 2 KB tile on no grid of its 64 (the emulator agrees:
    a 512^3 GEMM of 64 x 64 x 32 blocks on 64 cores takes 21.1 us multicast, 34.9 us not; 256 x 256 x 512
    of 32 x 32 x 32 blocks on 64 cores 18.1 and 17.4 us; 256 x 128 x 256 of 64 x 64 x 32 on 8 cores 10.2
    and 7.0 us)."""
    dram_rate = arch.dram_bytes_per_s / arch.clock_hz
    own = block_bytes / arch.dram_bytes_per_cycle
    unshared = max(own, cores * block_bytes / dram_rate)
    sender = (arch.noc_latency_cycles + arch.mcast_reserve_cycles + 2 * arch.noc_issue_cycles
              + block_bytes / arch.noc_bytes_per_cycle)
    shared = max(own, cores / group * block_bytes / dram_rate, sender)
    return shared < unshared


def _shared(func, grid, mode: str, cores: list[Core], whole_grid_only: bool) -> dict[str, MulticastDesc]:
    """CBs whose block is the same for a whole core row ("x"), column ("y") or the grid ("xy"),
    read the same number of times by every core of the group (lockstep), with their groups of
    ``cores``. ``whole_grid_only``: the cores walk equal numbers of blocks but not rectangles of the
    block grid (a core row does not share a block row), so only blocks that depend on no block
    coordinate are shared, by all ``cores``."""
    loops = block_grid_loops(func)
    # the block coordinates that take more than one value (a grid of one head has by = 0 throughout)
    varies = {tag: loops[tag].loop_var for tag in ("blockIdx.x", *ROW_TAGS)
              if tag in loops and not (isinstance(loops[tag].extent, tirx.IntImm) and loops[tag].extent.value == 1)}
    row_vars = [varies[tag] for tag in ROW_TAGS if tag in varies]
    bx_var = varies.get("blockIdx.x")
    # the block coordinates that differ between the cores of a group
    varying = {"x": [bx_var] if bx_var is not None else [], "y": row_vars, "xy": row_vars + [bx_var]}
    values = bound_values(func.body)  # row = by * bm; T.copy(A[row, k * bk], A_s) depends on by
    controls = _controls(func.body, values)
    axes: dict[str, str | None] = {}
    blocks: dict[str, tirx.Buffer] = {}
    for stmt, src, dst, reading in tensor_copies(func):
        if not reading:
            continue
        starts = [tirx.stmt_functor.substitute(s, values) for s in src.starts]
        on_by = any(uses_var(s, v) for s in starts for v in row_vars)
        on_bx = bx_var is not None and any(uses_var(s, bx_var) for s in starts)
        # the cores sharing the block: those with the same by (a core row), bx (a column), or all
        rows, cols = grid[0] > 1, grid[1] > 1  # groups along x / along y hold more than one core
        if whole_grid_only:
            axis = "xy" if not (on_by or on_bx) else None
        elif on_by and on_bx:
            axis = None
        elif on_by:
            axis = "x" if rows else None
        elif on_bx:
            axis = "y" if cols else None
        else:
            axis = "xy" if rows and cols else "x" if rows else "y" if cols else None
        if axis is not None and any(uses_var(c, v) for c in controls[stmt] for v in varying[axis] if v is not None):
            axis = None  # a loop bound or branch that differs between the cores: they would not keep step
        name = dst.buffer.name
        axes[name] = axis if axes.get(name, axis) == axis else None  # every read of the CB must agree
        blocks[name] = dst.buffer
    shared = sorted(name for name, axis in axes.items() if axis is not None)
    if mode == "on" and not shared:
        what = ("every slice depends on a block coordinate" if whole_grid_only
                else "every slice depends on both bx and by")
        raise error(PASS, func, None, "multicast='on' but no block read from a tensor is the same for a row or "
                    f"column of cores ({what})", "use multicast='auto' or 'off'")
    descs = {name: MulticastDesc(name, axes[name], -1, -1, multicast_groups(axes[name], cores)) for name in shared}
    if mode == "auto":
        arch = Attr.ARCH.read(func)
        descs = {name: d for name, d in descs.items()
                 if multicast_pays(arch, _bytes(blocks[name]), len(cores), len(d.groups[0].cores))}
    return descs


def _bytes(block: tirx.Buffer) -> int:
    """The bytes of an on-chip block as its CB holds it (its elements in its dtype)."""
    count = 1
    for extent in block.shape:
        count *= int(extent)
    return count * tvm.DataType(block.dtype).bits // 8


def _check_summing(func, reduction: Reduction) -> None:
    """Blocks summing into a tensor take turns over consecutive blocks: no cores in lockstep to
    share a block. The error points at the write of the first T.atomic_add."""
    adds = [stmt for stmt, tensor, _, reading in tensor_copies(func) if not reading and reduction.summed(tensor.buffer)]
    axes = ", ".join(f"`{a.name}`" for a in reduction.axes)
    names = ", ".join(f"`{b.name}`" for b in reduction.buffers)
    raise error(PASS, func, adds[0] if adds else None,
                f"the blocks along {axes} sum into {names} with T.atomic_add; multicast needs cores in lockstep "
                "over a partition='block' grid, and the blocks that sum take turns over consecutive blocks",
                "use multicast='auto' or 'off'")


def _transform(func: tirx.PrimFunc, mod, ctx, mode: str) -> tirx.PrimFunc:
    reduction = Attr.REDUCTION.read(func)
    summing = reduction is not None and reduction.blocks > 1
    if mode == "on" and summing:
        _check_summing(func, reduction)
    by, bx = Attr.BLOCK_GRID.read(func)
    grid = tuple(Attr.CORE_GRID.read(func))
    policy = Attr.WORK_POLICY.read(func).policy
    items = Attr.WORK_PARTITION.read(func)
    cores = [w.core for w in items]
    # Cores in step: each walks a rectangle of the block grid the same shape (the block partition,
    # evenly) -- a core row shares its block rows -- or at least the same number of blocks, whose
    # shared reads are then only those of no block coordinate, to every core (a one-row block grid
    # spread over the whole core grid; the cores must fill their rectangle, which the multicast covers).
    lockstep = policy == Policy.BLOCK and bx % grid[0] == 0 and by % grid[1] == 0
    equal_shares = (not summing and policy != Policy.LOCAL_SHARD and len(cores) > 1
                    and not isinstance(by * bx, Formula) and len({w.count for w in items}) == 1
                    and len(Attr.CORE_RANGES.read(func)) == 1)
    if mode == "on" and isinstance(by * bx, Formula):
        raise error(PASS, func, None, "multicast='on' needs a block grid known when the kernel is compiled; "
                    f"this kernel's is {by} x {bx} blocks (dynamic sizes)", "use multicast='auto' or 'off'")
    if mode == "on" and not (lockstep or equal_shares):
        raise error(PASS, func, None,
                    "multicast='on' needs the cores in step: the block partition with a core grid dividing the "
                    f"{by}x{bx} block grid, or an equal number of blocks per core on a full rectangle of cores "
                    f"(got policy {policy.value}, grid {grid}, "
                    f"{len(cores)} cores with {sorted({w.count for w in items})} blocks)",
                    "use partition='block' with a grid whose x divides Bx and y divides By, a grid whose core "
                    "count divides the number of blocks, or multicast='auto'")
    shared = (_shared(func, grid, mode, cores, whole_grid_only=not lockstep)
              if (lockstep or equal_shares) and mode != "off" else {})
    return Attr.MULTICAST.write(func, shared)


def ChooseMulticastTT(multicast: str = "auto"):
    return prim_func_pass(lambda f, m, c: _transform(f, m, c, multicast), PASS)
