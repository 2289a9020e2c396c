"""UnstackBlocksTT (front, after LowerBlockViewsTT): a stack of on-chip blocks used one slice per iteration of a
loop is one block.

TileLang's batched GEMM test allocates ``A_shared = T.alloc_shared((batch, bm, bk))`` and, in ``for b in
T.serial(batch)``, copies into and multiplies ``A_shared[b, :, :]`` only. Every use of the stack indexes its first
dimension at the same expression of the loop's variable, and each iteration writes its slice before it reads it:
no slice holds a value from one iteration into another, so the stack is one block of the slice's shape, reused by
every iteration (on Tenstorrent a block is tiles of a 2-D shape; a stack of them, sliced, has no tile form).

Reads: on-chip blocks of rank 3 or more whose every load, store and ``tl.region`` slice indexes dimension 0 at one
expression ``e`` (extent 1) of the variable of a serial loop around all of them, the first statement of that loop's
body using the block writing the whole slice (a ``T.copy`` into it). Writes: the block of the slice's shape in its
place (allocated where it was), each use the slice's elements. Other blocks are left as they are (PadBlocksTT
refuses a part of a block of rank 3 or 4). Reads/writes no attribute.

    Before: A_s = T.alloc_shared((2, 32, 32))
            for b in T.serial(2):
                T.copy(A[b, by * 32, k * 32], A_s[b, :, :])
                T.gemm(A_s[b, :, :], B_s[b, :, :], C_l)
    After:  A_s = T.alloc_shared((32, 32))
            for b in T.serial(2):
                T.copy(A[b, by * 32, k * 32], A_s)
                T.gemm(A_s, B_s, C_l)
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import ir, tirx

from tilelang_tt.ir.common import (
    as_region,
    const_int,
    is_cb_buffer,
    keep_span,
    prim_func_pass,
    tile_op_name,
    uses_var,
)

PASS = "UnstackBlocksTT"


def _uses(node, buf) -> list:
    """The indices (a load or store) and slices (a region: starts, extents) of ``buf`` in ``node``."""
    found = []

    def visit(n):
        if isinstance(n, tirx.Call) and isinstance(n.op, ir.Op) and n.op.name == "tl.region" and \
                isinstance(n.args[0], tirx.BufferLoad) and n.args[0].buffer.same_as(buf):
            found.append(("region", list(n.args[0].indices), [const_int(e) for e in n.args[2:]]))
        elif isinstance(n, (tirx.BufferLoad, tirx.BufferStore)) and n.buffer.same_as(buf):
            found.append(("element", list(n.indices), None))

    tirx.stmt_functor.post_order_visit(node, visit)
    return found


def _writes_whole_slice(stmt, buf, shape) -> bool:
    """Whether ``stmt`` is a T.copy whose destination is a whole slice of ``buf``."""
    if tile_op_name(stmt) != "copy":
        return False
    dst = as_region(stmt.value.args[1])
    return dst is not None and dst.buffer.same_as(buf) and [const_int(e) for e in dst.extents[1:]] == shape[1:] and \
        all(const_int(s) == 0 for s in dst.starts[1:])


def _first_use(body, buf):
    """The first leaf statement of ``body`` in program order that uses ``buf``."""
    found = []

    def visit(n):
        if found:
            return False
        if isinstance(n, (tirx.Evaluate, tirx.BufferStore)) and _uses(n, buf):
            found.append(n)
            return False
        return True

    tirx.stmt_functor.pre_order_visit(body, visit)
    return found[0] if found else None


def _stacked(func) -> dict[tirx.Buffer, tirx.Buffer]:
    """Each stack of blocks used one slice per iteration -> the block of one slice."""
    blocks = []
    tirx.stmt_functor.post_order_visit(func.body, lambda n: blocks.extend(
        b for b in n.alloc_buffers if is_cb_buffer(b) and len(b.shape) >= 3) if isinstance(n, tirx.SBlock) else None)
    loops = []
    tirx.stmt_functor.post_order_visit(func.body, lambda n: loops.append(n) if isinstance(
        n, tirx.For) and n.kind == tirx.ForKind.SERIAL else None)
    out = {}
    for buf in blocks:
        shape = [const_int(d) for d in buf.shape]
        uses = _uses(func.body, buf)
        if None in shape or not uses:
            continue
        first = uses[0][1][0]
        same = all(ir.structural_equal(idx[0], first) and (ext is None or ext[0] == 1) for _, idx, ext in uses)
        loop = next((lp for lp in loops if uses_var(first, lp.loop_var) and len(_uses(lp.body, buf)) == len(uses)),
                    None)
        if not same or loop is None or not _writes_whole_slice(_first_use(loop.body, buf), buf, shape):
            continue
        out[buf] = tirx.decl_buffer(shape[1:], buf.dtype, buf.name, scope=buf.scope())
    return out


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    stacks = _stacked(func)
    if not stacks:
        return func

    def pre(node):
        if isinstance(node, tirx.Call) and isinstance(node.op, ir.Op) and node.op.name == "tl.region" and \
                isinstance(node.args[0], tirx.BufferLoad) and node.args[0].buffer in stacks:
            load = node.args[0]
            return tirx.Call(node.dtype, node.op, [tirx.BufferLoad(stacks[load.buffer], list(load.indices[1:])),
                                                   node.args[1], *node.args[3:]])
        return None

    def post(node):
        if isinstance(node, tirx.BufferLoad) and node.buffer in stacks:
            return tirx.BufferLoad(stacks[node.buffer], list(node.indices[1:]))
        if isinstance(node, tirx.BufferStore) and node.buffer in stacks:
            return keep_span(node, tirx.BufferStore(stacks[node.buffer], node.value, list(node.indices[1:])))
        if isinstance(node, tirx.SBlock) and any(b in stacks for b in node.alloc_buffers):
            return tirx.SBlock(node.iter_vars, node.reads, node.writes, node.name_hint, node.body, node.init,
                               [stacks.get(b, b) for b in node.alloc_buffers], node.match_buffers, node.annotations)
        return None

    body = tirx.stmt_functor.ir_transform(func.body, pre, post, ["tirx.Call", "tirx.BufferLoad", "tirx.BufferStore",
                                                                 "tirx.SBlock"])
    return func.with_body(body)


def UnstackBlocksTT():
    return prim_func_pass(_transform, PASS)
