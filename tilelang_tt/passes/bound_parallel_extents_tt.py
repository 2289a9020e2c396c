"""BoundParallelExtentsTT (front, before CheckKernelFormsTT): a ``T.Parallel`` loop over an extent
known only at run time whose largest value is known when compiling becomes the loop over that
largest value, its body guarded by the run-time extent.

A ``T.Parallel`` nest works on one block of constant shape (CheckKernelFormsTT): its extent sizes the
block. An extent the kernel bounds (``span = T.min(valid_len, 512)``, a size clamped by a constant)
has a largest value the analyzer finds from the values named before the loop; the nest then runs
over that many elements and each statement stores only where its index is below the run-time
extent, as the user's loop did: ``if i < span`` in the innermost loop of the nest is a guard the
later passes know (a store into a tensor copied out under ``tt.valid_rows``: the writer writes the
valid rows, or the valid elements of a vector). An extent without such a bound is left for
CheckKernelFormsTT to refuse.

Reads the body; writes no attribute. Every new statement keeps the loop's span.

    Before: span: T.int32 = T.min(valid_len, 512)
            for i in T.Parallel(span):
                B[i] = A[i] - T.float32(1)
    After:  span: T.int32 = T.min(valid_len, 512)
            for i in T.Parallel(512):
                if i < span:
                    B[i] = A[i] - T.float32(1)
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.common import const_int, keep_span, prim_func_pass
from tilelang_tt.ir.slices import bound_analyzer

PASS = "BoundParallelExtentsTT"
# the largest nest the rewrite makes: beyond it the bound is no block size (a 32-bit size's range)
LARGEST = 1 << 16


def _guard_innermost(body: tirx.Stmt, cond, loop: tirx.For) -> tirx.Stmt:
    """``body`` with ``cond`` guarding the body of the innermost ``T.Parallel`` loop of the nest it
    starts (a nest's guards stand inside it: ``for i, j in T.Parallel(..): if i < span: ..``)."""
    if isinstance(body, tirx.For) and body.kind == tirx.ForKind.PARALLEL:
        return tirx.For(body.loop_var, body.min, body.extent, body.kind, _guard_innermost(body.body, cond, loop),
                        body.thread_binding, body.annotations)
    return keep_span(loop, tirx.IfThenElse(cond, body, None))


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    analyzer = bound_analyzer(func.body)

    def post(node):
        if node.kind != tirx.ForKind.PARALLEL or const_int(node.extent) is not None:
            return None
        largest = analyzer.const_int_bound(node.extent).max_value
        if largest > LARGEST:
            return None
        body = _guard_innermost(node.body, node.loop_var < node.extent, node)
        return keep_span(node, tirx.For(node.loop_var, node.min, tirx.const(largest, node.extent.dtype), node.kind,
                                        body, node.thread_binding, node.annotations))

    body = tirx.stmt_functor.ir_transform(func.body, None, post, ["tirx.For"])
    return func if body.same_as(func.body) else func.with_body(body)


def BoundParallelExtentsTT():
    return prim_func_pass(_transform, PASS)
