"""Reductions: ``T.reduce_sum/max/min/abssum/absmax`` of a block along rows or columns.

C2: ``T.reduce_<kind>(X, v, dim, clear)`` → ``tt.tile.reduce(form, X', v, dim, clear)`` (``FORMS``):
sum and max reduce X itself (``"sum"``, ``"max"``); abssum and absmax reduce ``X_abs = |X|``, an
element-wise op (``abs_tile``) C2 puts before the reduction; min reduces ``X_neg = -X`` as
``"negmax"``: ``min(X) = -max(-X)``, exact (negation only flips the sign bit, and the source
registers' truncation of a float32 datum, ``to_source`` in the emulator's compute.cpp, keeps the
sign: it commutes with negation). The FPU pools with MAX, SUM and AVG only: tt-llk 0.81.1's
``PoolType::MIN`` fails ``_llk_math_reduce_init_``'s static_assert ("The FPU reduce has no MIN: the
hardware provides GMPOOL (max) and GAPOOL (average) only", llk_math_reduce.h), and reduce.h's
``reduce_tile`` documents Sum, Avg and Max. ``dim=-1`` is ``dim=1`` (TileLang legalises it).
D4: ``compute_kernel_hw_startup(X, scaler, v)`` when it is the first op; its init is never hoisted.
D5: per result tile, ``reduce_tile`` over the source tiles into DST 0 with the scaler CB (a tile
of 1.0 the reader pushes once), one result tile per acquire; ``"negmax"`` then negates DST 0
(``mul_unary_tile`` by -1); without ``clear`` the old value, in DST 1, is combined into DST 0
(``add_binary_tile``, ``binary_max_tile``, ``binary_min_tile``: TileLang's meaning of
``clear=False``, sum and abssum add, max and absmax take the maximum, min the minimum).
Row sums packed by their producer (C2, :meth:`Reduce.fuse_row_sums`): ``T.reduce_sum(X, v, dim=1)``
right after the element-wise op computing a float32 X of several tile columns reads a block
``X_rowsum`` of one tile per tile row that op packs besides X, the packer adding a row's tiles into
its tile in L1; one ``reduce_tile`` per row then sums the 32 columns left.
A reduction of a copy of a bfloat16 block (C2, :meth:`Reduce.reduce_copy_sources`) reduces the copy's source:
exact (the source registers read a bfloat16 datum and its float32 copy alike); the copy goes where nothing else
reads it.
A reduction along an extent of 1 (``[n, 1]`` along dim 1, ``[1, n]`` along dim 0) is a copy of the
block's one element per result (its absolute value for abssum/absmax; combined with the old value
without ``clear``): C2 lowers it as a ``tt.tile.eltwise`` instead.
Errors: the bitwise reductions, integer blocks, a vector source, a result of the wrong orientation.

    Before: T.reduce_absmax(x, amax, dim=1)
    After:  T.tt.tile.eltwise(x_abs, i, j, T.fabs(x[i, j]))
            T.tt.tile.reduce("max", x_abs, amax, 1, T.bool(True))
"""

from __future__ import annotations

from dataclasses import dataclass

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.ops.base import Engine, TileOp, bfloat16_copy, compute_accesses, register, strip_casts
from tilelang_tt.contract.dims import float32_bits
from tilelang_tt.ops.sfpu import SfpuKind, sfpu_op
from tilelang_tt.ir.common import (COL, ROW, TILE, as_region, evaluate, evaluate_calls, seq, serial, stmt_intrin,
                                   uses_var)


@dataclass(frozen=True)
class Form:
    """How a TileLang reduction kind runs: ``absolute``, of the elements' absolute values; ``pool``
    its ``tt.tile.reduce`` form (``"negmax"``: -max of the negated elements); ``node`` the TIR node
    combining a result with the old value without ``clear``."""

    absolute: bool
    pool: str
    node: type

    @property
    def as_is(self) -> bool:
        """Whether the reduction pools the source's elements themselves (else an element-wise op makes
        the block it pools, of :meth:`element`)."""
        return not self.absolute and self.pool != "negmax"

    def element(self, x):
        """The element the reduction pools, of the source's element ``x``: |x| or -x."""
        return tirx.abs(x) if self.absolute else -x


FORMS = {
    "sum": Form(False, "sum", tirx.Add),
    "max": Form(False, "max", tirx.Max),
    "min": Form(False, "negmax", tirx.Min),
    "abssum": Form(True, "sum", tirx.Add),
    "absmax": Form(True, "max", tirx.Max),
}
POOLS = {"sum": "sum", "max": "max", "negmax": "max"}  # tt.tile.reduce form -> reduce_tile's pool
COMBINE = {"sum": "add", "max": "max", "negmax": "min"}  # tt.tile.reduce form -> the SFPU binary op combining


class Reduce(TileOp):
    tile_ops = ("reduce",)
    intrin = Intrin.TILE_REDUCE

    def lower(self, ctx, stmt):
        args = stmt.value.args
        src, dst = as_region(args[0]), as_region(args[1])
        kind, dim, clear = args[2].value, int(args[3]), bool(args[4])
        if kind not in FORMS:
            raise ctx.error(stmt, f"T.reduce_{kind} is not supported: a bitwise reduction needs integer tiles, "
                                  "which reduce_tile does not pool",
                            f"reduce float blocks with T.reduce_{', T.reduce_'.join(FORMS)}")
        form = FORMS[kind]
        ctx.check_compute_dtypes(stmt, (src.buffer, dst.buffer))
        unit = len(src.buffer.shape) == 2 and int(src.buffer.shape[dim % 2]) == 1  # a [n, 1] block along dim 1 ...
        # a row vector along its row (a column along its column): the block of one tile row whose
        # other rows are padding, reduced as such (their results are the padding of the result's)
        along = ctx.block_kind(src.buffer) == (ROW if dim % 2 == 1 else COL)
        if not unit and (len(src.buffer.shape) != 2 or (ctx.block_kind(src.buffer) != "" and not along)):
            raise ctx.error(stmt, f"T.reduce of `{src.buffer.name}` {[int(d) for d in src.buffer.shape]}: the source "
                                  "is a vector",
                            "reduce a 2-D block of whole 32x32 tiles (rows and columns both multiples of 32)")
        dim = dim % 2
        want = COL if dim == 1 else ROW
        if ctx.block_kind(dst.buffer) != want:
            raise ctx.error(stmt, f"the result `{dst.buffer.name}` of a reduction along dim {dim} must be a "
                                  f"{'per-row' if dim == 1 else 'per-column'} vector",
                            f"allocate it as T.alloc_fragment(({int(src.buffer.shape[1 - dim])},), ...)")
        if unit:  # ... or [1, n] along dim 0: a vector of the result's orientation (its shape's), want
            return _reduce_one(ctx, stmt, form, src.buffer, dst.buffer, clear)
        if form.as_is:
            return evaluate(Intrin.TILE_REDUCE, form.pool, src.buffer.data, dst.buffer.data, dim, clear, like=stmt)
        pooled = ctx.new_block(src.buffer, f"_{kind}", str(src.buffer.dtype), "local.fragment")
        return seq([ctx.eltwise_from(stmt, pooled, lambda i, j: form.element(ctx.load(src.buffer, i, j))),
                    evaluate(Intrin.TILE_REDUCE, form.pool, pooled.data, dst.buffer.data, dim, clear, like=stmt)])

    def reduce_copy_sources(self, ctx, stmts: list) -> list:
        """C2, over a lowered statement sequence: ``tt.tile.reduce(kind, X, v, dim, clear)`` whose source X
        was last written by a copy of a bfloat16 block S of the same tiles, ``tt.tile.eltwise(X, i, j,
        S[i, j])`` (X bfloat16 or float32), with only reductions of X or S between them, reduces S itself.
        Exact: reduce_tile reads each datum of S and of X to the same value in its source registers (a
        bfloat16 datum widened to float32 is the same number), and the pool's sum or max in DST does not
        see which block it came from. Not for a float32 S: a float32 CB reduce_tile reads passes through
        SrcA (TF32) for every op reading it, where it could be unpacked straight to DST (the 32 bits) for
        the others (``unpack_to_dest``). The copy stays where a later statement reads X (DropDeadBlocksTT drops it otherwise): the
        copy TileLang's ``T.reduce_*`` makes of a shared source (tilelang/language/reduce_op.py) goes, and
        ``T.copy(x, x_f32); T.reduce_max(x_f32, m)`` reads the bfloat16 x, as ttnn's softmax pools its
        bfloat16 input (softmax.cpp calc_numeric_stable)."""
        out = list(stmts)
        for k, stmt in enumerate(out):
            if stmt_intrin(stmt) != Intrin.TILE_REDUCE:
                continue
            x = stmt.value.args[1]
            p = next((n for n in range(k - 1, -1, -1) if uses_var(out[n], x) and not _reduces(out[n])), None)
            if p is None or stmt_intrin(out[p]) != Intrin.TILE_ELTWISE or not out[p].value.args[0].same_as(x):
                continue
            load = bfloat16_copy(ctx.cbs, out[p], x.name)
            if load is None or any(not _reduces(out[n]) and uses_var(out[n], load.buffer.data) for n in range(p + 1, k)):
                continue
            out[k] = evaluate(Intrin.TILE_REDUCE, stmt.value.args[0], load.buffer.data, *stmt.value.args[2:],
                              like=stmt)
        return out

    def fuse_row_sums(self, ctx, stmts: list) -> list:
        """C2, over a lowered statement sequence: ``tt.tile.eltwise(X, i, j, value)`` followed, with
        no statement touching X between them, by ``tt.tile.reduce("sum", X, v, 1, clear)``, X a
        float32 block of several tile columns that a statement after the reduction reads too,
        becomes ``tt.tile.eltwise(X, i, j, value, X_rowsum)`` and ``tt.tile.reduce("sum", X_rowsum,
        v, 1, clear)``: the op packs each tile of X also into its row's tile of the new float32
        block X_rowsum (rows x 1 tiles), adding it there in L1 from a row's second tile on
        (:func:`tilelang_tt.ops.eltwise.row_sum_packs`), and the reduction unpacks one tile per
        row where it unpacked every tile of X: tt-metal's SDPA sums its exp'd scores so
        (ttnn compute_common.hpp, ``sub_exp_block_bcast_cols_inplace``: "take advantage of L1
        accumulation to reduce row x cols tiles to rows x 1 tiles"). Float32 only (the partial
        sums are float32, as DST is), and not a copy of a narrower block (its values reach the
        reduction exactly, the partials would not: :func:`_copies_narrow`); where X's values are
        computed in float32, reduce_tile truncates each to TF32 without the partials and each
        partial with them (a sum within 2^-10 both ways, tests/compiler/test_row_sums.py). X must be
        read after the reduction (a block nobody reads is dropped with the op computing it)."""
        out = list(stmts)
        for k, stmt in enumerate(out):
            if stmt_intrin(stmt) != Intrin.TILE_REDUCE:
                continue
            kind, x, _, dim, _ = stmt.value.args
            desc = ctx.cbs[x.name]
            if kind.value != "sum" or int(dim) != 1 or desc.data_format != "Float32" \
                    or desc.vector or desc.block_tiles[1] < 2:
                continue
            p = next((n for n in range(k - 1, -1, -1) if uses_var(out[n], x)), None)
            if p is None or stmt_intrin(out[p]) != Intrin.TILE_ELTWISE or not out[p].value.args[0].same_as(x) \
                    or not any(_reads(s, x) for s in out[k + 1:]) or _copies_narrow(ctx, out[p].value.args[3]):
                continue
            buf = _buffer_of(ctx, x)
            rows = desc.block_tiles[0]
            partial = ctx.new_block(buf, "_rowsum", "float32", "local.fragment", shape=(rows * TILE, TILE))
            out[p] = evaluate(Intrin.TILE_ELTWISE, *out[p].value.args, partial.data, like=out[p])
            out[k] = evaluate(Intrin.TILE_REDUCE, kind, partial.data, *stmt.value.args[2:], like=stmt)
        return out

    def accesses(self, stmt, data_names):
        _, src, dst, _, clear = stmt.value.args
        return [data_names[src]] + ([] if bool(clear) else [data_names[dst]]), data_names[dst]

    def cb_accesses(self, ctx, stmt, data_names):
        reads, write = self.accesses(stmt, data_names)
        return reads + [ctx.scaler], write

    def engine(self, ctx, stmt):
        return Engine(("reduce",))

    def startup(self, ctx, stmt):
        _, src, dst, _, _ = stmt.value.args
        return ctx.index(src.name), ctx.index(ctx.scaler), ctx.index(dst.name), False

    def expand(self, ctx, stmt):
        kind, src_var, dst_var, dim, clear = stmt.value.args
        kind, dim, clear = kind.value, int(dim), bool(clear)
        pool = POOLS[kind]
        src, dst, scaler = ctx.cb(src_var.name), ctx.cb(dst_var.name), ctx.cb(ctx.scaler)
        rows, cols = src.block_tiles
        outer, inner = (rows, cols) if dim == 1 else (cols, rows)
        rdim = "row" if dim == 1 else "col"

        def tile(o, n):
            return ctx.analyzer.simplify(o * cols + n if dim == 1 else n * cols + o)

        def one(o):
            stmts = [evaluate(Intrin.DST_ACQUIRE, like=stmt),
                     evaluate(Intrin.REDUCE_INIT, pool, rdim, src.index, scaler.index, dst.index, like=stmt),
                     serial("n", inner, lambda n: evaluate(Intrin.REDUCE_TILE, pool, rdim, src.index, scaler.index,
                                                           tile(o, n), 0, 0, like=stmt), like=stmt),
                     evaluate(Intrin.REDUCE_UNINIT, like=stmt)]
            if kind == "negmax":  # -max(-X) = min(X)
                negate = sfpu_op(SfpuKind.SCALAR, "mul")
                stmts += [evaluate(Intrin.SFPU_INIT, negate.kind.value, negate.name, like=stmt),
                          evaluate(Intrin.SFPU_SCALAR, negate.name, 0, tirx.IntImm("uint32", float32_bits(-1.0)),
                                   like=stmt)]
            if not clear:  # the old value into DST 1, combined into DST 0
                combine = sfpu_op(SfpuKind.BINARY, COMBINE[kind])
                stmts += [evaluate(Intrin.COPY_INIT, dst.index, like=stmt),
                          evaluate(Intrin.COPY_TILE, dst.index, o, 1, like=stmt),
                          evaluate(Intrin.SFPU_INIT, combine.kind.value, combine.name, like=stmt),
                          evaluate(Intrin.SFPU_BINARY, combine.name, 0, 1, 0, like=stmt)]
            return seq(stmts + ctx.pack(dst, 1, lambda t: t, stmt))

        return serial("o", outer, one, like=stmt)


def _copies_narrow(ctx, value) -> bool:
    """Whether ``value`` is a copy of a block narrower than float32 (``T.copy(x, x_f32)`` of a
    bfloat16 ``x``): reduce_tile reads float32 tiles through the 19-bit source registers (TF32, the
    mantissa truncated to 10 bits: tt-llk cunpack_common.h), which hold bfloat16 values exactly but
    not the partial sums of them, so the row sums of such a copy are exact only without partials."""
    load = strip_casts(value)
    return isinstance(load, tirx.BufferLoad) and ctx.cbs[load.buffer.name].data_format != "Float32"


def _reduces(stmt) -> bool:
    """Whether ``stmt`` is a reduction (it reads its source, it writes a vector of its own)."""
    return stmt_intrin(stmt) == Intrin.TILE_REDUCE


def _reads(stmt, var: tirx.Var) -> bool:
    """Whether a compute op or a write to a tensor in ``stmt`` reads block ``var``."""
    for call in evaluate_calls(stmt):
        if stmt_intrin(call) == Intrin.WRITE_FROM_CB and as_region(call.value.args[0]).buffer.data.same_as(var):
            return True
        names = {}  # the ops name the blocks they access (UniqueBufferNamesTT: one name per block)
        tirx.stmt_functor.post_order_visit(call.value, lambda n: names.setdefault(n, n.name)
                                           if isinstance(n, tirx.Var) else None)
        if var.name in compute_accesses(call, names)[0]:
            return True
    return False


def _buffer_of(ctx, var: tirx.Var) -> tirx.Buffer:
    """The block (buffer) of data ``var``: allocated by the kernel or made by C2."""
    found = [b for b in ctx.generated if b.data.same_as(var)]

    def visit(n):
        if isinstance(n, tirx.SBlock):
            found.extend(b for b in n.alloc_buffers if b.data.same_as(var))

    tirx.stmt_functor.post_order_visit(ctx.func.body, visit)
    return found[0]


def _reduce_one(ctx, stmt, form: Form, src, dst, clear: bool):
    """A reduction along an extent of 1 (a [n, 1] block along its rows, a [1, n] one along its columns): each
    result is its one element (its absolute value for abssum/absmax). The block is a vector of the result's
    orientation; the result is that vector, or with ``clear=False`` its sum, maximum or minimum with the old
    value: an element-wise value."""
    def value(i, j):
        x = ctx.load(src, i, j)
        x = x if x.dtype == dst.dtype else tirx.Cast(dst.dtype, x)
        x = tirx.abs(x) if form.absolute else x
        return x if clear else form.node(ctx.load(dst, i, j), x)

    return ctx.eltwise_from(stmt, dst, value)


REDUCE = register(Reduce())
