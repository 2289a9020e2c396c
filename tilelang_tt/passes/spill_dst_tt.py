"""C2b SpillDSTTT (after LowerTTTileIntrinsics): an element-wise value needing more DST registers than an
acquire holds is computed in several DST passes, through intermediate blocks (register spills).

D5 computes a ``tt.tile.eltwise`` value tile by tile in DST, its operands in registers allocated in
Sethi-Ullman order (the operand needing more registers first: ``ops/eltwise.py`` :class:`TileProgram`);
an acquire holds ``tt.compute_config`` ``dst_budget`` tiles (4 with a 32-bit DST), and a value whose
registers exceed it has no DST program. Here such a value spills: the operand held longest (computed
first and kept while the others are computed: among the operands that fit the budget alone, the one
needing most registers, then the largest, then the first in the program's order) is computed into a new block of the
output's geometry (``<out>_spill``) by an element-wise statement of its own just before, and the value
reads that block instead (every occurrence of the same operand). Spills repeat until the value fits;
each spill fits by construction, and may read earlier spills. A value still too large (a single op
whose own operands need more, as ``where`` of three values with a budget of 2) is left for D5 to
refuse at the user's line. The blocks hold what DST holds: float32 with a 32-bit DST, bfloat16 with a
16-bit one, int32 for an int32 value, so a spill rounds nothing.

Reads: ``tt.compute_config`` (the budget, the DST width, fast math), ``tt.cb_desc`` (block geometry, vectors).
Writes: ``tt.cb_desc`` entries of the spill blocks, allocated beside the block the value is stored in.
Before it every ``tt.tile.eltwise`` is C2's; after it every one fits the budget, or D5 refuses it.

    Before: T.tt.tile.eltwise(y.data, i, j, T.Select(m_gen[i, j] != 0, T.min(T.max(T.log(1 + T.exp(x[i, j]
                + b[i])), lo), hi) * a[i], 0))          # 7 DST tiles per output tile, budget 4
    After:  T.tt.tile.eltwise(y_spill.data, i, j, T.min(T.max(T.log(1 + T.exp(x[i, j] + b[i])), lo), hi))
            T.tt.tile.eltwise(y.data, i, j, T.Select(m_gen[i, j] != 0, y_spill[i, j] * a[i], 0))
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.attrs import Attr
from tilelang_tt.ir.common import allocations, evaluate, keep_span, prim_func_pass, stmt_intrin
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.ops.base import DSTContext, LowerContext
from tilelang_tt.ops.eltwise import fits_dst, operand_needs

PASS = "SpillDSTTT"


def _replace(value: tirx.PrimExpr, operand: tirx.PrimExpr, by: tirx.PrimExpr) -> tirx.PrimExpr:
    """``value`` with every sub-expression equal to ``operand`` replaced by ``by``."""
    def pre(node):
        if isinstance(node, tirx.PrimExpr) and tirx.analysis.expr_deep_equal(node, operand):
            return by
        return None

    return tirx.stmt_functor.ir_transform(tirx.Evaluate(value), pre, None).value


def _size(expr: tirx.PrimExpr) -> int:
    count = [0]
    tirx.stmt_functor.post_order_visit(expr, lambda _: count.__setitem__(0, count[0] + 1))
    return count[0]


class _Spiller:
    def __init__(self, func: tirx.PrimFunc):
        self.dst = DSTContext(PASS, func, None, inline_inits=False)
        # makes the blocks; fast math as C2 recorded it (tt.compute_config), the D5 context's too
        self.lower = LowerContext(PASS, func, lambda _: self.dst.budget, self.dst.cbs, "auto",
                                  fast_math=self.dst.fast_math)
        self.dst.cbs = self.lower.cbs  # the spill blocks' descriptors, seen by both
        self.buffers = {b.data: b for b in allocations(func)}

    def dtype(self, out: tirx.Buffer) -> str:
        if self.dst.cb(out.name).data_format == "Int32":
            return "int32"
        return "float32" if self.dst.fp32_dest_acc else "bfloat16"

    def spill(self, stmt: tirx.Evaluate) -> list[tirx.Stmt]:
        """``stmt`` as the spills it needs and itself reading them; ``[stmt]`` when it fits, or when
        no spill makes it fit."""
        if fits_dst(self.dst, stmt):
            return [stmt]
        out_var, i, j, value, *also = stmt.value.args
        out = self.buffers[out_var]
        top = value.dtype if isinstance(value, tirx.Cast) else None  # the cast to the block's dtype: the packer's
        inner = value.value if top is not None else value
        spills, current, generated = [], stmt, len(self.lower.generated)
        while not fits_dst(self.dst, current):
            candidates = [(e, n) for e, n in operand_needs(self.dst, current, inner)
                          if 2 <= n <= self.dst.budget and not e.same_as(inner)]
            if not candidates:  # D5 refuses the value as it was written
                del self.lower.generated[generated:]
                return [stmt]
            operand = max(candidates, key=lambda c: (c[1], _size(c[0])))[0]  # max keeps the first of equals
            block = self.lower.new_block(out, "_spill", self.dtype(out), "local.fragment")
            load = self.lower.load(block, i, j)
            spills.append(evaluate(Intrin.TILE_ELTWISE, block.data, i, j, operand if operand.dtype == block.dtype
                                   else tirx.Cast(block.dtype, operand), like=stmt))
            inner = _replace(inner, operand, load if load.dtype == operand.dtype else tirx.Cast(operand.dtype, load))
            current = evaluate(Intrin.TILE_ELTWISE, out_var, i, j, inner if top is None else tirx.Cast(top, inner),
                               *also, like=stmt)
        return [*spills, current]

    def visit(self, stmt: tirx.Stmt) -> tirx.Stmt:
        def post(node):
            if isinstance(node, tirx.Evaluate) and stmt_intrin(node) == Intrin.TILE_ELTWISE:
                out = self.spill(node)
                return out[0] if len(out) == 1 else keep_span(node, tirx.SeqStmt(out))
            if isinstance(node, tirx.SBlock) and self.lower.generated and any(
                    b.data in self.buffers for b in node.alloc_buffers):  # the spills beside the blocks
                allocs = list(node.alloc_buffers) + self.lower.generated
                self.lower.generated = []
                return tirx.SBlock(node.iter_vars, node.reads, node.writes, node.name_hint, node.body, node.init,
                                   allocs, node.match_buffers, node.annotations)
            return None

        return tirx.stmt_functor.ir_transform(stmt, None, post, ["tirx.Evaluate", "tirx.SBlock"])


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    if not Attr.COMPUTE_CONFIG.has(func):
        return func
    spiller = _Spiller(func)
    body = spiller.visit(func.body)
    if body.same_as(func.body):
        return func
    return Attr.CB_DESC.write(func.with_body(body), dict(sorted(spiller.lower.cbs.items())))


def SpillDSTTT():
    return prim_func_pass(_transform, PASS)
