"""TrimUnusedBlockPaddingTT (front, before LegalizeGlobalAccessTT): an on-chip block allocated larger than
every access to it is the block of what its accesses touch.

GPU kernels pad shared memory against bank conflicts: TileOPs' tiled cumsum allocates
``T.alloc_shared((block_m, block_n + SMEM_PAD))`` and reads and writes only its first ``block_n``
columns, in ``T.Parallel(block_m, block_n)`` nests. On Tenstorrent a block is a CB of whole tiles that
element-wise nests and tile ops cover whole, so the unused columns would be computed, moved and
refused (a nest that does not cover its block). The region an access touches is its index's range over
the loops around it (``bound_analyzer``: every loop and launch variable bound), or its ``T.region``'s
extents for tile ops; when every access of a block lies in ``[0, n_d)`` along each dimension ``d``, with
``n_d`` below the block's extent for some ``d``, the block is reallocated as ``[n_0, ..., n_k]`` (the same
name, dtype and scope) and every access reads or writes the new block at the same indices: what no
statement touches is never stored. A block whose data pointer a statement uses directly (an address
call), or an access of unbounded or negative range, keeps its shape.
Reads/writes no attribute.

    Before: shared_in = T.alloc_shared((32, 160))
            for i, j in T.Parallel(32, 128): shared_in[i, j] = x[..]
            for i, j in T.Parallel(32, 128): tile[i, j] = T.Cast("float32", shared_in[i, j])
    After:  shared_in = T.alloc_shared((32, 128))      # the same statements, on the [32, 128] block
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.common import allocations, as_region, const_int, is_cb_buffer, prim_func_pass, replace_buffers
from tilelang_tt.ir.slices import bound_analyzer

PASS = "TrimUnusedBlockPaddingTT"


def _used_extents(func: tirx.PrimFunc) -> dict:
    """Block -> the end of the region its accesses touch along each dimension; None for a block that
    cannot be trimmed (a direct use of its data pointer, an unbounded or negative access)."""
    analyzer = bound_analyzer(func.body)
    blocks = [b for b in allocations(func) if is_cb_buffer(b) and all(const_int(d) is not None for d in b.shape)]
    ends: dict = {b: [0] * len(b.shape) for b in blocks}
    in_access: set = set()

    def touch(buf, starts, extents) -> None:
        if buf not in ends or ends[buf] is None:
            return
        if len(starts) != len(buf.shape):  # a flattened or reshaped access: where it lands is not per dimension
            ends[buf] = None
            return
        for d, (start, extent) in enumerate(zip(starts, extents)):
            bound = analyzer.const_int_bound(start)
            if bound.min_value < 0 or bound.max_value >= 2 ** 31:
                ends[buf] = None
                return
            ends[buf][d] = max(ends[buf][d], int(bound.max_value) + extent)

    def visit(node):
        if isinstance(node, (tirx.BufferLoad, tirx.BufferStore)):
            touch(node.buffer, list(node.indices), [1] * len(node.indices))
            in_access.add(node.buffer.data)
        elif isinstance(node, tirx.Call) and (region := as_region(node)) is not None:
            extents = [const_int(e) for e in region.extents]
            if any(e is None for e in extents):
                if region.buffer in ends:
                    ends[region.buffer] = None
            else:
                touch(region.buffer, list(region.starts), extents)

    tirx.stmt_functor.post_order_visit(func.body, visit)
    used_vars = set()
    tirx.stmt_functor.post_order_visit(func.body, lambda n: used_vars.add(n) if isinstance(n, tirx.Var) else None)
    for buf in blocks:
        if buf.data in used_vars:  # the data pointer itself (an address, a whole-buffer argument)
            ends[buf] = None
    return ends


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    mapping = {}
    for buf, end in _used_extents(func).items():
        shape = [const_int(d) for d in buf.shape]
        if end is None or not any(0 < e < d for e, d in zip(end, shape)) or any(e == 0 or e > d for e, d in
                                                                            zip(end, shape)):
            continue
        mapping[buf] = tirx.decl_buffer(end, buf.dtype, buf.name, scope=buf.scope())
    if not mapping:
        return func
    return func.with_body(replace_buffers(func.body, mapping))


def TrimUnusedBlockPaddingTT():
    return prim_func_pass(_transform, PASS)
