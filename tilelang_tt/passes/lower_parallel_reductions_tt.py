"""LowerParallelReductionsTT (after LegalizeGlobalAccessTT): a ``T.Parallel`` nest that accumulates
into a vector indexed by one of its two loops is a reduction along the other.

GPU kernels sum a block's rows into a per-row vector with every thread adding its element
(``sums[r] += w[r, c] * x[c]`` over ``T.Parallel(bm, bn)``, into a ``T.alloc_reducer`` that
``T.finalize_reducer`` combines across threads). A Tenstorrent core computes whole tiles: the nest
becomes the element-wise block of the terms, ``T.reduce_sum`` of it along the missing loop, and the
add of that vector into the accumulator; ``T.finalize_reducer`` has nothing to combine and goes.
Reads/writes no attribute; the two new blocks are allocated beside the kernel's.

    Before: for r, c in T.Parallel(128, 128):
                sums[r] = sums[r] + T.Cast("float32", w[r, c] * x[c])
            T.finalize_reducer(sums)
    After:  for r, c in T.Parallel(128, 128):
                sums_terms[r, c] = T.Cast("float32", w[r, c] * x[c])
            T.reduce(T.region(sums_terms[0, 0], 1, 128, 128), T.region(sums_sum[0], 2, 128), "sum", 1, True)
            for r in T.Parallel(128):
                sums[r] = sums[r] + sums_sum[r]
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import ir, tirx

from tilelang_tt.ir.common import (
    READ,
    WRITE,
    allocate_in_root,
    const_int,
    is_global_buffer,
    keep_span,
    kernel_names,
    make_region,
    parallel_nest,
    prim_func_pass,
    seq,
    tile_op_name,
    unique_name,
    uses_var,
)

PASS = "LowerParallelReductionsTT"


def _accumulation(loop: tirx.For):
    """(loops, store, term, kept loop index, reduced loop index) of ``v[i] = v[i] + term(i, j)``
    over a 2-D T.Parallel nest, the vector indexed by one loop only; else None."""
    loops, body = parallel_nest(loop)
    if len(loops) != 2 or not isinstance(body, tirx.BufferStore) or is_global_buffer(body.buffer):
        return None
    store = body
    if len(store.indices) != 1 or not isinstance(store.indices[0], tirx.Var):
        return None
    kept = next((k for k, lp in enumerate(loops) if store.indices[0].same_as(lp.loop_var)), None)
    if kept is None or any(const_int(lp.extent) is None for lp in loops):
        return None
    value = store.value

    def is_self(e):
        return isinstance(e, tirx.BufferLoad) and e.buffer.same_as(store.buffer) and len(e.indices) == 1 and \
            e.indices[0].same_as(store.indices[0])

    if not isinstance(value, tirx.Add):
        return None
    term = value.b if is_self(value.a) else value.a if is_self(value.b) else None
    reduced = 1 - kept
    if term is None or not uses_var(term, loops[reduced].loop_var):
        return None
    return loops, store, term, kept, reduced


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    names = kernel_names(func)
    pending: list[tirx.Buffer] = []

    def block(like: tirx.Buffer, suffix: str, shape) -> tirx.Buffer:
        name = unique_name(f"{like.name}_{suffix}", names)
        names.add(name)
        pending.append(tirx.decl_buffer(shape, like.dtype, name, scope="local.fragment"))
        return pending[-1]

    def rewrite(loop: tirx.For):
        found = _accumulation(loop)
        if found is None:
            return None
        loops, store, term, kept, reduced = found
        extents = [int(lp.extent) for lp in loops]
        vi, vj = (lp.loop_var for lp in loops)
        terms = block(store.buffer, "terms", extents)
        total = block(store.buffer, "sum", [extents[kept]])
        fill = keep_span(store, tirx.BufferStore(terms, tirx.Cast(store.buffer.dtype, term)
                                                 if term.dtype != store.buffer.dtype else term, [vi, vj]))
        nest = fill
        for lp in reversed(loops):
            nest = keep_span(lp, tirx.For(lp.loop_var, lp.min, lp.extent, tirx.ForKind.PARALLEL, nest))
        reduce = keep_span(store, tirx.Evaluate(tirx.Call("handle", ir.Op.get("tl.tileop.reduce"), [
            make_region(terms, [0, 0], extents, READ), make_region(total, [0], [extents[kept]], WRITE),
            tirx.StringImm("sum"), tirx.IntImm("int32", reduced), tirx.IntImm("bool", True)])))
        v = tirx.Var(loops[kept].loop_var.name, "int32")
        add = keep_span(store, tirx.BufferStore(store.buffer, tirx.BufferLoad(store.buffer, [v]) +
                                                tirx.BufferLoad(total, [v]), [v]))
        return seq([nest, reduce, keep_span(loops[kept], tirx.For(v, 0, extents[kept], tirx.ForKind.PARALLEL, add))])

    def post(node):
        if isinstance(node, tirx.For) and node.kind == tirx.ForKind.PARALLEL:
            return rewrite(node)
        if tile_op_name(node) == "finalize_reducer":  # combines per-thread copies: one copy here
            return tirx.Evaluate(0)
        return None

    body = tirx.stmt_functor.ir_transform(func.body, None, post, ["tirx.For", "tirx.Evaluate"])
    if body.same_as(func.body):
        return func
    return func.with_body(allocate_in_root(body, pending))


def LowerParallelReductionsTT():
    return prim_func_pass(_transform, PASS)
