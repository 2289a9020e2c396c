"""LocalBlocksTT (front, after InlineScalarVarsTT): a ``T.alloc_local`` array used as a block is a
fragment.

TileLang's ``T.alloc_local`` gives each GPU thread registers of its own. A kernel that uses such an
array the way it uses a fragment — only inside ``T.Parallel`` nests and as an operand of tile ops
(``T.copy``, ``T.fill``, ``T.reduce_*``, ``T.gemm``) — computes a block with it, which on a
Tenstorrent core is a circular buffer like any fragment: the array becomes a
``T.alloc_fragment`` of the same name, shape and dtype. Arrays also
read or written outside ``T.Parallel`` (a running value of serial code, ``acc[0] += x``) stay
local: LowerTTTileIntrinsics names the per-thread registers they are.
Reads/writes no attribute. A kernel without such arrays is returned unchanged.

    Before: a = T.sblock_alloc_buffer((16, 64), scope="local")
            T.copy(T.region(A[bx * 16, 0], 1, 16, 64), T.region(a[0, 0], 2, 16, 64))
            for i, j in T.parallel(16, 64): a[i, j] = a[i, j] * T.float32(2)
    After:  a = T.sblock_alloc_buffer((16, 64), scope="local.fragment")
            (the same statements)
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.common import FRAGMENT_SCOPES, allocations, prim_func_pass, replace_buffers, tile_op_name

PASS = "LocalBlocksTT"
LOCAL = "local"


def _used_outside_blocks(func: tirx.PrimFunc) -> set[tirx.Buffer]:
    """The local arrays some statement reads or writes outside a T.Parallel nest and a tile op."""
    outside: set[tirx.Buffer] = set()

    def visit(node) -> bool:
        if (isinstance(node, tirx.For) and node.kind == tirx.ForKind.PARALLEL) or tile_op_name(node) is not None:
            return False  # a block's elements, or a tile op's operand: the array is a block there
        if isinstance(node, (tirx.BufferLoad, tirx.BufferStore)) and node.buffer.scope() == LOCAL:
            outside.add(node.buffer)
        return True

    tirx.stmt_functor.pre_order_visit(func.body, visit)
    return outside


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    local = [b for b in allocations(func) if b.scope() == LOCAL]
    if not local:
        return func
    outside = _used_outside_blocks(func)
    blocks = {b: tirx.decl_buffer(b.shape, b.dtype, b.name, scope=FRAGMENT_SCOPES[0], span=b.span)
              for b in local if b not in outside}
    if not blocks:
        return func
    body = replace_buffers(func.body, blocks)
    return func.with_body(tirx.stmt_functor.substitute(body, {old.data: new.data for old, new in blocks.items()}))


def LocalBlocksTT():
    return prim_func_pass(_transform, PASS)
