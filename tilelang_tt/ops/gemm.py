"""GEMM: ``T.gemm(A, B, C)`` of on-chip blocks, with C accumulated in DST.

C2: ``T.clear(C)`` and the statements after it that ``T.gemm`` into C (the K loop) become
``T.attr(C, "tt.accumulate", 0)`` around ``tt.mm.mma(A, B, C, m0, n0, sm, sn, transpose_b, k == 0)``
and a trailing ``tt.pack_block(C, m0, n0, sm, sn)``: the accumulator lives in DST over the whole K
loop and every output tile is packed once. A block with more tiles than one DST acquire holds is
split into sub-blocks: by default (``gemm_reuse="auto"``) the sub-block loop goes inside the K loop
and partial sums round-trip through C's CB (attribute value 2), so each A and B block is read once
per K step; with ``gemm_reuse="dst"`` the K loop goes inside the sub-block loop (one pack per
output tile, operands re-read per sub-block). A K loop that reads a row-major tensor always
round-trips (compute tilizes its rows between K steps, outside DST). ``T.gemm`` into a live C (no clear: flash
attention's ``acc_o += P @ V``) has attribute value 1: C is reloaded into DST. A float32 C scaled per row (or
per column) by a vector right before such a gemm (``C[i, j] = C[i, j] * v[i]``, or ``v[j]``, nothing touching C
or v in between: flash attention's rescale of ``acc_o``) is scaled at the reload instead
(:meth:`Gemm.fold_reload_scales`): the mma carries v, D5 multiplies the reloaded tiles by v's broadcast tiles in
DST (the same ops on the same values as the element-wise pass, whose pack to C's float32 CB and reload were
exact), and the sub-block leaves a DST tile per row (column) of it for v (:func:`scaled_sub_block`). Before: ``acc_o = acc_o * v`` (copy, broadcast, multiply, pack) then
``acc_o += P @ V`` (reload, matmul, pack); after: ``acc_o = acc_o * v + P @ V`` (reload, broadcast, multiply,
matmul, pack). ``T.gemm(A, B, C,
clear_accum=True)`` is ``T.clear(C)`` and that gemm: it opens a fresh scope (MLA's scores, per key block).
The sub-block (sm x sn tiles, :func:`sub_block`) is chosen once, here, and recorded in the
``tt.mm.mma`` and ``tt.pack_block`` statements; D4 and D5 read it from there.
D4: ``compute_kernel_hw_startup<SrcOrder::Reverse>(A, B, C)`` when it is the first op; the kernel's
matmul init (``matmul_block_init(A, B, transpose, sn, sm, bk tiles)``, or ``matmul_init``) is
hoisted when every op is a matmul of the same operands and sub-block that reloads nothing.
D5: ``tile_regs_acquire`` before the statements that accumulate into C, reload of C's tiles for
``acc += A @ B``, per K tile one ``matmul_block`` of the sub-block into DST tiles ``i * sn + j``
(as ttnn's ``bmm_large_block_zm_fused_bias_activation``), then per ``tt.pack_block`` one pack per
output tile. Partial sums the packer adds up in L1 (L1_ACC) of a block the writer drains through a hand-off CB
accumulate in that CB's pages where it stores their format (:meth:`Gemm.process_l1_acc_in_place`: the last K
step pushes each sub-block; SplitDeviceKernel gives the scope the hand-off CB), else are reloaded once, by the K
loop's last step, which packs each sub-block straight into the hand-off CB (``tt.pack_block``'s ``last``,
:meth:`Gemm.process_handed_l1_acc`), both as ttnn's matmul with PACKER_L1_ACC.
A transposed B (``transpose_B``) wider than one tile column keeps ``matmul_tiles`` per
output tile: its columns are not adjacent tiles, which matmul_block steps through
(:func:`matmul_block_dims`).
``T.gemm(A, B, C, transpose_A=True)``: compute first transposes A's tiles into a block of the
transposed shape (:meth:`Gemm.untranspose`; ``transpose_tile``), then C accumulates as for a live
accumulator.
Errors: operands that are not 2-D on-chip blocks, shapes that do not agree,
integer blocks, more output tiles per acquire than DST holds.
"""

from __future__ import annotations

import dataclasses

import tilelang  # noqa: F401
import tvm
from tvm import tirx

from tilelang_tt.ir.attrs import AccumulateMode, Scope
from tilelang_tt.ir.dataflow import handoff_cbs
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.ops.base import INTEGER_DTYPES, Engine, TileOp, register
from tilelang_tt.ops.fill import cleared_block
from tilelang_tt.ops.sfpu import SfpuKind, sfpu_op
from tilelang_tt.ir.common import (
    READ,
    TILE,
    as_region,
    contains,
    evaluate,
    evaluate_calls,
    is_cb_buffer,
    keep_span,
    make_region,
    seq,
    serial,
    stmt_intrin,
    tile_op_name,
)
from tilelang_tt.ir.slices import is_row_major


def sub_block(bmt: int, bnt: int, budget: int) -> tuple[int, int]:
    """The (rows, cols) sub-block of the bmt×bnt tile block one DST acquire accumulates (the
    ``rt_dim``/``ct_dim`` of its matmul_block): the largest that tiles the block, fits ``budget`` DST
    tiles (``Arch.dst_budget``: half of DST, double-buffered, halved again for fp32 accumulation)
    and packs in row-major block order — full rows of tiles, or a divisor of one row. That is what
    ttnn's sub-block search gives (bmm_op_utils get_matmul_subblock_params: the first of
    SUBBLOCK_HW_CHOICES, largest area first, that divides the block and fits DST) under its
    constraint for sub-blocks packed one after another (``out_subblock_w == per_core_N ||
    out_subblock_h == 1``), under which the largest is unique. It is not what ttnn's out-of-box
    2D-multicast matmul config takes: that starts from 4x2 and drops to one row of it where 2 is
    not per_core_N (matmul get_program_config), narrower sub-blocks than these (the calibration in
    docs/performance.md compares the two)."""
    if bnt <= budget:
        sh = max(d for d in range(1, bmt + 1) if bmt % d == 0 and d * bnt <= budget)
        return sh, bnt
    return 1, max(d for d in range(1, budget + 1) if bnt % d == 0)


def scaled_sub_block(bmt: int, bnt: int, budget: int, per_row: bool = True) -> tuple[int, int] | None:
    """The sub-block of :func:`sub_block` for an accumulator scaled per row (``per_row``, else per column) at
    its reload: the largest whose tiles and one broadcast vector tile per row (column) of it fit ``budget`` DST
    tiles (the plain sub-block when it leaves that room); None when not even one tile and its vector tile fit."""
    for fewer in range(budget, 0, -1):
        sh, sw = sub_block(bmt, bnt, fewer)
        if sh * sw + (sh if per_row else sw) <= budget:
            return sh, sw
    return None


def scales_at_reload(bmt: int, bnt: int, budget: int, per_row: bool = True) -> bool:
    """Whether a per-row (per-column) scaling of a bmt x bnt accumulator is worth doing at its reload: the sub-block left
    beside the vector's tiles (:func:`scaled_sub_block`) reuses a matmul operand tile as often as the plain one.
    matmul_block unpacks the reused operand once per max(rows, cols) products (the emulator's costs.cpp, from
    tt-llk llk_unpack_AB_matmul.h): 1 + 1 / max(rows, cols) tile unpacks per product. A narrower sub-block
    costs more unpacks than the scaling pass's pack and reload save (flash attention d 128, float32 DST: 1 x 4
    becomes 1 x 2, 1.25 -> 1.5 unpacks a product, 203.6 -> 207.8 us at seq 4096; d 64: 2 x 2 becomes 1 x 2,
    1.5 both, 146.7 -> 144.0 us)."""
    scaled = scaled_sub_block(bmt, bnt, budget, per_row)
    return scaled is not None and max(scaled) >= max(sub_block(bmt, bnt, budget))


def given_sub_block(ctx, node, acc: tirx.Buffer, sub: tuple[int, int], budget: int) -> tuple[int, int]:
    """The ``gemm_subblock`` option's (rows, cols) for the gemms into ``acc``, checked as ttnn checks
    a program config's out_subblock_h/w (matmul_device_operation.cpp: they divide the per-core block,
    their product fits DST, and ``out_subblock_w == per_core_N || out_subblock_h == 1``, the
    sub-blocks being packed one after another in the block's row order)."""
    bmt, bnt = tile_shape(acc)
    sh, sw = sub
    valid = [f"({h}, {w})" for h in range(1, bmt + 1) for w in range(1, bnt + 1)
             if bmt % h == 0 and bnt % w == 0 and h * w <= budget and (w == bnt or h == 1)]
    problem = ("it does not divide the block" if bmt % sh or bnt % sw else
               f"it holds more than the {budget} DST tiles one acquire has" if sh * sw > budget else
               "it is neither one row of tiles nor the block's full width: its sub-blocks would not pack in row "
               "order" if sw != bnt and sh != 1 else None)
    if problem is not None:
        raise ctx.error(node, f"gemm_subblock={sub} for the {bmt}x{bnt}-tile block of `{acc.name}`: {problem}",
                        f"use one of {', '.join(valid)}, or leave gemm_subblock unset")
    return sh, sw


def tile_shape(buf: tirx.Buffer) -> tuple[int, int]:
    shape = [int(d) for d in buf.shape]
    return shape[0] // TILE, shape[1] // TILE


def is_gemm_into(node, acc: tirx.Buffer) -> bool:
    if tile_op_name(node) != "gemm":
        return False
    c = as_region(node.value.args[2])
    return c is not None and c.buffer.same_as(acc)


TRANSPOSE_A, CLEAR_ACCUM = 3, 9  # T.gemm's arguments transpose_A, clear_accum (C = A @ B, the old C dropped)


def transposes_a(node) -> bool:
    """Whether ``node`` is a ``T.gemm(A, B, C, transpose_A=True)``: C += A^T B."""
    return tile_op_name(node) == "gemm" and bool(node.value.args[TRANSPOSE_A])


def clearing_gemm(node) -> tirx.Buffer | None:
    """The accumulator a ``T.gemm(A, B, C, clear_accum=True)`` statement starts afresh, if it is one:
    the same as ``T.clear(C)`` followed by ``T.gemm(A, B, C)``."""
    if tile_op_name(node) != "gemm" or len(node.value.args) <= CLEAR_ACCUM or not bool(node.value.args[CLEAR_ACCUM]):
        return None
    c = as_region(node.value.args[2])
    return c.buffer if c is not None else None



SCALE = 9  # tt.mm.mma's optional argument: the vector C's rows (a column vector) or columns are scaled by at the reload


def axis_scaling(stmt) -> tuple[tirx.Buffer, tirx.Buffer, bool] | None:
    """(C, v, per_row) when ``stmt`` is ``for i, j in T.Parallel(M, N): C[i, j] = C[i, j] * v[i]`` (per_row) or
    ``* v[j]`` (either factor order) over the whole of a 2-D float32 block C, v a vector of its M rows (N
    columns); else None. float32: the element-wise pass packs the product to C's CB and the gemm reloads it, both
    exact only in DST's widest format."""
    outer = stmt
    if not (isinstance(outer, tirx.For) and outer.kind == tirx.ForKind.PARALLEL and isinstance(outer.body, tirx.For)
            and outer.body.kind == tirx.ForKind.PARALLEL and isinstance(outer.body.body, tirx.BufferStore)):
        return None
    inner, store = outer.body, outer.body.body
    c, i, j = store.buffer, outer.loop_var, inner.loop_var
    whole = len(c.shape) == 2 and all(
        isinstance(loop.min, tirx.IntImm) and int(loop.min) == 0 and isinstance(loop.extent, tirx.IntImm)
        and int(loop.extent) == int(dim) for loop, dim in zip((outer, inner), c.shape))
    if not whole or str(c.dtype) != "float32" or not isinstance(store.value, tirx.Mul) \
            or not _at(store.indices, (i, j)):
        return None
    for x, y in ((store.value.a, store.value.b), (store.value.b, store.value.a)):
        if not (isinstance(x, tirx.BufferLoad) and x.buffer.same_as(c) and _at(x.indices, (i, j))
                and isinstance(y, tirx.BufferLoad) and len(y.buffer.shape) == 1 and is_cb_buffer(y.buffer)):
            continue
        for axis, var in enumerate((i, j)):
            if _at(y.indices, (var,)) and int(y.buffer.shape[0]) == int(c.shape[axis]):
                return c, y.buffer, axis == 0
    return None


def _at(indices, loop_vars) -> bool:
    return len(indices) == len(loop_vars) and all(x.same_as(v) for x, v in zip(indices, loop_vars))


def mentions(stmt, buffers) -> bool:
    """Whether ``stmt`` reads, writes or names any of ``buffers``."""
    datas = [b.data for b in buffers]
    return contains(stmt, lambda n: (isinstance(n, (tirx.BufferLoad, tirx.BufferStore))
                                     and any(n.buffer.data.same_as(d) for d in datas))
                    or (isinstance(n, tirx.Var) and any(n.same_as(d) for d in datas)))


def reads_rows(func: tirx.PrimFunc, loop: tirx.For) -> bool:
    """Whether ``loop`` reads a block from a row-major tensor (compute then tilizes inside it)."""
    return contains(loop.body, lambda node: stmt_intrin(node) == Intrin.READ_TO_CB
                    and is_row_major(func, as_region(node.value.args[0]).buffer))

class Gemm(TileOp):
    tile_ops = ("gemm",)
    intrin = Intrin.MM_MMA
    dst_scope = Scope.ACCUMULATE.value

    # -- C2 ----------------------------------------------------------------------------------------
    def untranspose(self, ctx, stmts: list[tirx.Stmt]) -> list[tirx.Stmt]:
        """``stmts`` with each ``T.gemm(A, B, C, transpose_A=True)`` as two statements: compute
        transposes A's tiles into a block A_t of the transposed shape (``transpose_tile``: no more
        DRAM traffic than the straight form), then ``T.gemm(A_t, B, C)``. The accumulator is then a
        block each gemm reloads (DST transposes A between the K steps)."""
        out = []
        for stmt in stmts:
            if not transposes_a(stmt):
                out.append(stmt)
                continue
            a = as_region(stmt.value.args[0])
            if a is None or not is_cb_buffer(a.buffer) or len(a.buffer.shape) != 2:
                raise ctx.error(stmt, "T.gemm operands must be 2-D shared/fragment blocks",
                                "copy A and B blocks with T.copy into T.alloc_shared buffers first")
            k, m = (int(d) for d in a.buffer.shape)
            a_t = ctx.new_block(a.buffer, "_t", str(a.buffer.dtype), "local.fragment", shape=(m, k))
            args = list(stmt.value.args)
            args[0] = make_region(a_t, [0, 0], [m, k], READ)
            args[TRANSPOSE_A] = tirx.IntImm("bool", False)
            gemm = keep_span(stmt, tirx.Evaluate(tirx.Call(stmt.value.dtype, stmt.value.op, args)))
            out += [ctx.eltwise_from(stmt, a_t, lambda i, j: tirx.BufferLoad(a.buffer, [j, i])), gemm]
        return out

    def fold_reload_scales(self, ctx, stmts: list[tirx.Stmt]) -> list[tirx.Stmt]:
        """``stmts`` with each per-row or per-column scaling of an accumulator (:func:`axis_scaling`) that a reloading
        ``T.gemm`` into it follows, nothing between them touching the accumulator or the vector, folded into
        that gemm: the scaling loop dropped, the gemm lowered as an accumulate scope whose mmas carry the vector
        (D5 scales the reloaded tiles in DST). Left as they are when the user set ``gemm_subblock`` or the
        vector's tiles would cost the matmul operand reuse (:func:`scales_at_reload`)."""
        out = list(stmts)
        for i, stmt in enumerate(stmts):
            found = axis_scaling(stmt)
            if found is None or ctx.gemm_subblock is not None:
                continue
            c, v, per_row = found
            if v.name not in ctx.cbs or ctx.cbs[v.name].vector != ("col" if per_row else "row"):
                continue
            j = next((k for k in range(i + 1, len(stmts)) if mentions(stmts[k], (c, v))), None)
            if j is None or not is_gemm_into(stmts[j], c) or clearing_gemm(stmts[j]) is not None or transposes_a(
                    stmts[j]) or not scales_at_reload(*tile_shape(c), ctx.budget_of(ctx.fp32), per_row):
                continue
            out[i] = None
            out[j] = self.lower_accumulation(ctx, [stmts[j]], c, stmts[j], reload=True, scale=v)
        return [s for s in out if s is not None]

    def lower(self, ctx, stmt):
        """A T.gemm into a live accumulator (no clear before it): C is reloaded into DST; with
        ``clear_accum=True`` it starts afresh; with ``transpose_A`` A is transposed first."""
        if transposes_a(stmt):
            return seq([ctx.visit(s) for s in self.untranspose(ctx, [stmt])])
        _, _, c, _ = self.parts(ctx, stmt)
        return self.lower_accumulation(ctx, [stmt], c.buffer, stmt, reload=clearing_gemm(stmt) is None)

    def lower_cleared(self, ctx, stmts: list[tirx.Stmt], i: int) -> tuple[tirx.Stmt, int] | None:
        """When ``stmts[i]`` clears a block the statements after it only gemm into (reading blocks
        meanwhile), or is a ``T.gemm(.., clear_accum=True)`` the statements after it gemm into:
        (the accumulate scope of them all, the index after them), else None. A later
        ``clear_accum`` gemm into the block starts a scope of its own."""
        acc, first = cleared_block(stmts[i]), i + 1
        if acc is None:
            acc, first = clearing_gemm(stmts[i]), i
        if acc is None:
            return None
        j = i + 1
        while j < len(stmts) and contains(stmts[j], lambda n: is_gemm_into(n, acc)) and clearing_gemm(stmts[j]) is None:
            j += 1
        if j == first or not accumulates_alone(stmts[first:j], acc):
            return None
        return self.lower_accumulation(ctx, stmts[first:j], acc, stmts[i], reload=False), j

    def parts(self, ctx, node):
        """(A, B, C regions, transpose_B) of a T.gemm statement, checked but for their shapes."""
        args = node.value.args
        a, b, c = (as_region(x) for x in args[:3])
        if not all(r is not None and is_cb_buffer(r.buffer) and len(r.buffer.shape) == 2 for r in (a, b, c)):
            raise ctx.error(node, "T.gemm operands must be 2-D shared/fragment blocks",
                            "copy A and B blocks with T.copy into T.alloc_shared buffers first")
        ctx.check_compute_dtypes(node, (a.buffer, b.buffer, c.buffer))
        return a, b, c, bool(args[4])

    def checked_parts(self, ctx, node):
        """:meth:`parts`, the block shapes checked too."""
        a, b, c, trans_b = self.parts(ctx, node)
        (am, ak), (bk, bn), (cm, cn) = tile_shape(a.buffer), tile_shape(b.buffer), tile_shape(c.buffer)
        if trans_b:
            bk, bn = bn, bk
        if am != cm or bn != cn or ak != bk:
            raise ctx.error(node, f"T.gemm shapes do not agree: A {list(a.buffer.shape)}, B {list(b.buffer.shape)}, "
                                  f"C {list(c.buffer.shape)}{' (B transposed)' if trans_b else ''}",
                            "use blocks with A (bm, bk), B (bk, bn) (or (bn, bk) with transpose_B) and C (bm, bn)")
        return a, b, c, trans_b

    def lower_accumulation(self, ctx, region: list[tirx.Stmt], acc: tirx.Buffer, like, reload: bool,
                           scale: tirx.Buffer | None = None) -> tirx.Stmt:
        """The accumulate scope of the gemms into ``acc`` in ``region``; ``scale``: the vector the reloaded
        accumulator's rows (a column vector) or columns (a row vector) are multiplied by first
        (:meth:`fold_reload_scales`)."""
        bmt, bnt = tile_shape(acc)
        budget = ctx.budget_of(ctx.fp32)
        gemms = [n for s in region for n in evaluate_calls(s) if is_gemm_into(n, acc)]
        if scale is not None:
            sh, sw = scaled_sub_block(bmt, bnt, budget, ctx.cbs[scale.name].vector == "col")
        elif ctx.gemm_subblock is None:
            sh, sw = sub_block(bmt, bnt, budget)
        else:
            sh, sw = given_sub_block(ctx, gemms[0] if gemms else like, acc, ctx.gemm_subblock, budget)
        ncols = bnt // sw
        nsub = (bmt // sh) * ncols

        def build(sb):
            m0 = (sb // ncols) * sh if nsub > 1 else 0
            n0 = (sb % ncols) * sw if nsub > 1 else 0
            body = [self.rewrite_gemms(ctx, s, acc, m0, n0, sh, sw, reload, scale) for s in region]
            body.append(evaluate(Intrin.PACK_BLOCK, acc.data, m0, n0, sh, sw, like=like))
            return seq(body)

        kloop = region[0] if len(region) == 1 and isinstance(region[0], tirx.For) else None
        rows = kloop is not None and reads_rows(ctx.func, kloop)
        if rows and reload:
            raise ctx.error(like, f"`{acc.name}` accumulates over a loop that reads a row-major tensor on top of its "
                                  "value: compute tilizes the rows between K steps, and DST cannot hold the "
                                  "accumulator meanwhile",
                            "clear the accumulator before the K loop (T.clear), or keep the operand tensors tiled")
        spill = ((nsub > 1 and ctx.gemm_reuse == "auto") or rows) and not reload and kloop is not None \
            and isinstance(kloop.body, tirx.SeqStmt) and any(is_gemm_into(s, acc) for s in kloop.body.seq)
        if spill:
            return self.lower_spilled(ctx, kloop, acc, like, sh, sw, ncols, nsub)
        if nsub == 1:
            body = build(0)
        else:
            var = tirx.Var("sb", "int32")
            body = keep_span(like, tirx.For(var, 0, nsub, tirx.ForKind.SERIAL, build(var)))
        mode = AccumulateMode.RELOAD if reload else AccumulateMode.FRESH
        return keep_span(like, tirx.AttrStmt(acc.data, Scope.ACCUMULATE.value, tirx.IntImm("int32", mode), body))

    def lower_spilled(self, ctx, kloop: tirx.For, acc, like, sh, sw, ncols, nsub) -> tirx.Stmt:
        """Block reuse for a C block beyond one DST acquire: every A and B block is read once per K
        step; each sub-block of C accumulates in DST and its partial sums round-trip through C's CB
        (reloaded from the second K step on). Also for a K loop reading a row-major tensor: its rows
        are tilized between K steps, where DST holds nothing (tilize_block acquires DST itself)."""
        var = tirx.Var("sb", "int32")
        m0, n0 = (var // ncols) * sh, (var % ncols) * sw
        # one gemm into C per K step, of float sums: the packer accumulates them in C's CB, which then
        # holds one block (the partial sums are never reloaded); else they round-trip through DST
        l1_acc = (sum(is_gemm_into(s, acc) for s in kloop.body.seq) == 1
                  and str(acc.dtype) not in INTEGER_DTYPES)
        if l1_acc:  # one block; its last K step packs a sub-block at a time, in row order (for the writer)
            ctx.cbs[acc.name] = dataclasses.replace(ctx.cbs[acc.name], num_pages=ctx.cbs[acc.name].block_pages,
                                                    push_pages=sh * sw)
        body = []
        for s in kloop.body.seq:
            if is_gemm_into(s, acc):
                a, b, c, trans_b = self.checked_parts(ctx, s)
                first = tirx.EQ(kloop.loop_var, kloop.min)
                sub = seq([evaluate(Intrin.MM_MMA, a.buffer.data, b.buffer.data, acc.data, m0, n0, sh, sw, trans_b,
                                    first, like=s),
                           evaluate(Intrin.PACK_BLOCK, acc.data, m0, n0, sh, sw, like=s)])
                body.append(keep_span(s, tirx.For(var, 0, nsub, tirx.ForKind.SERIAL, sub)))
            else:
                body.append(ctx.visit(s))
        new_loop = keep_span(kloop, tirx.For(kloop.loop_var, kloop.min, kloop.extent, tirx.ForKind.SERIAL, seq(body),
                                             None, kloop.annotations))
        mode = AccumulateMode.L1_ACC if l1_acc else AccumulateMode.SPILL
        return keep_span(like, tirx.AttrStmt(acc.data, Scope.ACCUMULATE.value, tirx.IntImm("int32", mode), new_loop))

    def rewrite_gemms(self, ctx, stmt, acc, m0, n0, sh, sw, reload, scale=None):
        loops: list[tirx.For] = []

        def pre(node):
            if isinstance(node, tirx.For):
                loops.append(node)
            return None

        def post(node):
            if isinstance(node, tirx.For):
                loops.pop()
                return None
            if not is_gemm_into(node, acc):
                return None
            a, b, c, trans_b = self.checked_parts(ctx, node)
            first = tirx.IntImm("bool", not reload) if not loops else tirx.EQ(loops[-1].loop_var, loops[-1].min)
            return evaluate(Intrin.MM_MMA, a.buffer.data, b.buffer.data, c.buffer.data, m0, n0, sh, sw, trans_b,
                            first, *([] if scale is None else [scale.data]), like=node)

        return tirx.stmt_functor.ir_transform(stmt, pre, post, ["tirx.For", "tirx.Evaluate"])

    # -- C3, D4 ------------------------------------------------------------------------------------
    def accesses(self, stmt, data_names):
        a, b, c = stmt.value.args[:3]
        return [data_names[a], data_names[b], *(data_names[x] for x in stmt.value.args[SCALE:])], data_names[c]

    def engine(self, ctx, stmt):
        a, b, c = (v.name for v in stmt.value.args[:3])
        transpose = bool(stmt.value.args[7])
        dims = matmul_block_dims(stmt, ctx.cbs[a].block_tiles[1], b in ctx.column_major)
        init = None if c in ctx.reloads else matmul_init(ctx.index(a), ctx.index(b), transpose, dims)
        return Engine(("matmul", a, b, transpose, dims, c in ctx.reloads), init)

    def startup(self, ctx, stmt):
        a, b, c = (ctx.index(v.name) for v in stmt.value.args[:3])
        return a, b, c, True

    # -- D5 ----------------------------------------------------------------------------------------
    def process_scope(self, ctx, scope: tirx.AttrStmt, held: dict):
        """An accumulate scope (``ctx``: InsertDSTManagementTT's handshake protocol): (its DST code, the
        held state after it)."""
        if int(scope.value) in (AccumulateMode.SPILL, AccumulateMode.L1_ACC):
            return self.process_spilled(ctx, scope, held)
        held = dict(held)
        name = scope.node.name
        reload = int(scope.value) == AccumulateMode.RELOAD
        pre, post = [], []
        if reload:
            scales = [n.value.args[SCALE].name for n in _calls(scope.body)
                      if stmt_intrin(n) == Intrin.MM_MMA and len(n.value.args) > SCALE]
            pre += ctx.waits(list(dict.fromkeys([name, *scales])), held, scope)
        elif name in held:
            pre.append(ctx.pop(name, held[name], scope))
            del held[name]
        body, held = self.process_scope_body(ctx, scope.body, held, reload)
        if reload:
            post.append(ctx.pop(name, True, scope))
        held[name] = False
        return seq([*pre, body, *post]), held

    def process_spilled(self, ctx, scope: tirx.AttrStmt, held: dict):
        """K loop with sub-blocks inside. SPILL: each sub-block reloads its partial sums from C's CB
        (all but the first gemm into C of the first K step), and the old partial block is popped once
        the new one is pushed.
        L1_ACC: C's CB holds one block; from the second K step on the old block is popped first (the
        write pointer comes back round to it, its tiles stay in L1) and the packer adds the new sums
        to them: ``pack_reconfig_l1_acc`` is 1 around the sub-block loop from the second K step on,
        and 0 after it (other packs overwrite)."""
        l1_acc = int(scope.value) == AccumulateMode.L1_ACC
        held = dict(held)
        name = scope.node.name
        c = ctx.cb(name)
        pre = [ctx.pop(name, held.pop(name), scope)] if name in held else []
        kloop = scope.body
        later = tirx.GT(kloop.loop_var, kloop.min)
        if l1_acc and name in handoff_cbs(ctx.func).values():
            return self.process_l1_acc_in_place(ctx, scope, held, pre)
        target = last_step_target(kloop)
        if target is not None:
            return self.process_handed_l1_acc(ctx, scope, held, pre, target)

        def when_later(stmts, always: bool = False):
            return seq(stmts) if always else tirx.IfThenElse(later, seq(stmts), None)

        def sub_block(s, mma, pack, gemms):
            """``gemms``: the gemms into C before this one in the K step (from the second on, partial sums exist)."""
            out = []
            old_partials = evaluate(Intrin.CB_WAIT_FRONT, c.index, c.block_pages, like=mma)
            _, m0, n0, sm, sn = pack.value.args[:5]
            if l1_acc:
                out += [when_later([old_partials, ctx.pop(name, True, mma)]),
                        evaluate(Intrin.PACK_L1_ACC, later, like=mma)]
                sub = [evaluate(Intrin.DST_ACQUIRE, like=mma), *self.matmul(ctx, mma)]
            else:
                out.append(when_later([old_partials], gemms > 0))
                sub = [evaluate(Intrin.DST_ACQUIRE, like=mma),
                       when_later(self.reload_tiles(ctx, c, m0, n0, int(sm), int(sn), mma), gemms > 0),
                       *self.matmul(ctx, mma)]
            sub += ctx.pack(c, int(sm) * int(sn), lambda t: t, pack)
            out.append(keep_span(s, tirx.For(s.loop_var, s.min, s.extent, s.kind, seq(sub))))
            out.append(evaluate(Intrin.PACK_L1_ACC, tirx.const(0, "uint32"), like=mma) if l1_acc else
                       when_later([ctx.pop(name, True, mma)], gemms > 0))
            return out

        loop, after = ctx.iterate_loop(kloop, held, lambda state: self.k_step(ctx, kloop, state, sub_block))
        after[name] = False
        return seq([*pre, loop]), after

    def process_l1_acc_in_place(self, ctx, scope: tirx.AttrStmt, held: dict, pre: list):
        """L1_ACC in the hand-off CB the writer drains (SplitDeviceKernel: its format the block's), as ttnn's
        matmul keeps its partials in the block of L1 its output CB shares (c_4 and c_5,
        matmul_multicore_reuse_mcast_2d_program_factory.cpp): the first K step reserves the block, every step
        packs each sub-block into its pages (``pack_tile<true>`` at the sub-block's page), the packer adding
        from the second step on, and the last step pushes each sub-block to the writer once packed. Nothing is
        reloaded into DST, and no block is copied after the loop."""
        name = scope.node.name
        c = ctx.cb(name)
        kloop = scope.body
        simplify = ctx.analyzer.simplify
        first, later = tirx.EQ(kloop.loop_var, kloop.min), tirx.GT(kloop.loop_var, kloop.min)
        last = simplify(tirx.EQ(kloop.loop_var, kloop.min + kloop.extent - 1))
        cols = c.block_tiles[1]

        def sub_block(s, mma, pack, _):
            out = []
            _, m0, n0, sm, sn = pack.value.args[:5]
            count = int(sm) * int(sn)
            # the sub-block's tiles are pages m0 * cols + n0 on of the block (whole rows, or part of one); in the
            # last step, after the sub-blocks before it are pushed, from the write pointer on
            start = tirx.Select(last, tirx.const(0, "int32"), simplify(m0 * cols + n0))
            out += [tirx.IfThenElse(first, evaluate(Intrin.CB_RESERVE_BACK, c.index, c.block_pages, like=mma),
                                    None),
                    evaluate(Intrin.PACK_L1_ACC, later, like=mma)]
            packs = [serial("t", count, lambda t: evaluate(Intrin.PACK_TILE_AT, t, c.index, simplify(start + t),
                                                            like=mma), like=mma)]
            sub = [evaluate(Intrin.DST_ACQUIRE, like=mma), *self.matmul(ctx, mma),
                   evaluate(Intrin.DST_COMMIT, like=mma), evaluate(Intrin.DST_WAIT, like=mma), *packs,
                   evaluate(Intrin.DST_RELEASE, like=mma),
                   tirx.IfThenElse(last, evaluate(Intrin.CB_PUSH_BACK, c.index, count, like=mma), None)]
            out.append(keep_span(s, tirx.For(s.loop_var, s.min, s.extent, s.kind, seq(sub))))
            out.append(evaluate(Intrin.PACK_L1_ACC, tirx.const(0, "uint32"), like=mma))
            return out

        loop, after = ctx.iterate_loop(kloop, held, lambda state: self.k_step(ctx, kloop, state, sub_block))
        after[name] = False
        return seq([*pre, loop]), after

    def process_handed_l1_acc(self, ctx, scope: tirx.AttrStmt, held: dict, pre: list, target: tirx.Var):
        """L1_ACC whose block goes to the writer through the hand-off CB ``target`` (``tt.pack_block``'s
        ``last``), as ttnn's matmul does with PACKER_L1_ACC (bmm_large_block_zm_fused_bias_activation.cpp):
        the K steps but the last pack into C's CB, the packer adding from the second on; the last step
        reloads each sub-block's partial sums from C's CB into DST (``copy_tile``; none when it is also the
        first), accumulates its products on them and packs the sub-block straight into ``target``, which
        the writer drains one sub-block after another. C's CB is empty after the loop, ``target`` holds
        the block: no copy of the block into the hand-off CB after the loop."""
        name = scope.node.name
        c, out_cb = ctx.cb(name), ctx.cb(target.name)
        kloop = scope.body
        simplify = ctx.analyzer.simplify
        ctx.analyzer.bind(kloop.loop_var, tvm.ir.Range.from_min_extent(kloop.min, kloop.extent))
        later = tirx.GT(kloop.loop_var, kloop.min)
        last = simplify(tirx.EQ(kloop.loop_var, kloop.min + kloop.extent - 1))
        middle = simplify(tirx.And(later, tirx.Not(last)))  # a K step packing onto partial sums C's CB keeps
        # the last K step, partial sums waiting in C's CB (unless it is also the first)
        final_reload = last if ctx.analyzer.can_prove(kloop.extent > 1) else tirx.And(later, last)

        def sub_block(s, mma, pack, _):
            out = []
            old_partials = evaluate(Intrin.CB_WAIT_FRONT, c.index, c.block_pages, like=mma)
            _, m0, n0, sm, sn = pack.value.args[:5]
            count = int(sm) * int(sn)
            out += [tirx.IfThenElse(middle, seq([old_partials, ctx.pop(name, True, mma)]), None),
                    tirx.IfThenElse(final_reload, old_partials, None),
                    evaluate(Intrin.PACK_L1_ACC, middle, like=mma)]
            sub = [evaluate(Intrin.DST_ACQUIRE, like=mma),
                   tirx.IfThenElse(final_reload,
                                   seq(self.reload_tiles(ctx, c, m0, n0, int(sm), int(sn), mma)), None),
                   *self.matmul(ctx, mma),
                   tirx.IfThenElse(last, seq(ctx.pack(out_cb, count, lambda t: t, pack)),
                                   seq(ctx.pack(c, count, lambda t: t, pack)))]
            out.append(keep_span(s, tirx.For(s.loop_var, s.min, s.extent, s.kind, seq(sub))))
            out += [evaluate(Intrin.PACK_L1_ACC, tirx.const(0, "uint32"), like=mma),
                    tirx.IfThenElse(final_reload, ctx.pop(name, True, mma), None)]
            return out

        loop, after = ctx.iterate_loop(kloop, held, lambda state: self.k_step(ctx, kloop, state, sub_block))
        after[target.name] = False
        return seq([*pre, loop]), after

    def k_step(self, ctx, kloop: tirx.For, state: dict, sub_block) -> tuple[tirx.Stmt, dict]:
        """One K step of a K loop of sub-blocks (the body ``ctx.iterate_loop`` makes, from the state of the CBs
        held): each statement that is not a sub-block processed as any other; each sub-block (a loop holding a
        ``tt.mm.mma``) after the waits for its operands, as ``sub_block(loop, mma, pack, k)`` makes it (``pack``
        its ``tt.pack_block``, ``k`` the sub-blocks before it in the step)."""
        out, k = [], 0
        for s in kloop.body.seq:
            mma = (next((n for n in _calls(s) if stmt_intrin(n) == Intrin.MM_MMA), None)
                   if isinstance(s, tirx.For) else None)
            if mma is None:
                new, state = ctx.process(s, state)
                out.append(new)
                continue
            out += self.operand_waits(ctx, mma, state)
            out += sub_block(s, mma, next(n for n in _calls(s) if stmt_intrin(n) == Intrin.PACK_BLOCK), k)
            k += 1
        return seq(out), state

    def reload_tiles(self, ctx, c, m0, n0, sm: int, sn: int, like) -> list[tirx.Stmt]:
        """copy_tile of C's sub-block (m0, n0, sm x sn) into DST tiles i * sn + j."""
        cols = c.block_tiles[1]
        return [evaluate(Intrin.COPY_INIT, c.index, like=like),
                serial("i", sm, lambda i: serial("j", sn, lambda j: evaluate(
                    Intrin.COPY_TILE, c.index, ctx.analyzer.simplify((m0 + i) * cols + n0 + j),
                    ctx.analyzer.simplify(i * sn + j), like=like)))]

    def scale_tiles(self, ctx, v, m0, n0, sm: int, sn: int, like) -> list[tirx.Stmt]:
        """The reloaded sub-block (DST tiles i * sn + j) times the vector ``v``'s tiles: a column vector's tile
        of row i broadcast along the columns into DST tile sm * sn + i (a row vector's of column j along the
        rows into sm * sn + j), then an SFPU multiply of each tile by its row's (column's), as the element-wise
        ``C[i, j] * v[i]`` (``v[j]``) computes it."""
        mul = sfpu_op(SfpuKind.BINARY, "mul")
        simplify = ctx.analyzer.simplify
        per_row = v.vector == "col"
        origin, count = (m0, sm) if per_row else (n0, sn)
        return [evaluate(Intrin.BCAST_INIT, v.vector, v.index, like=like),
                serial("t", count, lambda t: evaluate(Intrin.BCAST_TILE, v.vector, v.index, simplify(origin + t),
                                                      simplify(sm * sn + t), like=like)),
                evaluate(Intrin.SFPU_INIT, mul.kind.value, mul.name, like=like),
                serial("i", sm, lambda i: serial("j", sn, lambda j: evaluate(
                    Intrin.SFPU_BINARY, mul.name, simplify(i * sn + j), simplify(sm * sn + (i if per_row else j)),
                    simplify(i * sn + j), like=like)))]

    def process_scope_body(self, ctx, stmt, held: dict, reload: bool):
        """Inside an accumulate scope: acquire before the producers of each pack_block."""
        if isinstance(stmt, tirx.For) and not contains(stmt.body, lambda n: stmt_intrin(n) == Intrin.PACK_BLOCK):
            return self.process_k_loop(ctx, stmt, held)
        if isinstance(stmt, tirx.For):
            body, held_out = self.process_scope_body(ctx, stmt.body, dict(held), reload)
            return keep_span(stmt, tirx.For(stmt.loop_var, stmt.min, stmt.extent, stmt.kind, body)), held_out
        stmts = list(stmt.seq) if isinstance(stmt, tirx.SeqStmt) else [stmt]
        out: list[tirx.Stmt] = []
        pending: list[tirx.Stmt] = []
        for s in stmts:
            if stmt_intrin(s) != Intrin.PACK_BLOCK:
                pending.append(s)
                continue
            data, m0, n0, sm, sn = s.value.args
            c = ctx.cb(data.name)
            count = int(sm) * int(sn)
            if count > ctx.budget:
                raise ctx.error(s, f"{count} output tiles per acquire exceed the DST budget of {ctx.budget}",
                                "use a smaller block (bm x bn) or bfloat16 accumulation")
            first = next((k for k, p in enumerate(pending)
                          if contains(p, lambda n: stmt_intrin(n) == Intrin.MM_MMA)), len(pending))
            for p in pending[:first]:
                new, held = ctx.process(p, held)
                out.append(new)
            out.append(evaluate(Intrin.DST_ACQUIRE, like=s))
            if reload:
                out += self.reload_tiles(ctx, c, m0, n0, int(sm), int(sn), s)
                scale = next((n.value.args[SCALE] for p in pending[first:] for n in _calls(p)
                              if stmt_intrin(n) == Intrin.MM_MMA and len(n.value.args) > SCALE), None)
                if scale is not None:
                    out += self.scale_tiles(ctx, ctx.cb(scale.name), m0, n0, int(sm), int(sn), s)
            for p in pending[first:]:
                new, held = self.process_k_loop(ctx, p, held) if isinstance(p, tirx.For) else self.expand_mmas(ctx, p, held)
                out.append(new)
            out += ctx.pack(c, count, lambda t: t, s)
            pending = []
        for p in pending:
            new, held = ctx.process(p, held)
            out.append(new)
        return seq(out), held

    def process_k_loop(self, ctx, loop: tirx.For, held: dict):
        """A K loop: markers and mmas; handshakes from the held-value analysis."""
        return ctx.iterate_loop(loop, held, lambda state: self.expand_mmas(ctx, loop.body, state))

    def expand_mmas(self, ctx, stmt, held: dict):
        stmts = list(stmt.seq) if isinstance(stmt, tirx.SeqStmt) else [stmt]
        out = []
        for s in stmts:
            if stmt_intrin(s) == Intrin.MM_MMA:
                held = dict(held)
                out += self.operand_waits(ctx, s, held)
                out += self.matmul(ctx, s)
            elif isinstance(s, tirx.For):
                new, held = self.process_k_loop(ctx, s, held)
                out.append(new)
            else:
                new, held = ctx.process(s, held)
                out.append(new)
        return seq(out), held

    def operand_waits(self, ctx, mma, held: dict) -> list[tirx.Stmt]:
        a, b = mma.value.args[0].name, mma.value.args[1].name
        return ctx.waits(list(dict.fromkeys([a, b])), held, mma)

    def matmul(self, ctx, mma) -> list[tirx.Stmt]:
        """The op init (unless hoisted) and, per K tile of the A and B blocks, one ``matmul_block`` of
        the sub-block into DST tiles ``i * sn + j`` (row i, column j); where matmul_block cannot step
        through B (:func:`matmul_block_dims`), ``matmul_tiles`` per output tile and K tile."""
        a_var, b_var, _c_var, m0, n0, sm, sn, trans_b, _first = mma.value.args[:SCALE]
        a, b = ctx.cb(a_var.name), ctx.cb(b_var.name)
        sm, sn = int(sm), int(sn)
        kt = a.block_tiles[1]
        b_rows, b_cols = b.block_tiles
        by_columns = b.name in ctx.column_major
        if by_columns:  # B block (bn, bk) stored column by column: tile (j, kk) at kk * bn + j
            b_tile = lambda kk, j: kk * b_rows + n0 + j  # noqa: E731
        elif bool(trans_b):
            b_tile = lambda kk, j: (n0 + j) * b_cols + kk  # noqa: E731  B block is (bn, bk)
        else:
            b_tile = lambda kk, j: kk * b_cols + n0 + j  # noqa: E731  B block is (bk, bn)
        simplify = ctx.analyzer.simplify
        dims = matmul_block_dims(mma, kt, by_columns)

        def tile(i, j, kk):
            return evaluate(Intrin.MATMUL_TILES, a.index, b.index, simplify((m0 + i) * kt + kk),
                            simplify(b_tile(kk, j)), simplify(i * sn + j), like=mma)

        def block(kk):
            return evaluate(Intrin.MATMUL_BLOCK, a.index, b.index, simplify(m0 * kt + kk), simplify(b_tile(kk, 0)), 0,
                            trans_b, *dims, like=mma)

        init = [evaluate(*matmul_init(a.index, b.index, trans_b, dims), like=mma)] if ctx.inline_inits else []
        if dims is not None:
            return [*init, serial("kk", kt, block)]
        return [*init, serial("i", sm, lambda i: serial("j", sn, lambda j: serial("kk", kt, lambda kk: tile(i, j, kk))))]


def matmul_block_dims(mma, kt: int, b_by_columns: bool = False) -> tuple[int, int, int] | None:
    """(ct_dim, rt_dim, kt_dim) of the ``matmul_block`` that computes the sub-block (sm x sn tiles)
    of a ``tt.mm.mma`` per K tile, A's block having ``kt`` tiles per row; None where it takes
    ``matmul_tiles``. matmul_block reads in0 row r at ``r * kt_dim`` (A's rows of tiles are kt apart)
    and in1 column c at ``c`` (B's (bk, bn) columns are adjacent tiles), but a transposed B block
    (bn, bk) stored row by row has its columns bk tiles apart, and matmul_block's ``transpose``
    transposes each tile, not their order: such a B takes matmul_block only for sub-blocks one
    column wide; stored column by column (``b_by_columns``: tt.column_major_blocks) its columns are
    adjacent again."""
    _, _, _, _, _, sm, sn, trans_b, _ = mma.value.args[:SCALE]
    if bool(trans_b) and int(sn) > 1 and not b_by_columns:
        return None
    return int(sn), int(sm), kt


def matmul_init(a: int, b: int, transpose, dims: tuple[int, int, int] | None) -> tuple:
    """The init (intrinsic and arguments) of a matmul of CBs ``a`` and ``b``: ``matmul_block_init`` of
    the block ``dims`` (:func:`matmul_block_dims`), else ``matmul_init`` (for ``matmul_tiles``)."""
    if dims is None:
        return Intrin.MATMUL_INIT, a, b, transpose
    return (Intrin.MATMUL_BLOCK_INIT, a, b, transpose, *dims)


def last_step_target(kloop: tirx.For) -> tirx.Var | None:
    """The hand-off CB the last K step of a spilled accumulation packs into (``tt.pack_block``'s ``last``
    argument), or None."""
    packs = [n for n in _calls(kloop) if stmt_intrin(n) == Intrin.PACK_BLOCK and len(n.value.args) > 5]
    return packs[0].value.args[5] if packs else None


def accumulates_alone(stmts: list[tirx.Stmt], acc: tirx.Buffer) -> bool:
    """Whether ``stmts`` only read blocks and gemm into ``acc``, so ``acc`` can stay in DST over
    all of them. Any other compute between K steps (a rescale of ``acc``, a block computed for
    the gemm, another accumulator) needs DST itself: ``acc`` is then a block every gemm reloads."""
    def alone(s) -> bool:
        if isinstance(s, tirx.SeqStmt):
            return all(alone(x) for x in s.seq)
        if isinstance(s, tirx.For):
            return s.kind != tirx.ForKind.PARALLEL and alone(s.body)
        return isinstance(s, tirx.Bind) or (is_gemm_into(s, acc) and not transposes_a(s)) \
            or stmt_intrin(s) == Intrin.READ_TO_CB

    return all(alone(s) for s in stmts)


def _calls(stmt) -> list[tirx.Evaluate]:
    out = []
    tirx.stmt_functor.post_order_visit(stmt, lambda n: out.append(n) if isinstance(n, tirx.Evaluate) else None)
    return out


GEMM = register(Gemm())
