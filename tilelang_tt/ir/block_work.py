"""How much work each block of the ``T.Kernel`` grid does, where that differs between blocks: B1's
measure for balancing the cores (LayoutAwareWorkPartitionTT).

A block's work is one unit for its own statements plus, for every serial loop whose bounds depend on
the block coordinates (a causal attention's K/V loop ``T.ceildiv((bx + 1) * bm, bn)``), that loop's
trip count in the block; loops inside such a loop count with it. Bounds are evaluated per block
(named values such as ``loop_range = ...`` expanded), so the measure is exact for the trip counts and
assumes one iteration of every block-dependent loop costs the same as the block's own statements.
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.common import simplify, uses_var
from tilelang_tt.ir.slices import bound_values

# the block grid's row digits, least significant first: row = bz * By + by
ROW_DIGITS = ("blockIdx.y", "blockIdx.z")


def _dependent_loops(body, block_vars: list) -> list[tirx.PrimExpr]:
    """The extents of the outermost serial loops whose min or extent reads a block coordinate (named
    values expanded)."""
    values = bound_values(body)
    out = []

    def walk(node):
        if isinstance(node, tirx.SeqStmt):
            for s in node.seq:
                walk(s)
        elif isinstance(node, tirx.For) and node.thread_binding is None:
            lo, extent = (tirx.stmt_functor.substitute(e, values) for e in (node.min, node.extent))
            if _reads(lo, block_vars) or _reads(extent, block_vars):
                out.append(extent)
            else:
                walk(node.body)
        elif isinstance(node, tirx.IfThenElse):
            walk(node.then_case)
            if node.else_case is not None:
                walk(node.else_case)
        elif isinstance(node, tirx.SBlockRealize):
            walk(node.block.body)
        elif hasattr(node, "body"):  # the grid loops, attributes, allocations, named values
            walk(node.body)

    walk(body)
    return out


def _reads(expr, block_vars: list) -> bool:
    return any(uses_var(expr, v) for v in block_vars)


def block_work(func: tirx.PrimFunc, loops: dict, block_grid: tuple[int, int]) -> list[int] | None:
    """Work per block id (row * Bx + bx, row = bz * By + by), or None when every block does the same
    (no loop bound depends on a block coordinate) or a bound is not known when the kernel is compiled."""
    vars_by_tag = {tag: loop.loop_var for tag, loop in loops.items()}
    dependent = _dependent_loops(func.body, list(vars_by_tag.values()))
    if not dependent:
        return None
    by_total, bx_total = block_grid
    extents = {tag: int(loops[tag].extent) for tag in ROW_DIGITS if tag in loops}
    work = []
    for block in range(by_total * bx_total):
        row, bx = divmod(block, bx_total)
        coords = {"blockIdx.x": bx}
        for tag in ROW_DIGITS:
            if tag in extents:
                coords[tag] = row % extents[tag]
                row //= extents[tag]
        env = {vars_by_tag[tag]: tirx.IntImm(vars_by_tag[tag].dtype, value) for tag, value in coords.items()
               if tag in vars_by_tag}
        total = 1
        for extent in dependent:
            trips = simplify(tirx.stmt_functor.substitute(extent, env))
            if not isinstance(trips, tirx.IntImm):
                return None
            total += max(int(trips), 0)
        work.append(total)
    return work if len(set(work)) > 1 else None


def max_share(work: list[int], blocks_per_core: list[list[int]]) -> int:
    """The largest total work of one core, given the block ids each core walks."""
    return max(sum(work[b] for b in blocks) for blocks in blocks_per_core)
