"""C3a DropDeadBlocksTT: the statements filling a block nothing reads go, and with them its multicast.

Reads: ``tt.read_to_cb`` / ``tt.generate_block`` (the reader fills a block), ``tt.pack_block``,
``tt.mm.mma``, ``tt.tile.eltwise``, ``tt.tile.reduce`` (compute fills and reads blocks),
``tt.write_from_cb`` (the writer reads a block), ``tt.accumulate`` scopes, ``tt.multicast``.
Writes: ``tt.multicast`` without the dropped blocks (the others as they were: AllocateSemaphoresTT
numbers their semaphores later). TIR: the statements filling a dead block become ``T.evaluate(0)``
and its ``tt.accumulate`` scope is unwrapped.

A block is dead when nothing reads it: every use folded away by the simplifier (``0.0 * x`` is 0),
or never used. The reader's copies into it, the values compute stores into it and the gemms
accumulating into it (their ``tt.accumulate`` scope, whose reload reads the block itself) have no
effect outside the block: they write no tensor. An element-wise statement that also packs a live
block (``also`` of ``tt.tile.eltwise``) stays. Repeated to a fixed point: a dropped value may leave
its own operands unread. Before: every block a tile op touches has a statement filling it. After:
only blocks something reads do; BuildTileDFGTT then makes CBs of the blocks tile ops still touch.

    Before: with T.attr(D_l.data, "tt.accumulate", 0):      # D_l: nothing reads it
                T.tt.mm.mma(A_s.data, B_s.data, D_l.data, 0, 0, 1, 1, False, k == 0)
            T.tt.read_to_cb(T.region(A[..], 1, 32, 32), T.region(A_s[0, 0], 2, 32, 32))
    After:  T.evaluate(0)                                  # and A_s, read only by that gemm, too
            T.evaluate(0)
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.attrs import Attr, Scope
from tilelang_tt.ir.common import allocations, as_region, evaluate_calls, prim_func_pass, stmt_intrin
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.ops import compute_accesses, compute_writes

PASS = "DropDeadBlocksTT"


def _dead_blocks(func: tirx.PrimFunc, data_names: dict) -> tuple[set[str], list[tirx.Stmt]]:
    """(the blocks nothing reads, the statements filling them) of ``func`` as it is."""
    fills: dict[str, list] = {}  # block -> the statements filling it
    used: set[str] = set()
    for stmt in evaluate_calls(func.body):
        intrin = stmt_intrin(stmt)
        if intrin in (Intrin.READ_TO_CB, Intrin.GENERATE_BLOCK):
            fills.setdefault(as_region(stmt.value.args[1 if intrin == Intrin.READ_TO_CB else 0]).buffer.name,
                             []).append(stmt)
        elif intrin == Intrin.WRITE_FROM_CB:
            used.add(as_region(stmt.value.args[0]).buffer.name)
        elif intrin == Intrin.PACK_BLOCK:
            fills.setdefault(data_names[stmt.value.args[0]], []).append(stmt)
        elif intrin in (Intrin.MM_MMA, Intrin.TILE_ELTWISE, Intrin.TILE_REDUCE):
            reads, _ = compute_accesses(stmt, data_names)
            used.update(reads)
            for write in compute_writes(stmt, data_names):
                fills.setdefault(write, []).append(stmt)
    # a statement goes when every block it writes is unread (one packing a live block besides stays)
    dead = {name for name in fills if name not in used
            and all(w not in used for s in fills[name] for w in compute_writes(s, data_names)
                    if stmt_intrin(s) == Intrin.TILE_ELTWISE)}
    return dead, [stmt for name in dead for stmt in fills[name]]


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    data_names = {buf.data: buf.name for buf in allocations(func)}
    dropped: set[str] = set()
    while True:
        dead_blocks, dead = _dead_blocks(func, data_names)
        if not dead_blocks:
            break
        dropped |= dead_blocks

        def drop(node, dead=dead, dead_blocks=dead_blocks):
            if isinstance(node, tirx.AttrStmt):
                accumulates = node.attr_key == Scope.ACCUMULATE.value and data_names.get(node.node) in dead_blocks
                return node.body if accumulates else None
            return tirx.Evaluate(0) if any(node.same_as(stmt) for stmt in dead) else None

        func = func.with_body(tirx.stmt_functor.ir_transform(func.body, None, drop, ["tirx.Evaluate", "tirx.AttrStmt"]))
    multicast = Attr.MULTICAST.read(func)
    if not dropped & set(multicast):
        return func
    return Attr.MULTICAST.write(func, {cb: desc for cb, desc in multicast.items() if cb not in dropped})


def DropDeadBlocksTT():
    return prim_func_pass(_transform, PASS)
