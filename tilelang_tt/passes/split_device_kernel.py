"""D1 SplitDeviceKernel (late): one monolithic kernel → reader, compute and writer PrimFuncs.

Reads: ``tt.cb_desc`` (whether a reduce scaler CB exists), ``tt.tile_dfg`` (which data-movement
kernel reads each block: BalanceDataMovementTT).
Writes: per new function ``tt.kernel_role`` and ``tt.source_func``; every other attribute is
carried over, less the ``tt.cb_desc`` entry of a block whose every write now packs straight into
its hand-off CB (it needs no CB of its own; ``tt.tile_dfg`` keeps its route to the hand-off). The module's ``main`` is replaced by ``main_reader``, ``main_compute``,
``main_writer`` (named after the user's function).
TIR: each role keeps the statements it executes, with the loops and bindings around them:
the reader ``tt.read_to_cb`` and ``tt.generate_block`` (and, first, ``tt.fill_scaler`` of the
reduce scaler), the writer
``tt.write_from_cb`` and the ``tt.read_to_cb`` of the blocks it reads, compute the compute intrinsics and ``tt.accumulate`` scopes plus the
``tt.read_to_cb``/``tt.generate_block``/``tt.write_from_cb`` statements as markers of where blocks
arrive and leave
(D5 turns them into waits and pops); of several copies of one value of a block (``tt.multi_store``), compute
keeps the first copy's marker, the writer every copy with its scope. Every kernel takes every branch it has work in; a value a
branch decides on that is read from tensors (:func:`~tilelang_tt.ir.branches.branch_values`:
NameValueConditionsTT's ``counts_taken``) the reader names from the tensor and sends, just after
naming it, to each other kernel taking such a branch (``tt.send_value(cb, value)`` into that kernel's
value CB, :func:`~tilelang_tt.ir.dataflow.value_cbs`), which names it from ``tt.receive_value(cb)``
instead: all three decide alike, in the same order, and the CB protocols inside the branch stay
balanced; a value CB no kernel takes leaves ``tt.cb_desc``. The on-chip allocation block is unwrapped (CBs are now ids
in ``tt.cb_desc``); loops left empty are dropped. Compute drops the values named from tensor elements
(offsets read from tensors: the reader and writer read them) and its markers start where they used
them at 0.

    Before: for k: read_to_cb(A..); read_to_cb(B..); mm.mma(A_s, B_s, C_l, ...)
            pack_block(C_l, ...); write_from_cb(C_l, C[..])
    After:  main_reader:  for k: read_to_cb(A..); read_to_cb(B..)
            main_compute: for k: read_to_cb(A..); read_to_cb(B..); mm.mma(...)   (markers + compute)
                          pack_block(...); write_from_cb(C_l, C[..])
            main_writer:  write_from_cb(C_l, C[..])

    Before: counts_taken: T.bool = counts[by] > 0; if counts_taken: read_to_cb(A..); eltwise(..); write_from_cb(..)
    After:  main_reader:  counts_taken = counts[by] > 0; send_value(compute_values, counts_taken);
                          send_value(writer_values, counts_taken); if counts_taken: read_to_cb(A..)
            main_compute: counts_taken = receive_value(compute_values) != 0; if counts_taken: ...
            main_writer:  counts_taken = receive_value(writer_values) != 0; if counts_taken: write_from_cb(..)
"""

from __future__ import annotations

import tilelang  # noqa: F401
import tvm
from tvm import tirx

from tilelang_tt.ir.attrs import AccumulateMode, Attr, KernelRole, MultiStore, Scope
from tilelang_tt.ir.branches import branch_values
from tilelang_tt.ir.intrin import Intrin, call
from tilelang_tt.ir.dataflow import handoff_cbs, movers, scaler_cb, value_cbs
from tilelang_tt.ir.common import (
    allocations,
    as_region,
    evaluate,
    func_name,
    keep_span,
    module_pass,
    reads_tensor,
    seq,
    stmt_intrin,
    uses_var,
)

PASS = "SplitDeviceKernel"
COMPUTE_OPS = (Intrin.MM_MMA, Intrin.PACK_BLOCK, Intrin.TILE_ELTWISE, Intrin.TILE_REDUCE)
# a run-time check a front pass states (ClampRunTimeLoopsTT) is the reader's: it reads first
ROLE_OF = {Intrin.GENERATE_BLOCK: KernelRole.READER, Intrin.DEVICE_ASSERT: KernelRole.READER,
           Intrin.WRITE_FROM_CB: KernelRole.WRITER}
ROLE_OF.update({op: KernelRole.COMPUTE for op in COMPUTE_OPS})
# The compute kernel keeps the data-movement statements as markers of where blocks arrive and
# leave: InsertDSTManagementTT turns them into its CB waits and pops and removes them.
COMPUTE_MARKERS = (Intrin.READ_TO_CB, Intrin.GENERATE_BLOCK, Intrin.WRITE_FROM_CB)


def _slice(stmt, role: KernelRole, readers: dict[str, str], sends=None):
    """The part of ``stmt`` executed by ``role`` (None when nothing); ``readers``: the kernel that
    reads each block (:func:`movers`); ``sends``: for the reader, each value it hands on -> the CB
    ids of the kernels it hands it to (sent just after the value is named)."""
    sends = sends or {}
    if isinstance(stmt, tirx.SeqStmt):
        parts = [p for p in (_slice(s, role, readers, sends) for s in stmt.seq) if p is not None]
        if not any(not isinstance(p, tirx.Bind) for p in parts):
            return None
        out = []  # keep only bindings whose variable a statement kept after them uses (from the last one back)
        for p in reversed(parts):
            if isinstance(p, tirx.Bind) and not any(uses_var(q, p.var) for q in out):
                continue
            out.append(p)
        return seq(out[::-1])
    if isinstance(stmt, tirx.For):
        body = _slice(stmt.body, role, readers, sends)
        if body is None:
            return None
        return keep_span(stmt, tirx.For(stmt.loop_var, stmt.min, stmt.extent, tirx.ForKind.SERIAL, body))
    if isinstance(stmt, tirx.AttrStmt):
        body = _slice(stmt.body, role, readers, sends)
        if stmt.attr_key == Scope.READ_WHEN.value:  # the reader's decision; compute keeps the read's marker
            return keep_span(stmt, tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value, body)) if (
                role == KernelRole.READER and body is not None) else body
        if stmt.attr_key == Scope.VALID_ROWS.value:  # the writer's rows; compute keeps the write's marker
            return keep_span(stmt, tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value, body)) if (
                role == KernelRole.WRITER and body is not None) else body
        if stmt.attr_key == Scope.MULTI_STORE.value:  # the writer writes each; compute hands the block on at the first
            if role == KernelRole.WRITER and body is not None:
                return keep_span(stmt, tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value, body))
            return body if int(stmt.value) & MultiStore.HANDS else None
        if stmt.attr_key == Scope.ACCUMULATE.value:
            if role != KernelRole.COMPUTE or body is None:
                return body
            return keep_span(stmt, tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value, body))
        return keep_span(stmt, tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value, body or tirx.Evaluate(0)))
    if isinstance(stmt, tirx.SBlockRealize):
        return _slice(stmt.block.body, role, readers, sends)
    if isinstance(stmt, tirx.IfThenElse):  # every kernel takes it alike (a value it decides on is handed on)
        then = _slice(stmt.then_case, role, readers, sends)
        other = _slice(stmt.else_case, role, readers, sends) if stmt.else_case is not None else None
        if then is None and other is None:
            return None
        return keep_span(stmt, tirx.IfThenElse(stmt.condition, then or tirx.Evaluate(0), other))
    if isinstance(stmt, tirx.Bind):
        handed = [evaluate(Intrin.SEND_VALUE, cb, tirx.Cast("uint32", stmt.var), like=stmt)
                  for cb in sends.get(stmt.var, ())]
        return seq([stmt, *handed]) if handed else stmt
    intrin = stmt_intrin(stmt)
    if intrin is None:
        return None
    if role == KernelRole.COMPUTE and intrin in COMPUTE_MARKERS:
        return stmt
    if intrin == Intrin.READ_TO_CB:
        return stmt if readers[as_region(stmt.value.args[1]).buffer.name] == role.value else None
    return stmt if ROLE_OF.get(intrin) == role else None


def _received(body, values: list, cb: int):
    """``body`` of compute or the writer with each value of ``values`` it decides on received from
    the reader through CB ``cb`` where the value is named, instead of read from tensors."""
    def post(node):
        if not any(node.var.same_as(v) for v in values):
            return None
        got = call(Intrin.RECEIVE_VALUE, cb, dtype="uint32")
        got = tirx.NE(got, tirx.const(0, "uint32")) if node.var.dtype == "bool" else tirx.Cast(node.var.dtype, got)
        return keep_span(node, tirx.Bind(node.var, got))

    return tirx.stmt_functor.ir_transform(body, None, post, ["tirx.Bind"])


def _without_addresses(body):
    """Compute computes no addresses: the values named from tensor elements (offsets read from
    tensors) and from those are dropped, and the markers' slices start at 0 where they used them
    (a marker stands for its block, not for where in the tensor it is)."""
    dropped: list = []

    def device(expr) -> bool:
        return reads_tensor(expr) or any(uses_var(expr, v) for v in dropped)

    def post(node):
        if isinstance(node, tirx.Bind) and device(node.value):
            dropped.append(node.var)
            return tirx.Evaluate(0)
        if stmt_intrin(node) in COMPUTE_MARKERS:
            args = [tirx.Call(a.dtype, a.op, [tirx.BufferLoad(a.args[0].buffer, [
                tirx.const(0, x.dtype) if device(x) else x for x in a.args[0].indices]), *a.args[1:]])
                if as_region(a) is not None and isinstance(a, tirx.Call) else a for a in node.value.args]
            return keep_span(node, tirx.Evaluate(tirx.Call(node.value.dtype, node.value.op, args)))
        return None

    return tirx.stmt_functor.ir_transform(body, None, post, ["tirx.Bind", "tirx.Evaluate"])


def _handoff_vars(func: tirx.PrimFunc) -> dict[tirx.Var, tirx.Var]:
    """Data variable of each block with a hand-off CB -> the one variable that stands for the
    hand-off CB in the compute kernel (made here, once per kernel: the CB has no buffer of its own)."""
    handoffs = handoff_cbs(func)
    blocks = [buf for buf in allocations(func) if buf.name in handoffs]
    return {buf.data: tirx.Var(handoffs[buf.name], buf.data.type_annotation) for buf in blocks}


def _alike_handoffs(func: tirx.PrimFunc, cbs) -> set[tirx.Var]:
    """Data variables of the blocks whose hand-off CB stores their data format (bfloat16 partial sums of a
    bfloat16 output)."""
    handoffs = handoff_cbs(func)
    return {buf.data for buf in allocations(func)
            if buf.name in handoffs and cbs[buf.name].data_format == cbs[handoffs[buf.name]].data_format}


def _route_handoffs(stmt, handoffs: dict[tirx.Var, tirx.Var], alike: set[tirx.Var]):
    """Compute side of a hand-off CB: the final value of X goes to ``X_out`` before the writer
    takes it — the last statement writing X packs straight into ``X_out`` when nothing reads X
    after it (an element-wise op; a gemm accumulation whose packer adds up the partial sums in L1:
    in ``X_out`` itself where it stores X's format (``alike``), as ttnn's matmul shares one block
    between its partials and output CBs, else its K loop's last step packs into ``X_out``:
    ``tt.pack_block``'s ``last``), else an explicit copy is inserted."""
    if isinstance(stmt, tirx.SeqStmt):
        items = [_route_handoffs(s, handoffs, alike) for s in stmt.seq]
        out: list[tirx.Stmt] = []
        for k, s in enumerate(items):
            intrin = stmt_intrin(s)
            data = as_region(s.value.args[0]).buffer.data if intrin == Intrin.WRITE_FROM_CB else None
            if data in handoffs:
                target = handoffs[data]
                last = out[-1] if out else None
                final = last is not None and not any(_mentions(later, data) for later in items[k + 1:])
                if final and stmt_intrin(last) == Intrin.TILE_ELTWISE and last.value.args[0].same_as(data):
                    args = list(last.value.args)
                    out[-1] = evaluate(Intrin.TILE_ELTWISE, target, *args[1:], like=last)
                elif final and _packer_accumulation(last, data):
                    out[-1] = _accumulated_in(last, target) if data in alike else _pack_last_step_into(last, target)
                else:
                    region = as_region(s.value.args[0])
                    i, j = tirx.Var("i", "int32"), tirx.Var("j", "int32")
                    load = tirx.BufferLoad(region.buffer, [i, j][: len(region.buffer.shape)])
                    out.append(evaluate(Intrin.TILE_ELTWISE, target, i, j, load, like=s))
            out.append(s)
        return seq(out)
    if isinstance(stmt, tirx.For):
        return keep_span(stmt, tirx.For(stmt.loop_var, stmt.min, stmt.extent, stmt.kind,
                                        _route_handoffs(stmt.body, handoffs, alike)))
    if isinstance(stmt, tirx.AttrStmt):
        return keep_span(stmt, tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value,
                                             _route_handoffs(stmt.body, handoffs, alike)))
    if isinstance(stmt, tirx.IfThenElse):
        return keep_span(stmt, tirx.IfThenElse(stmt.condition, _route_handoffs(stmt.then_case, handoffs, alike),
                                               None if stmt.else_case is None else _route_handoffs(stmt.else_case,
                                                                                                   handoffs, alike)))
    return stmt


def _packer_accumulation(stmt, block: tirx.Var) -> bool:
    """Whether ``stmt`` is a gemm accumulation of ``block`` whose partial sums the packer adds up in L1
    (``tt.accumulate`` in L1_ACC mode: every K step packs its sums, none is reloaded but at the end)."""
    return (isinstance(stmt, tirx.AttrStmt) and stmt.attr_key == Scope.ACCUMULATE.value
            and stmt.node.same_as(block) and int(stmt.value) == AccumulateMode.L1_ACC)


def _pack_last_step_into(scope: tirx.AttrStmt, target: tirx.Var) -> tirx.Stmt:
    """The accumulation ``scope`` with its K loop's last step packing into the hand-off CB ``target``
    (``tt.pack_block``'s ``last`` argument), as ttnn's matmul packs its last K block into the output CB
    (bmm_large_block_zm_fused_bias_activation.cpp, ``last_out``): no copy of the block after the loop."""
    def post(node):
        if stmt_intrin(node) == Intrin.PACK_BLOCK:
            return evaluate(Intrin.PACK_BLOCK, *node.value.args, target, like=node)
        return None

    return tirx.stmt_functor.ir_transform(scope, None, post, ["tirx.Evaluate"])


def _accumulated_in(scope: tirx.AttrStmt, target: tirx.Var) -> tirx.Stmt:
    """The accumulation ``scope`` of a block accumulating in the hand-off CB ``target`` instead: its partial
    sums stay in the pages compute reserves there, handed to the writer by the last K step (the gemm's D5);
    the block needs no CB of its own."""
    block = scope.node

    def post(node):
        if stmt_intrin(node) in (Intrin.MM_MMA, Intrin.PACK_BLOCK):
            args = [target if isinstance(a, tirx.Var) and a.same_as(block) else a for a in node.value.args]
            return evaluate(stmt_intrin(node), *args, like=node)
        return None

    body = tirx.stmt_functor.ir_transform(scope.body, None, post, ["tirx.Evaluate"])
    return keep_span(scope, tirx.AttrStmt(target, scope.attr_key, scope.value, body))


def _mentions(body, block: tirx.Var) -> bool:
    """Whether compute reads or writes the on-chip block of data variable ``block`` (the variable or
    a region of its buffer), apart from the markers of where the writer takes it (routed to its
    hand-off CB by D5)."""
    found = []

    def visit(n):
        if found or stmt_intrin(n) == Intrin.WRITE_FROM_CB:
            return False
        if (isinstance(n, tirx.Var) and n.same_as(block)) or (
                isinstance(n, (tirx.BufferLoad, tirx.BufferStore)) and n.buffer.data.same_as(block)):
            found.append(n)
        return True

    tirx.stmt_functor.pre_order_visit(body, visit)
    return bool(found)


def split(func: tirx.PrimFunc) -> dict[str, tirx.PrimFunc]:
    name = func_name(func)
    cbs = Attr.CB_DESC.read(func)
    handoffs = _handoff_vars(func)
    scaler = scaler_cb(func)
    readers = movers(func)
    values, value_cb = branch_values(func.body), value_cbs(func)
    bodies, sends, taken = {}, {}, set()
    for role in (KernelRole.COMPUTE, KernelRole.WRITER, KernelRole.READER):  # the reader sends what the others take
        body = _slice(func.body, role, readers, sends if role == KernelRole.READER else None) or tirx.Evaluate(0)
        if role != KernelRole.READER:
            used = [v for v in values if uses_var(body, v)]
            if used:
                cb = cbs[value_cb[role.value]].index
                body = _received(body, used, cb)
                taken.add(value_cb[role.value])
                for v in used:
                    sends.setdefault(v, []).append(cb)
        if role == KernelRole.COMPUTE:
            body = _without_addresses(body)
        if role == KernelRole.COMPUTE and handoffs:
            body = _route_handoffs(body, handoffs, _alike_handoffs(func, cbs))
        if role == KernelRole.READER and scaler is not None:
            body = seq([evaluate(Intrin.FILL_SCALER, cbs[scaler].index, tirx.FloatImm("float32", 1.0)), body])
        bodies[role] = body
    # a block whose every write now packs straight into its hand-off CB needs no CB of its own
    unused = {data.name for data in handoffs if not _mentions(bodies[KernelRole.COMPUTE], data)}
    unused |= set(value_cb.values()) - taken  # a kernel that takes no branch on values receives none
    out = {}
    for role in (KernelRole.READER, KernelRole.COMPUTE, KernelRole.WRITER):
        body = bodies[role]
        kernel = tirx.PrimFunc(func.params, body, func.ret_type, func.buffer_map, func.attrs, func.span)
        kernel = Attr.SOURCE_FUNC.write(Attr.KERNEL_ROLE.write(kernel, role), name)
        if unused:
            kernel = Attr.CB_DESC.write(kernel, {k: v for k, v in cbs.items() if k not in unused})
        kernel = kernel.with_attr("global_symbol", f"{name}_{role.value}")
        out[f"{name}_{role.value}"] = kernel
    return out


def _transform(mod: tvm.IRModule, ctx) -> tvm.IRModule:
    funcs = {}
    for gv, func in mod.functions.items():
        if isinstance(func, tirx.PrimFunc) and Attr.KERNEL_ROLE.read(func) in (None, KernelRole.MONOLITHIC):
            funcs.update(split(func))
        else:
            funcs[gv.name_hint] = func
    return tvm.IRModule(funcs)


def SplitDeviceKernel():
    return module_pass(_transform, PASS)
