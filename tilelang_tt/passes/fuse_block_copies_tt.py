"""D4 FuseBlockCopiesTT (late, compute): a copy of a block computed just before is packed by the op
that computes it.

Reads: ``tt.kernel_role``, ``tt.cb_desc`` (formats, block geometry, vectors), the compute kernel's
``tt.tile.eltwise`` statements.
Writes: no attribute. TIR: ``tt.tile.eltwise(X, i, j, value)`` followed, in the same statement
sequence, by ``tt.tile.eltwise(Y, i2, j2, Y.dtype(X[i2, j2]))`` (TileLang's ``T.copy(X, Y)`` of two
fragments, a cast) becomes ``tt.tile.eltwise(X, i, j, value, Y)``: the DST tiles of ``value`` are
packed into X's CB and into Y's, where the copy would unpack X's tiles into DST again and pack them
(flash attention's ``T.copy(acc_s, acc_s_cast)`` after the exp pass: the float32 scores unpacked
once less per K/V step). The copy's own statement goes.

Holds before: InsertDSTManagementTT has not run (the eltwise statements are protocol-less).
Holds after: every value a block holds is the one the program computes: the fusion needs
* Y the same block geometry as X (tiles, vector kind), both float blocks;
* packing DST to Y the same as packing it to X then converting: X is Float32, or Y has X's format;
* nothing between the two statements touching Y, nor writing X (reads of X are fine); the value
  not reading Y.

    Before: T.tt.tile.eltwise(acc_s, i, j, T.exp(acc_s_1[i, j] - m_1[i]), acc_s_rowsum)
            T.tt.tile.reduce("sum", acc_s_rowsum, scores_sum, 1, T.bool(True))
            T.tt.tile.eltwise(acc_s_cast, i_7, j_2, T.Cast("bfloat16", acc_s_1[i_7, j_2]))
    After:  T.tt.tile.eltwise(acc_s, i, j, T.exp(acc_s_1[i, j] - m_1[i]), acc_s_rowsum, acc_s_cast)
            T.tt.tile.reduce("sum", acc_s_rowsum, scores_sum, 1, T.bool(True))
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.attrs import Attr, KernelRole
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.contract.formats import BLOCK_STORABLE, BY_DATA_FORMAT
from tilelang_tt.ops.base import strip_casts
from tilelang_tt.ir.common import evaluate, keep_span, prim_func_pass, seq, stmt_intrin, vars_used

PASS = "FuseBlockCopiesTT"
# the float formats of the one table: bfloat16 and float32, and the block formats that store them
FLOAT_FORMATS = tuple(f.data_format for f in BY_DATA_FORMAT.values() if f.block or f.dtype in BLOCK_STORABLE)


def _written(stmt) -> list[tirx.Var]:
    """The blocks a compute statement writes (an element-wise op's packed copies too), none for any
    other statement."""
    intrin = stmt_intrin(stmt)
    if intrin == Intrin.TILE_ELTWISE:
        return [stmt.value.args[0], *stmt.value.args[4:]]
    if intrin == Intrin.TILE_REDUCE:
        return [stmt.value.args[2]]
    return []


class _Fuser:
    def __init__(self, func: tirx.PrimFunc):
        self.cbs = Attr.CB_DESC.read(func)

    def copied(self, stmt, x: tirx.Var) -> tirx.Var | None:
        """Y when ``stmt`` is ``Y[i, j] = Y.dtype(X[i, j])`` for block X of data ``x`` and a Y that
        packing X's DST tiles gives as the copy would."""
        if stmt_intrin(stmt) != Intrin.TILE_ELTWISE or len(stmt.value.args) != 4:
            return None
        y, i, j, value = stmt.value.args
        load = strip_casts(value)
        if not (isinstance(load, tirx.BufferLoad) and load.buffer.data.same_as(x)) or y.same_as(x):
            return None
        ij = [v for v in (i, j) if not (isinstance(v, tirx.IntImm) and int(v.value) == 0)]
        if len(load.indices) != len(ij) or not all(a.same_as(b) for a, b in zip(load.indices, ij)):
            return None
        cx, cy = self.cbs.get(x.name), self.cbs.get(y.name)
        if cx is None or cy is None or (cx.block_tiles, cx.vector) != (cy.block_tiles, cy.vector):
            return None
        if cx.data_format not in FLOAT_FORMATS or cy.data_format not in FLOAT_FORMATS:
            return None
        return y if cx.data_format in ("Float32", cy.data_format) else None

    def fuse(self, items: list) -> list:
        out = list(items)
        p = -1
        while p + 1 < len(out):
            p += 1
            if stmt_intrin(out[p]) != Intrin.TILE_ELTWISE:
                continue
            x = out[p].value.args[0]
            touched = vars_used(out[p].value.args[3])  # the value reads no copy's target
            c = p + 1
            while c < len(out):
                y = self.copied(out[c], x)
                if y is not None and y not in touched:
                    out[p] = evaluate(Intrin.TILE_ELTWISE, *out[p].value.args, y, like=out[p])
                    del out[c]
                    continue
                names, written = vars_used(out[c]), _written(out[c])
                if x in names and (not written or any(w.same_as(x) for w in written)):
                    break  # X changes (or something not a compute op uses it): its later copies copy another value
                touched |= names
                c += 1
        return out

    def visit(self, stmt):
        if isinstance(stmt, tirx.SeqStmt):
            return seq(self.fuse([self.visit(s) for s in stmt.seq]))
        if isinstance(stmt, tirx.For):
            return keep_span(stmt, tirx.For(stmt.loop_var, stmt.min, stmt.extent, stmt.kind, self.visit(stmt.body)))
        if isinstance(stmt, tirx.AttrStmt):
            return keep_span(stmt, tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value, self.visit(stmt.body)))
        if isinstance(stmt, tirx.IfThenElse) and stmt.else_case is None:
            return keep_span(stmt, tirx.IfThenElse(stmt.condition, self.visit(stmt.then_case), None))
        return stmt


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    if Attr.KERNEL_ROLE.read(func) != KernelRole.COMPUTE:
        return func
    return func.with_body(_Fuser(func).visit(func.body))


def FuseBlockCopiesTT():
    return prim_func_pass(_transform, PASS)
