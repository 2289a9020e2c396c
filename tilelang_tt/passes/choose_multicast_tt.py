"""B1b ChooseMulticastTT: which blocks read from tensors the cores of a row, a column or the grid share.

Reads: the work partition B1 chose (``tt.work_policy``, ``tt.work_partition``, ``tt.core_grid``,
``tt.core_ranges``, ``tt.block_grid``), ``tt.reduction``, the ``blockIdx.x/y/z`` loops of
``T.Kernel`` and the ``T.copy`` transfers from and to global tensors (which block coordinates their
slices, and the loops and branches around them, depend on; which statement first uses each block);
for ``multicast="auto"`` also ``tt.arch`` (the timing figures) and ``tt.layout_desc`` (a row-major
tensor's pages are rows).
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
``multicast="auto"`` multicasts the set of those CBs whose reader steps take the fewest cycles by the
arch's figures (:func:`multicast_choice`, :func:`step_cycles`: each core's own reads, the senders' reads,
handshakes and NOC transfers, against the DRAM's and its banks' floors), ``"on"`` every one, ``"off"``
none.

    Before: "tt.work_policy": {"policy": "block", ...}, "tt.core_grid": [8, 8]
            T.copy(A[by * 64, k * 32], A_s)   # the same for every bx: a core row shares it
    After:  "tt.multicast": {"A_s": {"axis": "x", "sender_semaphore": -1, "receiver_semaphore": -1,
                                     "groups": [{"cores": [[0, 0], [1, 0], ...], "near": [0, 0], "far": [7, 0]}, ...]}}
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import tilelang  # noqa: F401
import tvm
from tvm import tirx

from tilelang_tt.contract.arch import Arch
from tilelang_tt.contract.formula import Formula
from tilelang_tt.contract.vocabulary import Core, MulticastDesc, MulticastGroup, Policy
from tilelang_tt.ir.attrs import Attr, Reduction
from tilelang_tt.ir.common import (
    const_int,
    contains,
    error,
    prim_func_pass,
    tile_op_name,
    uses_var,
)
from tilelang_tt.ir.dataflow import ROW_TAGS
from tilelang_tt.ir.slices import (
    block_grid_loops,
    bound_values,
    is_row_major,
    matrix_extents,
    tensor_copies,
)

PASS = "ChooseMulticastTT"


@dataclass(frozen=True)
class _Context:
    """Where a T.copy runs: the expressions that decide how often (the bounds of the serial loops around
    it and the conditions of the branches around it, bound variables expanded), the trips of those loops,
    and the body of the innermost one (the reads of one body are one step of the reader)."""

    controls: list
    trips: int
    step: tirx.Stmt


def _contexts(body, values: dict) -> dict:
    """T.copy statement -> its :class:`_Context` (bound variables expanded with ``values``, from
    :func:`bound_values`)."""
    out = {}

    def walk(node, controls, trips, step):
        if isinstance(node, tirx.SeqStmt):
            for s in node.seq:
                walk(s, controls, trips, step)
        elif isinstance(node, tirx.For) and node.thread_binding is not None:
            walk(node.body, controls, trips, step)
        elif isinstance(node, tirx.For):
            bounds = [tirx.stmt_functor.substitute(e, values) for e in (node.min, node.extent)]
            walk(node.body, controls + bounds, trips * (const_int(node.extent) or 1), node.body)
        elif isinstance(node, tirx.IfThenElse):
            cond = [tirx.stmt_functor.substitute(node.condition, values)]
            walk(node.then_case, controls + cond, trips, step)
            if node.else_case is not None:
                walk(node.else_case, controls + cond, trips, step)
        elif isinstance(node, tirx.AttrStmt):
            walk(node.body, controls, trips, step)
        elif isinstance(node, tirx.SBlockRealize):
            walk(node.block.body, controls, trips, step)
        elif tile_op_name(node) == "copy":
            out[node] = _Context(controls, trips, step)

    walk(body, [], 1, body)
    return out


def _first_used(step, cbs: list[tirx.Buffer], copies: set) -> set[str]:
    """Names of the ``cbs`` that the first statement of ``step`` using any of them, past the copies
    from tensors (``copies``), uses: the blocks the compute needs first."""
    found: list[set[str]] = []

    def visit(node):
        if found or node in copies:
            return False
        if isinstance(node, (tirx.BufferStore, tirx.Evaluate)):
            used = {b.name for b in cbs if contains(node, lambda n, b=b: isinstance(n, (tirx.BufferLoad, tirx.BufferStore))
                                                    and n.buffer.same_as(b))}
            if used:
                found.append(used)
            return False
        return True

    tirx.stmt_functor.pre_order_visit(step, visit)
    return found[0] if found else {b.name for b in cbs}


def multicast_groups(axis: str, cores: list[Core]) -> tuple[MulticastGroup, ...]:
    """The groups of ``cores`` sharing a block multicast along ``axis``: the cores of a row (same
    y) for "x", of a column (same x) for "y", all of them for "xy"; ordered by their senders."""
    key = {"x": lambda c: c[1], "y": lambda c: c[0], "xy": lambda c: 0}[axis]
    members: dict[int, list[Core]] = {}
    for core in cores:
        members.setdefault(key(core), []).append(core)
    groups = (MulticastGroup.of(m) for m in members.values())
    return tuple(sorted(groups, key=lambda g: (g.sender[1], g.sender[0])))


@dataclass(frozen=True)
class BlockRead:
    """A block each core reads from a tensor (or writes to one), as :func:`multicast_choice` costs it: the
    CB, the bytes and pages moved (whole tiles, or rows of a row-major tensor), the times each core
    moves it (its blocks times the trips of the loops around the copy), its loop body (``step``: the
    reads of one body share one barrier), and whether the compute uses another CB of the step before
    it (``late``: rmsnorm's weights, used after the sum of squares of x)."""

    cb: str
    bytes: int
    pages: int
    times: int
    step: int
    late: bool
    readers: int  # cores reading it: every core without multicast
    senders: int  # cores reading it with multicast: one per group
    shared: bool  # the same pages for every core (a multicast candidate)
    axis: str  # its multicast's axis ("x", "y", "xy"; "" if not shared): one sender per group of the axis
    extent: int  # cores along the longer side of a group's rectangle (the multicast's reservation per hop)
    write: bool = False  # a block the writer stores to a tensor (its bytes count in the DRAM's floor only)


def step_cycles(arch: Arch, reads: list[BlockRead], multicast: set[str]) -> float:
    """Cycles of one step of a core's reader (the reads of one loop body), the CBs in ``multicast``
    multicast, from the arch's figures as the emulator's timing model charges them
    (docs/timing-model.md, runtime/timing.hpp):

    * the reads not multicast: their bytes at one core's DRAM rate (``dram_bytes_per_cycle``) after the
      read floor (``dram_read_latency_cycles``), under one barrier, before any of them is pushed;
    * a multicast CB, which its sender reads after pushing the others: the sender's read and barrier (the
      CBs multicast along one axis one after the other, those of another axis by other cores), the
      two NOC calls (``noc_issue_cycles``), the path reservation (``mcast_reserve_cycles`` and a router hop
      out and back per core along the rectangle's longer side, ``noc_hop_cycles``) and the data at
      the NOC rate (``noc_bytes_per_cycle``); the step repeats no faster than the round trip of the
      handshake (the data and the flag reach the receivers, whose next step's reads precede their ready
      increment back: twice ``noc_latency_cycles``). Both fall out of the step when the CB is ``late``:
      the compute works on the step's other CBs meanwhile (an assumption: that work is longer);
    * floors: the bytes every core reads and writes at the DRAM's rate (``dram_bytes_per_s``), and a shared
      block's pages, which every reader takes from the same banks, at one bank's share of it.
    """
    dram_rate = arch.dram_bytes_per_s / arch.clock_hz
    bank_rate = dram_rate / arch.num_dram_banks
    others = [r for r in reads if r.cb not in multicast and not r.write]
    sent = [r for r in reads if r.cb in multicast]
    first = (sum(r.bytes for r in others) / arch.dram_bytes_per_cycle + arch.dram_read_latency_cycles
             if others else 0.0)
    senders: dict[str, float] = {}  # per axis: the cores sending along it (one core sends each CB of the axis)
    reader = first
    for r in sent:
        if r.late:
            continue
        transfer = (2 * arch.noc_issue_cycles + arch.mcast_reserve_cycles + 2 * arch.noc_hop_cycles * r.extent
                    + r.bytes / arch.noc_bytes_per_cycle)
        senders[r.axis] = (senders.get(r.axis, 0.0) + r.bytes / arch.dram_bytes_per_cycle
                           + arch.dram_read_latency_cycles + transfer)
        reader = max(reader, first + transfer + 2 * arch.noc_latency_cycles)
    reader = max(reader, first + max(senders.values(), default=0.0))
    readers = {r.cb: r.senders if r.cb in multicast else r.readers for r in reads}
    dram = sum(readers[r.cb] * r.bytes for r in reads) / dram_rate
    # a group's cores read the same pages, other groups other pages (of other banks, as likely as not)
    bank = max((readers[r.cb] // r.senders * -(-r.pages // arch.num_dram_banks) * r.bytes / r.pages
                for r in reads if r.shared), default=0.0) / bank_rate
    return max(reader, dram, bank)


def multicast_choice(arch: Arch, reads: list[BlockRead]) -> set[str]:
    """The CBs to multicast: of every set of the ``shared`` reads' CBs, the one whose steps
    (:func:`step_cycles`, times how often each runs) take the fewest cycles; the fewer CBs on a tie."""
    cbs = sorted({r.cb for r in reads if r.shared})
    steps: dict[int, list[BlockRead]] = {}
    for r in reads:
        steps.setdefault(r.step, []).append(r)

    def cycles(chosen: set[str]) -> float:
        return sum(rs[0].times * step_cycles(arch, rs, chosen) for rs in steps.values())

    subsets = (set(c) for n in range(len(cbs) + 1) for c in itertools.combinations(cbs, n))
    return min(subsets, key=lambda chosen: (cycles(chosen), len(chosen)))


def _shared(func, grid, mode: str, cores: list[Core], blocks: int, whole_grid_only: bool) -> dict[str, MulticastDesc]:
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
    contexts = _contexts(func.body, values)
    axes: dict[str, str | None] = {}
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
        if axis is not None and any(uses_var(c, v) for c in contexts[stmt].controls for v in varying[axis] if v is not None):
            axis = None  # a loop bound or branch that differs between the cores: they would not keep step
        name = dst.buffer.name
        axes[name] = axis if axes.get(name, axis) == axis else None  # every read of the CB must agree
    shared = sorted(name for name, axis in axes.items() if axis is not None)
    if mode == "on" and not shared:
        what = ("every slice depends on a block coordinate" if whole_grid_only
                else "every slice depends on both bx and by")
        raise error(PASS, func, None, "multicast='on' but no block read from a tensor is the same for a row or "
                    f"column of cores ({what})", "use multicast='auto' or 'off'")
    descs = {name: MulticastDesc(name, axes[name], -1, -1, multicast_groups(axes[name], cores)) for name in shared}
    if mode == "auto":
        chosen = multicast_choice(Attr.ARCH.read(func), _block_reads(func, contexts, descs, len(cores), blocks))
        descs = {name: d for name, d in descs.items() if name in chosen}
    return descs


def _block_reads(func, contexts: dict, descs: dict[str, MulticastDesc], cores: int, blocks: int) -> list[BlockRead]:
    """Every block read from or written to a tensor, as :func:`step_cycles` costs it (``contexts``: from
    :func:`_contexts`), each core walking ``blocks`` blocks; the CBs of ``descs`` read by one core of each
    of their groups when multicast."""
    copies = tensor_copies(func)
    by_step: dict = {}
    for stmt, _, dst, reading in copies:
        cbs = by_step.setdefault(contexts[stmt].step, [])
        if reading:
            cbs.append(dst.buffer)
    first = {step: _first_used(step, cbs, {c[0] for c in copies}) for step, cbs in by_step.items()}
    numbers = {step: n for n, step in enumerate(by_step)}
    reads = []
    for stmt, src, dst, reading in copies:
        trips, step = contexts[stmt].trips, contexts[stmt].step
        rows, cols = (const_int(e) or 1 for e in matrix_extents(dst))
        size = tvm.DataType(src.buffer.dtype).bits // 8
        if is_row_major(func, src.buffer):
            pages, nbytes = rows, rows * cols * size
        else:
            pages = -(-rows // 32) * -(-cols // 32)
            nbytes = pages * 32 * 32 * size
        name = dst.buffer.name
        desc = descs.get(name) if reading else None
        senders = len(desc.groups) if desc else cores
        group = desc.groups[0] if desc else None
        extent = max(group.far[0] - group.near[0], group.far[1] - group.near[1]) + 1 if group else 0
        reads.append(BlockRead(name, nbytes, pages, blocks * trips, numbers[step], name not in first[step],
                               cores, senders, desc is not None, desc.axis if desc else "", extent, not reading))
    return reads


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
    shared = (_shared(func, grid, mode, cores, items[0].count, whole_grid_only=not lockstep)
              if (lockstep or equal_shares) and mode != "off" else {})
    return Attr.MULTICAST.write(func, shared)


def ChooseMulticastTT(multicast: str = "auto"):
    return prim_func_pass(lambda f, m, c: _transform(f, m, c, multicast), PASS)
