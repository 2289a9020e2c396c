"""NameValueConditionsTT (front, after CheckKernelFormsTT): the condition of an ``if`` around tile
work that reads tensor elements (``if counts[bx] > 0:``, routing blocks by a tensor, skipping
empty groups) becomes a named value the branch tests.

The reader, compute and writer kernels each take the branch; compute cannot read a tensor. Named,
the condition is a value read from tensor elements like an offset (``g = group_offsets[bx]``):
the reader reads it once (FetchAddressElementsTT) and SplitDeviceKernel hands it to the kernels
that take the branch through a CB (``tt.send_value`` / ``tt.receive_value``), so all three agree.

Reads the body; writes no attribute. Leaves alone a branch that only reads blocks and accumulates
their gemm (:func:`~tilelang_tt.ir.branches.skipped_reads`: the reader alone decides, reading
zero blocks), and conditions of block coordinates, loop variables and sizes (each kernel computes
them). Before: an ``if`` whose condition reads a tensor; after: a ``Bind`` of the condition, as a
bool, just before the ``if``, whose condition is that value. The named values of the condition are
expanded in it (the compute and writer kernels need only the condition). Invented names are unique.

    Before: if counts[bx] > 0:
                T.copy(A[bx * 32, 0], a) ...
    After:  counts_taken: T.bool = counts[bx] > 0
            if counts_taken:
                T.copy(A[bx * 32, 0], a) ...
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.branches import around_tile_work, skipped_reads
from tilelang_tt.ir.common import kernel_names, keep_span, prim_func_pass, reads_tensor, seq, tensor_loads, unique_name
from tilelang_tt.ir.slices import bound_values

PASS = "NameValueConditionsTT"


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    values = bound_values(func.body)
    taken = kernel_names(func)
    changed = []

    def post(node):
        if not around_tile_work(node) or skipped_reads(node):
            return None
        condition = tirx.stmt_functor.substitute(node.condition, values)
        if not reads_tensor(condition):
            return None
        name = unique_name(f"{tensor_loads(condition)[0].buffer.name}_taken", taken)
        taken.add(name)
        flag = tirx.Var(name, "bool")
        changed.append(flag)
        bind = keep_span(node, tirx.Bind(flag, condition))
        return seq([bind, keep_span(node, tirx.IfThenElse(flag, node.then_case, node.else_case))])

    body = tirx.stmt_functor.ir_transform(func.body, None, post, ["tirx.IfThenElse"])
    return func.with_body(body) if changed else func


def NameValueConditionsTT():
    return prim_func_pass(_transform, PASS)
