"""C3c MarkMultiStoresTT: the copies of one value of a block into several tensors, under ``tt.multi_store``.

A block copied into several tensors (a result written to an output and to a cache) is one CB the writer drains
(BuildTileDFGTT made it: one producer, the writer its consumer): each run of copies of one value of the block,
statements of one sequence with no statement between them giving the block a value (other work may be between),
goes under ``tt.multi_store`` scopes (``MultiStore`` flags): compute hands the block on at the first copy, the
writer writes the CB's pages at each and pops them after the last (InsertDSTManagementTT, LowerCBIntrinsics).
Reads: ``tt.write_from_cb`` (maybe under ``tt.valid_rows``), the statements giving blocks values
(``tt.read_to_cb``, ``tt.generate_block``, compute intrinsics, ``tt.accumulate`` scopes). Writes: no attribute.
Before: each copy of a block into a tensor a plain statement. After: each copy of a run of two or more under a
``tt.multi_store`` scope on the block's data, the flags saying which copy hands the block on and which pops it.
Errors: a copy of a block's value inside a branch or loop after a copy of the same value.

    Before: T.tt.write_from_cb(T.region(F[0, 0], 1, 32, 32), T.region(C[by * 32, 0], 2, 32, 32))
            T.tt.write_from_cb(T.region(F[0, 0], 1, 32, 32), T.region(D[by * 32, 0], 2, 32, 32))
    After:  with T.attr(F.data, "tt.multi_store", 1): T.tt.write_from_cb(.. C ..)
            with T.attr(F.data, "tt.multi_store", 2): T.tt.write_from_cb(.. D ..)
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.attrs import MultiStore, Scope
from tilelang_tt.ir.common import allocations, as_region, error, keep_span, prim_func_pass, stmt_intrin
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.ops import compute_writes

PASS = "MarkMultiStoresTT"


def _store_of(stmt):
    """The data of the block a top-level copy into a tensor (a ``tt.write_from_cb``, maybe under
    ``tt.valid_rows``) copies out, else None."""
    while isinstance(stmt, tirx.AttrStmt) and stmt.attr_key == Scope.VALID_ROWS.value:
        stmt = stmt.body
    return as_region(stmt.value.args[0]).buffer.data if stmt_intrin(stmt) == Intrin.WRITE_FROM_CB else None


def _touches(stmt, block, blocks) -> tuple[bool, object]:
    """(whether ``stmt`` gives the block of data ``block`` a value: a read into it, a compute op or scope
    writing it; the first copy of the block into a tensor nested in it, or None). ``blocks``: each block's data
    Var to itself, the table the ops name the blocks they write through (``compute_writes``): they name them by
    object, not by name."""
    writes, copies = [], []

    def visit(node):
        intrin = stmt_intrin(node)
        if intrin == Intrin.WRITE_FROM_CB:
            if as_region(node.value.args[0]).buffer.data.same_as(block):
                copies.append(node)
        elif intrin in (Intrin.READ_TO_CB, Intrin.GENERATE_BLOCK):
            writes.append(as_region(node.value.args[1 if intrin == Intrin.READ_TO_CB else 0]).buffer.data.same_as(block))
        elif isinstance(node, tirx.Evaluate):
            writes.append(any(block.same_as(w) for w in compute_writes(node, blocks)))
        elif isinstance(node, tirx.AttrStmt) and node.attr_key == Scope.ACCUMULATE.value:
            writes.append(node.node.same_as(block))

    tirx.stmt_functor.post_order_visit(stmt, visit)
    return any(writes), (copies[0] if copies else None)


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    """The runs of each sequence marked (module docstring). A copy of a run's value inside a branch or loop of the
    sequence is refused: the writer would pop the block's pages once per run, and the run's last copy is not known."""
    blocks = {buf.data: buf.data for buf in allocations(func)}

    def post(node):
        items = list(node.seq)
        runs: list[list[int]] = []
        for k, item in enumerate(items):
            block = _store_of(item)
            if block is None or any(k in run for run in runs):
                continue
            run = [k]
            for m in range(k + 1, len(items)):
                other = _store_of(items[m])
                if other is not None and other.same_as(block):
                    run.append(m)
                    continue
                writes, nested = _touches(items[m], block, blocks)
                if writes:
                    break
                if nested is not None:
                    name = block.name
                    raise error(PASS, func, nested, f"`{name}` is copied into a tensor here, inside a branch or loop, "
                                "and before it with the same value: the copies of one value of a block are statements "
                                "of one sequence", f"copy `{name}` next to its first copy, outside the branch or "
                                f"loop, or into a block of its own there first (T.copy({name}, {name}_2); "
                                f"T.copy({name}_2, <tensor slice>))")
            if len(run) > 1:
                runs.append(run)
        if not runs:
            return None
        for run in runs:
            block = _store_of(items[run[0]])
            for k in run:
                flags = (MultiStore.HANDS if k == run[0] else 0) | (MultiStore.POPS if k == run[-1] else 0)
                items[k] = keep_span(items[k], tirx.AttrStmt(block, Scope.MULTI_STORE.value,
                                                             tirx.IntImm("int32", int(flags)), items[k]))
        return tirx.SeqStmt(items)

    body = tirx.stmt_functor.ir_transform(func.body, None, post, ["tirx.SeqStmt"])
    return func if body.same_as(func.body) else func.with_body(body)


def MarkMultiStoresTT():
    return prim_func_pass(_transform, PASS)
