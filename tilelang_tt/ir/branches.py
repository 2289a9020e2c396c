"""Branches around tile work (``if cond: T.copy ..; T.gemm ..``) and the values their conditions
read from tensors, for the passes that name, check, hand on and split them (CheckKernelFormsTT,
NameValueConditionsTT, BuildTileDFGTT, SplitDeviceKernel, LowerTTTileIntrinsics).

The reader, compute and writer kernels each take every branch around tile work, so each must see
the same condition. A condition of the block coordinates, loop variables and sizes each kernel
computes itself; a condition reading a tensor (``if counts[bx] > 0:``) only a data-movement kernel
can read: the reader reads it once and hands it to compute and the writer (:func:`branch_values`
finds those values, SplitDeviceKernel hands them on)."""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.common import as_region, const_int, contains, is_global_buffer, reads_tensor, tile_op_name, uses_var
from tilelang_tt.ir.slices import bound_values


def around_tile_work(node) -> bool:
    """Whether ``node`` is an ``if`` around tile operations (T.copy, T.gemm, a T.Parallel nest...)."""
    return isinstance(node, tirx.IfThenElse) and contains(node, lambda n: tile_op_name(n) is not None or (
        isinstance(n, tirx.For) and n.kind == tirx.ForKind.PARALLEL))


def skipped_reads(branch: tirx.IfThenElse) -> bool:
    """Whether ``branch`` only reads blocks from tensors and accumulates their product
    (``if mask[by, bx, k]: T.copy(A.., a); T.copy(B.., b); T.gemm(a, b, acc)``, block-sparse GEMM):
    then the reader alone decides, reading zero blocks when the condition fails, and the gemm adds
    zero. No else, no other statement, every gemm accumulating (not clear_accum) from blocks the
    branch reads."""
    if branch.else_case is not None:
        return False
    stmts = list(branch.then_case.seq) if isinstance(branch.then_case, tirx.SeqStmt) else [branch.then_case]
    read = []
    for stmt in stmts:
        name = tile_op_name(stmt)
        if name == "copy":
            src, dst = (as_region(a) for a in stmt.value.args[:2])
            if src is None or dst is None or not is_global_buffer(src.buffer) or is_global_buffer(dst.buffer):
                return False
            read.append(dst.buffer)
        elif name == "gemm":
            a, b = (as_region(x) for x in stmt.value.args[:2])
            clear = stmt.value.args[9] if len(stmt.value.args) > 9 else None
            if a is None or b is None or not any(a.buffer.same_as(r) for r in read) or not any(
                    b.buffer.same_as(r) for r in read) or (clear is not None and const_int(clear)):
                return False
        else:
            return False
    return bool(read)


def branch_values(body) -> list[tirx.Var]:
    """The named values (``Bind``) an ``if``'s condition reads that are read from tensor elements
    (directly or through other named values): the values the reader reads and hands to the kernels
    that take the branch too, in program order."""
    values = bound_values(body)
    conditions = []
    tirx.stmt_functor.post_order_visit(body, lambda n: conditions.append(n.condition)
                                       if isinstance(n, tirx.IfThenElse) else None)
    out = []

    def visit(node):
        if isinstance(node, tirx.Bind) and reads_tensor(values[node.var]) and any(
                uses_var(c, node.var) for c in conditions):
            out.append(node.var)
        return True

    tirx.stmt_functor.pre_order_visit(body, visit)
    return out
