"""Element-wise values: ``T.Parallel`` stores, and the DST code of every ``tt.tile.eltwise``.

C2: ``for i, j in T.Parallel(..): X[i, j] = expr`` → ``tt.tile.eltwise(X, i, j, expr)`` (values
named inside the loop, ``q_idx = bx * bm + i``, substituted), where ``expr`` reads whole blocks
``A[i, j]``, per-row vectors ``v[i]``, per-column vectors ``v[j]`` and constants with the binary
nodes and math calls of :mod:`tilelang_tt.ops.sfpu` (unary, with a parameter such as ``T.pow(x, 2.0)``,
binary such as ``T.fmod(x, y)``), and casts; values of the indices alone are
the reader's (:mod:`tilelang_tt.ops.generate`).
D4: ``A op B`` of two full blocks runs on the FPU (``add_init``…, hoistable), and so does ``A op v``
of a full block and a per-row / per-column vector (``mul_bcast_cols_init``…), unless an operand is float32
and holds other than bfloat16 values (:func:`fpu_binary`); anything else on the SFPU.
D5: ``A op B`` of two full blocks is one FPU op per tile (``add_tiles``…), ``A op v`` one broadcasting
FPU op (``mul_tiles_bcast_cols``…: both operands unpacked side by side, where a copy, a
``unary_bcast`` and an SFPU op would unpack them one after the other), in any value; any other value is
compiled per tile into DST by :class:`TileProgram` (block operands: tilelang_tt.ops.copy,
constants: tilelang_tt.ops.fill, SFPU unary ops, ops with a scalar, SFPU binary ops), with
registers allocated per tile (``x op x`` computes x once) and as many tiles per acquire as the DST budget
holds, run op by op over an acquire's tiles (one init per op and acquire); an operand of per-row vectors and constants
alone (``m[i] * scale`` in ``exp(x[i, j] * scale - m[i] * scale)``) is computed once per acquire
into a slot of its own, the acquire's tiles then lying in one tile row. The exact
GELU ``0.5 * x * (1 + erf(x / sqrt(2)))``, in any association of its products, is one ``gelu_tile``
(:func:`~tilelang_tt.ops.sfpu.gelu_operand`); ``max(x, 0)`` is ``relu_tile``, ``c / x`` ``recip_tile``
times c. A cast of a float32 value to bfloat16 inside a value in a 32-bit DST is ``typecast_tile``,
rounding as TIR does; other casts change nothing DST holds (the stored value's own is the packer's).
A value of float scalar parameters and constants alone (``x * scale``, ``T.max(x, eps)``) is the parameter
of an SFPU op with a scalar, its float32 bits from the kernel's runtime arguments (``mul_unary_tile(dst,
bits)``), or a tile filled with it (``fill_tile_bitcast``).
The value of an int32 block is computed exactly by the SFPU's integer ops (``add_int_tile``,
``lt_int_tile``, ``div_int32_floor_tile`` ..., ``add_unary_tile_int32``, ``fill_tile_int``) on its
int32 operands, unpacked straight to a 32-bit DST (``tt.compute_config`` ``unpack_to_dest``).
Errors: any other expression or access, naming it and the user's line (the bits of a float value,
``T.reinterpret`` and shifts, with the power-of-two rewrite ``T.exp2(T.ceil(T.log2(x)))``); in an int32
value, anything but the integer ops on int32 blocks read element for element.
"""

from __future__ import annotations

import dataclasses
import math

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.contract.dims import float32_bits, float32_value
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.ops.base import (INTEGER_DTYPES, Engine, TileOp, bfloat16_copy, constant, register, runtime_scalar,
                                  strip_casts)
from tilelang_tt.ops.copy import BLOCK_OPERAND, is_transposed
from tilelang_tt.ops.fill import CONSTANT_OPERAND
from tilelang_tt.ops.generate import generate, generated_mask, reads_blocks, selection
from tilelang_tt.ops.sfpu import (
    BINARY_NODES,
    CALL_NAMES,
    COMPARE_NODES,
    SWAPPED,
    FPU_BINARY,
    INT_BINARY,
    INT_SCALAR,
    SCALAR_OPS,
    UNARY_CALLS,
    APPROXIMATE,
    SfpuKind,
    binary_operands,
    call_name,
    call_operands,
    decompose,
    gelu_operand,
    scalar_call,
    sfpu_op,
)
from tilelang_tt.ir.common import (COL, ROW, as_region, evaluate, evaluate_calls, float_scalar_params, is_global_buffer,
                                   keep_span, parallel_nest, reads_tensor, seq, serial, stmt_intrin, swaps_loops, vars_used)
from tilelang_tt.ir.slices import bound_values

SUPPORTED = (
    "T.copy, T.clear/T.fill, T.gemm, T.reduce_sum/T.reduce_max, and T.Parallel stores whose value combines "
    "block elements X[i, j], per-row vectors v[i], per-column vectors v[j] and constants with + - * /, "
    f"T.max/T.min, {', '.join(CALL_NAMES)} and casts, and values "
    "of the indices, loop variables and block coordinates alone (masks: T.if_then_else(i >= j, 0, -T.infinity(...)))"
)


class Eltwise(TileOp):
    intrin = Intrin.TILE_ELTWISE

    # -- C2 ----------------------------------------------------------------------------------------
    def lower(self, ctx, loop: tirx.For) -> tirx.Stmt:
        """The stores of the T.Parallel nest ``loop``."""
        loops, body = parallel_nest(loop)
        zero = {}  # T.Parallel(n, 1) over a vector block [n, 1] (or (1, n)): its index of extent 1 is 0
        if any(_is_one(lp.extent) for lp in loops) and not all(_is_one(lp.extent) for lp in loops):
            zero = {lp.loop_var: tirx.IntImm(lp.loop_var.dtype, 0) for lp in loops if _is_one(lp.extent)}
            loops = [lp for lp in loops if not _is_one(lp.extent)]
        if len(loops) > 2:
            raise ctx.error(loop, "T.Parallel over more than two dimensions", f"supported: {SUPPORTED}")
        _refuse_inner_loop(ctx, body)
        stmts = list(body.seq) if isinstance(body, tirx.SeqStmt) else [body]
        out = []
        # names given to values inside the loop (q_idx = bx * bm + i), substituted into the stores; and
        # values named outside it from tensor elements (mu = Mean[n] in a row loop), which the reader
        # reads where it generates them (ops/generate.py): compute reads no tensor
        named = {v: x for v, x in bound_values(ctx.func.body).items() if reads_tensor(x)}
        for store in stmts:
            if zero:
                store = keep_span(store, tirx.stmt_functor.substitute(store, zero))
            if isinstance(store, tirx.Bind):
                named[store.var] = tirx.stmt_functor.substitute(store.value, named)
                continue
            if not isinstance(store, tirx.BufferStore):
                raise ctx.error(store, "unsupported T.Parallel body (only stores into blocks)", f"supported: {SUPPORTED}")
            if named:
                store = keep_span(store, tirx.BufferStore(store.buffer, tirx.stmt_functor.substitute(store.value, named),
                                                          store.indices))
            extents = [lp.extent for lp in loops]
            if len(loops) == 2 and swaps_loops(store, loops):
                # a store at swapped indices (C_t[j, i] = ..): T.Parallel's iterations are independent,
                # so the nest is the one in the store's order, and its reads of X[i, j] are transposed
                i, j = loops[1].loop_var, loops[0].loop_var
                extents = extents[::-1]
            elif len(loops) == 2:
                i, j = loops[0].loop_var, loops[1].loop_var
            elif store.buffer.name in ctx.cbs and ctx.block_kind(store.buffer) == ROW:
                i, j = None, loops[0].loop_var
            else:
                i, j = loops[0].loop_var, None
            _check_access(ctx, store, store, i, j)
            _check_extents(ctx, store, store.buffer, extents)
            value = generate(ctx, store, decompose(store.value), i, j, out)
            if ctx.fast_math:
                value = reciprocal_divisors(ctx, store, value, out)
            loads = []
            tirx.stmt_functor.post_order_visit(
                value, lambda n: loads.append(n.buffer) if isinstance(n, tirx.BufferLoad) else None)
            if str(store.buffer.dtype) in INTEGER_DTYPES:
                value = integer_value(ctx, store, value, (i, j))
            else:  # int32 values converted to floats: checked and computed as an int32 block's value
                value, loads = _converted_integers(ctx, store, value, (i, j), loads)
            _check_expr(ctx, store, value, i, j, top=True)
            ctx.check_compute_dtypes(store, [store.buffer, *loads], integer=True)
            out.append(evaluate(Intrin.TILE_ELTWISE, store.buffer.data, i if i is not None else 0,
                                j if j is not None else 0, value, like=store))
        return seq(out)

    def forward_copies(self, ctx, stmts: list) -> list:
        """C2, over a lowered statement sequence: an element-wise statement E reading block X element for element
        (``X[i, j]``), where X was last written by a copy of a bfloat16 block S of the same tiles, ``tt.tile.eltwise(X,
        i, j, S[i, j])`` (X float32 or bfloat16), with nothing writing S between them, reads S instead: exact, a
        bfloat16 datum widened to float32 is the same number. The copy goes when E overwrites X and nothing between
        them reads X (its value is then never read). Softmax's ``T.copy(x, xf)`` then ``xf = exp(xf - mx)`` computes
        ``exp(x - mx)`` from the bfloat16 input, as ttnn's softmax does (softmax.cpp: sub_tiles_bcast_cols of its
        input CB), without the pass copying 32 tiles to float32 and unpacking them again; ``x - mx`` is then one FPU
        op (:func:`fpu_binary`: x bfloat16, the row maximum mx a bfloat16 value)."""
        out = list(stmts)
        k = 0
        while k < len(out):
            stmt = out[k]
            if stmt_intrin(stmt) != Intrin.TILE_ELTWISE or len(stmt.value.args) != 4:
                k += 1
                continue
            forwarded = self._forwarded(ctx, out, k)
            if forwarded is None:
                k += 1
                continue
            out[k], p, dead = forwarded
            if dead:
                del out[p]
                k -= 1
            k += 1
        return out

    def _forwarded(self, ctx, out: list, k: int):
        """(statement ``out[k]`` reading the copy's source, the copy's position, whether the copy is dead) for
        :meth:`forward_copies`, or None."""
        stmt = out[k]
        x_var, i, j, value = stmt.value.args
        loads = []
        tirx.stmt_functor.post_order_visit(value, lambda n: loads.append(n) if isinstance(n, tirx.BufferLoad) else None)
        for load in loads:
            x = load.buffer
            p = next((n for n in range(k - 1, -1, -1) if _writes(out[n], x.data)), None)
            src = bfloat16_copy(ctx.cbs, out[p], x.name) if p is not None else None
            if src is None or any(_writes(out[n], src.buffer.data) for n in range(p + 1, k)):
                continue
            reads_x = [n for n in loads if n.buffer.same_as(x)]
            if not all(len(n.indices) == 2 and n.indices[0].same_as(i) and n.indices[1].same_as(j) for n in reads_x):
                continue
            widened = tirx.Cast(x.dtype, tirx.BufferLoad(src.buffer, [i, j])) if src.buffer.dtype != x.dtype \
                else tirx.BufferLoad(src.buffer, [i, j])
            value = tirx.stmt_functor.ir_transform(
                tirx.Evaluate(value), None, lambda n: widened if isinstance(n, tirx.BufferLoad) and n.buffer.same_as(x)
                else None, ["tirx.BufferLoad"]).value
            new = evaluate(Intrin.TILE_ELTWISE, x_var, i, j, value, like=stmt)
            # dead: E overwrites the whole block X and nothing between the copy and E reads X (a read in any form:
            # a masked copy of X's padded tiles for a reduction reads X where E does not)
            dead = x_var.same_as(x.data) and not any(v.same_as(x.data) for n in range(p + 1, k)
                                                     for v in vars_used(out[n]))
            return new, p, dead
        return None

    # -- C3, D4 ------------------------------------------------------------------------------------
    def accesses(self, stmt, data_names):
        reads = []
        tirx.stmt_functor.post_order_visit(
            stmt.value.args[3], lambda n: reads.append(n.buffer.name) if isinstance(n, tirx.BufferLoad) else None)
        return list(dict.fromkeys(reads)), data_names[stmt.value.args[0]]

    def also_written(self, stmt, data_names):
        return [data_names[v] for v in stmt.value.args[4:]]

    def engine(self, ctx, stmt):
        if ctx.cbs[stmt.value.args[0].name].vector:
            return Engine(("sfpu",))
        binary = fpu_binary(stmt.value.args[3], lambda name: ctx.cbs[name].vector, stmt.value.args[1:3],
                            exact=ctx.bfloat16_valued)
        if binary is None:
            return Engine(("sfpu",))
        op, a, b, kind = binary
        if kind:
            return Engine(("binary", op.name, kind, a, b),
                          (Intrin.BINARY_BCAST_INIT, op.name, kind, ctx.index(a), ctx.index(b)))
        return Engine(("binary", op.name, a, b), (Intrin.BINARY_INIT, op.name, ctx.index(a), ctx.index(b)))

    def startup(self, ctx, stmt):
        out_var, _, _, value = stmt.value.args[:4]
        loads = []
        tirx.stmt_functor.post_order_visit(
            value, lambda n: loads.append(n.buffer.name) if isinstance(n, tirx.BufferLoad) else None)
        out = ctx.index(out_var.name)
        a = ctx.index(loads[0]) if loads else out
        b = ctx.index(loads[1]) if len(loads) > 1 else a
        return a, b, out, False

    # -- D5 ----------------------------------------------------------------------------------------
    def expand(self, ctx, stmt) -> tirx.Stmt:
        """DST code of ``tt.tile.eltwise``: chunks of output tiles per acquire, each tile's ops, pack."""
        out_var, _i, _j, value, *also = stmt.value.args
        out = ctx.cb(out_var.name)
        also = tuple(ctx.cb(v.name) for v in also)
        sums = tuple(cb for cb in also if cb.block_tiles != out.block_tiles)  # Reduce.fuse_row_sums
        also = tuple(cb for cb in also if cb not in sums)
        total = out.block_pages
        if isinstance(value, tirx.Cast) and not converts_integer(value):  # the cast to the block's dtype: the packer's
            value = value.value
        program, chunk = _plan(ctx, out, stmt, value, total, share_rows=True)
        ops, spt, shared = program.ops, program.spt, program.shared_slots
        keys = [key for key, _, _, _ in ops]
        # Op by op over the chunk's tiles (each tile's ops touch its own DST tiles only, in their
        # order): an init where the engine configuration changes, once per acquire, not per tile; a
        # program of one configuration initializes once per acquire where inits are not hoisted. An
        # op of a row-shared operand runs once per acquire, for the tile row of the chunk.
        mixed = len(set(keys)) > 1

        def one_chunk(ch):
            base = ch * chunk
            stmts = [evaluate(Intrin.DST_ACQUIRE, like=stmt)]
            for n, (key, init, emit, once) in enumerate(ops):
                if (mixed and (n == 0 or key != keys[n - 1])) or (not mixed and n == 0 and ctx.inline_inits):
                    stmts.append(init)
                if once:
                    stmts.append(emit(ctx.analyzer.simplify(base), None))
                    continue
                stmts.append(serial("t", chunk, lambda tl, emit=emit: emit(ctx.analyzer.simplify(base + tl), tl),
                                    like=stmt))
            slot_of = lambda t: ctx.analyzer.simplify(shared + t * spt)  # noqa: E731
            more = [p for cb in sums for p in row_sum_packs(ctx, out, cb, base, chunk, slot_of, stmt)]
            return seq([*stmts, *ctx.pack(out, chunk, slot_of, stmt, also, more)])

        loop = serial("ch", total // chunk, one_chunk, like=stmt)
        if not sums:
            return loop
        return seq([*(evaluate(Intrin.CB_RESERVE_BACK, cb.index, cb.block_pages, like=stmt) for cb in sums), loop,
                    *(evaluate(Intrin.CB_PUSH_BACK, cb.index, cb.block_pages, like=stmt) for cb in sums)])


def _block_writes(call) -> list[tuple[tirx.Var, bool]]:
    """(the data of each block the compute op or reader call ``call`` writes, whether the block is an element-wise
    op's result): an element-wise op's result and the row sums it packs besides, a reduction's vector, a gemm's
    accumulator, a packed block, the block the reader fills or generates."""
    intrin, args = stmt_intrin(call), call.value.args
    if intrin == Intrin.TILE_ELTWISE:
        return [(args[0], True), *((v, False) for v in args[4:])]
    if intrin == Intrin.TILE_REDUCE:
        return [(args[2], False)]
    if intrin in (Intrin.MM_MMA, Intrin.PACK_BLOCK):
        return [(args[2 if intrin == Intrin.MM_MMA else 0], False)]
    if intrin in (Intrin.READ_TO_CB, Intrin.GENERATE_BLOCK):
        return [(as_region(args[1 if intrin == Intrin.READ_TO_CB else 0]).buffer.data, False)]
    return []


def _writes(stmt, data: tirx.Var) -> bool:
    """Whether a compute op or a read in ``stmt`` writes the block of ``data``."""
    return any(v.same_as(data) for call in evaluate_calls(stmt) for v, _ in _block_writes(call))


def row_sum_packs(ctx, out, partial, base, count: int, slot_of, like) -> list[tirx.Stmt]:
    """The packs of output tiles ``base`` .. ``base + count - 1`` of block ``out`` (their DST tiles
    ``slot_of(t)``) into the row-sum block ``partial`` of Reduce.fuse_row_sums (its pages reserved
    around the op): tile ``n`` goes to page ``n // cols`` out of order (``pack_tile<true>``), the
    first tile of a row overwriting it, the others added to it (``pack_reconfig_l1_acc(1)``: "the
    packer adds to the tiles in L1", api/compute/pack.h), accumulation off again after."""
    cols = out.block_tiles[1]

    def one(t):
        n = ctx.analyzer.simplify(base + t)
        return seq([evaluate(Intrin.PACK_L1_ACC, tirx.NE(tirx.FloorMod(n, cols), 0), like=like),
                    evaluate(Intrin.PACK_TILE_AT, slot_of(t), partial.index, ctx.analyzer.simplify(
                        tirx.FloorDiv(n, cols)), like=like)])

    return [serial("t", count, one, like=like),
            evaluate(Intrin.PACK_L1_ACC, tirx.const(0, "uint32"), like=like)]


def _plan(ctx, out, stmt, value, total: int, share_rows: bool):
    """(the value's compiled TileProgram, output tiles per acquire). With ``share_rows``, the
    operands computed from per-row vectors and constants alone (``m[i] * scale``) are computed once
    per acquire into DST slots of their own, ahead of the output tiles' slots, and an acquire's
    tiles lie in one tile row of the block (the chunk divides the tiles per row)."""
    program, chunk = _program(ctx, out, stmt, value, total, share_rows)
    if program is None:
        raise ctx.error(stmt, f"the expression needs {chunk} DST tiles per output tile; the budget is {ctx.budget}",
                        "split the expression into several T.Parallel statements")
    return program, chunk


def _program(ctx, out, stmt, value, total: int, share_rows: bool):
    """:func:`_plan`'s (program, chunk), or (None, DST tiles per output tile) when they exceed the budget."""
    cols = out.block_tiles[1]
    program = TileProgram(ctx, out, stmt, share_rows=share_rows and not out.vector and cols > 1)
    spt = program.need(value)
    if spt > ctx.budget:
        return None, spt
    program.spt = spt
    program.compile(value, 0)
    if not program.shared:
        return program, ctx.chunk(total, spt)
    per_acquire = (ctx.budget - program.shared_slots) // spt
    chunk = max((d for d in range(1, min(per_acquire, cols) + 1) if cols % d == 0), default=0)
    if chunk < 2:  # sharing saves nothing with one tile per acquire (or does not fit)
        return _program(ctx, out, stmt, value, total, share_rows=False)
    return program, chunk


def fits_dst(ctx, stmt) -> bool:
    """Whether the value of the ``tt.tile.eltwise`` ``stmt`` fits the DST budget ``ctx.budget`` (D5
    compiles it; else it refuses it)."""
    out_var, _, _, value = stmt.value.args[:4]
    out = ctx.cb(out_var.name)
    if isinstance(value, tirx.Cast):
        value = value.value
    return _program(ctx, out, stmt, value, out.block_pages, share_rows=True)[0] is not None


def operand_needs(ctx, stmt, value) -> list[tuple[tirx.PrimExpr, int]]:
    """Every operand the DST program of ``value`` (in the ``tt.tile.eltwise`` ``stmt``) computes into a
    register, with the DST tiles one output tile of it needs (Sethi-Ullman, :class:`TileProgram`), in
    the order the program asks (an operand after its own operands); each object once."""
    program = TileProgram(ctx, ctx.cb(stmt.value.args[0].name), stmt)
    program.needs = []
    program.need(value)
    return program.needs


def drain_steps(ctx, body) -> None:
    """C2, over the lowered kernel ``body``: each block the writer copies to a tensor whose every writer is an
    element-wise statement gets ``push_pages`` (``tt.cb_desc``): the writer drains it in steps of that many pages
    as compute pushes them (LowerCBIntrinsics ``_drained_as_pushed``: wait, write, barrier, pop), where it waited
    for the whole block and wrote it after compute's last pack: the last block's writes then trail compute by
    one step instead of one block (layernorm 4096 x 1024: 32 tiles written 12 k cycles after compute ended). An
    element-wise op packs its output tiles in the block's row order, at most a DST acquire of them at a time
    (:func:`_plan`: ``ctx.budget_of(ctx.fp32)`` tiles): the step is the largest divisor of a tile row's tiles
    within that budget (the writer's cumulative waits are correct for any step dividing the block). Blocks a
    gemm, a reduction or the reader writes keep theirs (a gemm's sub-blocks set their own)."""
    eltwise, other, written = set(), set(), set()
    for stmt in evaluate_calls(body):
        if stmt_intrin(stmt) == Intrin.WRITE_FROM_CB:
            written.add(as_region(stmt.value.args[0]).buffer.name)
        for data, result in _block_writes(stmt):
            (eltwise if result else other).add(data.name)
    budget = ctx.budget_of(ctx.fp32)
    for name in sorted((written & eltwise) - other):
        desc = ctx.cbs[name]
        rows, cols = desc.block_tiles
        step = max(d for d in range(1, min(budget, cols) + 1) if cols % d == 0)
        if desc.vector or desc.push_pages or step >= desc.block_pages:
            continue
        ctx.cbs[name] = dataclasses.replace(desc, push_pages=step)


# -- C2 checks -------------------------------------------------------------------------------------
def _refuse_inner_loop(ctx, stmt) -> None:
    """Refuses the first loop inside the body ``stmt`` of a T.Parallel nest, if any: a loop per element
    (TileOPs' FFT computes each element's bit-reversed index ``rev`` so, then gathers ``x[bb, rev]``)."""
    inner = []

    def visit(node) -> bool:  # pre-order, stopping at the first loop
        if inner or isinstance(node, tirx.For):
            inner.append(node)
            return False
        return True

    tirx.stmt_functor.pre_order_visit(stmt, visit)
    if inner:
        loop = inner[0]
        raise ctx.error(loop, f"unsupported T.Parallel body (only stores into blocks): a loop `for {loop.loop_var.name} "
                              f"in T.serial({loop.extent})` inside T.Parallel computes a value or an index per "
                              "element (a bit reversal, a gather): a core computes whole tiles, each element alike",
                        "a permutation of a block's elements (a bit-reversed order) is a matrix product: T.gemm of the "
                        "block with the permutation matrix passed as a tensor (or pass the tensor permuted); a value "
                        "computed by a loop: write it as one expression of the indices, or a T.Parallel nest per step")



def _check_access(ctx, node, access, i, j) -> None:
    """A load/store must address a whole block element-wise: X[i, j], v[i] (per-row) or v[j]; a
    load may read a block of the transposed shape transposed, X[j, i]."""
    buf, idx = access.buffer, list(access.indices)
    kind = ctx.block_kind(buf) if buf.name in ctx.cbs else None
    ok = False
    if kind is not None:
        if len(idx) == 2 and kind == "" and isinstance(access, tirx.BufferLoad) and is_transposed(access, (i, j)):
            out = [int(d) for d in node.buffer.shape]
            ok = len(out) == 2 and [int(d) for d in buf.shape] == out[::-1]
        elif len(idx) == 2 and kind == "":
            ok = i is not None and j is not None and idx[0].same_as(i) and idx[1].same_as(j)
        elif len(idx) == 2 and kind == ROW:
            ok = j is not None and _is_zero(idx[0]) and idx[1].same_as(j)
        elif len(idx) == 2 and kind == COL:
            ok = i is not None and idx[0].same_as(i) and _is_zero(idx[1])
        elif len(idx) == 1:
            var = i if kind == COL else j
            # a per-row value in a block of one row (per-column in one column): its first
            ok = (var is not None and idx[0].same_as(var)) or (var is None and _is_zero(idx[0]))
            # a row vector read into a column one (or back) at the same index: each tile transposed
            other = j if kind == COL else i
            ok = ok or (var is None and other is not None and isinstance(access, tirx.BufferLoad)
                        and idx[0].same_as(other))
    if not ok:
        hint = ("index blocks with the T.Parallel loop variables: X[i, j], per-row v[i], per-column v[j], or X[j, i] "
                "for X of the transposed shape")
        loop_vars = [v for v in (i, j) if v is not None]
        if is_global_buffer(buf):
            # a tensor element per element of a block: fp8 GEMMs' per-row scale of a K step
            hint += ("; a tensor read at the element's index (a per-row scale S[by * bm + i, k]) is read into a "
                     "vector block first, the reader reading an element per row: for i in T.Parallel(bm): "
                     "s[i] = S[by * bm + i, k]; then s[i] in the nest")
        elif any(not isinstance(x, (tirx.Var, tirx.IntImm)) or (
                isinstance(x, tirx.Var) and not any(x.same_as(v) for v in loop_vars)) for x in idx):
            # a computed index: a butterfly stage's partner, a bit reversal (a permutation of the block)
            hint += ("; elements at computed indices (a butterfly stage, a bit reversal: a permutation of the "
                     "block) have no element-wise form: write the transform as a matrix product, T.gemm of the "
                     "block with the transform's matrix passed as a tensor (a Walsh-Hadamard transform: "
                     "T.gemm(x_s, H_s, y_l) with H the n x n Hadamard matrix / sqrt(n)), or each stage of a 2-D "
                     "block as reads at computed indices stored element-wise, which compile (b[i, j] = "
                     "T.if_then_else(j & h == 0, a[i, j] + a[i, j ^ h], a[i, j ^ h] - a[i, j]))")
        raise ctx.error(node, f"`{buf.name}[{', '.join(str(x) for x in idx)}]` is not an element-wise access of an "
                              "on-chip block", hint)


def _check_expr(ctx, node, expr, i, j, top: bool = False) -> None:
    if isinstance(expr, tirx.BufferLoad):
        _check_access(ctx, node, expr, i, j)
    elif constant(expr) is not None:  # literals, -T.infinity(..)
        return
    elif runtime_scalar(expr, float_scalar_params(ctx.func)):  # a value of float scalar parameters
        return
    elif isinstance(expr, tirx.Cast):
        if not top and str(expr.dtype) == "float16" and str(expr.value.dtype) in ("float32", "bfloat16"):
            raise ctx.error(node, f"`{expr}` rounds to float16 inside the value: DST computes in float32 or "
                                  "bfloat16 and rounds to bfloat16 only (typecast_tile), so the value would keep "
                                  "bits TIR rounds away",
                            "store the value into a float16 block (the packer rounds it) and read that block, or "
                            "cast to bfloat16 inside the value")
        _check_expr(ctx, node, expr.value, i, j)
    elif isinstance(expr, BINARY_NODES + COMPARE_NODES + tuple(INT_BINARY)):
        _check_expr(ctx, node, expr.a, i, j)
        _check_expr(ctx, node, expr.b, i, j)
    elif (operands := call_operands(expr)) is not None:
        for operand in operands:
            _check_expr(ctx, node, operand, i, j)
    elif (where := generated_mask(expr)) is not None:  # where_tile on a mask the reader generates
        for operand in where:
            _check_expr(ctx, node, operand, i, j)
    elif isinstance(expr, tirx.Call) and getattr(expr.op, "name", None) in FLOAT_BITS:
        raise ctx.error(node, f"`{expr}` computes on the bits of a float value (T.reinterpret, shifts, bit masks), "
                              "which element-wise values do not lower",
                        "a power of two from a float's exponent (DeepSeek's fast_round_scale: 2 ** ceil(log2 x) from "
                        "the exponent bits) is T.exp2(T.ceil(T.log2(x))), which compiles but is not exact: the "
                        "SFPU rounds log2 (and a division before it), and at some exact powers of two (2^-15, 2^-13) "
                        "it gives the next power up, a scale twice as large; other bit manipulations: on the host")
    elif (select := selection(expr)) is not None:
        cond = select[0]
        if reads_blocks(cond):
            raise ctx.error(node, f"`{expr}` selects on the values of blocks",
                            "write it with T.max/T.min: x > 0 ? x : a * x is T.max(x, 0) + a * T.min(x, 0)")
        raise ctx.error(node, f"`{expr}` selects between values that read blocks on a condition the reader cannot "
                              "evaluate",
                        "select on the indices, loop variables and block coordinates (a mask the reader generates), "
                        "or combine arithmetically: X[i, j] + T.if_then_else(cond, 0, -T.infinity('float32'))")
    else:
        raise ctx.error(node, f"unsupported element-wise expression `{expr}`", f"supported: {SUPPORTED}")


# The calls that read or make a float's bits (DeepSeek's fast_log2_ceil / fast_pow2): no element-wise form.
FLOAT_BITS = ("tirx.reinterpret", "tirx.shift_left", "tirx.shift_right", "tirx.bitwise_and", "tirx.bitwise_or",
              "tirx.bitwise_xor", "tirx.bitwise_not")


def _check_extents(ctx, node, buf, extents) -> None:
    shape = [int(d) for d in buf.shape]
    full = [d for d in shape if d != 1]
    if [int(e) for e in extents] != full:
        raise ctx.error(node, f"T.Parallel{tuple(int(e) for e in extents)} does not cover the whole block "
                              f"`{buf.name}` {shape}", "iterate T.Parallel over the block's full shape")


def _is_zero(e) -> bool:
    return isinstance(e, tirx.IntImm) and int(e.value) == 0


def _is_one(e) -> bool:
    return isinstance(e, tirx.IntImm) and int(e.value) == 1


# -- integers -------------------------------------------------------------------------------------
INT_SUPPORTED = ("+, -, *, // and % (floor division and its remainder), T.truncdiv, T.max, T.min and comparisons "
                 "(T.Cast('int32', a < b) or T.if_then_else(a < b, 1, 0)) of int32 blocks and integer constants")


def integer_value(ctx, node, value, ij):
    """An int32 block's value with each 0/1 selection on a comparison as the comparison (what the
    SFPU's integer comparisons compute), after checking it computes on int32 values only with the
    SFPU's integer ops, and reads whole int32 blocks as they are (transposing and broadcasting are
    the FPU's, which has no int32)."""
    def visit(e):
        if isinstance(e, tirx.BufferLoad) and (is_transposed(e, ij) or ctx.block_kind(e.buffer) != ctx.block_kind(
                node.buffer)):
            raise ctx.error(node, f"`{e}` reads the int32 block `{e.buffer.name}` transposed or spread over the "
                                  f"block `{node.buffer.name}`: the FPU, which transposes and broadcasts tiles, has no "
                                  "int32", "read int32 blocks element for element, X[i, j], in blocks of one shape")
        if (select := selection(e)) is not None and isinstance(select[0], COMPARE_NODES) \
                and [constant(x) for x in select[1:]] == [1.0, 0.0]:
            return tirx.Cast("int32", visit(select[0]))
        if isinstance(e, tirx.Cast) and str(e.dtype) in INTEGER_DTYPES + ("bool",) and \
                str(e.value.dtype) in INTEGER_DTYPES + ("bool",):
            return tirx.Cast(e.dtype, visit(e.value))
        if isinstance(e, COMPARE_NODES) or type(e) in INT_BINARY:
            a, b = visit(e.a), visit(e.b)
            if all(str(x.dtype) in INTEGER_DTYPES for x in (a, b)):
                return type(e)(a, b)
        if isinstance(e, (tirx.IntImm, tirx.BufferLoad)) and str(e.dtype) in INTEGER_DTYPES:
            return e
        raise ctx.error(node, f"`{e}` ({e.dtype}) in the value of the int32 block `{node.buffer.name}`: the SFPU's "
                              "integer ops compute int32 only", f"supported on int32 blocks: {INT_SUPPORTED}; "
                              "compute anything else in float32 blocks")

    return visit(value)


def _reads_blocks(e) -> bool:
    found = []
    tirx.stmt_functor.post_order_visit(e, lambda n: found.append(n) if isinstance(n, tirx.BufferLoad) else None)
    return bool(found)


def _converted_integers(ctx, node, value, ij, loads):
    """``value`` (of a float block) with each int32 value it converts to a float (:class:`IntegerToFloat`)
    as :func:`integer_value` writes it, and ``loads`` without the int32 blocks only those values read."""
    converted = []

    def post(e):
        if isinstance(e, tirx.Cast) and str(e.dtype) in ("float32", "bfloat16") and isinstance(
                e.value, COMPARE_NODES) and all(str(x.dtype) in INTEGER_DTYPES for x in (e.value.a, e.value.b)):
            e = tirx.Cast(e.dtype, tirx.Cast("int32", e.value))  # a comparison of int32 values: 1 or 0
        if converts_integer(e) and _reads_blocks(e.value):  # of the indices alone: a block the reader generates
            inner = integer_value(ctx, node, e.value, ij)
            converted.append(inner)
            return tirx.Cast(e.dtype, inner)
        return None

    value = tirx.stmt_functor.ir_transform(tirx.Evaluate(value), None, post, ["tirx.Cast"]).value
    if not converted:
        return value, loads
    rest = []  # the blocks read outside the converted values: float, or refused as mixing

    def visit(n):
        if converts_integer(n):
            return False
        if isinstance(n, tirx.BufferLoad):
            rest.append(n.buffer)
        return True

    tirx.stmt_functor.pre_order_visit(value, visit)
    return value, rest


# -- FPU ------------------------------------------------------------------------------------------
def reciprocal_divisors(ctx, store, value, out: list) -> tirx.PrimExpr:
    """Under fast math, ``value`` with each division by an element of a vector block, ``a / v[i]`` (a row's
    value, or a column's), as ``a * r[i]``: ``r = 1 / v``, a float32 vector block of v's geometry computed
    once before the statement (its ``tt.tile.eltwise`` appended to ``out``: recip_tile on one tile per 32
    rows) where the SFPU divided every tile (div_binary_tile: 47 instructions a row with a 32-bit DST
    against mul_binary_tile's 6, tilelang_tt/emulator/runtime/costs.cpp). ttnn's softmax divides so
    (softmax.cpp: recip_tile of the row sum, then mul_tiles_bcast_cols). It rounds twice where the division
    rounds once (within 2 float32 ulps), hence fast math only: TileLang's ``tl.enable_fast_math``, which
    on CUDA passes --use_fast_math (approximate division too)."""
    made = {}

    def post(e):
        if not isinstance(e, tirx.Div) or str(e.dtype) in INTEGER_DTYPES:
            return None
        load = strip_casts(e.b)
        if not isinstance(load, tirx.BufferLoad) or load.buffer.name not in ctx.cbs \
                or not ctx.block_kind(load.buffer):
            return None
        vec = load.buffer
        if vec not in made:
            made[vec] = ctx.new_block(vec, "_recip", "float32", "local.fragment")
            out.append(ctx.eltwise_from(store, made[vec], lambda i, j: tirx.Div(
                tirx.FloatImm("float32", 1.0), tirx.Cast("float32", ctx.load(vec, i, j)) if vec.dtype != "float32"
                else ctx.load(vec, i, j))))
        recip = tirx.BufferLoad(made[vec], load.indices)
        if e.dtype == "float32":
            return tirx.Mul(e.a, recip)
        # a narrower quotient: the product of float32 values, rounded once as DST's quotient is
        return tirx.Cast(e.dtype, tirx.Mul(tirx.Cast("float32", e.a), recip))

    return tirx.stmt_functor.ir_transform(tirx.Evaluate(value), None, post, ["tirx.Div"]).value


def fpu_binary(value, vector_of, ij, tf32: bool = False, exact: frozenset = frozenset()) -> tuple | None:
    """(FPU op, a, b, kind) when an eltwise value of a full block is one FPU op from two CBs
    (``vector_of``: block name -> its ``vector`` kind; ``ij``: the loop variables): A[i, j] op B[i, j]
    of two full blocks (kind ""), or A[i, j] op v[i] / v[j] of a full block and a per-row / per-column
    vector, which the FPU spreads over the tile (kind "col" / "row", tt-metal's bcast ops; v op A
    too for the commutative add and mul). Not for a block read transposed (the FPU reads tiles as
    they are). Not for a float32 operand either: the FPU reads it from SrcA/SrcB truncated to TF32 (10
    mantissa bits), where copied to DST (UnpackToDestFp32) the SFPU computes on all 23, as ttnn's binary_ng
    runs add/sub/mul of float32 tensors on the SFPU (binary_ng_device_operation.cpp, is_binary_sfpu_op), unless the
    block's values are bfloat16 values (``exact``: :func:`~tilelang_tt.ops.base.bfloat16_valued`, a row maximum
    of a bfloat16 block), which TF32 holds exactly: the FPU then computes what the SFPU would (a float32 sum or
    difference of exact operands, rounded once; finite operands: the FPU reads an exponent of 255 as a number,
    compute.cpp ``fpu_value``, where the SFPU has Inf and NaN); ``tf32``:
    float32 operands too, read as TF32 (under fast math, where the exp of their difference is approximate anyway, as
    ttnn's SDPA subtracts the row maximum from its float32 scores with sub_tiles_bcast_cols, compute_common.hpp)."""
    op = FPU_BINARY.get(type(value))
    if op is None or str(value.dtype) in INTEGER_DTYPES:  # the FPU has no int32
        return None
    loads = [strip_casts(x) for x in (value.a, value.b)]
    if not all(isinstance(x, tirx.BufferLoad) and not is_transposed(x, ij) for x in loads):
        return None
    if not tf32 and any(str(x.buffer.dtype) == "float32" and x.buffer.name not in exact for x in loads):
        return None
    kinds = [vector_of(x.buffer.name) for x in loads]
    if kinds[0] and not kinds[1] and op.name != "sub":  # v op A = A op v
        loads, kinds = loads[::-1], kinds[::-1]
    if kinds[0]:  # the FPU spreads in1 only, over a full in0
        return None
    return op, loads[0].buffer.name, loads[1].buffer.name, kinds[1]


# -- DST programs ---------------------------------------------------------------------------------
class TileProgram:
    """Per-tile DST code for an element-wise value.

    Each node of the value is compiled by the first operand rule of OPERAND_RULES that matches it:
    a rule has ``match(prog, e)`` (None, or what it needs of ``e``), ``need(prog, m)`` (DST tiles
    one output tile needs) and ``compile(prog, m, base)`` (ops leaving the value in DST slot
    ``tl * spt + base``). ``ops`` holds (init key, init statement, emit) with ``emit(tg, tl)``
    giving the statement for output tile ``tg`` of the block computed in DST tiles of chunk
    position ``tl``."""

    def __init__(self, ctx, out, like, share_rows: bool = False):
        self.ctx = ctx
        self.out = out
        self.like = like
        self.ij = tuple(like.value.args[1:3])  # the tt.tile.eltwise's loop variables (i, j)
        self.spt = 0  # DST tiles per output tile, set once the value's need is known
        self.ops: list[tuple[tuple, tirx.Stmt, object, bool]] = []
        self.rules = INT_RULES if out.data_format == "Int32" else OPERAND_RULES
        # Row-shared operands: the same tile for every output tile of a tile row, computed once per
        # acquire into slots [0, shared_slots) ahead of the output tiles' slots (their values, in
        # the order first compiled, and the slot of each).
        self.share_rows = share_rows and self.rules is OPERAND_RULES
        self.shared_slots = 0
        self.shared: list[tuple[object, int]] = []
        self.in_shared = False  # compiling a row-shared operand
        self.needs: list | None = None  # with a list: each operand asked of need() and its need, once
        self.tf32 = False  # the operand of an exp with its scale folded (fast math): the FPU reads float32 as TF32

    def rule(self, e):
        return next((rule, m) for rule in self.rules if (m := rule.match(self, e)) is not None)

    def rounds(self, e) -> bool:
        """Whether ``e`` is a cast that rounds a float32 value to bfloat16 where DST holds 32 bits (a
        16-bit DST holds bfloat16 values anyway; other casts change nothing DST holds)."""
        return (isinstance(e, tirx.Cast) and str(e.dtype) == "bfloat16" and str(e.value.dtype) == "float32"
                and self.ctx.fp32_dest_acc)

    def strip(self, e):
        """``e`` without the casts that change nothing DST holds."""
        while isinstance(e, tirx.Cast) and not self.rounds(e) and not converts_integer(e):
            e = e.value
        return e

    def need(self, e) -> int:
        rule, m = self.rule(self.strip(e))
        n = rule.need(self, m)
        if self.needs is not None and not any(x.same_as(e) for x, _ in self.needs):
            self.needs.append((e, n))
        return n

    def compile(self, e, base: int) -> None:
        rule, m = self.rule(self.strip(e))
        rule.compile(self, m, base)

    def slot(self, tl, base):
        """DST slot ``base`` of output tile ``tl`` of the acquire; ``tl`` None: slot ``base`` of the
        row-shared operands."""
        if tl is None:
            return tirx.IntImm("int32", base)
        return self.ctx.analyzer.simplify(self.shared_slots + tl * self.spt + base)

    def op(self, key: tuple, init: tirx.Stmt, emit) -> None:
        self.ops.append((key, init, emit, self.in_shared))

    # -- row-shared operands ------------------------------------------------------------------------
    def shares(self, e) -> bool:
        """Whether operand ``e`` of a binary op is computed once per acquire: it reads per-row
        vectors (``v[i]``) and constants only, so its tile is the same along a tile row."""
        if not self.share_rows or self.in_shared:
            return False
        loads = []
        tirx.stmt_functor.post_order_visit(e, lambda n: loads.append(n) if isinstance(n, tirx.BufferLoad) else None)
        return all(self.ctx.cb(x.buffer.name).vector == COL for x in loads)

    def shared_slot(self, e) -> tirx.IntImm:
        """The slot of row-shared operand ``e``, compiled (once per acquire) where first used: the
        k-th keeps its value in slot k and computes in the slots from k on (its ops are emitted with
        ``tl`` None)."""
        for x, slot in self.shared:
            if tirx.analysis.expr_deep_equal(x, e):
                return tirx.IntImm("int32", slot)
        slot = len(self.shared)
        self.in_shared = True
        self.compile(e, slot)
        self.shared_slots = max(self.shared_slots, slot + self.need(e))
        self.in_shared = False
        self.shared.append((e, slot))
        return tirx.IntImm("int32", slot)

    def sfpu(self, op, emit) -> None:
        """An SFPU op: ops sharing an init call (its function and template arguments: exp_tile_init<true> and
        exp2's exp_tile_init<true, ln 2> differ) share the engine configuration."""
        self.op(("sfpu", op.init_function, op.init_call_template),
                evaluate(Intrin.SFPU_INIT, op.kind.value, op.name, like=self.like), emit)

    def unary(self, op, base: int) -> None:
        if self.ctx.math_approx_mode:
            op = APPROXIMATE.get(op.name, op)
        self.sfpu(op, lambda tg, tl: evaluate(Intrin.SFPU_UNARY, op.name, self.slot(tl, base), like=self.like))

    def scaled_exp(self, call):
        """(x, the fp32 bits of c, or of c ln 2 for exp2) when, under fast math, ``call`` is exp or exp2 of
        ``x * c`` (``c * x``, ``x / c``) or of ``a * c - b * c`` (x = a - b) for a constant c: the approximate exp
        of x with c (exp2: fp32 c times ln 2, rounded to fp32) folded into its init's scale
        (exp_tile_init<true, scale>: ckernel_sfpu_exp.h exp_init rounds A * scale once): one op where the value
        asks for one or two multiplies and the exp (the rounding differs: only where the user allowed it); else
        None."""
        name = call_name(call)
        if not self.ctx.fast_math or name not in ("tirx.exp", "tirx.exp2"):
            return None
        folded = _scaled(self.strip(call.args[0]))
        if folded is None:
            return None
        x, c = folded
        c = float32_value(c)  # the kernel's float32 constant
        return x, float32_bits(c * math.log(2.0) if name == "tirx.exp2" else c)

    def scalar(self, op, bits, base: int) -> None:
        """An SFPU op with a 32-bit parameter on DST slot ``base``: ``bits`` an int (a constant's), or the
        float value of scalar parameters whose float32 bits the kernel passes (:func:`parameter_bits`)."""
        param = tirx.IntImm("uint32", bits) if isinstance(bits, int) else parameter_bits(bits)
        self.sfpu(op, lambda tg, tl: evaluate(Intrin.SFPU_SCALAR, op.name, self.slot(tl, base), param, like=self.like))

    def fpu_operands(self, e):
        """(op, a, b) when ``e`` is A op B of two full blocks: the FPU computes it from the CBs
        straight into one DST tile."""
        if self.out.vector:
            return None
        binary = fpu_binary(e, lambda name: self.ctx.cb(name).vector, self.ij, tf32=self.tf32,
                            exact=self.ctx.bfloat16_valued)
        if binary is None:
            return None
        op, a, b, kind = binary
        return op, self.ctx.cb(a), self.ctx.cb(b), kind


class FpuOperands:
    """A op B of two full blocks, or of a full block and a vector the FPU spreads over it: one FPU
    op from the CBs into one DST tile."""

    def match(self, prog, e):
        return prog.fpu_operands(e)

    def need(self, prog, m) -> int:
        return 1

    def compile(self, prog, m, base) -> None:
        op, a, b, kind = m
        like, ctx = prog.like, prog.ctx
        if not kind:
            prog.op(("binary", op.name, a.index, b.index), evaluate(Intrin.BINARY_INIT, op.name, a.index, b.index,
                                                                      like=like),
                    lambda tg, tl: evaluate(Intrin.BINARY_TILES, op.name, a.index, b.index, tg, tg, prog.slot(tl, base),
                                            like=like))
            return
        prog.op(("binary", op.name, kind, a.index, b.index),
                evaluate(Intrin.BINARY_BCAST_INIT, op.name, kind, a.index, b.index, like=like),
                lambda tg, tl: evaluate(Intrin.BINARY_BCAST_TILES, op.name, kind, a.index, b.index,
                                        ctx.tile_at(a, prog.out, tg), ctx.tile_at(b, prog.out, tg),
                                        prog.slot(tl, base), like=like))


class RoundToBfloat16:
    """A cast of a float32 value to bfloat16 inside a value (TIR rounds there): the value, then
    ``typecast_tile<Float32, Float16_b>``."""

    def match(self, prog, e):
        return e if prog.rounds(e) else None

    def need(self, prog, e) -> int:
        return prog.need(e.value)

    def compile(self, prog, e, base) -> None:
        prog.compile(e.value, base)
        prog.unary(sfpu_op(SfpuKind.UNARY, "round_bf16"), base)


class IntegerToFloat:
    """An int32 value converted to a float inside a float value (``T.Cast("float32", n[i, j])``,
    ``T.Cast("float32", idx[i] >= 0)``): the int32 value computed by the integer rules, then
    ``typecast_tile<Int32, Float32>`` (the nearest float32; a bfloat16 value is rounded by the packer)."""

    def match(self, prog, e):
        return e.value if converts_integer(e) else None

    def need(self, prog, x) -> int:
        rules, prog.rules = prog.rules, INT_RULES
        try:
            return prog.need(x)
        finally:
            prog.rules = rules

    def compile(self, prog, x, base) -> None:
        rules, prog.rules = prog.rules, INT_RULES
        try:
            prog.compile(x, base)
        finally:
            prog.rules = rules
        prog.unary(sfpu_op(SfpuKind.UNARY, "int32_to_fp32"), base)


def converts_integer(e) -> bool:
    """Whether ``e`` is a cast of an int32 value to a float (not of an integer literal: ``T.Cast("bfloat16", 100)``
    is the float constant, which a DST of any width holds)."""
    return isinstance(e, tirx.Cast) and str(e.dtype) in ("float32", "bfloat16") and \
        str(e.value.dtype) in INTEGER_DTYPES and constant(e.value) is None


class Gelu:
    """The exact GELU of x: x, then gelu_tile."""

    def match(self, prog, e):
        return gelu_operand(e)

    def need(self, prog, x) -> int:
        return prog.need(x)

    def compile(self, prog, x, base) -> None:
        prog.compile(x, base)
        prog.unary(sfpu_op(SfpuKind.UNARY, "gelu"), base)


class UnaryCall:
    """A unary call of the SFPU table (T.exp...): its operand, then the op; under fast math, the exp of a
    product with a constant is the approximate exp of the other factor, the constant its init's scale
    (:meth:`TileProgram.scaled_exp`)."""

    def match(self, prog, e):
        return e if call_name(e) in UNARY_CALLS else None

    def need(self, prog, call) -> int:
        scaled = prog.scaled_exp(call)
        if scaled is None:
            return prog.need(call.args[0])
        return _as_tf32(prog, lambda: prog.need(scaled[0]))

    def compile(self, prog, call, base) -> None:
        scaled = prog.scaled_exp(call)
        if scaled is None:
            prog.compile(call.args[0], base)
            prog.unary(UNARY_CALLS[call.op.name], base)
            return
        x, bits = scaled
        _as_tf32(prog, lambda: prog.compile(x, base))
        op = APPROXIMATE[UNARY_CALLS[call.op.name].name]
        scale = tirx.IntImm("uint32", bits)
        prog.op(("sfpu", op.init_function, op.scaled_init, bits),
                evaluate(Intrin.SFPU_INIT, op.kind.value, op.name, scale, like=prog.like),
                lambda tg, tl: evaluate(Intrin.SFPU_UNARY, op.name, prog.slot(tl, base), like=prog.like))


def _as_tf32(prog, f):
    """``f()`` with the FPU taking float32 operands as TF32 (the folded exp's operand, under fast math)."""
    tf32, prog.tf32 = prog.tf32, True
    try:
        return f()
    finally:
        prog.tf32 = tf32


def _scaled(e):
    """(x, c) when ``e`` is x * c, c * x, x / c or a * c - b * c (x = a - b) for a constant c (casts aside), else
    None."""
    e = strip_casts(e)
    if isinstance(e, tirx.Mul):
        for x, k in ((e.a, e.b), (e.b, e.a)):
            c = constant(k)
            if c is not None and constant(x) is None:
                return x, c
    if isinstance(e, tirx.Div):
        c = constant(e.b)
        if c:
            return e.a, 1.0 / c
    if isinstance(e, tirx.Sub):
        a, b = _scaled(e.a), _scaled(e.b)
        if a is not None and b is not None and a[1] == b[1] and a[0].dtype == b[0].dtype:
            return tirx.Sub(a[0], b[0]), a[1]
    return None


class ScalarCall:
    """A call with a parameter (log2(x), round(x), pow(x, c)): its operand, then the op."""

    def match(self, prog, e):
        return scalar_call(e)

    def need(self, prog, m) -> int:
        return prog.need(m[1])

    def compile(self, prog, m, base) -> None:
        op, x, bits = m
        prog.compile(x, base)
        prog.scalar(op, bits, base)


class Relu:
    """max(x, 0) (either side)."""

    def match(self, prog, e):
        if not isinstance(e, tirx.Max):
            return None
        ca, cb = constant(e.a), constant(e.b)
        return (e.b if ca is not None else e.a) if ca == 0.0 or cb == 0.0 else None

    def need(self, prog, x) -> int:
        return prog.need(x)

    def compile(self, prog, x, base) -> None:
        prog.compile(x, base)
        prog.unary(sfpu_op(SfpuKind.UNARY, "relu"), base)


class ScalarOperand:
    """x op c and c op x for a constant c, or a value c of float scalar parameters (``x * scale``,
    ``x > threshold``): one SFPU op with c's float32 bits as parameter (a constant's in the code, a
    parameter's from the kernel's runtime argument).

    A division by c: 0.81.1's ``div_unary_tile`` multiplies by its parameter, the host passing the
    reciprocal (ckernel_sfpu_binop_with_unary.h ``calculate_binop_with_scalar``: "inversion is carried
    out on host side"), so x / c is ``mul_unary_tile`` of 1 / c where that is exact (a constant power of
    two) or where the result may round twice: a 16-bit DST (whose own division, ``div_binary_tile``, is a
    product with a reciprocal too) and fast math (a parameter's reciprocal computed by the kernel). Else,
    the division of a 32-bit DST: c filled into the next DST slot (``fill_tile``, a parameter's
    ``fill_tile_bitcast``) and ``div_binary_tile``, the LLK's division (within one float32 ulp:
    numerics.md). c / x the same way: ``div_binary_tile`` of c filled, or under fast math / a 16-bit DST
    the reciprocal of x times c (1 / x alone: ``recip_tile``)."""

    def match(self, prog, e):
        if type(e) not in SCALAR_OPS and not isinstance(e, tirx.Div):
            return None
        ca, cb = (_scalar_of(x) for x in (e.a, e.b))
        return (e, ca, cb) if ca is not None or cb is not None else None

    @staticmethod
    def divides_in_dst(prog, m) -> bool:
        """Whether the value is a division computed by ``div_binary_tile`` with c filled."""
        e, ca, cb = m
        if not isinstance(e, tirx.Div) or prog.ctx.fast_math or not prog.ctx.fp32_dest_acc:
            return False
        if ca is not None:
            return not isinstance(ca, float) or ca != 1.0
        return not isinstance(cb, float) or exact_reciprocal(cb) is None

    def need(self, prog, m) -> int:
        e, ca, _ = m
        n = prog.need(e.b if ca is not None else e.a)
        return max(n, 2) if self.divides_in_dst(prog, m) else n

    def compile(self, prog, m, base) -> None:
        e, ca, cb = m
        if self.divides_in_dst(prog, m):
            x, c = (e.b, ca) if ca is not None else (e.a, cb)
            prog.compile(x, base)
            if isinstance(c, float):
                CONSTANT_OPERAND.compile(prog, c, base + 1)
            else:
                prog.scalar(sfpu_op(SfpuKind.SCALAR, "fill_bitcast"), c, base + 1)
            num, den = (base + 1, base) if ca is not None else (base, base + 1)
            op = sfpu_op(SfpuKind.BINARY, "div")
            prog.sfpu(op, lambda tg, tl: evaluate(Intrin.SFPU_BINARY, op.name, prog.slot(tl, num), prog.slot(tl, den),
                                                  prog.slot(tl, base), like=prog.like))
            return
        op = "div" if isinstance(e, tirx.Div) else SCALAR_OPS[type(e)].name
        if ca is not None:  # constant on the left: c - x, c / x, c + x, c * x
            prog.compile(e.b, base)
            if op == "div":
                prog.unary(sfpu_op(SfpuKind.UNARY, "recip"), base)
                op = "mul"
            elif op == "sub":
                op = "rsub"
            elif op in SWAPPED:  # a comparison, 1.0 or 0.0: c <op> x is x <swapped op> c
                op = SWAPPED[op]
            value = ca
        else:
            prog.compile(e.a, base)
            value = cb
            if op == "div":  # a product with the reciprocal (div_unary_tile's own contract, above)
                op, value = "mul", reciprocal(cb) if isinstance(cb, float) else tirx.Div(
                    tirx.FloatImm("float32", 1.0), cb if str(cb.dtype) == "float32" else tirx.Cast("float32", cb))
        if isinstance(value, float) and (op, value) in (("mul", 1.0), ("add", 0.0), ("sub", 0.0)):
            return
        prog.scalar(sfpu_op(SfpuKind.SCALAR, op), float32_bits(value) if isinstance(value, float) else value, base)


def _scalar_of(e):
    """The value of a constant (a float), or ``e`` itself when it is a value of float scalar parameters
    (:func:`~tilelang_tt.ops.base.runtime_scalar`), else None."""
    c = constant(e)
    if c is not None:
        return c
    return e if runtime_scalar(e) else None


def parameter_bits(value) -> tirx.PrimExpr:
    """The float32 bits of ``value``, a value of float scalar parameters, as the SFPU ops with a
    parameter take them: ``T.reinterpret("uint32", value)``, which the kernel computes from its float
    runtime arguments."""
    if str(value.dtype) != "float32":
        value = tirx.Cast("float32", value)
    return tirx.call_intrin("uint32", "tirx.reinterpret", value)


class RuntimeScalar:
    """A value of float scalar parameters alone (``eps`` in ``T.max(x, eps)``, a bound of ``T.clamp``):
    one DST tile filled with it (``fill_tile_bitcast`` of its float32 bits)."""

    def match(self, prog, e):
        return e if runtime_scalar(e) else None

    def need(self, prog, value) -> int:
        return 1

    def compile(self, prog, value, base) -> None:
        prog.scalar(sfpu_op(SfpuKind.SCALAR, "fill_bitcast"), value, base)


def exact_reciprocal(c: float) -> float | None:
    """1 / c where it is exact in float32 and normal (c = +-2^k, |k| <= 126), else None."""
    if c == 0.0 or not math.isfinite(c):
        return None
    mantissa, exponent = math.frexp(c)
    if abs(mantissa) != 0.5 or not -126 <= 1 - exponent <= 126:
        return None
    return 1.0 / c


def reciprocal(c: float) -> float:
    """1 / c rounded to float32 (the constant a kernel multiplies by); +-inf for +-0."""
    if c == 0.0:
        return math.copysign(math.inf, c)
    if math.isinf(c):
        return math.copysign(0.0, c)
    return float32_value(1.0 / c)


class Where:
    """A selection on a mask the reader generated (:func:`~tilelang_tt.ops.generate.generate`): the
    mask, the true and the false value in three DST slots, then ``where_tile`` into the first."""

    def match(self, prog, e):
        return generated_mask(e)

    def need(self, prog, m) -> int:
        mask, a, b = m
        return max(prog.need(mask), prog.need(a) + 1, prog.need(b) + 2)

    def compile(self, prog, m, base) -> None:
        for operand, slot in zip(m, (base, base + 1, base + 2)):
            prog.compile(operand, slot)
        fmt = tirx.StringImm("Float32" if prog.ctx.fp32_dest_acc else "Float16_b")
        prog.op(("where",), evaluate(Intrin.WHERE_INIT, like=prog.like),
                lambda tg, tl: evaluate(Intrin.WHERE_TILE, fmt, prog.slot(tl, base), prog.slot(tl, base + 1),
                                        prog.slot(tl, base + 2), prog.slot(tl, base), like=prog.like))


class Comparison:
    """x <op> y of two values in DST: (x - y) <op> 0, 1.0 or 0.0 (``<op>z_tile``)."""

    def match(self, prog, e):
        return e if isinstance(e, COMPARE_NODES) else None

    def need(self, prog, e) -> int:
        return prog.need(tirx.Sub(e.a, e.b))

    def compile(self, prog, e, base) -> None:
        prog.compile(tirx.Sub(e.a, e.b), base)
        prog.unary(sfpu_op(SfpuKind.UNARY, f"{SCALAR_OPS[type(e)].name}z"), base)  # eq -> eqz ...


class SfpuBinaryOperands:
    """a op b (a node or a call such as T.pow(a, b)) of two values computed in DST: the operand
    needing more registers first (Sethi-Ullman); x op x computes x once (the SFPU op reads both operands before it
    writes: ckernel_sfpu_binary.h loads in0 and in1, then stores the result)."""

    square = True  # x op x from one DST slot (the integer ops, some of them in several passes, keep two)

    def match(self, prog, e):
        return binary_operands(e)

    def need(self, prog, m) -> int:
        _, a, b = m
        if prog.shares(a) or prog.shares(b):  # a row-shared operand lives in its own slot
            return max([1] + [prog.need(x) for x in (a, b) if not prog.shares(x)])
        if self.square and tirx.analysis.expr_deep_equal(a, b):  # x op x: x once, the op reading its slot twice
            return prog.need(a)
        need_a, need_b = prog.need(a), prog.need(b)
        return max(need_a, need_b + 1) if need_a >= need_b else max(need_b, need_a + 1)

    def compile(self, prog, m, base) -> None:
        op, a, b = m
        if prog.shares(a) or prog.shares(b):
            slots = []
            for x in (a, b):
                if prog.shares(x):
                    slots.append(lambda tl, s=prog.shared_slot(x): s)
                else:
                    prog.compile(x, base)
                    slots.append(lambda tl: prog.slot(tl, base))
            prog.sfpu(op, lambda tg, tl: evaluate(Intrin.SFPU_BINARY, op.name, slots[0](tl), slots[1](tl),
                                                  prog.slot(tl, base), like=prog.like))
            return
        if self.square and tirx.analysis.expr_deep_equal(a, b):
            prog.compile(a, base)
            prog.sfpu(op, lambda tg, tl: evaluate(Intrin.SFPU_BINARY, op.name, prog.slot(tl, base),
                                                  prog.slot(tl, base), prog.slot(tl, base), like=prog.like))
            return
        slot_a, slot_b = (base + 1, base) if prog.need(b) > prog.need(a) else (base, base + 1)
        for operand, slot in sorted([(a, slot_a), (b, slot_b)], key=lambda x: x[1]):
            prog.compile(operand, slot)
        prog.sfpu(op, lambda tg, tl: evaluate(Intrin.SFPU_BINARY, op.name, prog.slot(tl, slot_a), prog.slot(tl, slot_b),
                                              prog.slot(tl, base), like=prog.like))


class IntConstant:
    """An integer constant: one DST tile filled with it (``fill_tile_int``)."""

    def match(self, prog, e):
        return int(e.value) if isinstance(e, tirx.IntImm) else None

    def need(self, prog, value) -> int:
        return 1

    def compile(self, prog, value, base) -> None:
        prog.scalar(sfpu_op(SfpuKind.SCALAR, "fill_int"), value & 0xFFFFFFFF, base)


class IntScalarOperand:
    """x + c, c + x and x - c of an int32 value and a constant: one op with the constant's bits."""

    def match(self, prog, e):
        op = INT_SCALAR.get(type(e))
        if op is None:
            return None
        if isinstance(e.b, tirx.IntImm):
            return op, e.a, int(e.b.value)
        if isinstance(e, tirx.Add) and isinstance(e.a, tirx.IntImm):
            return op, e.b, int(e.a.value)
        return None

    def need(self, prog, m) -> int:
        return prog.need(m[1])

    def compile(self, prog, m, base) -> None:
        op, x, value = m
        prog.compile(x, base)
        if value != 0:
            prog.scalar(op, value & 0xFFFFFFFF, base)


class IntBinaryOperands(SfpuBinaryOperands):
    """a op b of two int32 values in DST (add_int_tile, lt_int_tile ...)."""

    square = False

    def match(self, prog, e):
        op = INT_BINARY.get(type(e))
        return (op, e.a, e.b) if op is not None else None


SFPU_BINARY_OPERANDS = SfpuBinaryOperands()
INT_RULES = (BLOCK_OPERAND, IntConstant(), IntScalarOperand(), IntBinaryOperands())
OPERAND_RULES = (RoundToBfloat16(), IntegerToFloat(), BLOCK_OPERAND, FpuOperands(), CONSTANT_OPERAND, RuntimeScalar(),
                 Gelu(), UnaryCall(), ScalarCall(), Relu(), ScalarOperand(), Where(), Comparison(), SFPU_BINARY_OPERANDS)
ELTWISE = register(Eltwise())
