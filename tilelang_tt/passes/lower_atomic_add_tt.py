"""LowerAtomicAddTT (before LegalizeGlobalAccessTT): ``T.atomic_add`` becomes a read-modify-write,
and the blocks that add into one region of a global tensor are ordered into a chain.

Tenstorrent DRAM has no atomic adds. A block's ``T.atomic_add(C[..], part)`` becomes a read of
the slice, an add and a write back (element stores ``C[..] = C[..] + part[..]`` in a ``T.Parallel``
nest, which LegalizeGlobalAccessTT turns into the copies the pipeline moves); blocks that add into
the same region then take turns.

``T.atomic_max`` / ``T.atomic_min`` become the same read-modify-write with a max or a min where each
region of the tensor has one block (the destination depends on every grid coordinate of more than one
block: a GPU kernel's element-wise extrema into outputs of its own), which is what the user's
``C[..] = T.max(C[..], v)`` compiles to. Where blocks combine into one region they stay as they are, and
the partition (LayoutAwareWorkPartitionTT) or the mesh (SplitMeshTT) refuses them at the statement: the
blocks' turns and the mesh's combine are made for sums.

The grid coordinates an atomic add's destination does not depend on (a split-K ``bz``, the attention
backward's key block) are the *summing axes*: their loops are
re-tagged as the innermost grid dimensions (``blockIdx.x`` first), so the ``S`` blocks adding into
one region have consecutive block ids ``g * S .. g * S + S - 1``. LayoutAwareWorkPartitionTT gives
each core a contiguous run of block ids and OrderReductionTT makes block ``b`` read the tensor only
after block ``b - 1`` wrote its sum (a semaphore): the sum is made in block order, the same bytes on
every run, the gemms of the blocks still in parallel. An add into an on-chip buffer is a plain add.

Reads: the ``T.atomic_add`` / ``T.atomic_addx2`` / ``T.atomic_addx4`` / ``T.atomic_max`` / ``T.atomic_min`` calls
(``tl.atomic_add_elem_op``, ``tl.tileop.atomicadd``, ``tl.atomic_addx2_elem_op``... and the ``max`` / ``min`` twins),
the grid loops. ``T.atomic_addx2(C[i, c], A[i, a])`` adds two consecutive elements: a serial loop of two element
adds (FuseInnerLoopsTT makes a T.Parallel loop around it and it one loop).
Writes: ``tt.reduction`` (a :class:`tilelang_tt.ir.attrs.Reduction`: the summed tensors, the summing
axes and ``S``) when a global tensor is summed into; the grid loops' tags when there are summing axes.
A summed tensor may also be read and written where no block sums into it (Stream-K: a tile
computed whole is stored, a tile split over blocks summed into): every block's regions of the
plain accesses are apart from every block's sums (``ir.block_regions``, block by block).
Errors: a summed tensor that the kernel also reads or writes where some block may sum into it (its
value mid-sum is undefined); an add inside a loop into the same region at every iteration; summing axes whose
extent depends on a dynamic size; a destination slice of more than two dimensions above 1.

    Before: for bx, by, bz in T.Kernel(4, 4, 2): ...
                T.atomic_add(C[by * 64, bx * 64], part)
    After:  (bz bound to blockIdx.x, bx to blockIdx.y, by to blockIdx.z)
            for i, j in T.Parallel(64, 64):
                C[by * 64 + i, bx * 64 + j] = C[by * 64 + i, bx * 64 + j] + part[i, j]
            "tt.reduction": {"buffers": [C], "axes": [bz], "blocks": 2, "semaphore": -1}
    Before: for bx, by in T.Kernel(2, 2): for i, j in T.Parallel(32, 32):
                T.atomic_max(C[bx * 32 + i, by * 32 + j], A[bx * 32 + i, by * 32 + j])
    After:  C[bx * 32 + i, by * 32 + j] = T.max(C[bx * 32 + i, by * 32 + j], A[bx * 32 + i, by * 32 + j])
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import tilelang  # noqa: F401
from tvm import ir, tirx

from tilelang_tt.ir.attrs import Attr, Reduction
from tilelang_tt.ir.common import (
    as_region,
    const_int,
    contains,
    error,
    is_global_buffer,
    keep_span,
    loads,
    prim_func_pass,
    uses_var,
)
from tilelang_tt.ir.block_regions import block_boxes, grid, overlap, tensor_accesses
from tilelang_tt.ir.slices import block_grid_loops, bound_values

PASS = "LowerAtomicAddTT"


def _add(old, v):
    return old + v


class _Op(NamedTuple):
    """An atomic of TileLang: the user's name, whether it is the element form, how the destination's value and the
    operand combine, and how many consecutive elements (along the last dimension) it combines."""

    name: str
    element: bool
    combine: Callable
    width: int = 1

    @property
    def sums(self) -> bool:
        return self.combine is _add


OPS = {
    "tl.atomic_add_elem_op": _Op("T.atomic_add", True, _add),
    "tl.tileop.atomicadd": _Op("T.atomic_add", False, _add),
    # T.atomic_addx2 / T.atomic_addx4 (dst, src): the 2 or 4 elements from each pointer on, added pairwise
    "tl.atomic_addx2_elem_op": _Op("T.atomic_addx2", True, _add, 2),
    "tl.atomic_addx4_elem_op": _Op("T.atomic_addx4", True, _add, 4),
    "tl.atomic_max_elem_op": _Op("T.atomic_max", True, tirx.Max),
    "tl.tileop.atomicmax": _Op("T.atomic_max", False, tirx.Max),
    "tl.atomic_min_elem_op": _Op("T.atomic_min", True, tirx.Min),
    "tl.tileop.atomicmin": _Op("T.atomic_min", False, tirx.Min),
}
GRID_TAGS = ("blockIdx.z", "blockIdx.y", "blockIdx.x")  # outermost first: block id = (z * Ny + y) * Nx + x
BLOCK_LIMIT = 1024  # blocks whose regions the summed-tensor check goes through one by one
HINT_SPLIT = ("keep the partial result in a fragment and T.atomic_add it once, or give each block its own slice "
              "(index the output with the split coordinate) and sum the slices in a second kernel")


def _atomic(stmt) -> str | None:
    """The TileLang op of an atomic statement this pass lowers (a key of ``OPS``), else None."""
    if isinstance(stmt, tirx.Evaluate) and isinstance(stmt.value, tirx.Call) and isinstance(stmt.value.op, ir.Op) \
            and stmt.value.op.name in OPS:
        return stmt.value.op.name
    return None


def _name(stmt) -> str:
    return OPS[_atomic(stmt)].name


def _sums(stmt) -> bool:
    return OPS[_atomic(stmt)].sums


def _is_element(stmt) -> bool:
    return OPS[_atomic(stmt)].element


def _element(func, ptr, stmt) -> tirx.BufferLoad:
    """The element ``T.access_ptr(C[idx])`` (or ``C[idx]``) points at."""
    dst = ptr.args[0] if isinstance(ptr, tirx.Call) and ptr.args and isinstance(ptr.args[0], tirx.BufferLoad) else ptr
    if not isinstance(dst, tirx.BufferLoad):
        raise error(PASS, func, stmt, f"{_name(stmt)} into something that is not an element of a buffer",
                    "combine into an element C[i, j] or a slice C[i0, j0] of a buffer")
    return dst


def _element_add(func, stmt) -> tirx.Stmt:
    """``atomic_add_elem_op(access_ptr(C[idx]), v)`` -> ``C[idx] = C[idx] + v`` (a max or min for theirs);
    ``atomic_addx2_elem_op(access_ptr(C[.., c]), access_ptr(A[.., a]))`` -> ``for t in T.serial(2):
    C[.., c + t] = C[.., c + t] + A[.., a + t]`` (FuseInnerLoopsTT makes a T.Parallel loop around it one loop)."""
    op = OPS[_atomic(stmt)]
    dst = _element(func, stmt.value.args[0], stmt)
    if op.width == 1:
        value = stmt.value.args[1]
        if value.dtype != dst.buffer.dtype:
            value = tirx.Cast(dst.buffer.dtype, value)
        return keep_span(stmt, tirx.BufferStore(dst.buffer, op.combine(tirx.BufferLoad(dst.buffer, dst.indices),
                                                                       value), dst.indices))
    src = _element(func, stmt.value.args[1], stmt)
    t = tirx.Var("t", "int32")

    def at(load):
        return [*load.indices[:-1], load.indices[-1] + t]

    value = tirx.BufferLoad(src.buffer, at(src))
    if value.dtype != dst.buffer.dtype:
        value = tirx.Cast(dst.buffer.dtype, value)
    store = keep_span(stmt, tirx.BufferStore(dst.buffer, op.combine(tirx.BufferLoad(dst.buffer, at(dst)), value),
                                             at(dst)))
    return keep_span(stmt, tirx.For(t, 0, op.width, tirx.ForKind.SERIAL, store))


def _block_add(func, stmt) -> tirx.Stmt:
    """``T.atomic_add(C[r0, c0], part)`` -> a T.Parallel nest of element adds over the slice (a max or min
    for theirs): the dimensions of extent above 1 of the source and of the destination correspond in order."""
    src, dst = (as_region(a) for a in stmt.value.args[:2])
    if src is None or dst is None:
        raise error(PASS, func, stmt, f"{_name(stmt)} of something that is not a buffer slice",
                    f"{_name(stmt)}(C[r0, c0], block) with a block of the slice's shape")
    src_dims = [d for d, e in enumerate(src.extents) if const_int(e) != 1]
    dst_dims = [d for d, e in enumerate(dst.extents) if const_int(e) != 1]
    shape = [src.extents[d] for d in src_dims]
    if len(src_dims) != len(dst_dims) or len(shape) > 2 or any(const_int(e) is None for e in shape) or any(
            const_int(src.extents[a]) != const_int(dst.extents[b]) for a, b in zip(src_dims, dst_dims)):
        raise error(PASS, func, stmt, f"{_name(stmt)} of a {'x'.join(str(e) for e in src.extents)} block into a "
                    f"{'x'.join(str(e) for e in dst.extents)} slice of `{dst.buffer.name}`: the slice must have the "
                    "block's shape, at most two dimensions above 1",
                    "add a block of the slice's shape (a 1-D or 2-D block)")
    loop_vars = [tirx.Var(n, "int32") for n in ("i", "j")[:len(shape)]]

    def indices(region, dims):
        out = list(region.starts)
        for d, v in zip(dims, loop_vars):
            out[d] = out[d] + v
        return out

    load = tirx.BufferLoad(src.buffer, indices(src, src_dims))
    value = load if load.dtype == dst.buffer.dtype else tirx.Cast(dst.buffer.dtype, load)
    at = indices(dst, dst_dims)
    combined = OPS[_atomic(stmt)].combine(tirx.BufferLoad(dst.buffer, at), value)
    body = keep_span(stmt, tirx.BufferStore(dst.buffer, combined, at))
    for v, e in reversed(list(zip(loop_vars, shape))):
        body = keep_span(stmt, tirx.For(v, 0, e, tirx.ForKind.PARALLEL, body))
    return body


def _destination(stmt) -> tirx.BufferLoad:
    """The destination element (element form) or the slice's first element (block form)."""
    if _is_element(stmt):
        ptr = stmt.value.args[0]
        return ptr.args[0] if isinstance(ptr, tirx.Call) else ptr
    return stmt.value.args[1].args[0]


def _adds(stmt) -> list[tirx.Evaluate]:
    out = []
    tirx.stmt_functor.post_order_visit(stmt, lambda n: out.append(n) if _atomic(n) is not None else None)
    return out


def _check_loops(func) -> list[tuple[tirx.Evaluate, tirx.Buffer, list]]:
    """Every atomic into a global tensor with its tensor and destination indices; refuses one
    inside a serial loop whose variable its destination does not use (the same region at every
    iteration: the reader would read the tensor before the writer wrote the previous sum)."""
    values = bound_values(func.body)  # row = k * bn: the destination uses k
    found = [(add, _destination(add).buffer, [tirx.stmt_functor.substitute(i, values) for i in _destination(add).indices])
             for add in _adds(func.body)]
    found = [f for f in found if is_global_buffer(f[1])]

    def visit(node):
        if not isinstance(node, tirx.For) or node.thread_binding is not None or node.kind == tirx.ForKind.PARALLEL:
            return
        for add, buf, indices in found:
            if contains(node.body, lambda n, add=add: n.same_as(add)) and not any(
                    uses_var(i, node.loop_var) for i in indices):
                verb = "adds" if _sums(add) else "combines"
                raise error(PASS, func, add, f"{_name(add)} into `{buf.name}` {verb} into the same region at "
                            f"every iteration of the loop over `{node.loop_var.name}`: blocks take turns combining "
                            "into a global tensor, once per region", HINT_SPLIT)

    tirx.stmt_functor.post_order_visit(func.body, visit)
    return found


def _sum_extents(stmt) -> tuple[int, ...]:
    """The extents of a T.atomic_add's destination: 1 per dimension for an element (its width along the last for
    T.atomic_addx2 / x4), the slice's."""
    if _is_element(stmt):
        return (1,) * (len(_destination(stmt).indices) - 1) + (OPS[_atomic(stmt)].width,)
    return tuple(as_region(stmt.value.args[1]).extents)


def _check_other_uses(func, summed: list[tirx.Buffer]) -> None:
    """A summed tensor's other reads and writes keep clear of every region any block sums into:
    each block's boxes of elements (``ir.block_regions``: the block coordinates fixed, the branches
    a block does not take left out) of a plain access and of a sum are disjoint, the same block's
    included (stores and sums of one region in one block would need their order kept)."""
    for buf in summed:
        accesses = tensor_accesses(func.body, buf, lambda s: _destination(s) if _atomic(s) else None, _sum_extents)
        others = [a for a in accesses if a.kind == "other"]
        if not others:
            continue
        boxes = block_boxes(func, buf, accesses, BLOCK_LIMIT)
        culprit, reason = others[0].stmt, (f"the grid is dynamic or has more than {BLOCK_LIMIT} blocks, too many to "
                                           "tell the regions apart block by block")
        if boxes is not None:
            sums = [b for b in boxes if b.access.kind == "sum"]
            clash = next(((b, s) for b in boxes if b.access.kind == "other" for s in sums if overlap(b.box, s.box)),
                         None)
            if clash is None:
                continue
            other, add = clash
            culprit = other.access.stmt
            reason = (f"block ({other.label}) touches {_elements(other.box)} here and block ({add.label}) may sum "
                      f"into {_elements(add.box)}")
            unbounded = sorted({load.buffer.name for a in (other.access, add.access) for start in a.starts
                                for load in loads(tirx.stmt_functor.substitute(start, bound_values(func.body)))})
            if unbounded:
                reason += f"; the indices read {', '.join(f'`{n}`' for n in unbounded)}, whose values the compiler cannot bound"
        raise error(PASS, func, culprit, f"`{buf.name}` is summed into with T.atomic_add and also read or written "
                    f"here, in a region the sums may reach ({reason}): while the blocks take turns adding into it, "
                    "its value is a partial sum",
                    f"write and sum disjoint regions of `{buf.name}` (decided by the block coordinates), read "
                    f"`{buf.name}` in a second kernel, or write the value this statement needs into another tensor")


def _blocks_summing(func, summed: list[tirx.Buffer]) -> tuple[list[tirx.Var], set[tuple[int, ...]]] | None:
    """(the grid coordinates, the blocks that may run a T.atomic_add into a global tensor), or None
    when the grid is too large or dynamic to go through block by block."""
    blocks: set[tuple[int, ...]] = set()
    coords = grid(func)
    for buf in summed:
        accesses = [a for a in tensor_accesses(func.body, buf, lambda s: _destination(s) if _atomic(s) else None,
                                               _sum_extents) if a.kind == "sum"]
        boxes = block_boxes(func, buf, accesses, BLOCK_LIMIT)
        if boxes is None or coords is None:
            return None
        blocks.update(b.block for b in boxes)
    return [var for var, _ in coords], blocks


def _check_whole_groups(func, summing, axes: list[tirx.For], stmt) -> None:
    """Every block of a group taking turns (the blocks equal in the coordinates that do not sum)
    sums, or none does: OrderReductionTT passes the turn on from each block to the next, and a block
    that skips its add would pass it on before the block before it has added."""
    coords, blocks = summing
    along = [n for n, v in enumerate(coords) if any(a.loop_var.same_as(v) for a in axes)]
    groups: dict[tuple, set] = {}
    for block in blocks:
        groups.setdefault(tuple(v for n, v in enumerate(block) if n not in along), set()).add(block)
    size = math.prod(int(a.extent) for a in axes)
    partial = next((key for key, members in groups.items() if len(members) != size), None)
    if partial is not None:
        names = ", ".join(coords[n].name for n in along)
        raise error(PASS, func, stmt, f"T.atomic_add: of the {size} blocks along {names} that take turns summing "
                    f"into one region, {len(groups[partial])} add (a branch around the add decides on {names})",
                    f"let every block along {names} add (a zero block where it has nothing to add), or decide the "
                    "branch on the coordinates the destination depends on")


def _elements(box) -> str:
    return "[" + ", ".join(f"{lo}" if lo == hi else f"{lo}:{hi + 1}" for lo, hi in box) + "]"


def _retag(body, loops: dict[str, tirx.For], axes: list[tirx.For]) -> tirx.Stmt:
    """The grid loops re-tagged: the other coordinates outermost, the summing ones innermost
    (each group in its T.Kernel order)."""
    tags = [t for t in GRID_TAGS if t in loops]
    ordered = [loops[t] for t in tags if not any(loops[t].same_as(a) for a in axes)] + \
              [loops[t] for t in tags if any(loops[t].same_as(a) for a in axes)]
    new_tag = {loop.loop_var: tag for loop, tag in zip(ordered, tags)}

    def post(node):
        if isinstance(node, tirx.For) and node.thread_binding is not None and node.loop_var in new_tag:
            iv = node.thread_binding
            tag = new_tag[node.loop_var]
            if str(iv.thread_tag) == tag:
                return None
            binding = tirx.IterVar(iv.dom, iv.var, iv.iter_type, tag)
            return keep_span(node, tirx.For(node.loop_var, node.min, node.extent, node.kind, node.body, binding,
                                            node.annotations))
        return None

    return tirx.stmt_functor.ir_transform(body, None, post, ["tirx.For"])


def _own_regions(func, found) -> set:
    """The T.atomic_max / T.atomic_min statements whose destination depends on every grid coordinate of more
    than one block (each region of the tensor has one block): a plain read-modify-write. The others, blocks
    combining into one region, are left for the partition and the mesh to refuse."""
    varying = [loop.loop_var for loop in block_grid_loops(func).values() if const_int(loop.extent) != 1]
    return {stmt for stmt, _, indices in found  # indices with the named values substituted (_check_loops)
            if not _sums(stmt) and all(any(uses_var(i, v) for i in indices) for v in varying)}


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    found = _check_loops(func)
    own = _own_regions(func, found)
    adds = [f for f in found if _sums(f[0])]
    summed: list[tirx.Buffer] = []
    for _, buf, _ in adds:
        if not any(buf.same_as(s) for s in summed):
            summed.append(buf)
    _check_other_uses(func, summed)

    def post(node):
        kind = _atomic(node)
        if kind is None or (not OPS[kind].sums and not any(node.same_as(o) for o in own)):
            return None
        return _element_add(func, node) if _is_element(node) else _block_add(func, node)

    body = tirx.stmt_functor.ir_transform(func.body, None, post, ["tirx.Evaluate"])
    if body.same_as(func.body):
        return func
    if not summed:
        return func.with_body(body)
    loops = block_grid_loops(func)
    summing = _blocks_summing(func, summed)
    axes = []
    for tag in GRID_TAGS:
        loop = loops.get(tag)
        if loop is None or const_int(loop.extent) == 1:
            continue
        if any(uses_var(i, loop.loop_var) for _, _, idx in adds for i in idx):
            continue
        if const_int(loop.extent) is None:
            raise error(PASS, func, adds[0][0], f"the blocks along `{loop.loop_var.name}` sum into "
                        f"`{adds[0][1].name}` and their number {loop.extent} depends on a dynamic size",
                        "give the summing grid dimension a constant extent (a split count)")
        axes.append(loop)
    if summing is not None:
        _check_whole_groups(func, summing, axes, adds[0][0])
    if axes:
        body = _retag(body, loops, axes)
    reduction = Reduction(tuple(summed), tuple(a.loop_var for a in axes), math.prod(int(a.extent) for a in axes))
    return Attr.REDUCTION.write(func.with_body(body), reduction)


def LowerAtomicAddTT():
    return prim_func_pass(_transform, PASS)
