"""D5 InsertDSTManagementTT (late, compute): DST lifecycle, CB handshakes and packing.

Reads: ``tt.cb_desc`` (ids, block pages), ``tt.compute_config`` (DST budget per acquire).
Writes: no attribute. TIR (compute only):
- GEMM: the statements that accumulate into C before ``tt.pack_block(C, m0, n0, sm, sn)`` are
  enclosed by ``tt.dst.acquire`` … ``tt.dst.commit``; each ``tt.mm.mma`` becomes
  ``cb_wait_front`` of both operand blocks, ``sm × sn × bkt`` ``tt.fpu.matmul_tiles`` into DST
  tiles ``i * sn + j``, and ``cb_pop_front``; the pack becomes ``cb_reserve_back(out, sm*sn)``,
  ``tt.dst.wait``, one ``tt.pack_tile`` per tile, ``tt.dst.release``, ``cb_push_back``. K-loop
  accumulation stays in DST: one pack per output tile.
- Element-wise ``tt.fpu.binary`` + ``tt.pack_block``: wait for both input blocks, then chunks of
  up to the DST budget: acquire, ``tt.fpu.binary_tiles`` per tile, commit, reserve, wait, pack,
  release, push; then pop the inputs.

    Before: for k in range(4): T.tt.mm.mma(A_s.data, B_s.data, C_l.data, 0, 0, 2, 2, False, k == 0)
            T.tt.pack_block(C_l.data, 0, 0, 2, 2)
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

import tilelang  # noqa: F401
from tvm import arith, tirx

from tilelang_tt.attrs import Attr, CBDesc, Intrin, KernelRole, get
from tilelang_tt.passes.common import (
    contains,
    error,
    evaluate,
    keep_span,
    prim_func_pass,
    seq,
    serial,
    stmt_intrin,
)

PASS = "InsertDSTManagementTT"


class _Inserter:
    def __init__(self, func: tirx.PrimFunc):
        self.func = func
        self.cbs = {n: CBDesc.from_dict(n, d) for n, d in get(func, Attr.CB_DESC).items()}
        self.budget = int(get(func, Attr.COMPUTE_CONFIG)["dst_budget"])
        self.shapes = {n: cb.block_tiles for n, cb in self.cbs.items()}
        self.analyzer = arith.Analyzer()

    def cb(self, var) -> CBDesc:
        return self.cbs[var.name]

    def pack_tiles(self, out: CBDesc, count: int, like) -> list[tirx.Stmt]:
        return [
            evaluate(Intrin.DST_COMMIT, like=like),
            evaluate(Intrin.CB_RESERVE_BACK, out.index, count, like=like),
            evaluate(Intrin.DST_WAIT, like=like),
            serial("t", count, lambda t: evaluate(Intrin.PACK_TILE, t, out.index, like=like), like=like),
            evaluate(Intrin.DST_RELEASE, like=like),
            evaluate(Intrin.CB_PUSH_BACK, out.index, count, like=like),
        ]

    def expand_mma(self, stmt) -> tirx.Stmt:
        a_var, b_var, c_var, m0, n0, sm, sn, trans_b, _first = stmt.value.args
        a, b = self.cb(a_var), self.cb(b_var)
        sm, sn = int(sm), int(sn)
        kt = self.shapes[a_var.name][1]
        b_cols = self.shapes[b_var.name][1]
        if bool(trans_b):
            b_tile = lambda kk, j: (n0 + j) * b_cols + kk  # noqa: E731  B block is (bn, bk)
        else:
            b_tile = lambda kk, j: kk * b_cols + n0 + j  # noqa: E731  B block is (bk, bn)

        def tile(i, j, kk):
            return evaluate(Intrin.MATMUL_TILES, a.index, b.index,
                            self.analyzer.simplify((m0 + i) * kt + kk),
                            self.analyzer.simplify(b_tile(kk, j)),
                            self.analyzer.simplify(i * sn + j), like=stmt)

        body = serial("i", sm, lambda i: serial("j", sn, lambda j: serial("kk", kt, lambda kk: tile(i, j, kk))))
        waits = [evaluate(Intrin.CB_WAIT_FRONT, a.index, a.block_pages, like=stmt)]
        pops = [evaluate(Intrin.CB_POP_FRONT, a.index, a.block_pages, like=stmt)]
        if b.index != a.index:
            waits.append(evaluate(Intrin.CB_WAIT_FRONT, b.index, b.block_pages, like=stmt))
            pops.append(evaluate(Intrin.CB_POP_FRONT, b.index, b.block_pages, like=stmt))
        return seq([*waits, body, *pops])

    def expand_binary(self, stmt, pack) -> tirx.Stmt:
        op, a_var, b_var, c_var = stmt.value.args
        a, b, out = self.cb(a_var), self.cb(b_var), self.cb(c_var)
        total = out.block_pages
        chunk = max(d for d in range(1, min(self.budget, total) + 1) if total % d == 0)

        def one_chunk(ch):
            base = ch * chunk
            return seq([
                evaluate(Intrin.DST_ACQUIRE, like=stmt),
                serial("t", chunk, lambda t: evaluate(
                    Intrin.BINARY_TILES, op, a.index, b.index, self.analyzer.simplify(base + t),
                    self.analyzer.simplify(base + t), t, like=stmt), like=stmt),
                *self.pack_tiles(out, chunk, stmt),
            ])

        waits = [evaluate(Intrin.CB_WAIT_FRONT, a.index, a.block_pages, like=stmt)]
        pops = [evaluate(Intrin.CB_POP_FRONT, a.index, a.block_pages, like=stmt)]
        if b.index != a.index:
            waits.append(evaluate(Intrin.CB_WAIT_FRONT, b.index, b.block_pages, like=stmt))
            pops.append(evaluate(Intrin.CB_POP_FRONT, b.index, b.block_pages, like=stmt))
        return seq([*waits, serial("ch", total // chunk, one_chunk, like=stmt), *pops])

    def rewrite_mmas(self, stmt):
        def post(node):
            if stmt_intrin(node) == Intrin.MM_MMA:
                return self.expand_mma(node)
            return None

        return tirx.stmt_functor.ir_transform(stmt, None, post, ["tirx.Evaluate"])

    def visit_seq(self, stmts: list[tirx.Stmt]) -> list[tirx.Stmt]:
        out: list[tirx.Stmt] = []
        pending: list[tirx.Stmt] = []  # statements since the last pack that produce into an accumulator
        for s in stmts:
            intrin = stmt_intrin(s)
            if intrin == Intrin.PACK_BLOCK:
                data, _m0, _n0, sm, sn = s.value.args
                count = int(sm) * int(sn)
                if count > self.budget:
                    raise error(PASS, self.func, s, f"{count} output tiles per acquire exceed the DST budget of {self.budget}",
                                "use a smaller block (bm x bn) or bfloat16 accumulation")
                producers = [p for p in pending if contains(p, lambda n: self.writes(n, data))]
                binaries = [p for p in producers if stmt_intrin(p) == Intrin.FPU_BINARY]
                if binaries:
                    rest = [p for p in pending if p is not binaries[-1]]
                    out.extend(self.visit_stmt(p) for p in rest)
                    out.append(self.expand_binary(binaries[-1], s))
                else:
                    out.append(evaluate(Intrin.DST_ACQUIRE, like=s))
                    out.extend(self.rewrite_mmas(p) for p in pending)
                    out.extend(self.pack_tiles(self.cb(data), count, s))
                pending = []
                continue
            pending.append(s)
        out.extend(self.visit_stmt(p) for p in pending)
        return out

    def writes(self, node, data) -> bool:
        intrin = stmt_intrin(node)
        if intrin == Intrin.MM_MMA:
            return node.value.args[2].same_as(data)
        if intrin == Intrin.FPU_BINARY:
            return node.value.args[3].same_as(data)
        return False

    def visit_stmt(self, s):
        if isinstance(s, tirx.SeqStmt):
            return seq(self.visit_seq(list(s.seq)))
        if isinstance(s, tirx.For):
            return keep_span(s, tirx.For(s.loop_var, s.min, s.extent, s.kind, self.visit_stmt(s.body)))
        if isinstance(s, tirx.AttrStmt):
            return keep_span(s, tirx.AttrStmt(s.node, s.attr_key, s.value, self.visit_stmt(s.body)))
        if stmt_intrin(s) == Intrin.PACK_BLOCK:
            return seq(self.visit_seq([s]))
        return s


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    if get(func, Attr.KERNEL_ROLE) != KernelRole.COMPUTE.value:
        return func
    return func.with_body(_Inserter(func).visit_stmt(func.body))


def InsertDSTManagementTT():
    return prim_func_pass(_transform, PASS)
