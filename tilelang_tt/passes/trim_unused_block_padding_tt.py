"""TrimUnusedBlockPaddingTT (front, before LegalizeGlobalAccessTT): an on-chip block allocated larger than
every access to it is the block of what its accesses touch.

GPU kernels pad shared memory against bank conflicts: TileOPs' tiled cumsum allocates
``T.alloc_shared((block_m, block_n + SMEM_PAD))`` and reads and writes only its first ``block_n``
columns, in ``T.Parallel(block_m, block_n)`` nests; TileLang's strided GEMM test fills the second half of a
block twice a tile wide and multiplies the slice ``A_shared[:, block_K:]``. On Tenstorrent a block is a CB
of whole tiles that element-wise nests and tile ops cover whole, so the unused columns would be computed,
moved and refused (a nest that does not cover its block). The region an access touches is its index's
range over the loops around it (``bound_analyzer``: every loop and launch variable bound), or its
``T.region``'s extents for tile ops; when every access of a block lies in ``[lo_d, hi_d)`` along each
dimension ``d``, narrower than the block for some ``d``, the block is reallocated as ``[hi_0 - lo_0, ...]``
(the same name, dtype and scope) and every access reads or writes the new block at its indices minus
``lo``: what no statement touches is never stored. A ``T.fill`` / ``T.clear`` of a region of constant
starts only writes: it does not widen the window, and it fills the part of its region inside the window
(a fill wholly outside it keeps the block's shape). A block whose data pointer a statement uses directly
(an address call), or an access of unbounded or negative range, keeps its shape.
Reads/writes no attribute.

    Before: shared_in = T.alloc_shared((32, 160))
            for i, j in T.Parallel(32, 128): shared_in[i, j] = x[..]
            for i, j in T.Parallel(32, 128): tile[i, j] = T.Cast("float32", shared_in[i, j])
    After:  shared_in = T.alloc_shared((32, 128))      # the same statements, on the [32, 128] block

    Before: A_shared = T.alloc_shared((64, 64)); T.clear(A_shared)
            for i, k in T.Parallel(64, 32): A_shared[i, k + 32] = A[..]
            T.gemm(A_shared[0:64, 32:64], B_shared, C_local)
    After:  A_shared = T.alloc_shared((64, 32)); T.fill(A_shared[0:64, 0:32], 0)
            for i, k in T.Parallel(64, 32): A_shared[i, k] = A[..]
            T.gemm(A_shared[0:64, 0:32], B_shared, C_local)
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.common import (allocations, as_region, const_int, is_cb_buffer, keep_span, make_region,
                                   prim_func_pass, replace_buffers, simplify, tile_op_name)
from tilelang_tt.ir.slices import bound_analyzer

PASS = "TrimUnusedBlockPaddingTT"


def _fill_region(node):
    """The region a ``T.fill`` statement writes, when its starts and extents are constants; else None."""
    if tile_op_name(node) != "fill":
        return None
    region = as_region(node.value.args[0])
    if region is None or any(const_int(i) is None for i in region.starts):
        return None
    return region


def _windows(func: tirx.PrimFunc) -> tuple[dict, list]:
    """(block -> the [low, high) its accesses touch along each dimension, or None for a block that cannot
    be trimmed: a direct use of its data pointer, an unbounded or negative access; the fills of constant
    regions, which the windows leave out)."""
    analyzer = bound_analyzer(func.body)
    blocks = [b for b in allocations(func) if is_cb_buffer(b) and all(const_int(d) is not None for d in b.shape)]
    windows: dict = {b: [[None, 0] for _ in b.shape] for b in blocks}
    fills: list = []

    def touch(buf, starts, extents) -> None:
        if buf not in windows or windows[buf] is None:
            return
        if len(starts) != len(buf.shape):  # a flattened or reshaped access: where it lands is not per dimension
            windows[buf] = None
            return
        for d, (start, extent) in enumerate(zip(starts, extents)):
            bound = analyzer.const_int_bound(start)
            if bound.min_value < 0 or bound.max_value >= 2 ** 31:
                windows[buf] = None
                return
            low, high = windows[buf][d]
            windows[buf][d] = [int(bound.min_value) if low is None else min(low, int(bound.min_value)),
                               max(high, int(bound.max_value) + extent)]

    def visit(node):
        if _fill_region(node) is not None:
            fills.append(node)
            return False
        if isinstance(node, (tirx.BufferLoad, tirx.BufferStore)):
            touch(node.buffer, list(node.indices), [1] * len(node.indices))
        elif isinstance(node, tirx.Call) and (region := as_region(node)) is not None:
            extents = [const_int(e) for e in region.extents]
            if any(e is None for e in extents):
                if region.buffer in windows:
                    windows[region.buffer] = None
            else:
                touch(region.buffer, list(region.starts), extents)
                for index in region.starts:  # the region's start indices may read other buffers
                    tirx.stmt_functor.pre_order_visit(index, visit)
                return False
        return True

    tirx.stmt_functor.pre_order_visit(func.body, visit)
    used_vars = set()
    tirx.stmt_functor.post_order_visit(func.body, lambda n: used_vars.add(n) if isinstance(n, tirx.Var) else None)
    for buf in blocks:
        if buf.data in used_vars:  # the data pointer itself (an address, a whole-buffer argument)
            windows[buf] = None
    return windows, fills


def _clipped(fill, window) -> tirx.Stmt | None:
    """The fill of the part of its region inside ``window`` (in the old block's indices), None when it
    lies wholly outside."""
    region = _fill_region(fill)
    starts, extents = [], []
    for start, extent, (low, high) in zip(region.starts, region.extents, window):
        lo, hi = max(const_int(start), low), min(const_int(start) + int(extent), high)
        if lo >= hi:
            return None
        starts.append(lo)
        extents.append(hi - lo)
    mask = int(fill.value.args[0].args[1])
    call = fill.value
    return tirx.Evaluate(tirx.Call(call.dtype, call.op, [make_region(region.buffer, starts, extents, mask),
                                                         *call.args[1:]], call.annotations))


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    windows, fills = _windows(func)
    mapping, lows = {}, {}
    for buf, window in windows.items():
        shape = [const_int(d) for d in buf.shape]
        if window is None or any(low is None for low, _ in window):
            continue  # untrimmable, or touched by fills alone
        if all(low == 0 and high == d for (low, high), d in zip(window, shape)) or any(
                high > d for (_, high), d in zip(window, shape)):
            continue
        filled = [f for f in fills if _fill_region(f).buffer.same_as(buf)]
        if any(_clipped(f, window) is None for f in filled):
            continue
        mapping[buf] = tirx.decl_buffer([high - low for low, high in window], buf.dtype, buf.name, scope=buf.scope())
        lows[buf] = [low for low, _ in window]
    if not mapping:
        return func

    def clip(node):
        region = _fill_region(node)
        if region is not None and region.buffer in mapping:
            return _clipped(node, windows[region.buffer])
        return None

    def shifted(buf, indices):
        return [i if lo == 0 else simplify(i - lo) for i, lo in zip(indices, lows[buf])]

    def shift(node):
        if isinstance(node, tirx.BufferLoad) and node.buffer in lows:
            return tirx.BufferLoad(node.buffer, shifted(node.buffer, node.indices), node.predicate)
        if isinstance(node, tirx.BufferStore) and node.buffer in lows:
            return keep_span(node, tirx.BufferStore(node.buffer, node.value, shifted(node.buffer, node.indices),
                                                    node.predicate))
        return None

    body = tirx.stmt_functor.ir_transform(func.body, None, lambda n: keep_span(n, c) if (c := clip(n)) else None,
                                          ["tirx.Evaluate"])
    if any(any(lo != 0 for lo in los) for los in lows.values()):
        body = tirx.stmt_functor.ir_transform(body, None, shift, ["tirx.BufferLoad", "tirx.BufferStore"])
    return func.with_body(replace_buffers(body, mapping))


def TrimUnusedBlockPaddingTT():
    return prim_func_pass(_transform, PASS)
