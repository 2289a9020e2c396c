"""DropOverwrittenStoresTT (front, after LegalizeGlobalAccessTT): a store into a tensor that a later
copy overwrites before anything reads it goes.

A tensor written twice holds the second value: TileLang's ``T.copy(A[bx * 64], B[bx * 64])`` of
single elements (a copy given two element accesses moves one element) followed by a ``T.Parallel``
nest storing every element of the block (``B[bx * 64 + i] = tmp``, which LegalizeGlobalAccessTT made
a fragment and its copy-out) leaves the first element the nest's. A Tenstorrent kernel has no scalar
stores into tensors (the writer moves whole blocks), so the first store, dead, would be refused
(LowerTTTileIntrinsics: scalar store outside T.Parallel). A store into a global tensor, directly in
a statement sequence, is dropped when a later ``T.copy`` of the same sequence writes a region of the
tensor that provably holds the stored element (its indices within the region's starts and extents
for any block coordinates) and no statement between them touches the tensor. Any other store is
left to the passes after (which refuse it).

Reads and writes no attribute. TIR: such stores go; nothing else changes.

    Before: B[bx * 64] = A[bx * 64]
            for i in T.Parallel(64): B_l[i] = 5
            T.copy(B_l, B[bx * 64 : bx * 64 + 64])
    After:  for i in T.Parallel(64): B_l[i] = 5
            T.copy(B_l, B[bx * 64 : bx * 64 + 64])
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import arith, tirx

from tilelang_tt.ir.common import WRITE, as_region, is_global_buffer, prim_func_pass, seq, tile_op_name

PASS = "DropOverwrittenStoresTT"


def _touches(stmt, buf: tirx.Buffer) -> bool:
    found = []
    tirx.stmt_functor.post_order_visit(stmt, lambda n: found.append(n) if isinstance(
        n, (tirx.BufferLoad, tirx.BufferStore)) and n.buffer.same_as(buf) else None)
    return bool(found)


def _overwrites(stmt, store: tirx.BufferStore, analyzer: arith.Analyzer) -> bool:
    """Whether ``stmt`` is a ``T.copy`` into a region of the store's tensor holding its element."""
    if tile_op_name(stmt) != "copy":
        return False
    arg = stmt.value.args[1]
    dst = as_region(arg)
    src = as_region(stmt.value.args[0])
    if dst is None or not dst.buffer.same_as(store.buffer) or not isinstance(arg, tirx.Call) \
            or not int(arg.args[1]) & WRITE or len(dst.starts) != len(store.indices) \
            or src is None or src.buffer.same_as(store.buffer):
        return False
    return all(analyzer.can_prove(tirx.all(start <= index, index < start + extent))
               for start, extent, index in zip(dst.starts, dst.extents, store.indices))


def _drop_in(stmts: list, analyzer: arith.Analyzer) -> list:
    out = []
    for k, stmt in enumerate(stmts):
        if isinstance(stmt, tirx.BufferStore) and is_global_buffer(stmt.buffer):
            later = next((s for s in stmts[k + 1:] if _touches(s, stmt.buffer)), None)
            if later is not None and _overwrites(later, stmt, analyzer):
                continue
        out.append(stmt)
    return out


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    analyzer = arith.Analyzer()

    def post(node):
        if isinstance(node, tirx.SeqStmt):
            kept = _drop_in(list(node.seq), analyzer)
            return seq(kept) if len(kept) < len(node.seq) else None
        return None

    body = tirx.stmt_functor.ir_transform(func.body, None, post, ["tirx.SeqStmt"])
    return func if body.same_as(func.body) else func.with_body(body)


def DropOverwrittenStoresTT():
    return prim_func_pass(_transform, PASS)
