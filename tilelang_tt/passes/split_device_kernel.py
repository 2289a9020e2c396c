"""D1 SplitDeviceKernel (late): one monolithic kernel → reader, compute and writer PrimFuncs.

Reads: ``tt.tile_dfg`` (which CBs the compute kernel packs into).
Writes: per new function ``tt.kernel_role`` and ``tt.source_func``; every other attribute is
carried over. The module's ``main`` is replaced by ``main_reader``, ``main_compute``,
``main_writer`` (named after the user's function).
TIR: each role keeps the statements it executes, with the loops and bindings around them:
the reader ``tt.read_to_cb``, the writer ``tt.write_from_cb``, compute the compute intrinsics
and ``tt.pack_block``. Where the writer drains a CB the compute kernel fills and no explicit
``tt.pack_block`` exists (element-wise), compute gets ``tt.pack_block`` of the whole block at the
position of the write. The on-chip allocation block is unwrapped (CBs are now ids in
``tt.cb_desc``); loops left empty are dropped.

    Before: for k: read_to_cb(A..); read_to_cb(B..); mm.mma(A_s, B_s, C_l, ...)
            pack_block(C_l, ...); write_from_cb(C_l, C[..])
    After:  main_reader:  for k: read_to_cb(A..); read_to_cb(B..)
            main_compute: for k: mm.mma(...); pack_block(...)
            main_writer:  write_from_cb(C_l, C[..])
"""

from __future__ import annotations

import tilelang  # noqa: F401
import tvm
from tvm import tirx

from tilelang_tt.attrs import Attr, Intrin, KernelRole, get, with_attrs
from tilelang_tt.passes.common import (
    TILE,
    as_region,
    evaluate,
    func_name,
    keep_span,
    module_pass,
    seq,
    stmt_intrin,
    uses_var,
)

PASS = "SplitDeviceKernel"
ROLE_OF = {
    Intrin.READ_TO_CB: KernelRole.READER,
    Intrin.WRITE_FROM_CB: KernelRole.WRITER,
    Intrin.MM_MMA: KernelRole.COMPUTE,
    Intrin.FPU_BINARY: KernelRole.COMPUTE,
    Intrin.PACK_BLOCK: KernelRole.COMPUTE,
}


def _has_explicit_pack(body, data) -> bool:
    found = []

    def visit(node):
        if stmt_intrin(node) == Intrin.PACK_BLOCK and node.value.args[0].same_as(data):
            found.append(node)

    tirx.stmt_functor.post_order_visit(body, visit)
    return bool(found)


def _slice(stmt, role: KernelRole, body_root, compute_packs: set[str]):
    """The part of ``stmt`` executed by ``role`` (None when nothing)."""
    if isinstance(stmt, tirx.SeqStmt):
        parts = [p for p in (_slice(s, role, body_root, compute_packs) for s in stmt.seq) if p is not None]
        kept = [p for p in parts if not isinstance(p, tirx.Bind)]
        if not kept:
            return None
        # keep only bindings whose variable is used later
        out = []
        for idx, p in enumerate(parts):
            if isinstance(p, tirx.Bind) and not any(uses_var(q, p.var) for q in parts[idx + 1:]):
                continue
            out.append(p)
        return seq(out)
    if isinstance(stmt, tirx.For):
        body = _slice(stmt.body, role, body_root, compute_packs)
        if body is None:
            return None
        return keep_span(stmt, tirx.For(stmt.loop_var, stmt.min, stmt.extent, tirx.ForKind.SERIAL, body))
    if isinstance(stmt, tirx.AttrStmt):
        body = _slice(stmt.body, role, body_root, compute_packs)
        return keep_span(stmt, tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value, body or tirx.Evaluate(0)))
    if isinstance(stmt, tirx.SBlockRealize):
        return _slice(stmt.block.body, role, body_root, compute_packs)
    if isinstance(stmt, tirx.Bind):
        return stmt
    intrin = stmt_intrin(stmt)
    if intrin is None:
        return None
    if intrin == Intrin.WRITE_FROM_CB and role == KernelRole.COMPUTE:
        src = as_region(stmt.value.args[0])
        if src.buffer.name in compute_packs and not _has_explicit_pack(body_root, src.buffer.data):
            rows, cols = int(src.buffer.shape[0]) // TILE, int(src.buffer.shape[1]) // TILE
            return evaluate(Intrin.PACK_BLOCK, src.buffer.data, 0, 0, rows, cols, like=stmt)
        return None
    return stmt if ROLE_OF.get(intrin) == role else None


def split(func: tirx.PrimFunc) -> dict[str, tirx.PrimFunc]:
    name = func_name(func)
    dfg = get(func, Attr.TILE_DFG, {})
    compute_packs = {cb for cb, e in dfg.items() if e["producer"] == "compute" and e["consumer"] == "writer"}
    out = {}
    for role in (KernelRole.READER, KernelRole.COMPUTE, KernelRole.WRITER):
        body = _slice(func.body, role, func.body, compute_packs) or tirx.Evaluate(0)
        kernel = tirx.PrimFunc(func.params, body, func.ret_type, func.buffer_map, func.attrs, func.span)
        kernel = with_attrs(kernel, {Attr.KERNEL_ROLE: role, Attr.SOURCE_FUNC: name})
        kernel = kernel.with_attr("global_symbol", f"{name}_{role.value}")
        out[f"{name}_{role.value}"] = kernel
    return out


def _transform(mod: tvm.IRModule, ctx) -> tvm.IRModule:
    funcs = {}
    for gv, func in mod.functions.items():
        if isinstance(func, tirx.PrimFunc) and get(func, Attr.KERNEL_ROLE) in (None, KernelRole.MONOLITHIC.value):
            funcs.update(split(func))
        else:
            funcs[gv.name_hint] = func
    return tvm.IRModule(funcs)


def SplitDeviceKernel():
    return module_pass(_transform, PASS)
