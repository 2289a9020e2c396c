"""The regions of a global tensor each block of a launch touches, statement by statement: which
blocks run a statement (the branches around it, decided on the block coordinates) and the box of
elements it reads, writes or sums into there (the analyzer's bounds of its indices over the loops
around it, the block coordinates fixed). What LowerAtomicAddTT asks to tell whether the blocks'
plain stores and reads of a tensor keep clear of the regions other blocks sum into.

A box is per dimension an inclusive (low, high) of element indices, inside the tensor; an index the
analyzer cannot bound (a value read from memory, an on-chip counter) spans the whole dimension.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import tilelang  # noqa: F401
from tvm import ir, tirx

from tilelang_tt.ir.common import as_region, const_int
from tilelang_tt.ir.slices import block_grid_loops, bound_analyzer, bound_values

Box = tuple[tuple[int, int], ...]
GRID_ORDER = ("blockIdx.x", "blockIdx.y", "blockIdx.z")  # T.Kernel(nx, ny, nz)'s order
UNBOUNDED = 1 << 40  # the last index of a dimension of dynamic extent


@dataclass(frozen=True)
class Access:
    """One statement's access to the tensor: the statement, its kind (``"sum"`` for a T.atomic_add,
    ``"other"`` for a load, a store or a copy), the branch conditions around it, and the region's
    start indices and extents."""

    stmt: tirx.Stmt
    kind: str
    conditions: tuple[tirx.PrimExpr, ...]
    starts: tuple[tirx.PrimExpr, ...]
    extents: tuple[int, ...]


def tensor_accesses(body: tirx.Stmt, tensor: tirx.Buffer, is_sum: Callable[[tirx.Stmt], tirx.BufferLoad | None],
                    sum_extents: Callable[[tirx.Stmt], tuple[int, ...]]) -> list[Access]:
    """Every access of ``tensor`` in ``body``, each leaf statement (a store or an evaluated call)
    with the branch conditions around it; ``is_sum(stmt)`` gives the destination element of a sum
    statement, ``sum_extents`` its extents."""
    out: list[Access] = []

    def leaf(stmt, conditions):
        dst = is_sum(stmt)
        if dst is not None:
            if dst.buffer.same_as(tensor):
                out.append(Access(stmt, "sum", conditions, tuple(dst.indices), sum_extents(stmt)))
            return
        regions = []  # the slices of the tensor the statement's tile ops name, by their first element
        tirx.stmt_functor.post_order_visit(stmt, lambda n: regions.append(n) if isinstance(n, tirx.Call) and isinstance(
            n.op, ir.Op) and n.op.name == "tl.region" and n.args[0].buffer.same_as(tensor) else None)
        for call in regions:
            region = as_region(call)
            out.append(Access(stmt, "other", conditions, tuple(region.starts), tuple(region.extents)))

        def visit(node):
            if isinstance(node, (tirx.BufferLoad, tirx.BufferStore)) and node.buffer.same_as(tensor) and \
                    not any(node.same_as(call.args[0]) for call in regions):
                out.append(Access(stmt, "other", conditions, tuple(node.indices), (1,) * len(node.indices)))

        tirx.stmt_functor.post_order_visit(stmt, visit)

    def walk(stmt, conditions):
        if isinstance(stmt, (tirx.Evaluate, tirx.BufferStore)):
            leaf(stmt, conditions)
        elif isinstance(stmt, tirx.IfThenElse):
            walk(stmt.then_case, (*conditions, stmt.condition))
            if stmt.else_case is not None:
                walk(stmt.else_case, (*conditions, tirx.Not(stmt.condition)))
        elif isinstance(stmt, tirx.SeqStmt):
            for s in stmt.seq:
                walk(s, conditions)
        elif isinstance(stmt, tirx.SBlockRealize):
            walk(stmt.block, conditions)
        elif isinstance(stmt, tirx.SBlock):
            walk(stmt.body, conditions)
        elif hasattr(stmt, "body"):  # loops, attributes, allocations: their body
            walk(stmt.body, conditions)
        else:  # a named value (Bind) may read the tensor
            leaf(stmt, conditions)

    walk(body, ())
    return out


def grid(func: tirx.PrimFunc) -> list[tuple[tirx.Var, int]] | None:
    """(block coordinate, extent) of each T.Kernel dimension, outermost first (the T.Kernel's order);
    None when an extent is dynamic."""
    loops = sorted(block_grid_loops(func).values(), key=lambda loop: GRID_ORDER.index(str(loop.thread_binding.thread_tag)))
    out = []
    for loop in loops:
        extent = const_int(loop.extent)
        if extent is None:
            return None
        out.append((loop.loop_var, extent))
    return out


@dataclass(frozen=True)
class BlockAccess:
    """An access one block makes: the block's coordinates (in :func:`grid`'s order), the access, the
    box of elements it touches there."""

    block: tuple[int, ...]
    names: tuple[str, ...]
    access: Access
    box: Box

    @property
    def label(self) -> str:
        """``bx 0, by 1``."""
        return ", ".join(f"{name} {v}" for name, v in zip(self.names, self.block))


def block_boxes(func: tirx.PrimFunc, tensor: tirx.Buffer, accesses: list[Access], limit: int
                ) -> list[BlockAccess] | None:
    """Every access each block makes (those whose branches it provably does not take left out);
    None when the grid is dynamic or has more than ``limit`` blocks (too many to go through one by
    one)."""
    coords = grid(func)
    if coords is None or math.prod(e for _, e in coords) > limit:
        return None
    values = bound_values(func.body)
    analyzer = bound_analyzer(func.body)
    shape = [const_int(d) for d in tensor.shape]
    prepared = [(a, [tirx.stmt_functor.substitute(c, values) for c in a.conditions],
                 [tirx.stmt_functor.substitute(s, values) for s in a.starts]) for a in accesses]
    out = []
    for block in itertools.product(*(range(e) for _, e in coords)):
        fixed = {var: tirx.IntImm(var.dtype, v) for (var, _), v in zip(coords, block)}
        for access, conditions, starts in prepared:
            if any(analyzer.can_prove(tirx.Not(tirx.stmt_functor.substitute(c, fixed))) for c in conditions):
                continue  # this block does not take the branch
            box = []
            for start, extent, dim in zip(starts, access.extents, shape):
                bound = analyzer.const_int_bound(analyzer.simplify(tirx.stmt_functor.substitute(start, fixed)))
                last = UNBOUNDED if dim is None else dim - 1  # elements past the tensor's ends are none of its
                box.append((max(int(bound.min_value), 0), min(int(bound.max_value) + int(extent) - 1, last)))
            out.append(BlockAccess(block, tuple(var.name for var, _ in coords), access, tuple(box)))
    return out


def overlap(a: Box, b: Box) -> bool:
    return all(lo_a <= hi_b and lo_b <= hi_a for (lo_a, hi_a), (lo_b, hi_b) in zip(a, b))
