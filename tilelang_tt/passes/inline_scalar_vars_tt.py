"""InlineScalarVarsTT (after UniqueBufferNamesTT): a scalar variable set once from block coordinates
is its value.

TileLang kernels name per-block scalars with ``T.alloc_var``: ``lg = T.alloc_var(T.float32); lg =
T.log2(1 - T.exp2(-5.0 - head))`` (the retention example's per-head decay), a ``local.var`` buffer
of one element stored once and read in element-wise values. A Tenstorrent kernel has no scalar
registers shared by its reader, compute and writer: the value is substituted where it is read, so
its parts become what the reader generates or compute evaluates per tile like any expression of the
block coordinates. Inlined: a ``local.var`` buffer of one element stored exactly once, outside any
loop, with a value that reads no buffer. Other scalar variables are left as they are (the later
passes name them). Reads/writes no attribute.

    Before: lg = T.sblock_alloc_buffer((1,), scope="local.var")
            lg[0] = T.log2(1 - T.exp2(-5.0 - T.Cast("float32", head)))
            for t, d in T.Parallel(64, 64): out[t, d] = T.exp2(T.Cast("float32", t + 1) * lg[0]) * out[t, d]
    After:  for t, d in T.Parallel(64, 64):
                out[t, d] = T.exp2(T.Cast("float32", t + 1) * T.log2(1 - T.exp2(-5.0 - ...))) * out[t, d]
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.passes.common import contains, prim_func_pass

PASS = "InlineScalarVarsTT"


def _inlinable(func: tirx.PrimFunc) -> dict[tirx.Buffer, tirx.BufferStore]:
    """Each one-element ``local.var`` buffer stored once, outside loops, from a value reading no buffer."""
    stores: dict = {}
    tirx.stmt_functor.post_order_visit(func.body, lambda n: stores.setdefault(n.buffer, []).append(n) if isinstance(
        n, tirx.BufferStore) and n.buffer.scope() == "local.var" else None)
    in_loop: set = set()

    def visit(node):
        if isinstance(node, tirx.For) and node.thread_binding is None:
            tirx.stmt_functor.post_order_visit(node.body, lambda n: in_loop.add(n.buffer) if isinstance(
                n, tirx.BufferStore) else None)

    tirx.stmt_functor.post_order_visit(func.body, visit)
    return {buf: found[0] for buf, found in stores.items()
            if len(found) == 1 and buf not in in_loop and [int(d) for d in buf.shape] == [1]
            and not contains(found[0].value, lambda n: isinstance(n, tirx.BufferLoad))}


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    scalars = _inlinable(func)
    if not scalars:
        return func

    def load(node):
        if isinstance(node, tirx.BufferLoad) and node.buffer in scalars:
            return scalars[node.buffer].value
        return None

    def post(node):
        if isinstance(node, tirx.BufferStore) and node.buffer in scalars:
            return tirx.Evaluate(0)
        if isinstance(node, tirx.SBlock) and any(b in scalars for b in node.alloc_buffers):
            return tirx.SBlock(node.iter_vars, node.reads, node.writes, node.name_hint, node.body, node.init,
                               [b for b in node.alloc_buffers if b not in scalars], node.match_buffers,
                               node.annotations)
        return None

    body = tirx.stmt_functor.ir_transform(func.body, None, load, ["tirx.BufferLoad"])
    body = tirx.stmt_functor.ir_transform(body, None, post, ["tirx.BufferStore", "tirx.SBlock"])
    return func.with_body(body)


def InlineScalarVarsTT():
    return prim_func_pass(_transform, PASS)
