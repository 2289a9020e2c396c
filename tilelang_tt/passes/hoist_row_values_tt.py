"""HoistRowValuesTT (after WidenMaskBlocksTT, before PadBlocksTT): a value of an element-wise store into a 2-D
block that depends on one loop of its T.Parallel nest alone, reading vectors at that loop's index and constants
(``m[i] * scale``), is computed once into a new vector before the nest, and the store reads that vector.

Why: compute makes a 2-D block a few tiles per DST acquire (ops/eltwise.py); a per-row operand is computed again
in every acquire of its tile row (the row-shared operands of ``Program.shared_slot``), a per-column one for every
tile. Computed once per vector it costs one op per vector tile, and an acquire that computes and packs the vector:
flash attention's ``T.exp2(acc_s[i, j] * scale - m[i] * scale)`` over a 64 x 512 block multiplies ``m`` once per
K/V step instead of 16 times. Only where the block has more tiles along the other loop than one acquire of a
32-bit DST holds (``Arch.dst_budget(True)``, 4): a tile row then takes two acquires or more, else the value is
already computed once per vector tile. The result is the same bits: the same operation on the same operands,
computed in DST's format either way, and stored in a float32 block that the nest reads back unchanged (a
narrower value would be rounded there, where the nest keeps DST's width).

Reads: the body's T.Parallel nests of two loops from 0 whose body is stores into 2-D on-chip blocks. A value
qualifies when it is a float32 operation (not a load, a cast of one or a constant), reads only rank-1 on-chip
blocks at one of the nest's loop variables (the same one throughout) and nothing the nest writes, and mentions no
other variable, in a nest whose stored blocks have more than ``Arch.dst_budget(True)`` tiles along the other loop;
the largest such values are hoisted, structurally equal ones once per nest. Under fast math the arguments of
``exp`` and ``exp2`` are left as they are: ops/eltwise.py folds ``exp2(a * c - b * c)``'s scale into the
approximate exp (``Program.scaled_exp``), which drops the product this would compute. Writes: per hoisted value a
float32 vector ``<first vector read>_row`` (unique against ``kernel_names``) of the loop's extent, allocated by the
kernel's root block, and a 1-D T.Parallel nest storing it, both at the store's line. Before: any T.Parallel nest.
After: no nest of two loops computes a qualifying value. Reads/writes no attribute.

    Before: for i, j in T.Parallel(64, 512):
                acc_s[i, j] = T.exp2(acc_s[i, j] * scale - m[i] * scale)
    After:  for i in T.Parallel(64):
                m_row[i] = m[i] * scale
            for i, j in T.Parallel(64, 512):
                acc_s[i, j] = T.exp2(acc_s[i, j] * scale - m_row[i])
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import ir, tirx

from tilelang_tt.contract.arch import Arch, get_arch
from tilelang_tt.ir.common import (
    TILE,
    allocate_in_root,
    is_cb_buffer,
    kernel_names,
    keep_span,
    loads,
    parallel_nest,
    prim_func_pass,
    rebuild_nest,
    seq,
    stores,
    unique_name,
    vars_used,
)

PASS = "HoistRowValuesTT"
EXPS = ("tirx.exp", "tirx.exp2")  # under fast math their scale folds into the exp (ops/eltwise.py scaled_exp)


def _axis(expr, loop_vars) -> tirx.Var | None:
    """The loop variable of ``loop_vars`` that ``expr`` depends on alone, when it qualifies (module docstring);
    else None."""
    if str(expr.dtype) != "float32" or isinstance(expr, (tirx.BufferLoad, tirx.IntImm, tirx.FloatImm)) or (
            isinstance(expr, tirx.Cast) and isinstance(expr.value, tirx.BufferLoad)):
        return None
    reads = loads(expr)
    if not reads or any(len(x.buffer.shape) != 1 or not is_cb_buffer(x.buffer) or len(x.indices) != 1
                        or not isinstance(x.indices[0], tirx.Var) for x in reads):
        return None
    axis = reads[0].indices[0]
    if not any(axis.same_as(v) for v in loop_vars) or any(not x.indices[0].same_as(axis) for x in reads):
        return None
    data = [x.buffer.data for x in reads]
    return axis if all(v.same_as(axis) or any(v.same_as(d) for d in data) for v in vars_used(expr)) else None


def _hoist(nest: tirx.For, arch: Arch, fast_math: bool, taken: set, new_buffers: list) -> tirx.Stmt | None:
    """``nest`` after the loops computing its qualifying values, or None when it has none."""
    loops, body = parallel_nest(nest)
    if len(loops) != 2 or any(not (isinstance(lp.min, tirx.IntImm) and lp.min.value == 0) for lp in loops):
        return None
    body_stores = stores(body)
    if not body_stores or (isinstance(body, tirx.SeqStmt) and len(body.seq) != len(body_stores)) or (
            not isinstance(body, (tirx.SeqStmt, tirx.BufferStore))) or any(
            len(s.buffer.shape) != 2 or not is_cb_buffer(s.buffer) for s in body_stores):
        return None
    budget = arch.dst_budget(True)
    written = [s.buffer for s in body_stores]
    loop_vars = [lp.loop_var for lp in loops]
    extents = {lp.loop_var: lp.extent for lp in loops}
    hoisted: list[tuple[tirx.PrimExpr, tirx.Buffer, tirx.For]] = []  # (value, its vector, the loop storing it)

    def tiles_along_other(axis) -> int:  # the stored blocks' tiles along the loop the value does not depend on
        other = next(lp for lp in loops if not lp.loop_var.same_as(axis))
        extent = other.extent.value if isinstance(other.extent, tirx.IntImm) else 0
        return -(-extent // TILE)

    def replace(expr, like):
        axis = _axis(expr, loop_vars)
        if axis is not None and tiles_along_other(axis) > budget \
                and not any(x.buffer.same_as(w) for x in loads(expr) for w in written):
            for value, vector, _ in hoisted:
                if tirx.analysis.expr_deep_equal(value, expr):
                    return tirx.BufferLoad(vector, [axis])
            name = unique_name(f"{loads(expr)[0].buffer.name}_row", taken)
            taken.add(name)
            vector = tirx.decl_buffer((extents[axis],), expr.dtype, name, scope="local.fragment")
            var = tirx.Var(axis.name, axis.dtype)
            store = keep_span(like, tirx.BufferStore(vector, tirx.stmt_functor.substitute(expr, {axis: var}), [var]))
            loop = keep_span(like, tirx.For(var, 0, extents[axis], tirx.ForKind.PARALLEL, store))
            hoisted.append((expr, vector, loop))
            return tirx.BufferLoad(vector, [axis])
        if fast_math and isinstance(expr, tirx.Call) and isinstance(expr.op, ir.Op) and expr.op.name in EXPS:
            return expr
        return None

    def rewrite(store: tirx.BufferStore) -> tirx.BufferStore:
        def pre(node):  # a node returned is kept as it is, its operands not visited
            return replace(node, store) if isinstance(node, tirx.PrimExpr) else None

        value = tirx.stmt_functor.ir_transform(tirx.Evaluate(store.value), pre, None).value
        return keep_span(store, tirx.BufferStore(store.buffer, value, store.indices))

    new_body = seq([rewrite(s) for s in body_stores])
    if not hoisted:
        return None
    new_buffers.extend(vector for _, vector, _ in hoisted)
    return seq([loop for _, _, loop in hoisted] + [rebuild_nest(loops, new_body)])


def _transform(func: tirx.PrimFunc, mod, ctx, arch: Arch, fast_math: bool) -> tirx.PrimFunc:
    taken = kernel_names(func)
    new_buffers: list[tirx.Buffer] = []

    def post(node):
        if node.kind == tirx.ForKind.PARALLEL and isinstance(node.body, tirx.For) \
                and node.body.kind == tirx.ForKind.PARALLEL:
            return _hoist(node, arch, fast_math, taken, new_buffers)
        return None

    body = tirx.stmt_functor.ir_transform(func.body, None, post, ["tirx.For"])
    if not new_buffers:
        return func
    return func.with_body(allocate_in_root(body, new_buffers))


def HoistRowValuesTT(arch: str = "wormhole_b0", fast_math: bool = False):
    spec = get_arch(arch)
    return prim_func_pass(lambda func, mod, ctx: _transform(func, mod, ctx, spec, fast_math), PASS)
