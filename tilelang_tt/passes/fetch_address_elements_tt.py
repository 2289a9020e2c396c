"""D3b FetchAddressElementsTT (reader/writer, before LowerCBIntrinsics): the tensor elements a
data-movement kernel's addresses read are read into its scratch CB first.

Reads: ``tt.kernel_role``, ``tt.tile_dfg`` (the kernel's scratch CB ``<role>_scalars``, which
BuildTileDFGTT made when its addresses read tensor elements), ``tt.cb_desc`` (its id),
``tt.tensor_accessor`` (the tile grid of each tensor read), ``tt.layout_desc``.
Writes: no attribute. TIR: the kernel starts by reserving its scratch CB (reserved once, never
pushed: its L1 is the kernel's own); each named value (``Bind``) and each slice start of a
``tt.read_to_cb`` / ``tt.write_from_cb`` that reads tensor elements (a grouped GEMM's group
offsets) is preceded by the NOC read of the 64 bytes of the tile page holding each element into
that CB and the element out of it (:func:`~tilelang_tt.ir.elements.fetch_elements`), and reads the
value instead. A kernel without a scratch CB is unchanged. Errors: an element of a tensor stored in
a block floating point format (its tile's shared exponents are not in the 64 bytes read).

    Before: g_rows: T.int32 = group_sizes[g]
    After:  T.tt.cb_reserve_back(2, 1)                                  # at the kernel's start
            l1_reader_scalars: T.uint32 = T.tt.get_write_ptr(2)
            ...
            T.tt.noc_async_read_row(g // 32, group_sizes.data, T.Cast("uint32", g % 32 // 16 * 1024), l1_reader_scalars, 64)
            T.tt.noc_async_read_barrier()
            group_sizes_value: T.float32 = T.tt.load_element(l1_reader_scalars, g % 16, "Int32")
            g_rows: T.int32 = T.Cast("int32", group_sizes_value)
"""

from __future__ import annotations

from collections.abc import Mapping

import tilelang  # noqa: F401
from tvm import arith, tirx

from tilelang_tt.ir.attrs import Attr, CBDesc, KernelRole
from tilelang_tt.ir.common import evaluate, keep_span, prim_func_pass, reads_tensor, seq, stmt_intrin
from tilelang_tt.ir.dataflow import scratch_cb
from tilelang_tt.ir.elements import fetch_elements
from tilelang_tt.ir.intrin import Intrin, call
from tilelang_tt.ir.tensors import AccessorDesc

PASS = "FetchAddressElementsTT"


def _with_elements(func, scratch: CBDesc, accessors: Mapping[str, AccessorDesc]) -> tirx.Stmt:
    """The body of a reader or writer with the tensor elements its addresses read (named values,
    slice starts: offsets read from tensors) read into its scratch CB first, and the CB reserved
    for that at its start."""
    ptr = tirx.Var(f"l1_{scratch.name}", "uint32")
    analyzer = arith.Analyzer()

    def post(node):
        if isinstance(node, tirx.Bind) and reads_tensor(node.value):
            fetches, (value,) = fetch_elements(PASS, node, func, [node.value], accessors, analyzer, ptr)
            return seq([*fetches, keep_span(node, tirx.Bind(node.var, value))])
        intrin = stmt_intrin(node)
        if intrin in (Intrin.READ_TO_CB, Intrin.WRITE_FROM_CB):
            position = 0 if intrin == Intrin.READ_TO_CB else 1
            region = node.value.args[position]
            load = region.args[0]
            if not any(map(reads_tensor, load.indices)):
                return None
            fetches, starts = fetch_elements(PASS, node, func, list(load.indices), accessors, analyzer, ptr)
            args = list(node.value.args)
            args[position] = tirx.Call(region.dtype, region.op, [tirx.BufferLoad(load.buffer, starts), *region.args[1:]])
            return seq([*fetches, keep_span(node, tirx.Evaluate(tirx.Call(node.value.dtype, node.value.op, args)))])
        return None

    body = tirx.stmt_functor.ir_transform(func.body, None, post, ["tirx.Bind", "tirx.Evaluate"])
    return seq([evaluate(Intrin.CB_RESERVE_BACK, scratch.index, 1),
                tirx.Bind(ptr, call(Intrin.GET_WRITE_PTR, scratch.index, dtype="uint32")), body])


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    role = Attr.KERNEL_ROLE.read(func)
    scratch = scratch_cb(func, role) if role in (KernelRole.READER, KernelRole.WRITER) else None
    if scratch is None:
        return func
    return func.with_body(_with_elements(func, Attr.CB_DESC.read(func)[scratch], Attr.TENSOR_ACCESSOR.read(func)))


def FetchAddressElementsTT():
    return prim_func_pass(_transform, PASS)
