"""D3 AssertTensorIndicesTT (reader/writer, after OrderReductionTT, before FetchAddressElementsTT):
an index read from a tensor is checked at run time before the kernel reads or writes at it.

A value read from a tensor that indexes another tensor (a grouped GEMM's expert id ``B[expert_id,
n0:n0 + 64, k0:k0 + 32]``, an offset table ``true_offsets[expert_id]``) has a range no analysis of
the kernel knows: the access is in range iff the value is, which only the run decides. B1
(``slice_checks.check_slices``) accepts such a batch index; this pass makes the data-movement kernel
that reads or writes at it check it first, with tt-metal's ``ASSERT`` (api/debug/assert.h: on a
device the watcher stops the core and reports the line; the emulator always checks it), rather than
move another tensor's memory in silence. Indices proven in range (the guards the kernel states
through ``T.min`` or the ``if`` statements around the access, the block coordinates' ranges, an index whose dtype keeps it inside: a uint8
value indexes 256 entries) get no check. Checked: each batch (leading) dimension of a
``tt.read_to_cb`` / ``tt.write_from_cb`` slice, whose start plus extent must stay inside the
dimension (the start alone along the rows of a row-major tensor: rows past its end are zeros on
the way in and dropped on the way out), and each index of a tensor element a named value
(``Bind``) reads. An index that itself reads a tensor element directly is first named
(``<tensor>_index``) so the check reads the value FetchAddressElementsTT fetches for it.

Reads: ``tt.kernel_role``, ``tt.layout_desc`` (row-major tensors); the body. Writes no attribute:
``tt.device_assert`` calls before the statements. A compute kernel, and a kernel whose indices are
all proven, are unchanged.

    Before: expert_id: T.int32 = tile_expert_ids[bx]
            T.tt.read_to_cb(T.region(B[expert_id, 0, k * 32], 1, 1, 64, 32), T.region(B_s[0, 0], 2, 64, 32))
    After:  expert_id: T.int32 = tile_expert_ids[bx]
            T.tt.device_assert(0 <= expert_id and expert_id <= 2)
            T.tt.read_to_cb(T.region(B[expert_id, 0, k * 32], 1, 1, 64, 32), T.region(B_s[0, 0], 2, 64, 32))
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.attrs import Attr, KernelRole
from tilelang_tt.ir.common import (
    as_region,
    evaluate,
    is_global_buffer,
    kernel_names,
    keep_span,
    prim_func_pass,
    reads_tensor,
    seq,
    stmt_intrin,
    unique_name,
)
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.ir.slice_checks import guards
from tilelang_tt.ir.slices import bound_analyzer, bound_values, is_row_major, row_slice

PASS = "AssertTensorIndicesTT"


def _indices(func, stmt) -> list[tuple[tirx.Buffer, tirx.PrimExpr, tirx.PrimExpr, tirx.PrimExpr]]:
    """(tensor, index, extent, dimension size) of the tensor indices ``stmt`` moves data at: the batch
    dimensions of a ``tt.read_to_cb`` / ``tt.write_from_cb`` slice, every index of a tensor element a
    ``Bind`` reads."""
    if isinstance(stmt, tirx.Bind):
        loads = []
        tirx.stmt_functor.post_order_visit(stmt.value, lambda n: loads.append(n) if isinstance(
            n, tirx.BufferLoad) and is_global_buffer(n.buffer) else None)
        return [(load.buffer, index, tirx.const(1, index.dtype), size)
                for load in loads for index, size in zip(load.indices, load.buffer.shape)]
    intrin = stmt_intrin(stmt)
    if intrin not in (Intrin.READ_TO_CB, Intrin.WRITE_FROM_CB):
        return []
    region = as_region(stmt.value.args[0 if intrin == Intrin.READ_TO_CB else 1])
    rows = row_slice(region).axis if is_row_major(func, region.buffer) else None
    one = tirx.const(1, "int32")  # the rows of a row-major slice past the end are zeros: it starts inside
    return [(region.buffer, region.starts[d], one if d == rows else region.extents[d], region.buffer.shape[d])
            for d in range(len(region.buffer.shape) - 2)]


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    if Attr.KERNEL_ROLE.read(func) not in (KernelRole.READER, KernelRole.WRITER):
        return func
    values = bound_values(func.body)
    analyzer = bound_analyzer(func.body)
    taken = kernel_names(func) | {v.name for v in values}
    conditions = guards(func.body)

    def proven(cond, node) -> bool:
        """Whether ``cond`` holds where ``node`` stands: from the ranges and values the analyzer
        knows (the named values substituted) or the conditions of the ``if`` statements around it
        (``if expert_id < 3:``, over the names as the kernel wrote them)."""
        if analyzer.can_prove(tirx.stmt_functor.substitute(cond, values)):
            return True
        facts = conditions.get(node, [])
        if not facts:
            return False
        with analyzer.constraint_scope(facts[0] if len(facts) == 1 else tirx.all(*facts)):
            return analyzer.can_prove(cond)

    def post(node):
        checks, named = [], []
        for tensor, index, extent, size in _indices(func, node):
            value = tirx.stmt_functor.substitute(index, values)
            if not reads_tensor(value):
                continue  # B1 proved it (check_slices), or the kernel's own guards decide
            low, high = (not proven(c, node) for c in (index >= 0, index + extent <= size))
            if not (low or high):
                continue
            if reads_tensor(index):  # read directly: named, so the check reads the fetched value
                var = tirx.Var(unique_name(f"{tensor.name}_index", taken), index.dtype)
                taken.add(var.name)
                named.append(keep_span(node, tirx.Bind(var, index)))
                index = var
            conds = [c for c, unproven in ((index >= 0, low), (index + extent <= size, high)) if unproven]
            cond = analyzer.simplify(conds[0] if len(conds) == 1 else tirx.And(*conds))
            checks.append(evaluate(Intrin.DEVICE_ASSERT, cond, like=node))
        return seq([*named, *checks, node]) if checks else None

    body = tirx.stmt_functor.ir_transform(func.body, None, post, ["tirx.Bind", "tirx.Evaluate"])
    return func if body.same_as(func.body) else func.with_body(body)


def AssertTensorIndicesTT():
    return prim_func_pass(_transform, PASS)
