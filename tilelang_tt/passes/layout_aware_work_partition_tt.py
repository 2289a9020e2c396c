"""B1 LayoutAwareWorkPartitionTT: choose the core grid and split the block grid over it.

Reads: the ``blockIdx.x/y/z`` extents of ``T.Kernel`` (Bx blocks along N, By along M, Bz
batches: the block grid has Bz * By rows, row = bz * By + by), ``tt.arch``, ``tt.layout_desc``,
``tt.reduction``, the ``T.copy`` into the output buffer (block shape) and the ``T.copy`` transfers
of global tensors (their slices).
Writes: ``tt.block_grid`` [Bz * By, Bx], ``tt.grid_tiles`` [Mt, Nt], ``tt.block_tiles`` [bmt, bnt],
``tt.core_grid`` [gx, gy], ``tt.core_ranges``, ``tt.partition_mode``, ``tt.work_policy`` and
``tt.work_partition`` (per active core ``{core, start_id, count, width, shard}``, a WorkItem;
block id = row * Bx + bx). ChooseMulticastTT then decides which blocks the cores share.
Errors (checked by :mod:`tilelang_tt.ir.slice_checks`): a global slice that is not one
rectangle of its tensor's matrix view (leading dimensions folded into rows; rows of one leading
dimension for a row-major tensor), or whose batch index may pass the tensor's extent; a row of a
tensor's tiles copied into a vector used per row (a column into one used per column); several
blocks writing overlapping regions of an output (a split-K sum written with T.copy: the last
block would win; a grid index read as ``bh // H`` and ``bh % H`` counts as its two digits);
blocks summing into a tensor (T.atomic_add) under a partition where they cannot take turns in
block order (another policy than contiguous, local_shard, a block grid known at run time only).

Partition mode: ``local_shard`` when the output tensor is sharded (or asked for): every core
computes the blocks of the output shard it holds (blocks must tile the shard); else ``global``
with a policy:
- ``contiguous``: core i (row-major over the grid) gets ``count_i`` consecutive blocks, the first
  ``total % cores`` cores one more;
- ``row_major``: round-robin in row-major order, core i gets blocks i, i + P, i + 2P, ...;
- ``zigzag``: round-robin, every other round reversed (blocks whose work grows with their id);
- ``block``: the block grid is cut into a gy x gx grid of rectangles (balanced), core (x, y) gets
  rectangle (y, x), walked row by row: ``start_id``, ``count`` blocks in rows of ``width``.
``auto`` picks ``block`` when the core grid divides the block grid evenly and its rectangles keep
as many cores busy as contiguous shares would (not for a 1 x 64 grid on 8x8 cores), else
``contiguous``; ``zigzag`` instead where blocks differ in work and that gives the busiest core less.
Only cores with work are active. Before/after: TIR unchanged.

    After: "tt.core_grid": [8, 8], "tt.work_policy": {"policy": "block", ...},
           "tt.work_partition": [{"core": [0, 0], "start_id": 0, "count": 1, "width": 1, "shard": [0, 0]}, ...]
"""

from __future__ import annotations

import math

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.attrs import Attr, PartitionMode, Reduction
from tilelang_tt.contract.buffers import LayoutDesc
from tilelang_tt.contract.formula import Formula, minimum
from tilelang_tt.contract.plan import CoreRange
from tilelang_tt.contract.vocabulary import Policy, WorkItem, WorkPolicy
from tilelang_tt.layout import shard_of_core
from tilelang_tt.ir.common import TILE, Region, as_region, error, formula_of, is_global_buffer, prim_func_pass
from tilelang_tt.ir.dataflow import ROW_TAGS
from tilelang_tt.ir.block_work import block_work, max_share
from tilelang_tt.ir.slice_checks import check_disjoint_writes, check_reads_after_writes, check_slices
from tilelang_tt.ir.slices import block_grid_loops, matrix_slice, row_slice, tensor_copies

PASS = "LayoutAwareWorkPartitionTT"


def partition(total: int | Formula, grid: tuple[int, int]) -> list[WorkItem]:
    """Contiguous split of ``total`` blocks over a row-major ``grid`` (x, y); idle cores dropped
    (every core of the grid when ``total`` is known at run time only)."""
    ncores = grid[0] * grid[1] if isinstance(total, Formula) else min(total, grid[0] * grid[1])
    return [WorkItem((i % grid[0], i // grid[0]), start, count) for i, (start, count) in enumerate(_split(total, ncores))]


def round_robin(total: int, grid: tuple[int, int]) -> list[WorkItem]:
    """Block b to core b % P (row-major over ``grid``), P = min(total, cores)."""
    ncores = min(total, grid[0] * grid[1])
    return [WorkItem((i % grid[0], i // grid[0]), i, -(-(total - i) // ncores)) for i in range(ncores)]


def zigzag(total: int, grid: tuple[int, int]) -> list[WorkItem]:
    """Rounds of P = min(total, cores) blocks, every other one dealt in reverse: core i gets blocks
    i, 2P - 1 - i, 2P + i, ... (the ids below ``total``: a core's ids increase, so they are its first
    ``count``). Blocks whose work grows with their id (a causal attention's query blocks) pair a
    light one with a heavy one."""
    ncores = min(total, grid[0] * grid[1])
    policy = WorkPolicy(Policy.ZIGZAG, stride=ncores)
    items = []
    for i in range(ncores):
        count = sum(1 for n in range(-(-total // ncores)) if policy.block_id(n, i, 0, 1) < total)
        items.append(WorkItem((i % grid[0], i // grid[0]), i, count))
    return items


def _split(n: int | Formula, parts: int) -> list[tuple[int | Formula, int | Formula]]:
    """Balanced (start, size) of ``n`` items over ``parts`` (the first ``n % parts`` one larger): part
    i starts at ``i * (n // parts) + min(i, n % parts)`` and holds ``(n + parts - 1 - i) // parts``;
    a formula of the dynamic dimensions when ``n`` is (the host computes it)."""
    return [(i * (n // parts) + minimum(i, n % parts), (n + parts - 1 - i) // parts) for i in range(parts)]


def rectangles(block_grid: tuple[int, int], grid: tuple[int, int]) -> list[WorkItem]:
    """``block``: core (x, y) gets rectangle (y, x) of a balanced gy x gx cut of the By x Bx grid."""
    by_total, bx_total = block_grid
    items = []
    for y, (r0, h) in enumerate(_split(by_total, grid[1])):
        for x, (c0, w) in enumerate(_split(bx_total, grid[0])):
            if h and w:
                items.append(WorkItem((x, y), r0 * bx_total + c0, h * w, w))
    return items


def _runs(values: list[int]) -> list[tuple[int, int]]:
    """(first, last) of each run of consecutive integers in sorted ``values``."""
    runs: list[tuple[int, int]] = []
    for v in values:
        if runs and v == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], v)
        else:
            runs.append((v, v))
    return runs


def core_ranges(items: list[WorkItem]) -> list[list[list[int]]]:
    """Rectangles covering exactly the active cores: runs along x per row, merged across
    consecutive rows that hold the same run."""
    xs_of: dict[int, list[int]] = {}
    for item in items:
        xs_of.setdefault(item.core[1], []).append(item.core[0])
    rows_of: dict[tuple[int, int], list[int]] = {}
    for y in sorted(xs_of):
        for run in _runs(sorted(xs_of[y])):
            rows_of.setdefault(run, []).append(y)
    ranges = [[[x0, y0], [x1, y1]] for (x0, x1), ys in rows_of.items() for y0, y1 in _runs(ys)]
    return sorted(ranges, key=lambda r: (r[0][1], r[0][0]))


def _local_shard(func, layout: LayoutDesc, block_grid, block_tiles) -> tuple[list[WorkItem], WorkPolicy, tuple]:
    by_total, bx_total = block_grid
    shard_tiles = (layout.shard_shape[0] // TILE, layout.shard_shape[1] // TILE)
    if shard_tiles[0] % block_tiles[0] or shard_tiles[1] % block_tiles[1]:
        raise error(PASS, func, None,
                    f"blocks of {block_tiles[0] * TILE}x{block_tiles[1] * TILE} do not tile the "
                    f"{layout.shard_shape[0]}x{layout.shard_shape[1]} shards of the output `{layout.buffer}`",
                    "choose block sizes (bm, bn) that divide the shard shape, or partition_mode='global'")
    sby, sbx = shard_tiles[0] // block_tiles[0], shard_tiles[1] // block_tiles[1]
    items = []
    for core, shards in sorted(shard_of_core(layout.tile_grid, shard_tiles, layout.shard_grid).items(),
                               key=lambda kv: (kv[0][1], kv[0][0])):
        (si, sj), = shards  # InferTTLayout admits one shard per core
        r0, c0 = si * sby, sj * sbx
        h, w = min(sby, by_total - r0), min(sbx, bx_total - c0)
        if h > 0 and w > 0:
            items.append(WorkItem(core, r0 * bx_total + c0, h * w, w, (si, sj)))
    return items, WorkPolicy(Policy.LOCAL_SHARD, shard_blocks=(sby, sbx)), layout.shard_grid


def _balanced(func, loops, block_grid, grid, chosen: tuple[list[WorkItem], WorkPolicy, tuple]):
    """``auto`` where blocks differ in work (a loop bound depends on the block coordinates, see
    :mod:`block_work`): the chosen partition, or ``zigzag`` on the same grid when that gives the
    busiest core less work."""
    work = block_work(func, loops, block_grid)
    if work is None:
        return chosen
    items, policy, grid = chosen
    total = len(work)
    alternative = zigzag(total, grid)
    alt_policy = WorkPolicy(Policy.ZIGZAG, stride=len(alternative))

    def busiest(items, policy):
        return max_share(work, [[row * block_grid[1] + bx for row, bx in policy.blocks(item, block_grid)]
                                for item in items])

    if busiest(alternative, alt_policy) < busiest(items, policy):
        return alternative, alt_policy, grid
    return chosen


def _global(func, arch, loops, block_grid, grid, policy_name: str) -> tuple[list[WorkItem], WorkPolicy, tuple]:
    by_total, bx_total = block_grid
    total = by_total * bx_total
    if isinstance(total, Formula):  # a block grid known at run time: contiguous shares of it
        if policy_name not in ("auto", Policy.CONTIGUOUS.value):
            raise error(PASS, func, None, f"partition={policy_name!r} needs the block grid when the kernel is "
                        f"compiled; this kernel's is {by_total} x {bx_total} blocks (dynamic sizes)",
                        "use partition='contiguous' (or 'auto') for kernels with dynamic sizes")
        return partition(total, grid or arch.grid), WorkPolicy(Policy.CONTIGUOUS), grid or arch.grid
    natural = (min(arch.grid[0], bx_total), min(arch.grid[1], by_total))
    if policy_name == "auto":
        candidate = grid or natural
        even = bx_total % candidate[0] == 0 and by_total % candidate[1] == 0
        # rectangles only where they keep as many cores busy as contiguous shares: a block grid of
        # fewer rows than the core grid (one query-block row of one head) fills the grid contiguously
        busy = min(total, math.prod(grid or arch.grid))
        policy_name = Policy.BLOCK.value if even and candidate[0] * candidate[1] >= busy else Policy.CONTIGUOUS.value
        return _balanced(func, loops, block_grid, grid, _global(func, arch, loops, block_grid, grid, policy_name))
    policy = Policy(policy_name)
    if policy == Policy.BLOCK:
        grid = grid or natural
        return rectangles(block_grid, grid), WorkPolicy(policy), grid
    if grid is None:
        gx = min(arch.grid[0], total)
        grid = (gx, min(arch.grid[1], -(-total // gx)))
    if policy in (Policy.ROW_MAJOR, Policy.ZIGZAG):
        items = (round_robin if policy == Policy.ROW_MAJOR else zigzag)(total, grid)
        return items, WorkPolicy(policy, stride=len(items)), grid
    return partition(total, grid), WorkPolicy(policy), grid


def _check_summing(func, add, reduction: Reduction, total, policy: str, mode: str) -> None:
    """Blocks summing into a tensor take turns in block-id order: each core walks a contiguous run
    of ids and signals the core of the next id, which must be known when the kernel is compiled.
    Errors point at ``add``, the write of the first T.atomic_add."""
    axes = ", ".join(f"`{a.name}`" for a in reduction.axes)
    names = ", ".join(f"`{b.name}`" for b in reduction.buffers)
    what = f"the blocks along {axes} sum into {names} with T.atomic_add"
    if isinstance(total, Formula):
        raise error(PASS, func, add, f"{what}, and the number of blocks {total} depends on a dynamic size: the "
                    "cores that take turns are chosen when the kernel is compiled",
                    "give the grid dimensions constant extents, or compile the kernel per size")
    if policy not in ("auto", Policy.CONTIGUOUS.value):
        raise error(PASS, func, add, f"{what}; they take turns in block order, which needs each core to hold "
                    f"consecutive blocks (partition='contiguous'), not partition={policy!r}",
                    "use partition='contiguous' (or 'auto')")
    if mode == PartitionMode.LOCAL_SHARD.value:
        raise error(PASS, func, add, f"{what}; partition_mode='local_shard' gives each core the blocks of its own "
                    "shard, which would not take turns", "use partition_mode='global' (or 'auto')")


def _run_time_slice(func: tirx.PrimFunc):
    """The error at the first T.copy between a block and a tensor slice whose extent is known only at run
    time (``T.copy(cu_seqlens[:n - 1], s)``), which no block of a size known when compiling holds; None
    when there is none."""
    found: list = []

    def visit(node):
        if found or not (isinstance(node, tirx.Evaluate) and isinstance(node.value, tirx.Call)
                         and str(getattr(node.value.op, "name", "")).endswith(".copy")):
            return
        for arg in node.value.args[:2]:
            if isinstance(arg, tirx.Call) and getattr(arg.op, "name", "") == "tl.region" and as_region(arg) is None \
                    and is_global_buffer(arg.args[0].buffer):
                found.append((node, arg))

    tirx.stmt_functor.post_order_visit(func.body, visit)
    if not found:
        return None
    node, region = found[0]
    load = region.args[0]
    extents = [e for e in region.args[2:] if not isinstance(e, tirx.IntImm)]
    other = next((as_region(a) for a in node.value.args[:2] if a is not region and as_region(a) is not None), None)
    block = f" and the block `{other.buffer.name}` {list(other.extents)}" if other is not None else ""
    return error(PASS, func, node, f"T.copy between the slice of `{load.buffer.name}` starting at "
                 f"{list(load.indices)}, whose extent {extents[0]} is known only at run time{block}: a copy "
                 "moves a block of a size known when compiling",
                 f"read slices of the block's size (T.copy({load.buffer.name}[s:s + 32], blk) for a block of 32: "
                 "the elements past the tensor's end read as zeros) and select the elements past the run-time "
                 "length away in the T.Parallel nest that uses them (T.if_then_else(i < n, blk[i], 0)); write "
                 "blocks into a tensor of a size known when compiling")


def _no_copy_out(func: tirx.PrimFunc):
    """The error of a kernel without a T.copy into a global buffer, at the statement writing one some other way
    (a tile op such as T.atomic_max, an element store the front passes left), else at the def line."""
    found: list = []

    def visit(node):
        if isinstance(node, tirx.BufferStore) and is_global_buffer(node.buffer):
            found.append((node, f"the store into `{node.buffer.name}`"))
        elif isinstance(node, tirx.Evaluate) and isinstance(node.value, tirx.Call) and \
                not str(node.value.op.name).endswith(".copy"):
            # a tensor the call writes: a block's region (T.atomic_max(C[...], block): its second operand) or an
            # element's pointer (T.atomic_max(C[i, j], v) in a T.Parallel nest: T.access_ptr(C[i, j], ...))
            operands = [a.args[0] if isinstance(a, tirx.Call) and a.args and isinstance(a.args[0], tirx.BufferLoad)
                        and not isinstance(as_region(a), Region) else a for a in node.value.args[:2]]
            written = [r.buffer for r in map(as_region, operands) if r is not None and is_global_buffer(r.buffer)]
            if written:
                op = str(node.value.op.name).rsplit(".", 1)[-1].removesuffix("_elem_op")  # tl.tileop.atomicmax
                op = op.replace("atomic", "atomic_") if op.startswith("atomic") and "_" not in op else op
                found.append((node, f"`T.{op}` into `{written[0].name}`"))

    tirx.stmt_functor.post_order_visit(func.body, visit)
    hint = "copy the result block to the output tensor: T.copy(C_local, C[by * bm, bx * bn])"
    if not found:
        return error(PASS, func, None, "the kernel writes no global buffer with T.copy", hint)
    node, what = found[0]
    if "atomic" in what:  # only T.atomic_add combines blocks (LowerAtomicAddTT); a block's own region is a copy
        hint = ("when each block writes its own region, T.copy the block there (a max with the tensor's old values: "
                "T.copy the region in, T.max in a T.Parallel nest, T.copy it back); blocks combining into one region "
                "are supported for sums only, with T.atomic_add")
    return error(PASS, func, node, f"the kernel writes no global buffer with T.copy: {what} is not a block copy",
                 hint)


def _transform(func: tirx.PrimFunc, mod, ctx, grid, policy: str, mode: str) -> tirx.PrimFunc:
    arch = Attr.ARCH.read(func)
    loops = block_grid_loops(func)
    bx = formula_of(loops["blockIdx.x"].extent) if "blockIdx.x" in loops else 1
    by = math.prod(formula_of(loops[tag].extent) for tag in ROW_TAGS if tag in loops)

    sized = _run_time_slice(func)
    if sized is not None:
        raise sized
    transfers = tensor_copies(func)
    check_slices(PASS, func, transfers)
    reduction = Attr.REDUCTION.read(func)
    check_disjoint_writes(PASS, func, loops, transfers, reduction)
    check_reads_after_writes(PASS, func, transfers, reduction)
    summing = reduction is not None and reduction.blocks > 1
    if summing:
        adds = [stmt for stmt, tensor, _, reading in transfers if not reading and reduction.summed(tensor.buffer)]
        _check_summing(func, adds[0] if adds else None, reduction, by * bx, policy, mode)
        policy = Policy.CONTIGUOUS.value
        mode = PartitionMode.GLOBAL.value  # 'auto' too: the blocks of a sharded output's shard would not take turns
    # The output block: the region of the first T.copy from an on-chip buffer to a global one.
    writes = [tensor for _, tensor, _, reading in transfers if not reading]
    if not writes:
        raise _no_copy_out(func)
    out_region = writes[0]
    layout = Attr.LAYOUT_DESC.read(func)[out_region.buffer.name]
    mt, nt = layout.tile_grid
    out_view = row_slice(out_region) if layout.row_major else matrix_slice(out_region, layout.column, layout.flat)
    bm, bn = out_view.rows, out_view.cols
    block_tiles = (-(-bm // TILE), -(-bn // TILE))  # a block of part of a tile is padded (PadBlocksTT)

    sharded_out = layout.shard_grid is not None
    if mode == "auto":
        mode = PartitionMode.LOCAL_SHARD.value if sharded_out else PartitionMode.GLOBAL.value
    if mode == PartitionMode.LOCAL_SHARD.value:
        if not sharded_out:
            raise error(PASS, func, None, f"partition_mode='local_shard' needs a sharded output, but "
                        f"`{layout.buffer}` is {layout.layout.value} in {layout.memory.value}",
                        f"give `{layout.buffer}` a sharded layout (layouts={{'{layout.buffer}': BufferLayout(...)}}) "
                        "or use partition_mode='global'")
        if (bm % TILE and bm != 1) or (bn % TILE and bn != 1):
            raise error(PASS, func, None, f"partition_mode='local_shard' with the output block {bm}x{bn}, which is "
                        "not made of 32x32 tiles: a core computes the blocks of whole tiles of its shard",
                        "use block sizes that are multiples of 32, or partition_mode='global'")
        if grid is not None and tuple(grid) != layout.shard_grid:
            raise error(PASS, func, None, f"grid={tuple(grid)} differs from the shard grid {layout.shard_grid} "
                        f"of the output `{layout.buffer}` under partition_mode='local_shard'",
                        "leave grid unset: local_shard runs on the cores holding the output shards")
        items, work_policy, grid = _local_shard(func, layout, (by, bx), block_tiles)
    else:
        items, work_policy, grid = _global(func, arch, loops, (by, bx), grid, policy)

    ranges = core_ranges(items)
    func = Attr.BLOCK_GRID.write(func, (by, bx))
    func = Attr.GRID_TILES.write(func, (mt, nt))
    func = Attr.BLOCK_TILES.write(func, block_tiles)
    func = Attr.CORE_GRID.write(func, tuple(grid))
    func = Attr.CORE_RANGES.write(func, tuple(CoreRange(tuple(start), tuple(end)) for start, end in ranges))
    func = Attr.PARTITION_MODE.write(func, PartitionMode(mode))
    func = Attr.WORK_POLICY.write(func, work_policy)
    return Attr.WORK_PARTITION.write(func, items)


def LayoutAwareWorkPartitionTT(grid: tuple[int, int] | None = None, partition: str = "auto",
                               partition_mode: str = "auto"):
    return prim_func_pass(lambda f, m, c: _transform(f, m, c, grid, partition, partition_mode), PASS)
