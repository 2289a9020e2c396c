"""D5 InsertDSTManagementTT (late, compute): DST lifecycle, CB handshakes, packing, op inits.

Reads: ``tt.cb_desc`` (ids, block geometry, vectors, formats), ``tt.compute_config`` (DST
budget), the compute kernel's ops and its ``tt.read_to_cb``/``tt.write_from_cb`` markers.
Writes: no attribute; removes the markers.

Every on-chip block is a CB holding one value at a time. A held-value analysis over the
structured program decides every handshake: a block becomes *held* when the reader delivers
it (marker) or compute packs it; the first read of a held block is preceded by
``cb_wait_front``; a held value is popped when it is overwritten (before the write, or after it
when the op reads its own output: in-place updates use the CB's second block), when a loop
iteration produced it and the next iteration will produce it again (popped at the end of the
loop body), or at the end of the block iteration; a value the writer drains is handed to it
(the writer pops). Reading a block that is not held is an error.

Ops become DST code:
- ``tt.accumulate`` scopes (GEMM): ``tile_regs_acquire`` before the statements that accumulate
  into C, reload of C's tiles for ``acc += A @ B``, ``matmul_tiles`` into DST tiles
  ``i * sn + j`` over K, then per ``tt.pack_block``: commit, ``cb_reserve_back``, wait, one
  ``pack_tile`` per output tile, release, ``cb_push_back``: one pack per output tile.
- ``tt.tile.eltwise``: ``A op B`` of two blocks is one FPU op per tile (``add_tiles``…); any other
  expression is compiled per tile into DST: ``copy_tile`` of block operands, ``unary_bcast`` of
  per-row/per-column vectors, ``fill_tile`` of constants, SFPU unary ops, ops with a scalar
  (``mul_unary_tile``…) and SFPU binary ops, with registers allocated per tile and as many tiles
  per acquire as the DST budget holds. The exact GELU ``0.5 * x * (1 + erf(x / sqrt(2)))``, in any
  association of its products, is one ``gelu_tile``.
- ``tt.tile.reduce``: ``reduce_tile`` with the scaler CB, one result tile per acquire, combined
  with the old value (``binary_max_tile``/``add_binary_tile``) when the reduce does not clear.
Each op's init is emitted where the engine configuration changes, unless InsertComputeInitTT
hoisted the kernel's only one.

    Before: for k in range(4): T.tt.read_to_cb(A..); T.tt.read_to_cb(B..); T.tt.mm.mma(A_s, B_s, C_l, 0, 0, 2, 2, ...)
            T.tt.pack_block(C_l.data, 0, 0, 2, 2); T.tt.write_from_cb(C_l..)
    After:  T.tt.dst.acquire()
            for k in range(4):
                T.tt.cb_wait_front(0, 2); T.tt.cb_wait_front(1, 2)
                for i, j in grid(2, 2): T.tt.fpu.matmul_tiles(0, 1, i, j, i * 2 + j)
                T.tt.cb_pop_front(0, 2); T.tt.cb_pop_front(1, 2)
            T.tt.dst.commit(); T.tt.cb_reserve_back(16, 4); T.tt.dst.wait()
            for t in range(4): T.tt.pack_tile(t, 16)
            T.tt.dst.release(); T.tt.cb_push_back(16, 4)
"""

from __future__ import annotations

import math
import struct

import tilelang  # noqa: F401
from tvm import arith, ir, tirx

from tilelang_tt.attrs import AccumulateMode, Attr, CBDesc, Intrin, KernelRole, get
from tilelang_tt.passes.build_tile_dfg_tt import compute_accesses, scaler_cb
from tilelang_tt.passes.common import (
    COL,
    ROW,
    as_region,
    const_int,
    contains,
    error,
    evaluate,
    keep_span,
    prim_func_pass,
    seq,
    serial,
    stmt_intrin,
)
from tilelang_tt.passes.insert_compute_init_tt import fpu_binary, hoistable_init
from tilelang_tt.passes.lower_tt_tile_intrinsics import UNARY_CALLS

PASS = "InsertDSTManagementTT"
SFPU_BINARY = {tirx.Add: "add", tirx.Sub: "sub", tirx.Mul: "mul", tirx.Div: "div", tirx.Max: "max", tirx.Min: "min"}
SCALAR_OPS = {tirx.Add: "add", tirx.Sub: "sub", tirx.Mul: "mul", tirx.Div: "div"}


def _constant(e) -> float | None:
    while isinstance(e, tirx.Cast):
        e = e.value
    if isinstance(e, (tirx.IntImm, tirx.FloatImm)):
        return float(e.value)
    return None


def _strip(e):
    while isinstance(e, tirx.Cast):
        e = e.value
    return e


def _factors(e) -> tuple[float, list]:
    """A product as (constant coefficient, other factors): Mul trees flattened, a division by a
    constant folded into the coefficient, casts dropped."""
    e = _strip(e)
    c = _constant(e)
    if c is not None:
        return c, []
    if isinstance(e, tirx.Mul):
        (ca, fa), (cb, fb) = _factors(e.a), _factors(e.b)
        return ca * cb, fa + fb
    divisor = _constant(e.b) if isinstance(e, tirx.Div) else None
    if divisor:
        ca, fa = _factors(e.a)
        return ca / divisor, fa
    return 1.0, [e]


def _same(a, b) -> bool:
    """Structural equality of element-wise expressions, casts ignored (DST computes at one precision)."""
    a, b = _strip(a), _strip(b)
    if type(a) is not type(b):
        return False
    if isinstance(a, tirx.BufferLoad):
        return a.buffer.same_as(b.buffer) and ir.structural_equal(list(a.indices), list(b.indices))
    if isinstance(a, (tirx.IntImm, tirx.FloatImm)):
        return float(a.value) == float(b.value)
    if isinstance(a, tirx.Call):
        return a.op.same_as(b.op) and len(a.args) == len(b.args) and all(map(_same, a.args, b.args))
    return isinstance(a, tuple(SFPU_BINARY)) and _same(a.a, b.a) and _same(a.b, b.b)


# A constant written in bfloat16 (8 significant bits) still names the GELU constants.
GELU_CONSTANT_TOLERANCE = 2.0 ** -8


def _near(value: float, target: float) -> bool:
    return abs(value - target) <= abs(target) * GELU_CONSTANT_TOLERANCE


def gelu_operand(e):
    """x when ``e`` is the exact GELU ``0.5 * x * (1 + erf(x / sqrt(2)))`` (products in any
    association, the division as a multiplication by 1/sqrt(2)), else None."""
    coefficient, factors = _factors(e)
    if len(factors) != 2 or not _near(coefficient, 0.5):
        return None
    for x, one_plus in (factors, factors[::-1]):
        one_plus = _strip(one_plus)
        if not isinstance(one_plus, tirx.Add):
            continue
        for one, erf in ((one_plus.a, one_plus.b), (one_plus.b, one_plus.a)):
            erf = _strip(erf)
            if _constant(one) != 1.0 or not (isinstance(erf, tirx.Call) and erf.op.same_as(ir.Op.get("tirx.erf"))):
                continue
            scale, inner = _factors(erf.args[0])
            if len(inner) == 1 and _near(scale, 1.0 / math.sqrt(2.0)) and _same(inner[0], x):
                return x
    return None


def float_bits(value: float) -> int:
    """IEEE-754 bits of a float32, as the SFPU scalar ops take their parameter."""
    return struct.unpack("<I", struct.pack("<f", value))[0]


class _TileProgram:
    """Per-tile DST code for an element-wise expression.

    ``ops`` holds (init key, init statement, emit) with ``emit(tg, tl)`` giving the statement for
    output tile ``tg`` of the block computed in DST tiles of chunk position ``tl``."""

    def __init__(self, inserter, out: CBDesc, spt: int, like):
        self.ins = inserter
        self.out = out
        self.spt = spt
        self.like = like
        self.ops: list[tuple[tuple, tirx.Stmt, object]] = []

    def fpu_operands(self, e) -> tuple[str, CBDesc, CBDesc] | None:
        """(op, a, b) when ``e`` is A op B of two full blocks: the FPU computes it from the CBs
        straight into one DST tile."""
        if self.out.vector:
            return None
        binary = fpu_binary(e, {n: d.to_dict() for n, d in self.ins.cbs.items()})
        if binary is None:
            return None
        op, a, b = binary
        return op, self.ins.cb(a), self.ins.cb(b)

    def need(self, e) -> int:
        """DST tiles one output tile needs (registers of the expression tree)."""
        e = _strip(e)
        if isinstance(e, tirx.BufferLoad) or _constant(e) is not None or self.fpu_operands(e) is not None:
            return 1
        gelu = gelu_operand(e)
        if gelu is not None:
            return self.need(gelu)
        if isinstance(e, tirx.Call):
            return self.need(e.args[0])
        ca, cb = _constant(e.a), _constant(e.b)
        if type(e) in SCALAR_OPS and (ca is not None or cb is not None):
            return self.need(e.b if ca is not None else e.a)
        if isinstance(e, tirx.Max) and (ca == 0.0 or cb == 0.0):
            return self.need(e.b if ca is not None else e.a)
        need_a, need_b = self.need(e.a), self.need(e.b)
        # the operand needing more registers is computed first (Sethi-Ullman)
        return max(need_a, need_b + 1) if need_a >= need_b else max(need_b, need_a + 1)

    def slot(self, tl, base):
        return self.ins.analyzer.simplify(tl * self.spt + base)

    def sfpu(self, name: str, emit) -> None:
        self.ops.append((("sfpu", name), evaluate(Intrin.SFPU_INIT, name, like=self.like), emit))

    def compile(self, e, base: int) -> None:
        """Emit ops leaving the value of ``e`` in DST slot ``tl * spt + base``."""
        e = _strip(e)
        like = self.like
        if isinstance(e, tirx.BufferLoad):
            cb = self.ins.cb(e.buffer.name)
            if cb.vector and not self.out.vector:  # a per-row/per-column vector spread over the block
                self.ops.append((("bcast", cb.vector, cb.index), evaluate(Intrin.BCAST_INIT, cb.vector, cb.index, like=like),
                                 lambda tg, tl: evaluate(Intrin.BCAST_TILE, cb.vector, cb.index,
                                                         self.ins.tile_at(cb, self.out, tg), self.slot(tl, base),
                                                         like=like)))
            else:
                self.ops.append((("copy", cb.index), evaluate(Intrin.COPY_INIT, cb.index, like=like),
                                 lambda tg, tl: evaluate(Intrin.COPY_TILE, cb.index, self.ins.tile_at(cb, self.out, tg),
                                                         self.slot(tl, base), like=like)))
            return
        fpu = self.fpu_operands(e)
        if fpu is not None:
            op, a, b = fpu
            self.ops.append((("binary", op, a.index, b.index), evaluate(Intrin.BINARY_INIT, op, a.index, b.index, like=like),
                             lambda tg, tl: evaluate(Intrin.BINARY_TILES, op, a.index, b.index, tg, tg,
                                                     self.slot(tl, base), like=like)))
            return
        c = _constant(e)
        if c is not None:
            self.sfpu("fill", lambda tg, tl: evaluate(Intrin.FILL_TILE, self.slot(tl, base),
                                                      tirx.FloatImm("float32", c), like=like))
            return
        gelu = gelu_operand(e)
        if gelu is not None:
            self.compile(gelu, base)
            self.sfpu("gelu", lambda tg, tl: evaluate(Intrin.SFPU_UNARY, "gelu", self.slot(tl, base), like=like))
            return
        if isinstance(e, tirx.Call):
            name = UNARY_CALLS[e.op.name]
            self.compile(e.args[0], base)
            self.sfpu(name, lambda tg, tl: evaluate(Intrin.SFPU_UNARY, name, self.slot(tl, base), like=like))
            return
        ca, cb = _constant(e.a), _constant(e.b)
        if isinstance(e, tirx.Max) and (ca == 0.0 or cb == 0.0):
            self.compile(e.b if ca is not None else e.a, base)
            self.sfpu("relu", lambda tg, tl: evaluate(Intrin.SFPU_UNARY, "relu", self.slot(tl, base), like=like))
            return
        if type(e) in SCALAR_OPS and (ca is not None or cb is not None):
            op = SCALAR_OPS[type(e)]
            if ca is not None:  # constant on the left: c - x, c / x, c + x, c * x
                self.compile(e.b, base)
                if op == "div":
                    self.sfpu("recip", lambda tg, tl: evaluate(Intrin.SFPU_UNARY, "recip", self.slot(tl, base), like=like))
                    op = "mul"
                elif op == "sub":
                    op = "rsub"
                value = ca
            else:
                self.compile(e.a, base)
                value = cb
            if (op, value) in (("mul", 1.0), ("div", 1.0), ("add", 0.0), ("sub", 0.0)):
                return
            bits = tirx.IntImm("uint32", float_bits(value))
            self.sfpu("binop_with_scalar", lambda tg, tl: evaluate(Intrin.SFPU_SCALAR, op, self.slot(tl, base), bits,
                                                                   like=like))
            return
        op = SFPU_BINARY[type(e)]
        slot_a, slot_b = (base + 1, base) if self.need(e.b) > self.need(e.a) else (base, base + 1)
        for operand, slot in sorted([(e.a, slot_a), (e.b, slot_b)], key=lambda x: x[1]):
            self.compile(operand, slot)
        self.sfpu(f"{op}_binary", lambda tg, tl: evaluate(Intrin.SFPU_BINARY, op, self.slot(tl, slot_a),
                                                          self.slot(tl, slot_b), self.slot(tl, base), like=like))


class _Inserter:
    def __init__(self, func: tirx.PrimFunc):
        self.func = func
        self.cbs = {n: CBDesc.from_dict(n, d) for n, d in get(func, Attr.CB_DESC).items()}
        self.by_index = {cb.index: cb for cb in self.cbs.values()}
        self.budget = int(get(func, Attr.COMPUTE_CONFIG)["dst_budget"])
        self.inline_inits = hoistable_init(func) is None
        self.analyzer = arith.Analyzer()
        self.reload_of: dict[str, bool] = {}
        self.handoffs = {cb: e["handoff"] for cb, e in get(func, Attr.TILE_DFG, {}).items() if "handoff" in e}
        self.scaler = scaler_cb(func)
        packed = {self.cbs[w].data_format for w in self.written_blocks()}
        self.reconfigure_pack = len(packed) > 1

    def written_blocks(self) -> set[str]:
        names = set()

        def visit(node):
            if isinstance(node, tirx.Evaluate):
                intrin = stmt_intrin(node)
                if intrin in (Intrin.TILE_ELTWISE, Intrin.TILE_REDUCE, Intrin.PACK_BLOCK):
                    names.add(node.value.args[0 if intrin != Intrin.TILE_REDUCE else 2].name)

        tirx.stmt_functor.post_order_visit(self.func.body, visit)
        return names

    def cb(self, name: str) -> CBDesc:
        return self.cbs[name]

    # -- tile indexing ---------------------------------------------------------------------
    def tile_at(self, operand: CBDesc, out: CBDesc, t):
        """Tile of ``operand`` feeding output tile ``t`` (row-major over the output block)."""
        rows, cols = out.block_tiles
        if operand.vector == out.vector:
            return t
        if operand.vector == COL:
            return self.analyzer.simplify(tirx.FloorDiv(t, cols))
        if operand.vector == ROW:
            return self.analyzer.simplify(tirx.FloorMod(t, cols))
        return t

    # -- pack ------------------------------------------------------------------------------
    def pack(self, out: CBDesc, count: int, slot_of, like) -> list[tirx.Stmt]:
        stmts = [
            evaluate(Intrin.DST_COMMIT, like=like),
            evaluate(Intrin.CB_RESERVE_BACK, out.index, count, like=like),
            evaluate(Intrin.DST_WAIT, like=like),
        ]
        if self.reconfigure_pack:
            stmts.append(evaluate(Intrin.PACK_RECONFIG, out.index, like=like))
        stmts += [
            serial("t", count, lambda t: evaluate(Intrin.PACK_TILE, slot_of(t), out.index, like=like), like=like),
            evaluate(Intrin.DST_RELEASE, like=like),
            evaluate(Intrin.CB_PUSH_BACK, out.index, count, like=like),
        ]
        return stmts

    # -- held-value analysis ------------------------------------------------------------------
    def waits(self, names, held: dict, like) -> list[tirx.Stmt]:
        out = []
        for name in names:
            if name not in held:
                raise error(PASS, self.func, like,
                            f"`{name}` is read where it holds no value (computed inside a loop and used after it, "
                            "or used before it is filled)",
                            "fill or initialize the block before the loop that updates it (e.g. T.fill before the loop)")
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
            return self.process_seq(list(stmt.seq), held)
        if isinstance(stmt, tirx.For):
            return self.process_loop(stmt, held)
        if isinstance(stmt, tirx.AttrStmt) and stmt.attr_key == Attr.ACCUMULATE.value:
            return self.process_accumulate(stmt, held)
        if isinstance(stmt, tirx.Bind):
            return stmt, held
        intrin = stmt_intrin(stmt)
        held = dict(held)
        if intrin in (Intrin.READ_TO_CB, Intrin.GENERATE_BLOCK):
            name = as_region(stmt.value.args[1 if intrin == Intrin.READ_TO_CB else 0]).buffer.name
            out = [self.pop(name, held[name], stmt)] if name in held else []
            held[name] = False
            return seq(out), held
        if intrin == Intrin.WRITE_FROM_CB:
            name = as_region(stmt.value.args[0]).buffer.name
            name = self.handoffs.get(name, name)
            if name not in held:
                raise error(PASS, self.func, stmt, f"`{name}` is copied out where it holds no value",
                            "compute the block before copying it to the output")
            del held[name]
            return seq([]), held
        if intrin == Intrin.TILE_ELTWISE or intrin == Intrin.TILE_REDUCE:
            return self.process_op(stmt, intrin, held)
        return stmt, held

    def process_seq(self, stmts, held):
        out: list[tirx.Stmt] = []
        for s in stmts:
            new, held = self.process(s, held)
            out.append(new)
        return seq(out), held

    def process_loop(self, loop: tirx.For, held_in: dict):
        body, held_out = self.process(loop.body, dict(held_in))
        entry = {n: held_in[n] and held_out.get(n, False) for n in held_in}
        if entry != held_in:  # a wait inside the body must be repeated each iteration
            body, held_out = self.process(loop.body, dict(entry))
        missing = set(entry) - set(held_out)
        if missing:
            name = sorted(missing)[0]
            raise error(PASS, self.func, loop, f"a loop iteration consumes `{name}` without producing it again",
                        "produce the block again in the loop body, or read it after the loop")
        extra = sorted(set(held_out) - set(entry))
        body = seq([body, *(self.pop(n, held_out[n], loop) for n in extra)])
        new = keep_span(loop, tirx.For(loop.loop_var, loop.min, loop.extent, loop.kind, body))
        return new, after_loop(loop, entry, held_out)

    def process_op(self, stmt, intrin, held):
        names = {v: k for k, v in ((n, n) for n in self.cbs)}
        data_names = {}

        def visit(node):
            if isinstance(node, tirx.Var) and node.name in names:
                data_names[node] = node.name

        tirx.stmt_functor.post_order_visit(stmt.value, visit)
        reads, write = compute_accesses(stmt, data_names)
        if intrin == Intrin.TILE_REDUCE:
            reads = reads + [self.scaler]
        pre = self.waits(reads, held, stmt)
        post = []
        if write in held:
            if write in reads:
                post.append(self.pop(write, True, stmt))
            else:
                pre.append(self.pop(write, held[write], stmt))
            del held[write]
        body = self.expand_eltwise(stmt) if intrin == Intrin.TILE_ELTWISE else self.expand_reduce(stmt)
        held[write] = False
        return seq([*pre, body, *post]), held

    # -- GEMM ------------------------------------------------------------------------------------
    def process_accumulate(self, scope: tirx.AttrStmt, held):
        if int(scope.value) == AccumulateMode.SPILL:
            return self.process_spilled(scope, held)
        held = dict(held)
        name = scope.node.name
        reload = int(scope.value) == AccumulateMode.RELOAD
        pre, post = [], []
        if reload:
            pre += self.waits([name], held, scope)
        elif name in held:
            pre.append(self.pop(name, held[name], scope))
            del held[name]
        self.reload_of[name] = reload
        body, held = self.process_gemm(scope.body, held)
        if reload:
            post.append(self.pop(name, True, scope))
        held[name] = False
        return seq([*pre, body, *post]), held

    def process_spilled(self, scope: tirx.AttrStmt, held):
        """K loop with sub-blocks inside: from the second K step on, each sub-block reloads its
        partial sums from C's CB; the old partial block is popped once the new one is pushed."""
        held = dict(held)
        name = scope.node.name
        c = self.cb(name)
        if name in held:
            pre = [self.pop(name, held[name], scope)]
            del held[name]
        else:
            pre = []
        kloop = scope.body
        later = tirx.GT(kloop.loop_var, kloop.min)

        def when_later(stmts):
            return tirx.IfThenElse(later, seq(stmts), None)

        def run(state):
            state = dict(state)
            out = []
            for s in kloop.body.seq:
                mma = next((n for n in _calls(s) if stmt_intrin(n) == Intrin.MM_MMA), None) if isinstance(s, tirx.For) else None
                if mma is None:
                    new, state = self.process(s, state)
                    out.append(new)
                    continue
                a, b = mma.value.args[0].name, mma.value.args[1].name
                out += self.waits(list(dict.fromkeys([a, b])), state, mma)
                out.append(when_later([evaluate(Intrin.CB_WAIT_FRONT, c.index, c.block_pages, like=mma)]))
                pack = next(n for n in _calls(s) if stmt_intrin(n) == Intrin.PACK_BLOCK)
                _, m0, n0, sm, sn = pack.value.args
                sub = [evaluate(Intrin.DST_ACQUIRE, like=mma),
                       when_later(self.reload_tiles(c, m0, n0, int(sm), int(sn), mma))]
                if self.inline_inits:
                    sub.append(evaluate(Intrin.MATMUL_INIT, self.cb(a).index, self.cb(b).index, mma.value.args[7], like=mma))
                sub.append(self.expand_mma(mma))
                sub += self.pack(c, int(sm) * int(sn), lambda t: t, pack)
                out.append(keep_span(s, tirx.For(s.loop_var, s.min, s.extent, s.kind, seq(sub))))
                out.append(when_later([self.pop(name, True, mma)]))
            return seq(out), state

        body, held_out = run(held)
        entry = {n: held[n] and held_out.get(n, False) for n in held}
        if entry != held:
            body, held_out = run(entry)
        extra = sorted(set(held_out) - set(entry))
        body = seq([body, *(self.pop(n, held_out[n], kloop) for n in extra)])
        loop = keep_span(kloop, tirx.For(kloop.loop_var, kloop.min, kloop.extent, kloop.kind, body))
        after = after_loop(kloop, entry, held_out)
        after[name] = False
        return seq([*pre, loop]), after

    def reload_tiles(self, c: CBDesc, m0, n0, sm: int, sn: int, like) -> list[tirx.Stmt]:
        """copy_tile of C's sub-block (m0, n0, sm x sn) into DST tiles i * sn + j."""
        cols = c.block_tiles[1]
        return [evaluate(Intrin.COPY_INIT, c.index, like=like),
                serial("i", sm, lambda i: serial("j", sn, lambda j: evaluate(
                    Intrin.COPY_TILE, c.index, self.analyzer.simplify((m0 + i) * cols + n0 + j),
                    self.analyzer.simplify(i * sn + j), like=like)))]

    def process_gemm(self, stmt, held):
        """Inside an accumulate scope: acquire before the producers of each pack_block."""
        if isinstance(stmt, tirx.For) and not contains(stmt.body, lambda n: stmt_intrin(n) == Intrin.PACK_BLOCK):
            return self.process_loop_gemm(stmt, held)
        if isinstance(stmt, tirx.For):
            body, held_out = self.process_gemm(stmt.body, dict(held))
            return keep_span(stmt, tirx.For(stmt.loop_var, stmt.min, stmt.extent, stmt.kind, body)), held_out
        stmts = list(stmt.seq) if isinstance(stmt, tirx.SeqStmt) else [stmt]
        out: list[tirx.Stmt] = []
        pending: list[tirx.Stmt] = []
        for s in stmts:
            if stmt_intrin(s) != Intrin.PACK_BLOCK:
                pending.append(s)
                continue
            data, m0, n0, sm, sn = s.value.args
            c = self.cb(data.name)
            count = int(sm) * int(sn)
            if count > self.budget:
                raise error(PASS, self.func, s, f"{count} output tiles per acquire exceed the DST budget of {self.budget}",
                            "use a smaller block (bm x bn) or bfloat16 accumulation")
            first = next((k for k, p in enumerate(pending)
                          if contains(p, lambda n: stmt_intrin(n) == Intrin.MM_MMA)), len(pending))
            for p in pending[:first]:
                new, held = self.process(p, held)
                out.append(new)
            out.append(evaluate(Intrin.DST_ACQUIRE, like=s))
            out += self.reload(c, m0, n0, int(sm), int(sn), s)
            for p in pending[first:]:
                new, held = self.process_loop_gemm(p, held) if isinstance(p, tirx.For) else self.expand_mma_stmt(p, held)
                out.append(new)
            out += self.pack(c, count, lambda t: t, s)
            pending = []
        for p in pending:
            new, held = self.process(p, held)
            out.append(new)
        return seq(out), held

    def reload(self, c: CBDesc, m0, n0, sm: int, sn: int, like) -> list[tirx.Stmt]:
        return self.reload_tiles(c, m0, n0, sm, sn, like) if self.reload_of.get(c.name) else []

    def process_loop_gemm(self, loop, held_in):
        """A K loop: markers and mmas; handshakes from the held-value analysis."""
        def run(held):
            return self.expand_mma_stmt(loop.body, held)

        body, held_out = run(dict(held_in))
        entry = {n: held_in[n] and held_out.get(n, False) for n in held_in}
        if entry != held_in:
            body, held_out = run(dict(entry))
        extra = sorted(set(held_out) - set(entry))
        body = seq([body, *(self.pop(n, held_out[n], loop) for n in extra)])
        new = keep_span(loop, tirx.For(loop.loop_var, loop.min, loop.extent, loop.kind, body))
        return new, after_loop(loop, entry, held_out)

    def expand_mma_stmt(self, stmt, held):
        stmts = list(stmt.seq) if isinstance(stmt, tirx.SeqStmt) else [stmt]
        out = []
        for s in stmts:
            if stmt_intrin(s) == Intrin.MM_MMA:
                held = dict(held)
                a, b = s.value.args[0].name, s.value.args[1].name
                out += self.waits(list(dict.fromkeys([a, b])), held, s)
                if self.inline_inits:
                    out.append(evaluate(Intrin.MATMUL_INIT, self.cb(a).index, self.cb(b).index, s.value.args[7], like=s))
                out.append(self.expand_mma(s))
            elif isinstance(s, tirx.For):
                new, held = self.process_loop_gemm(s, held)
                out.append(new)
            else:
                new, held = self.process(s, held)
                out.append(new)
        return seq(out), held

    def expand_mma(self, stmt) -> tirx.Stmt:
        a_var, b_var, _c_var, m0, n0, sm, sn, trans_b, _first = stmt.value.args
        a, b = self.cb(a_var.name), self.cb(b_var.name)
        sm, sn = int(sm), int(sn)
        kt = a.block_tiles[1]
        b_cols = b.block_tiles[1]
        if bool(trans_b):
            b_tile = lambda kk, j: (n0 + j) * b_cols + kk  # noqa: E731  B block is (bn, bk)
        else:
            b_tile = lambda kk, j: kk * b_cols + n0 + j  # noqa: E731  B block is (bk, bn)

        def tile(i, j, kk):
            return evaluate(Intrin.MATMUL_TILES, a.index, b.index,
                            self.analyzer.simplify((m0 + i) * kt + kk),
                            self.analyzer.simplify(b_tile(kk, j)),
                            self.analyzer.simplify(i * sn + j), like=stmt)

        return serial("i", sm, lambda i: serial("j", sn, lambda j: serial("kk", kt, lambda kk: tile(i, j, kk))))

    # -- element-wise ----------------------------------------------------------------------------
    def expand_eltwise(self, stmt) -> tirx.Stmt:
        out_var, _i, _j, value = stmt.value.args
        out = self.cb(out_var.name)
        total = out.block_pages
        program = _TileProgram(self, out, 0, stmt)
        spt = program.need(value)
        if spt > self.budget:
            raise error(PASS, self.func, stmt,
                        f"the expression needs {spt} DST tiles per output tile; the budget is {self.budget}",
                        "split the expression into several T.Parallel statements")
        program.spt = spt
        program.compile(value, 0)
        ops = program.ops
        chunk = self.chunk(total, spt)
        keys = [key for key, _, _ in ops]
        # Inits go where the engine configuration changes, cyclically over the tiles; a program
        # with one configuration initializes once per acquire.
        cyclic = len(set(keys)) > 1

        def one_tile(base, tl):
            stmts = []
            for n, (key, init, emit) in enumerate(ops):
                if cyclic and key != keys[n - 1]:
                    stmts.append(init)
                stmts.append(emit(self.analyzer.simplify(base + tl), tl))
            return seq(stmts)

        def one_chunk(ch):
            base = ch * chunk
            return seq([
                evaluate(Intrin.DST_ACQUIRE, like=stmt),
                *([] if cyclic or not self.inline_inits else [ops[0][1]]),
                serial("t", chunk, lambda tl: one_tile(base, tl), like=stmt),
                *self.pack(out, chunk, lambda t: self.analyzer.simplify(t * spt), stmt),
            ])

        return serial("ch", total // chunk, one_chunk, like=stmt)

    def chunk(self, total: int, slots: int) -> int:
        per_acquire = max(1, self.budget // slots)
        return max(d for d in range(1, min(per_acquire, total) + 1) if total % d == 0)

    # -- reduce ----------------------------------------------------------------------------------
    def expand_reduce(self, stmt) -> tirx.Stmt:
        kind, src_var, dst_var, dim, clear = stmt.value.args
        kind, dim, clear = kind.value, int(dim), bool(clear)
        src, dst, scaler = self.cb(src_var.name), self.cb(dst_var.name), self.cb(self.scaler)
        rows, cols = src.block_tiles
        outer, inner = (rows, cols) if dim == 1 else (cols, rows)
        rdim = "row" if dim == 1 else "col"

        def tile(o, n):
            return self.analyzer.simplify(o * cols + n if dim == 1 else n * cols + o)

        def one(o):
            stmts = [evaluate(Intrin.DST_ACQUIRE, like=stmt),
                     evaluate(Intrin.UNPACK_RECONFIG, scaler.index, src.index, like=stmt),
                     evaluate(Intrin.REDUCE_INIT, kind, rdim, src.index, scaler.index, dst.index, like=stmt),
                     serial("n", inner, lambda n: evaluate(Intrin.REDUCE_TILE, kind, rdim, src.index, scaler.index,
                                                           tile(o, n), 0, 0, like=stmt), like=stmt),
                     evaluate(Intrin.REDUCE_UNINIT, like=stmt)]
            if not clear:
                op = "max" if kind == "max" else "add"
                stmts += [evaluate(Intrin.COPY_INIT, dst.index, like=stmt),
                          evaluate(Intrin.COPY_TILE, dst.index, o, 1, like=stmt),
                          evaluate(Intrin.SFPU_INIT, f"{op}_binary", like=stmt),
                          evaluate(Intrin.SFPU_BINARY, op, 0, 1, 0, like=stmt)]
            return seq(stmts + self.pack(dst, 1, lambda t: t, stmt))

        return serial("o", outer, one, like=stmt)


def after_loop(loop: tirx.For, entry: dict, held_out: dict) -> dict:
    """Held state after a loop whose iterations start in ``entry`` and end in ``held_out``: that of
    the last iteration when the loop surely runs, else the entry state (it may not run at all)."""
    extent = const_int(loop.extent)
    if extent is not None and extent >= 1:
        return {n: held_out[n] for n in entry}
    return dict(entry)


def _calls(stmt) -> list[tirx.Evaluate]:
    out = []
    tirx.stmt_functor.post_order_visit(stmt, lambda n: out.append(n) if isinstance(n, tirx.Evaluate) else None)
    return out


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    if get(func, Attr.KERNEL_ROLE) != KernelRole.COMPUTE.value:
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
    return func.with_body(body)


def InsertDSTManagementTT():
    return prim_func_pass(_transform, PASS)

