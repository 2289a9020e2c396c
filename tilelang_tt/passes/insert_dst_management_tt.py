"""D5 InsertDSTManagementTT (late, compute): CB handshakes around the ops' DST code.

Reads: ``tt.cb_desc`` (ids, block geometry, vectors, formats), ``tt.compute_config`` (DST
budget), ``tt.tile_dfg`` (hand-off, scaler and staging CBs), the compute kernel's ops and its
``tt.read_to_cb``/``tt.generate_block``/``tt.write_from_cb`` markers. A block read from a
row-major tensor is tilized from its staging CB where it arrives, a block written to one is
untilized into its staging CB where it leaves (:mod:`tilelang_tt.ops.tilize`).
Writes: ``tt.compute_config`` ``unpack_to_dest`` gains the float32 blocks the kernel only copies into DST
(:func:`_copied_float32_blocks`); removes the markers.

Every on-chip block is a CB holding one value at a time. A held-value analysis over the
structured program decides every handshake: a block becomes *held* when the reader delivers
it (marker) or compute packs it; the first read of a held block is preceded by
``cb_wait_front``; a held value is popped when it is overwritten (before the write, or after it
when the op reads its own output: in-place updates use the CB's second block), when a loop
iteration produced it and the next iteration will produce it again (popped at the end of the
loop body), or at the end of the block iteration; a value the writer drains is handed to it
(the writer pops). Reading a block that is not held is an error. Loops are iterated to a fixed
point by :meth:`_Inserter.iterate_loop` (every loop, the gemm K loops included). A branch (on block
coordinates, or on a value the reader handed on) is each of its cases run at most once
(:meth:`_Inserter.guard`): with an ``else``, a block every case produces stays held after it.

The ops' DST code (acquire, unpack, math, pack, and each op's init where the engine
configuration changes, unless InsertComputeInitTT hoisted the kernel's only one) comes from
their family in :mod:`tilelang_tt.ops`: ``tt.tile.eltwise`` (copies, fills, FPU and SFPU math:
:mod:`~tilelang_tt.ops.eltwise`), ``tt.tile.reduce`` (:mod:`~tilelang_tt.ops.reduce`) and the
``tt.accumulate`` scopes of ``tt.mm.mma`` / ``tt.pack_block`` (:mod:`~tilelang_tt.ops.gemm`,
which calls back into the handshake analysis inside its scopes).

    Before: for k in range(4): T.tt.read_to_cb(A..); T.tt.read_to_cb(B..); T.tt.mm.mma(A_s, B_s, C_l, 0, 0, 2, 2, ...)
            T.tt.pack_block(C_l.data, 0, 0, 2, 2); T.tt.write_from_cb(C_l..)
    After:  T.tt.dst.acquire()
            for k in range(4):
                T.tt.cb_wait_front(0, 2); T.tt.cb_wait_front(1, 2)
                T.tt.fpu.matmul_block(0, 1, 0, 0, 0, T.bool(False), 2, 2, 1)
                T.tt.cb_pop_front(0, 2); T.tt.cb_pop_front(1, 2)
            T.tt.dst.commit(); T.tt.cb_reserve_back(16, 4); T.tt.dst.wait()
            for t in range(4): T.tt.pack_tile(t, 16)
            T.tt.dst.release(); T.tt.cb_push_back(16, 4)
"""

from __future__ import annotations

import dataclasses

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.attrs import Attr, CBDesc, KernelRole
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.ops import DST_SCOPES, compute_op, hoistable_init
from tilelang_tt.ops.base import DSTContext
from tilelang_tt.ops.tilize import tilize, untilize
from tilelang_tt.ir.dataflow import handoff_cbs, scaler_cb, staging_cbs
from tilelang_tt.ir.common import as_region, const_int, evaluate, keep_span, prim_func_pass, seq, stmt_intrin

PASS = "InsertDSTManagementTT"


class _Inserter(DSTContext):
    def __init__(self, func: tirx.PrimFunc):
        scaler = scaler_cb(func)
        super().__init__(PASS, func, scaler, inline_inits=hoistable_init(func, scaler) is None)
        self.handoffs = handoff_cbs(func)
        self.tilized, self.untilized = staging_cbs(func)
        self.copied_out: set[str] = set()  # blocks a T.copy to a tensor handed to the writer, which pops them

    def waits(self, names, held: dict, like) -> list[tirx.Stmt]:
        """``cb_wait_front`` of each block of ``names`` not waited for yet (``held`` is updated)."""
        out = []
        for name in names:
            if name not in held and name in self.copied_out:
                raise self.error(like, f"`{name}` is read after a T.copy wrote it to a tensor: on Tenstorrent that "
                                       "copy hands the block to the writer kernel, which consumes it",
                                 f"finish every read of `{name}` before copying it out, or copy it into a "
                                 f"T.alloc_shared block first (T.copy({name}, {name}_shared)) and copy that block "
                                 "to the tensor")
            if name not in held:
                raise self.error(like, f"`{name}` is read where it holds no value (computed inside a loop and used "
                                       "after it, or used before it is filled)",
                                 "fill or initialize the block before the loop that updates it (e.g. T.fill before "
                                 "the loop)")
            if not held[name]:
                cb = self.cb(name)
                out.append(evaluate(Intrin.CB_WAIT_FRONT, cb.index, cb.block_pages, like=like))
                held[name] = True
        return out

    def pop(self, name: str, waited: bool, like) -> tirx.Stmt:
        """Pop the value of ``name``; a value no op has read yet (a dead store, a block never used)
        is waited for first: only pages confirmed by cb_wait_front may be popped."""
        cb = self.cb(name)
        wait = [] if waited else [evaluate(Intrin.CB_WAIT_FRONT, cb.index, cb.block_pages, like=like)]
        return seq([*wait, evaluate(Intrin.CB_POP_FRONT, cb.index, cb.block_pages, like=like)])

    def process(self, stmt, held: dict):
        """(new statement, held state after it)."""
        if isinstance(stmt, tirx.SeqStmt):
            out: list[tirx.Stmt] = []
            for s in stmt.seq:
                new, held = self.process(s, held)
                out.append(new)
            return seq(out), held
        if isinstance(stmt, tirx.For):
            return self.iterate_loop(stmt, held, lambda state: self.process(stmt.body, state))
        if isinstance(stmt, tirx.IfThenElse):
            return self.guard(stmt, held)
        if isinstance(stmt, tirx.AttrStmt) and stmt.attr_key in DST_SCOPES:
            return DST_SCOPES[stmt.attr_key].process_scope(self, stmt, held)
        if isinstance(stmt, tirx.Bind):
            return stmt, held
        intrin = stmt_intrin(stmt)
        held = dict(held)
        if intrin in (Intrin.READ_TO_CB, Intrin.GENERATE_BLOCK):
            name = as_region(stmt.value.args[1 if intrin == Intrin.READ_TO_CB else 0]).buffer.name
            out = [self.pop(name, held[name], stmt)] if name in held else []
            if name in self.tilized:  # its rows arrive in the staging CB: compute makes the tiles
                out.append(tilize(self.cb(self.tilized[name]), self.cb(name), stmt))
            held[name] = False
            return seq(out), held
        if intrin == Intrin.WRITE_FROM_CB:
            block = as_region(stmt.value.args[0]).buffer.name
            name = self.handoffs.get(block, block)
            if name not in held:
                raise self.error(stmt, f"`{name}` is copied out where it holds no value",
                                 "compute the block before copying it to the output")
            del held[name]
            self.copied_out.add(block)
            if name in self.untilized:  # compute turns the tiles into the rows the writer writes
                return untilize(self.cb(name), self.cb(self.untilized[name]), self.fp32_dest_acc, stmt), held
            return seq([]), held
        op = compute_op(stmt)
        if op is not None and op.dst_scope is None:
            return self.process_op(op, stmt, held)
        return stmt, held

    def iterate_loop(self, loop: tirx.For, held_in: dict, body_fn):
        """(the loop with the body ``body_fn(held) -> (body, held after it)`` gives, the held state
        after the loop). The body is run from the state at the loop's entry; when a value held there
        is not waited for at the end of an iteration, it runs again from that state with the value
        not waited for (a wait inside the body must be repeated each iteration). Values the body
        produces that were not held at entry are popped at the end of each iteration."""
        body, held_out = body_fn(dict(held_in))
        entry = {n: held_in[n] and held_out.get(n, False) for n in held_in}
        if entry != held_in:
            body, held_out = body_fn(dict(entry))
        missing = set(entry) - set(held_out)
        if missing:
            name = sorted(missing)[0]
            raise self.error(loop, f"a loop iteration consumes `{name}` without producing it again",
                             "produce the block again in the loop body, or read it after the loop")
        extra = sorted(set(held_out) - set(entry))
        body = seq([body, *(self.pop(n, held_out[n], loop) for n in extra)])
        new = keep_span(loop, tirx.For(loop.loop_var, loop.min, loop.extent, loop.kind, body))
        extent = const_int(loop.extent)
        # after the last iteration when the loop surely runs, else as at entry (it may not run at all)
        after = {n: held_out[n] for n in entry} if extent is not None and extent >= 1 else dict(entry)
        return new, after

    def guard(self, branch: tirx.IfThenElse, held_in: dict):
        """A branch every kernel takes alike (a guard of the block coordinates, a value the reader
        handed on), each case as a loop that runs at most once: the values held at the branch's
        entry stay held (waited for only if they were before it and after every case); with an
        else, a value every case produces stays held after the branch (waited for if every case
        waited), the others a case produces are popped inside it."""
        cases = [branch.then_case] + ([branch.else_case] if branch.else_case is not None else [])
        outs = [self.process(case, dict(held_in)) for case in cases]
        entry = {n: held_in[n] and all(held.get(n, False) for _, held in outs) for n in held_in}
        if entry != held_in:  # once more from the entry no case keeps waited for
            outs = [self.process(case, dict(entry)) for case in cases]
        kept = set.intersection(*(set(held) - set(entry) for _, held in outs)) if len(cases) > 1 else set()
        after = dict(entry) | {n: all(held[n] for _, held in outs) for n in kept}
        bodies = []
        for case, (body, held_out) in zip(cases, outs):
            missing = set(entry) - set(held_out)
            if missing:
                raise self.error(branch, f"the branch consumes `{sorted(missing)[0]}`, which the kernel reads after it",
                                 "read the block inside the branch only, or outside it only")
            popped = sorted(set(held_out) - set(entry) - kept)
            bodies.append(seq([body, *(self.pop(n, held_out[n], case) for n in popped)]))
        return keep_span(branch, tirx.IfThenElse(branch.condition, bodies[0], bodies[1] if len(bodies) > 1 else None)), after

    def process_op(self, op, stmt, held: dict):
        """A compute op: waits for what it reads, pops the old value of what it writes."""
        data_names = {}

        def visit(node):
            if isinstance(node, tirx.Var) and node.name in self.cbs:
                data_names[node] = node.name

        tirx.stmt_functor.post_order_visit(stmt.value, visit)
        reads, write = op.cb_accesses(self, stmt, data_names)
        writes = [write, *op.also_written(stmt, data_names)]
        pre = self.waits(reads, held, stmt)
        post = []
        for w in writes:
            if w in held:
                if w in reads:
                    post.append(self.pop(w, True, stmt))
                else:
                    pre.append(self.pop(w, held[w], stmt))
                del held[w]
        body = op.expand(self, stmt)
        held.update({w: False for w in writes})
        return seq([*pre, body, *post]), held


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    if Attr.KERNEL_ROLE.read(func) != KernelRole.COMPUTE:
        return func
    inserter = _Inserter(func)
    scaler = inserter.cbs.get(inserter.scaler)

    def rewrite(stmt):
        if isinstance(stmt, tirx.SeqStmt):
            return seq([rewrite(s) for s in stmt.seq])
        if isinstance(stmt, tirx.AttrStmt) and stmt.attr_key == "thread_extent":
            if isinstance(stmt.body, tirx.AttrStmt) and stmt.body.attr_key == "thread_extent":
                return keep_span(stmt, tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value, rewrite(stmt.body)))
            body, held = inserter.process(stmt.body, {inserter.scaler: False} if scaler else {})
            held.pop(inserter.scaler, None)
            body = seq([body, *(inserter.pop(n, held[n], stmt) for n in sorted(held))])
            return keep_span(stmt, tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value, body))
        return stmt

    body = rewrite(func.body)
    if scaler is not None:
        body = seq([evaluate(Intrin.CB_WAIT_FRONT, scaler.index, 1), body, evaluate(Intrin.CB_POP_FRONT, scaler.index, 1)])
    config = Attr.COMPUTE_CONFIG.read(func)
    unpacked = sorted({*config.unpack_to_dest, *_copied_float32_blocks(body, inserter.cbs)})
    return Attr.COMPUTE_CONFIG.write(func.with_body(body), dataclasses.replace(config, unpack_to_dest=tuple(unpacked)))


# The compute ops that unpack tiles of a CB, by the positions of their CB arguments: the datacopies, which bring a
# Float32 tile to DST whole when its CB is UnpackToDestFp32, and the others, which read through the 19-bit source
# registers SrcA/SrcB (a Float32 tile truncated to TF32) and must keep the Default mode.
_DATACOPY_READS = {Intrin.COPY_TILE: (0,), Intrin.TRANSPOSE_TILE: (0,), Intrin.BCAST_TILE: (1,)}
_SOURCE_REGISTER_READS = {Intrin.MATMUL_TILES: (0, 1), Intrin.MATMUL_BLOCK: (0, 1), Intrin.BINARY_TILES: (1, 2),
                          Intrin.BINARY_BCAST_TILES: (2, 3), Intrin.REDUCE_TILE: (2, 3), Intrin.TILIZE_BLOCK: (0,)}


def _copied_float32_blocks(body, cbs: dict[str, CBDesc]) -> list[str]:
    """The float32 blocks compute reads only by copying them into DST. tt-metal 0.81.1 unpacks a Float32 CB to
    SrcA/SrcB as TF32 unless its unpack_to_dest_mode is UnpackToDestFp32, and copy_tile / transpose_wh_tile /
    unary_bcast unpack straight to DST only in that mode (api/compute/tile_move_copy.h, transpose.h, bcast.h; tt-llk
    cunpack_common.h should_unpack_to_dest): without it a float32 partial sum or intermediate loses its low 13
    mantissa bits on every reload."""
    copied, through_sources = set(), set()

    def visit(node):
        intrin = stmt_intrin(node)
        for reads, into in ((_DATACOPY_READS, copied), (_SOURCE_REGISTER_READS, through_sources)):
            for i in reads.get(intrin, ()):
                into.add(const_int(node.value.args[i]))

    tirx.stmt_functor.post_order_visit(body, visit)
    return sorted(name for name, d in cbs.items()
                  if d.data_format == "Float32" and d.index in copied - through_sources)


def InsertDSTManagementTT():
    return prim_func_pass(_transform, PASS)
