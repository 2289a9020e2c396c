"""C1 LowerSharedToCB: tile copies between global tensors and on-chip buffers become abstract
CB data movement (protocol-less).

Reads: ``T.copy`` tile ops and buffer scopes (shared/fragment buffers are conceptual CBs).
Writes: no attribute. TIR: ``T.copy(global_slice, cb)`` → ``tt.read_to_cb(global_slice, cb)``;
``T.copy(cb, global_slice)`` → ``tt.write_from_cb(cb, global_slice)``. No NOC or CB calls yet.
Copies between two on-chip buffers are compute (a copy or cast through DST) and are left for C2.
Errors: copies between two global tensors.

    Before: T.copy(T.region(A[by * 64, k * 32], 1, 64, 32), T.region(A_s[0, 0], 2, 64, 32))
    After:  T.tt.read_to_cb(T.region(A[by * 64, k * 32], 1, 64, 32), T.region(A_s[0, 0], 2, 64, 32))
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.ir.common import (
    as_region,
    error,
    evaluate,
    is_cb_buffer,
    is_global_buffer,
    prim_func_pass,
    tile_op_name,
)

PASS = "LowerSharedToCB"


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    def post(node):
        if tile_op_name(node) != "copy":
            return None
        src_arg, dst_arg = node.value.args[0], node.value.args[1]
        src, dst = as_region(src_arg), as_region(dst_arg)
        if src is None or dst is None:
            raise error(PASS, func, node, "T.copy with a non-static slice", "use slices with constant extents")
        if is_global_buffer(src.buffer) and is_cb_buffer(dst.buffer):
            return evaluate(Intrin.READ_TO_CB, src_arg, dst_arg, like=node)
        if is_cb_buffer(src.buffer) and is_global_buffer(dst.buffer):
            return evaluate(Intrin.WRITE_FROM_CB, src_arg, dst_arg, like=node)
        if is_cb_buffer(src.buffer) and is_cb_buffer(dst.buffer):
            return None  # an on-chip copy (or cast) is compute: C2 lowers it
        raise error(
            PASS, func, node,
            f"T.copy from `{src.buffer.name}` ({src.buffer.scope()}) to `{dst.buffer.name}` ({dst.buffer.scope()}) is not supported",
            "copy through an on-chip block: T.copy(src, block) then T.copy(block, dst)",
        )

    return func.with_body(tirx.stmt_functor.ir_transform(func.body, None, post, ["tirx.Evaluate"]))


def LowerSharedToCB():
    return prim_func_pass(_transform, PASS)
