"""C3b CheckPaddingTT: a block reaching past its tensor's end must not carry its padding into a result.

Reads: each ``tt.read_to_cb`` (the slice it reads, its tensor's ``tt.layout_desc``: column, flat
or row-major view), ``tt.mm.mma``, ``tt.tile.eltwise`` and ``tt.tile.reduce`` (how each block is
used) and the loop ranges around them.
Writes: nothing; TIR unchanged. Errors: a reduction (``T.reduce_*``), or a GEMM contracting
(``T.gemm``), along an axis of a block whose padding is computed values, and a max- or
min-reduction along any padded axis.

The positions of a block past its tensor's end read as zero (the reader fills them; the writer
drops them). That is exact for element-wise work (padded positions never reach a valid one) and
for a GEMM contracting over zero-padded operands. The analysis propagates, per block, the axes
along which it may hold padding and whether that padding is still the reader's zeros
(element-wise values that are zero where their zero-padded operands are keep them: copies, casts,
negations, ``|x|``, sums and differences of such, products with a finite constant:
:func:`_zero_where`) or computed values (``exp(0)`` is 1), to a fixed point over loop-carried blocks.
A read pads a block only where it runs: under the branches around it (``if t < n - 1:`` the tiles
inside the row), and an element-wise value that reads a padded block only where a mask the reader
generates is 1, the mask provably 0 wherever the padding lies (the kernel's own guard
``T.if_then_else(k * bn + j < N, x[i, j], -inf)``), holds the kernel's values there, not padding
(:func:`_masked`).

    Before: T.tt.read_to_cb(T.region(A[by * 32, 0], 1, 32, 96), T.region(A_s[0, 0], 2, 32, 96))  # A is 32 x 80
            T.tt.tile.eltwise(E.data, i, j, T.exp(A_s[i, j]))                 # E's columns 80..95: exp(0)
            T.tt.tile.reduce("sum", E.data, S.data, 1, True)
    After:  TTCompileError at the reduction: "the reduction runs along the columns of `E`, which reach
            past the end of the tensor they come from: the padding would enter the result"
"""

from __future__ import annotations

import math

import tilelang  # noqa: F401
from tvm import ir, tirx

from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.ir.common import (allocations, as_region, error, evaluate_calls, float_constant, loads,
                                   prim_func_pass, stmt_intrin)
from tilelang_tt.ir.slices import bound_analyzer, is_row_major, overhanging_axes, vector_layout
from tilelang_tt.ops import compute_accesses, compute_writes
from tilelang_tt.ops.generate import generated_mask, selection

PASS = "CheckPaddingTT"
ROWS, COLS = 0, 1


def _operand_axes(stmt, data_names) -> list[tuple[str, int | None]]:
    """(block read, the axis it is contracted/reduced along, or None when used element-wise)."""
    intrin = stmt_intrin(stmt)
    args = stmt.value.args
    if intrin == Intrin.MM_MMA:
        return [(data_names[args[0]], COLS), (data_names[args[1]], COLS if bool(args[7]) else ROWS)]
    if intrin == Intrin.TILE_REDUCE:
        return [(data_names[args[1]], COLS if int(args[3]) == 1 else ROWS)]
    reads, _ = compute_accesses(stmt, data_names)
    return [(name, None) for name in reads]


def _zero_where(value, zero) -> bool:
    """Whether element-wise ``value`` is 0 wherever each block ``zero(buffer)`` accepts is 0 (the
    reader's zero padding), whatever the others hold: a copy or cast, a negation or ``|x|`` of
    such, their sums, differences and products, a product with a finite constant."""
    if isinstance(value, tirx.Cast):
        return _zero_where(value.value, zero)
    if isinstance(value, tirx.BufferLoad):
        return zero(value.buffer)
    if isinstance(value, (tirx.Add, tirx.Sub)):
        return all(_zero_where(v, zero) or (isinstance(v, tirx.FloatImm) and v.value == 0.0)
                   for v in (value.a, value.b))
    if isinstance(value, tirx.Mul):
        return any(_zero_where(v, zero) and (_zero_where(c, zero) or isinstance(c, (tirx.FloatImm, tirx.IntImm))
                                             and math.isfinite(c.value))
                   for v, c in ((value.a, value.b), (value.b, value.a)))
    if isinstance(value, tirx.Call) and isinstance(value.op, ir.Op) and value.op.name == "tirx.fabs":
        return _zero_where(value.args[0], zero)
    return False


def _guards(body, stmt) -> list[tirx.PrimExpr]:
    """The conditions under which ``stmt`` runs: those of the branches around it in ``body`` (a branch's
    condition in its then case, its negation in its else case)."""
    def walk(node, conds):
        if node.same_as(stmt):
            return conds
        if isinstance(node, tirx.IfThenElse):
            cases = [(node.then_case, [*conds, node.condition])]
            if node.else_case is not None:
                cases.append((node.else_case, [*conds, tirx.Not(node.condition)]))
            return next((found for case, c in cases if (found := walk(case, c)) is not None), None)
        if isinstance(node, tirx.SeqStmt):
            return next((found for s in node.seq if (found := walk(s, conds)) is not None), None)
        inner = node.block.body if isinstance(node, tirx.SBlockRealize) else getattr(node, "body", None)
        return walk(inner, conds) if isinstance(inner, tirx.Stmt) else None

    return walk(body, []) or []


def _under(analyzer, conditions, fn):
    """``fn()`` with ``analyzer`` knowing every condition of ``conditions``."""
    if not conditions:
        return fn()
    with analyzer.constraint_scope(conditions[0]):
        return _under(analyzer, conditions[1:], fn)


def _read_padding(func, calls, analyzer) -> tuple[dict[str, dict[int, str]], dict]:
    """(block -> {axis: "zero"} for each axis along which a slice read into it may reach past its tensor
    where the read runs (under the branches around it), (block, axis) -> where that padding starts along
    the axis when one read pads it and the start is known: the first index past its tensor's row (the
    last dimension: columns of a matrix or of a flat row) or past its matrix's rows)."""
    padded: dict[str, dict[int, str]] = {}
    starts: dict = {}
    for stmt in calls:
        if stmt_intrin(stmt) == Intrin.READ_TO_CB:
            src, dst = (as_region(a) for a in stmt.value.args[:2])
            column, flat = vector_layout(func, src.buffer)
            row_major = is_row_major(func, src.buffer)
            hanging = _under(analyzer, _guards(func.body, stmt),
                             lambda: overhanging_axes(src, analyzer, column, row_major, flat))
            shape, rank = list(src.buffer.shape), len(src.buffer.shape)
            for axis, hangs in enumerate(hanging):
                if not hangs:
                    continue
                key = (dst.buffer.name, axis)
                dim = rank - 1 if axis == COLS else rank - 2
                known = not column and not row_major and (axis == COLS or (not flat and rank >= 2))
                starts[key] = shape[dim] - src.starts[dim] if known and key not in starts and axis not in \
                    padded.get(dst.buffer.name, {}) else None
                padded.setdefault(dst.buffer.name, {})[axis] = "zero"
    return padded, starts


def _masked(stmt, name, axis, data_names, starts, masks, analyzer) -> bool:
    """Whether the element-wise ``stmt`` reads block ``name`` only where a mask the reader generates is 1,
    its value elsewhere a choice of the kernel's (``T.if_then_else(row_guard, x[i, j], -inf)``), and that mask
    is 0 wherever ``name`` holds padding along ``axis``: the output holds the kernel's values there."""
    start = starts.get((name, axis))
    value = stmt.value.args[3]
    while isinstance(value, tirx.Cast):
        value = value.value
    select = generated_mask(value)
    if start is None or select is None or not isinstance(select[0], tirx.BufferLoad):
        return False
    mask, true_value, false_value = select
    if any(data_names.get(ld.buffer.data) == name for ld in (*loads(mask), *loads(false_value))):
        return False
    made = masks.get(data_names.get(mask.buffer.data), [])
    if len(made) != 1:
        return False
    _, gi, gj, expr = made[0].value.args
    index = stmt.value.args[1 + axis]
    if not isinstance(index, tirx.Var) or not (gj if axis == COLS else gi).same_as(index):
        return False
    cond = selection(expr)
    if cond is None or [float_constant(x) for x in cond[1:]] != [1.0, 0.0]:
        return False
    with analyzer.constraint_scope(index >= start):
        return analyzer.can_prove(tirx.Not(cond[0]))


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    data_names = {buf.data: buf.name for buf in allocations(func)}
    calls = evaluate_calls(func.body)
    analyzer = bound_analyzer(func.body)
    # block -> {axis: "zero" (the reader's zeros) | "computed"}
    padded, starts = _read_padding(func, calls, analyzer)
    if not padded:
        return func
    masks: dict[str, list] = {}  # generated block -> the statements generating it
    for stmt in calls:
        if stmt_intrin(stmt) == Intrin.GENERATE_BLOCK:
            masks.setdefault(as_region(stmt.value.args[0]).buffer.name, []).append(stmt)
    compute = [s for s in calls if stmt_intrin(s) in (Intrin.MM_MMA, Intrin.TILE_ELTWISE, Intrin.TILE_REDUCE)]
    changed = True
    while changed:  # loop-carried blocks: propagate to a fixed point
        changed = False
        for stmt in compute:
            intrin = stmt_intrin(stmt)
            write, *also = compute_writes(stmt, data_names)
            out = dict(padded.get(write, {}))
            for name, axis in _operand_axes(stmt, data_names):
                pads = padded.get(name, {})
                if axis is not None and axis in pads:
                    unsafe = pads[axis] == "computed" or (  # zeros enter a max, and a min (-max(-x))
                        intrin == Intrin.TILE_REDUCE and stmt.value.args[0].value != "sum")
                    if unsafe:
                        what = "T.gemm contracts" if intrin == Intrin.MM_MMA else "the reduction runs"
                        raise error(PASS, func, stmt,
                                    f"{what} along the {('rows', 'columns')[axis]} of `{name}`, which reach past "
                                    "the end of the tensor they come from: the padding would enter the result",
                                    "choose block sizes that divide the tensor shape along the reduced axis "
                                    "(and tensor extents that are multiples of 32 there)")
                for pad_axis, kind in pads.items():
                    if pad_axis == axis:
                        continue  # contracted away (zeros only: checked above)
                    if intrin == Intrin.TILE_ELTWISE and _masked(stmt, name, pad_axis, data_names, starts, masks,
                                                                 analyzer):
                        continue  # selected away where it is padding: the kernel's own value there
                    if intrin == Intrin.TILE_ELTWISE and kind == "zero" and _zero_where(
                            stmt.value.args[3], lambda b, a=pad_axis: padded.get(data_names.get(b.data), {}).get(a)
                            == "zero"):
                        out[pad_axis] = "zero" if out.get(pad_axis) != "computed" else "computed"
                        continue  # zero where its zero-padded operands are: keeps the reader's zeros
                    out_axis = pad_axis  # element-wise, and a reduction's vector along its other axis
                    if intrin == Intrin.MM_MMA:  # free axes: A's rows are C's rows, B's free axis C's columns
                        out_axis = ROWS if name == data_names[stmt.value.args[0]] else COLS
                    out[out_axis] = "computed"
            for name in (write, *also):  # packed copies and row sums: the same values, summed along rows
                pads = out if name == write else {a: k for a, k in out.items() if a != COLS}
                if pads != padded.get(name, {}):
                    padded[name] = pads
                    changed = True
    return func


def CheckPaddingTT():
    return prim_func_pass(_transform, PASS)
