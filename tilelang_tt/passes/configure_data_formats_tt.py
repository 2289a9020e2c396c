"""E3 ConfigureDataFormatsTT (late, compute): the unpackers' and the packer's data formats before each op.

On the device each of the compute engine's three format configurations, unpacker A (SrcA), unpacker B (SrcB)
and the packer, reads and writes tiles in the formats it was last configured for, whatever the CB an op names:
``compute_kernel_hw_startup`` configures the three from the kernel's first op's CBs, and after that only
``reconfig_data_format_srca/_srcb`` and ``pack_reconfig_data_format`` (and pack untilize's init and uninit, the
packer to their output CB) change them; no op init does (tt-metal 0.81.1 api/compute/compute_kernel_hw_startup.h:
"If the operands for the next operation require a different data format than what was configured here, you must
call one of the reconfig_data_format functions before proceeding with the next initialization";
tile_move_copy.h copy_init "does not reconfigure the unpacker data types"). A tile unpacked or packed in other
formats is garbage on silicon (the emulator stops at it: runtime/engine_formats.cpp). This pass decides every
reconfiguration of the kernel, in one place, from the CBs' formats.

Reads: ``tt.kernel_role``, ``tt.cb_desc`` (formats), ``tt.compute_config`` (``unpack_to_dest``: a float32 CB
unpacked straight to DST is another configuration than one read through SrcA), the compute kernel's engine
calls (D4, D5) in the final loops (after MaterializeCoreLoopTT: the core's blocks are a loop, whose iterations
each start in the configuration the last one left). Writes: no attribute; ``tt.unpack_reconfig(source, cb)`` and ``tt.pack_reconfig(cb)``.

Which configuration each call uses is the LLK's (the same table as the emulator's): an FPU binary op and its
init read in0 through A and in1 through B (llk_unpack_AB); matmul in0 through B and in1 through A
(llk_unpack_AB_matmul_api.h); copy, transpose, tilize and pack untilize's unpack through A; a broadcast through B
unless its CB unpacks to DST (llk_unpack_A.h _llk_unpack_A_address_on_unpacker_A_); reduce the data through A and
the scaler through B, swapped for a row sum (llk_unpack_AB_reduce_api.h:47); packs through the packer.

Before: a kernel's statements in order, each engine's configuration (a CB format) known after
``compute_kernel_hw_startup``. A call whose CB needs another configuration gets the reconfiguration right before
it (so before the op's init when the init names the CB, as the API asks). A loop whose body uses one
configuration of an engine, and sets none, has it configured before the loop instead of in every iteration; else
an engine whose configuration the body changes is unknown at the body's start (reconfigured at its first use
there). After a branch or a loop an engine is known where every path agrees.

    Before: T.tt.engine.init_common(0, 1, 16, T.bool(True))            # SrcA: B_s (bfloat16)
            for k in range(4):
                T.tt.copy_init(16); T.tt.copy_tile(16, 0, 0)            # C_l, float32: the partial sums again
                T.tt.fpu.matmul_block_init(0, 1, ...); T.tt.fpu.matmul_block(0, 1, ...)
    After:  T.tt.engine.init_common(0, 1, 16, T.bool(True))
            for k in range(4):
                T.tt.unpack_reconfig("a", 16); T.tt.copy_init(16); T.tt.copy_tile(16, 0, 0)
                T.tt.unpack_reconfig("a", 1); T.tt.fpu.matmul_block_init(0, 1, ...); T.tt.fpu.matmul_block(0, 1, ...)
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.attrs import Attr, KernelRole
from tilelang_tt.ir.common import evaluate, keep_span, prim_func_pass, seq, stmt_intrin
from tilelang_tt.ir.intrin import Intrin

PASS = "ConfigureDataFormatsTT"

SRCA, SRCB, PACK = 0, 1, 2
SOURCES = {SRCA: "a", SRCB: "b"}
INTEGERS = ("Int32", "UInt32")


class _Formats:
    """The configuration key of each CB: its format, and for the unpackers whether it unpacks to DST."""

    def __init__(self, func: tirx.PrimFunc):
        cbs = Attr.CB_DESC.read(func).values()
        to_dest = set(Attr.COMPUTE_CONFIG.read(func).unpack_to_dest)
        self.format = {cb.index: cb.data_format for cb in cbs}
        self.to_dest = {cb.index for cb in cbs if cb.name in to_dest or cb.data_format in INTEGERS}

    def key(self, engine: int, cb: int) -> tuple:
        return (self.format[cb],) if engine == PACK else (self.format[cb], cb in self.to_dest)


def _cbs(args, *positions) -> list[int]:
    return [int(args[p]) for p in positions]


def _engine_calls(stmt, formats: _Formats) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """((engine, cb) the call unpacks or packs through, (engine, cb) it configures)."""
    intrin = stmt_intrin(stmt)
    if intrin is None:
        return [], []
    args = stmt.value.args
    if intrin == Intrin.HW_STARTUP:
        a, b, out = _cbs(args, 0, 1, 2)
        if len(args) > 3 and int(args[3]):
            a, b = b, a
        return [], [(SRCA, a), (SRCB, b), (PACK, out)]
    if intrin == Intrin.UNPACK_RECONFIG:
        return [], [(SRCA if args[0].value == "a" else SRCB, int(args[1]))]
    if intrin in (Intrin.PACK_RECONFIG, Intrin.PACK_UNTILIZE_UNINIT):
        return [], [(PACK, int(args[0]))]
    if intrin == Intrin.PACK_UNTILIZE_INIT:
        return [], [(PACK, int(args[3]))]
    if intrin in (Intrin.MATMUL_INIT, Intrin.MATMUL_BLOCK_INIT, Intrin.MATMUL_TILES, Intrin.MATMUL_BLOCK):
        in0, in1 = _cbs(args, 0, 1)
        return [(SRCB, in0), (SRCA, in1)], []
    if intrin in (Intrin.BINARY_INIT, Intrin.BINARY_TILES):
        in0, in1 = _cbs(args, 1, 2)
        return [(SRCA, in0), (SRCB, in1)], []
    if intrin in (Intrin.BINARY_BCAST_INIT, Intrin.BINARY_BCAST_TILES):
        in0, in1 = _cbs(args, 2, 3)
        return [(SRCA, in0), (SRCB, in1)], []
    if intrin in (Intrin.COPY_INIT, Intrin.COPY_TILE, Intrin.TRANSPOSE_INIT, Intrin.TRANSPOSE_TILE):
        return [(SRCA, int(args[0]))], []
    if intrin in (Intrin.BCAST_INIT, Intrin.BCAST_TILE):
        cb = int(args[1])
        return [(SRCA if cb in formats.to_dest else SRCB, cb)], []
    if intrin in (Intrin.REDUCE_INIT, Intrin.REDUCE_TILE):
        kind, dim = args[0].value, args[1].value
        data, scaler = _cbs(args, 2, 3)
        if dim == "row" and kind != "max":
            return [(SRCA, scaler), (SRCB, data)], []
        return [(SRCA, data), (SRCB, scaler)], []
    if intrin in (Intrin.PACK_TILE, Intrin.PACK_TILE_AT):
        return [(PACK, int(args[1]))], []
    if intrin in (Intrin.TILIZE_INIT, Intrin.TILIZE_BLOCK):
        icb, ocb = _cbs(args, 0, 2)
        return [(SRCA, icb)] + ([(PACK, ocb)] if intrin == Intrin.TILIZE_BLOCK else []), []
    if intrin == Intrin.PACK_UNTILIZE_BLOCK:
        return [(SRCA, int(args[2]))], []
    return [], []


def _reconfig(engine: int, cb: int, like) -> tirx.Evaluate:
    if engine == PACK:
        return evaluate(Intrin.PACK_RECONFIG, cb, like=like)
    return evaluate(Intrin.UNPACK_RECONFIG, SOURCES[engine], cb, like=like)


def _merge(a: tuple, b: tuple) -> tuple:
    return tuple(x if x == y else None for x, y in zip(a, b))


class _Configurer:
    def __init__(self, func: tirx.PrimFunc):
        self.func = func
        self.formats = _Formats(func)

    def uses_in(self, stmt) -> tuple[dict[int, list[int]], set[int]]:
        """(engine -> the CBs the statement's calls use it for, in order; engines they configure)."""
        used: dict[int, list[int]] = {}
        configured: set[int] = set()

        def visit(node):
            if isinstance(node, tirx.Evaluate):
                uses, sets = _engine_calls(node, self.formats)
                for engine, cb in uses:
                    used.setdefault(engine, []).append(cb)
                configured.update(engine for engine, _ in sets)

        tirx.stmt_functor.post_order_visit(stmt, visit)
        return used, configured

    def walk(self, stmt, state: tuple) -> tuple[tirx.Stmt, tuple]:
        """``stmt`` with the reconfigurations it needs from ``state``, and the state after it."""
        if isinstance(stmt, tirx.SeqStmt):
            out = []
            for s in stmt.seq:
                s, state = self.walk(s, state)
                out.append(s)
            return seq(out), state
        if isinstance(stmt, tirx.Evaluate):
            uses, sets = _engine_calls(stmt, self.formats)
            before = []
            state = list(state)
            for engine, cb in uses:
                key = self.formats.key(engine, cb)
                if state[engine] != key:
                    before.append(_reconfig(engine, cb, stmt))
                    state[engine] = key
            for engine, cb in sets:
                state[engine] = self.formats.key(engine, cb)
            return (seq([*before, stmt]) if before else stmt), tuple(state)
        if isinstance(stmt, tirx.For):
            return self.loop(stmt, state, lambda body: tirx.For(stmt.loop_var, stmt.min, stmt.extent, stmt.kind, body,
                                                                stmt.thread_binding, stmt.annotations))
        if isinstance(stmt, tirx.While):
            return self.loop(stmt, state, lambda body: tirx.While(stmt.condition, body))
        if isinstance(stmt, tirx.IfThenElse):
            then, s1 = self.walk(stmt.then_case, state)
            other, s2 = self.walk(stmt.else_case, state) if stmt.else_case is not None else (None, state)
            return keep_span(stmt, tirx.IfThenElse(stmt.condition, then, other)), _merge(s1, s2)
        if isinstance(stmt, tirx.AttrStmt):
            body, state = self.walk(stmt.body, state)
            return keep_span(stmt, tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value, body)), state
        used, configured = self.uses_in(stmt)
        if used or configured:
            raise TypeError(f"{PASS}: engine calls inside a {type(stmt).__name__}: a compiler bug")
        return stmt, state

    def loop(self, loop, state: tuple, rebuild) -> tuple[tirx.Stmt, tuple]:
        """A For or While ``loop`` (``rebuild(body)``: the loop around a new body) and the state after it."""
        used, configured = self.uses_in(loop.body)
        before = []
        state = list(state)
        for engine, cbs in used.items():
            keys = {self.formats.key(engine, cb) for cb in cbs}
            if engine not in configured and len(keys) == 1 and state[engine] not in keys:
                before.append(_reconfig(engine, cbs[0], loop))
                state[engine] = keys.pop()
        state = tuple(state)
        _, after_one = self.walk(loop.body, state)  # what an iteration leaves for the next
        entry = _merge(state, after_one)
        body, after = self.walk(loop.body, entry)
        return seq([*before, keep_span(loop, rebuild(body))]), _merge(entry, after)  # zero iterations leave the entry's


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    if Attr.KERNEL_ROLE.read(func) != KernelRole.COMPUTE:
        return func
    body, _ = _Configurer(func).walk(func.body, (None, None, None))
    return func.with_body(body)


def ConfigureDataFormatsTT():
    return prim_func_pass(_transform, PASS)
