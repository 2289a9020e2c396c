"""ForwardTensorCopiesTT (front, before CheckKernelFormsTT): a register array (a ``T.alloc_local`` that
LocalBlocksTT left as such: not used as a block) that one ``T.copy`` fills from a tensor the kernel only
reads, and that the statements after the copy only read element by element (``T.copy(topk_pos[bx, 0],
pos_local)``, then ``if pos_local[k] >= 0:``, ``out[pos_local[k], i]``), is those tensor elements: each
read becomes the tensor element the copy put there, and the copy and the array go. The store of one
tensor element into the array, its only store (``block_mask[0] = BlockMask[by, bx, k]``, then ``if
block_mask[0]:``: TileLang's block-sparse GEMM), is such a copy of one element.

A GPU kernel copies a few positions into per-thread registers and branches on them, or indexes with them.
On Tenstorrent the reader, compute and writer all take such a branch and only compute holds on-chip
blocks; the tensor element itself is a value the reader reads and hands on (NameValueConditionsTT,
FetchAddressElementsTT). The rewrite is exact when: the array is written by that copy alone; the tensor
is written nowhere in the kernel; the copy's source indices read no buffer (their variables keep their
values through the statements after the copy: TIR variables are bound once); every use of the array is a
read in the statements after the copy in its sequence, at an element the copy writes (proved from the
ranges of the loops around the reads); the copy's regions have the same extents once their dimensions
of extent 1 are dropped (TileLang's T.copy pairs those dimensions in order). An array that fails any of
these is left as it is (CheckKernelFormsTT refuses a branch on it at the ``if``); so is an array stored
more than once (a running value).

Reads the body; writes no attribute. After it, no load of a forwarded array remains, nor its copy or
its allocation.

    Before: pos_local = T.alloc_local((2,), "int32")
            T.copy(topk_pos[bx, 0], pos_local)                   # regions [1, 2] -> [2]
            for k in range(2):
                if pos_local[k] >= 0:
                    for i in T.Parallel(64):
                        out[pos_local[k], i] = x_frag[i]
    After:  for k in range(2):
                if topk_pos[bx, k] >= 0:
                    for i in T.Parallel(64):
                        out[topk_pos[bx, k], i] = x_frag[i]
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import arith, ir, tirx

from tilelang_tt.ir.common import (WRITE, as_region, const_int, is_global_buffer, loads, prim_func_pass, seq,
                                   tile_op_name)

PASS = "ForwardTensorCopiesTT"


def _regions(stmt) -> list[tuple[object, int]]:
    """(region, access mask) of each ``tl.region`` argument of tile op ``stmt``."""
    out = []
    for arg in stmt.value.args:
        if isinstance(arg, tirx.Call) and isinstance(arg.op, ir.Op) and arg.op.name == "tl.region":
            out.append((as_region(arg), int(arg.args[1])))
    return out


def _written(body) -> tuple[dict, set]:
    """(buffer -> the tile ops writing it, the buffers a store writes) of ``body``."""
    by_ops: dict = {}
    stored: set = set()

    def visit(node):
        if tile_op_name(node) is not None:
            for region, mask in _regions(node):
                if region is not None and mask & WRITE:
                    by_ops.setdefault(region.buffer, []).append(node)
        elif isinstance(node, tirx.BufferStore):
            stored.add(node.buffer)

    tirx.stmt_functor.post_order_visit(body, visit)
    return by_ops, stored


def _uses(node, buf: tirx.Buffer) -> int:
    """How many times ``node`` names ``buf``: loads, stores and tile-op regions."""
    found = []
    tirx.stmt_functor.post_order_visit(node, lambda n: found.append(n) if isinstance(
        n, (tirx.BufferLoad, tirx.BufferStore)) and n.buffer.same_as(buf) else None)
    return len(found)


def _element_reads(node, buf: tirx.Buffer) -> list[tirx.BufferLoad]:
    """The loads of elements of ``buf`` in ``node``'s expressions (not the tile ops' regions)."""
    found = []

    def visit(n):
        if isinstance(n, tirx.Call) and isinstance(n.op, ir.Op) and n.op.name == "tl.region":
            return False
        if isinstance(n, tirx.BufferLoad) and n.buffer.same_as(buf):
            found.append(n)
        return True

    tirx.stmt_functor.pre_order_visit(node, visit)
    return found


class _Region:
    """A buffer's box: its first element's indices and its extents."""

    def __init__(self, buffer, starts, extents):
        self.buffer, self.starts, self.extents = buffer, list(starts), list(extents)


def _copied(copy, writers: dict, stored: set) -> tuple[_Region, _Region] | None:
    """(source, destination) of a fill of a register array from a tensor: a ``T.copy`` (the array's only
    writer) or the store of one tensor element into one element of the array (``mask[0] = M[by, bx, k]``:
    the array's only store), else None. The other uses of the array are checked by the caller."""
    if tile_op_name(copy) == "copy":
        regions = _regions(copy)
        if len(regions) != 2 or any(r is None for r, _ in regions):
            return None
        (src, _), (dst, _) = regions
        if dst.buffer in stored or len(writers.get(dst.buffer, [])) != 1:
            return None
        return _Region(src.buffer, src.starts, src.extents), _Region(dst.buffer, dst.starts, dst.extents)
    if isinstance(copy, tirx.BufferStore) and isinstance(copy.value, tirx.BufferLoad) \
            and copy.buffer not in writers:
        one = [tirx.IntImm("int32", 1)]
        value = copy.value
        return (_Region(value.buffer, value.indices, one * len(value.indices)),
                _Region(copy.buffer, copy.indices, one * len(copy.indices)))
    return None


def _forwarding(copy, rest: list, body, writers: dict, stored: set):
    """(array, element map) when the reads of the array ``copy`` fills in the statements ``rest`` after
    it may be the tensor elements (see the module docstring); None otherwise. The map takes a read's
    indices to the tensor element's."""
    copied = _copied(copy, writers, stored)
    if copied is None:
        return None
    src, dst = copied
    if not is_global_buffer(src.buffer) or dst.buffer.scope() != "local":
        return None  # registers only: blocks (fragments, shared) are read by compute as blocks
    if src.buffer in writers or src.buffer in stored:
        return None
    if any(loads(i) for i in src.starts):
        return None
    src_axes = [a for a, e in enumerate(src.extents) if not _is_one(e)]
    dst_axes = [a for a, e in enumerate(dst.extents) if not _is_one(e)]
    if [src.extents[a] for a in src_axes] != [dst.extents[a] for a in dst_axes]:
        return None
    reads = [n for s in rest for n in _element_reads(s, dst.buffer)]
    if not reads or _uses(body, dst.buffer) != 1 + len(reads):
        return None  # a use of the array other than the copy and the reads after it
    analyzer = arith.Analyzer()
    for s in rest:  # every loop variable over its range wherever a read names it
        tirx.stmt_functor.post_order_visit(s, lambda n: analyzer.bind(n.loop_var, ir.Range.from_min_extent(
            n.min, n.extent)) if isinstance(n, tirx.For) else None)
    for read in reads:
        for a, index in enumerate(read.indices):
            lo, ext = dst.starts[a], dst.extents[a]
            if not (analyzer.can_prove(index >= lo) and analyzer.can_prove(index < lo + ext)):
                return None

    def element(indices):
        offsets = [indices[a] - dst.starts[a] for a in dst_axes]
        out = list(src.starts)
        for a, off in zip(src_axes, offsets):
            out[a] = analyzer.simplify(src.starts[a] + off)
        value = tirx.BufferLoad(src.buffer, out)
        return value if src.buffer.dtype == dst.buffer.dtype else tirx.Cast(str(dst.buffer.dtype), value)

    return dst.buffer, element


def _is_one(extent) -> bool:
    return const_int(extent) == 1


def _forwarded(stmt, buf: tirx.Buffer, element):
    """``stmt`` with each load of ``buf`` the tensor element ``element`` maps it to (the statements it rebuilds
    are copies of the old ones: they keep their source spans)."""
    return tirx.stmt_functor.ir_transform(stmt, None, lambda n: element(n.indices) if isinstance(
        n, tirx.BufferLoad) and n.buffer.same_as(buf) else None, ["tirx.BufferLoad"])


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    writers, stored = _written(func.body)
    gone: list = []

    def post(node):
        if isinstance(node, tirx.SeqStmt):
            stmts = list(node.seq)
            k = 0
            changed = False
            while k < len(stmts):
                found = _forwarding(stmts[k], stmts[k + 1:], func.body, writers, stored)
                if found is None:
                    k += 1
                    continue
                buf, element = found
                gone.append(buf)
                stmts = stmts[:k] + [_forwarded(s, buf, element) for s in stmts[k + 1:]]
                changed = True
            return seq(stmts) if changed else None
        if isinstance(node, tirx.SBlock) and any(b in gone for b in node.alloc_buffers):
            return tirx.SBlock(node.iter_vars, node.reads, node.writes, node.name_hint, node.body, node.init,
                               [b for b in node.alloc_buffers if b not in gone], node.match_buffers, node.annotations)
        return None

    body = tirx.stmt_functor.ir_transform(func.body, None, post, ["tirx.SeqStmt", "tirx.SBlock"])
    return func.with_body(body) if gone else func


def ForwardTensorCopiesTT():
    return prim_func_pass(_transform, PASS)
