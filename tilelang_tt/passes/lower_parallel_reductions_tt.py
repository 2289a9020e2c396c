"""LowerParallelReductionsTT (after LegalizeGlobalAccessTT): a ``T.Parallel`` nest that accumulates
into vectors indexed by one of its two loops reduces along the other.

GPU kernels sum a block's rows into a per-row vector with every thread adding its element
(``sums[r] += w[r, c] * x[c]`` over ``T.Parallel(bm, bn)``, into a ``T.alloc_reducer`` that
``T.finalize_reducer`` combines across threads; KernelBench's cosine similarity keeps three such
vectors in one nest, ``dot[i] += p * t; norm_p[i] += p * p; ...``). An accumulation into a buffer
indexed by a subset of the nest's loops is a reduction over the others. A Tenstorrent core computes
whole tiles: each accumulation's terms become an element-wise block (one nest storing every
accumulation's terms and the nest's other stores, in their order), ``T.reduce_<kind>`` of it along the
missing loop, and the combine of that vector into the accumulator: ``+`` for ``v[i] = v[i] + t``,
``T.max`` / ``T.min`` for ``v[i] = T.max(v[i], t)`` / ``T.min``. The accumulator's value before the
nest (a T.clear, a value of earlier steps, or none written) is combined as the GPU's threads do.
Scalars the nest names (``val = T.Cast(...)``) are substituted into the values. A nest is
left as it is (later passes refuse what they cannot compute) when an accumulator is read anywhere but
its own accumulation, or a statement of the body is no store.
``T.finalize_reducer`` has nothing to combine and goes. Reads/writes no attribute; the new blocks
(``<v>_terms``, ``<v>_<kind>``) are allocated beside the kernel's.

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

from dataclasses import dataclass

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
    loads,
    make_region,
    parallel_nest,
    prim_func_pass,
    seq,
    tile_op_name,
    unique_name,
)

PASS = "LowerParallelReductionsTT"

# the combining node of an accumulation -> the T.reduce kind that folds its terms
KINDS = {tirx.Add: "sum", tirx.Max: "max", tirx.Min: "min"}


@dataclass(frozen=True)
class _Accumulation:
    store: tirx.BufferStore  # v[i] = v[i] op term
    kind: str  # "sum", "max", "min"
    term: tirx.PrimExpr
    kept: int  # the nest loop indexing v


def _accumulation(store: tirx.BufferStore, loop_vars) -> _Accumulation | None:
    """``store`` as ``v[i] = v[i] op term`` (op +, max, min, either operand order) of an on-chip vector
    indexed by exactly one loop variable of the 2-D nest; else None."""
    if is_global_buffer(store.buffer) or len(store.indices) != 1 or not isinstance(store.indices[0], tirx.Var):
        return None
    kept = next((k for k, v in enumerate(loop_vars) if store.indices[0].same_as(v)), None)
    kind = KINDS.get(type(store.value))
    if kept is None or kind is None:
        return None

    def is_self(e):
        return isinstance(e, tirx.BufferLoad) and e.buffer.same_as(store.buffer) and len(e.indices) == 1 and \
            e.indices[0].same_as(store.indices[0])

    value = store.value
    term = value.b if is_self(value.a) else value.a if is_self(value.b) else None
    return None if term is None else _Accumulation(store, kind, term, kept)


def _body_stores(body: tirx.Stmt) -> list[tirx.BufferStore] | None:
    """The stores of a nest body of stores and named scalars (``val = T.Cast(...)``, ``tirx.Bind``), each
    named scalar substituted by its expression; None for any other statement."""
    bindings: dict = {}
    out = []
    for s in list(body.seq) if isinstance(body, tirx.SeqStmt) else [body]:
        if isinstance(s, tirx.Bind):
            bindings[s.var] = tirx.stmt_functor.substitute(s.value, bindings)
        elif isinstance(s, tirx.BufferStore):
            out.append(keep_span(s, tirx.stmt_functor.substitute(s, bindings)) if bindings else s)
        else:
            return None
    return out


def _accumulations(loop: tirx.For):
    """(loops, the body's stores, their accumulations by position) of a 2-D T.Parallel nest of constant
    extents holding at least one accumulation whose vector nothing else in the nest reads or writes;
    else None."""
    loops, body = parallel_nest(loop)
    if len(loops) != 2 or any(const_int(lp.extent) is None for lp in loops):
        return None
    body_stores = _body_stores(body)
    if body_stores is None:
        return None
    loop_vars = [lp.loop_var for lp in loops]
    found = {k: a for k, s in enumerate(body_stores) if (a := _accumulation(s, loop_vars)) is not None}
    if not found:
        return None
    vectors = [a.store.buffer for a in found.values()]

    def touches(expr_or_store) -> bool:
        reads = loads(expr_or_store)
        return any(ld.buffer.same_as(v) for ld in reads for v in vectors)

    for k, s in enumerate(body_stores):
        if k in found:
            if touches(found[k].term):
                return None
        elif touches(s.value) or any(s.buffer.same_as(v) for v in vectors):
            return None
    return loops, body_stores, found


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    names = kernel_names(func)
    pending: list[tirx.Buffer] = []

    def block(like: tirx.Buffer, suffix: str, shape) -> tirx.Buffer:
        name = unique_name(f"{like.name}_{suffix}", names)
        names.add(name)
        pending.append(tirx.decl_buffer(shape, like.dtype, name, scope="local.fragment"))
        return pending[-1]

    def rewrite(loop: tirx.For):
        found = _accumulations(loop)
        if found is None:
            return None
        loops, body_stores, accumulations = found
        extents = [int(lp.extent) for lp in loops]
        vi, vj = (lp.loop_var for lp in loops)
        body, after = [], []
        for k, s in enumerate(body_stores):
            acc = accumulations.get(k)
            if acc is None:
                body.append(s)
                continue
            vector, term, kept = acc.store.buffer, acc.term, acc.kept
            terms = block(vector, "terms", extents)
            total = block(vector, acc.kind, [extents[kept]])
            body.append(keep_span(s, tirx.BufferStore(terms, tirx.Cast(vector.dtype, term)
                                                      if term.dtype != vector.dtype else term, [vi, vj])))
            after.append(keep_span(s, tirx.Evaluate(tirx.Call("handle", ir.Op.get("tl.tileop.reduce"), [
                make_region(terms, [0, 0], extents, READ), make_region(total, [0], [extents[kept]], WRITE),
                tirx.StringImm(acc.kind), tirx.IntImm("int32", 1 - kept), tirx.IntImm("bool", True)]))))
            v = tirx.Var(loops[kept].loop_var.name, "int32")
            old, part = tirx.BufferLoad(vector, [v]), tirx.BufferLoad(total, [v])
            combine = old + part if acc.kind == "sum" else tirx.Max(old, part) if acc.kind == "max" else \
                tirx.Min(old, part)
            after.append(keep_span(loops[kept], tirx.For(v, 0, extents[kept], tirx.ForKind.PARALLEL,
                                                         keep_span(s, tirx.BufferStore(vector, combine, [v])))))
        nest = seq(body)
        for lp in reversed(loops):
            nest = keep_span(lp, tirx.For(lp.loop_var, lp.min, lp.extent, tirx.ForKind.PARALLEL, nest))
        return seq([nest, *after])

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
