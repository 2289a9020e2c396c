"""LowerParallelScansTT (after LowerParallelReductionsTT): a running sum kept per row by a serial loop over
the columns inside ``T.Parallel`` over the rows is a ``T.cumsum`` of its terms.

GPU kernels scan a block's rows with a thread per row walking the columns (TileOPs' tiled cumsum:
``for i in T.Parallel(bm): for j in T.serial(bn): acc[i] = acc[i] + x[i, j]; out[i, j] = acc[i]``). A
Tenstorrent core computes whole tiles, each element alike: the loop's accumulation
``acc[i] = acc[i] + term(i, j)`` has the prefix sums of its terms along j as the running values, so

- one nest over (i, j) stores the statements before the accumulation and the terms into a new
  float block ``<acc>_terms`` (the accumulator's dtype);
- ``T.reduce_sum`` of the terms along the columns gives each row's total (``<acc>_total``), and
  ``T.cumsum`` of them along the columns the prefix sums (``<acc>_prefix``);
- one nest over (i, j) stores the statements after the accumulation, each ``acc[i]`` read there being
  the running value ``acc[i] + <acc>_prefix[i, j]``;
- ``acc[i] = acc[i] + <acc>_total[i]`` leaves the accumulator as the loop did.

The sums are those of T.cumsum and T.reduce_sum (a float32 term at the precision docs/numerics.md gives
them), not a serial chain of roundings. Only this form is rewritten: a serial loop of constant extent from 0 directly inside a 1-D ``T.Parallel``
over the rows, holding stores only, one of them the accumulation (``+``, either operand order) into a
rank-1 on-chip vector indexed by the row; every other store into an on-chip block at ``[i, j]``, every
block the loop writes read at ``[i, j]`` only, the accumulator read by the stores after its
accumulation only. Anything else is left as it is, for C2 to refuse at the loop.
Reads/writes no attribute; the new blocks are allocated beside the kernel's.

    Before: for i in T.Parallel(32):
                for j in T.serial(128):
                    acc[i] = acc[i] + t[i, j]
                    out[i, j] = acc[i]
    After:  for i, j in T.Parallel(32, 128): acc_terms[i, j] = t[i, j]
            T.reduce(T.region(acc_terms[0, 0], 1, 32, 128), T.region(acc_total[0], 2, 32), "sum", 1, True)
            T.cumsum(T.region(acc_terms[0, 0], 1, 32, 128), T.region(acc_prefix[0, 0], 2, 32, 128), 1, False)
            for i, j in T.Parallel(32, 128): out[i, j] = acc[i] + acc_prefix[i, j]
            for i in T.Parallel(32): acc[i] = acc[i] + acc_total[i]
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import ir, tirx

from tilelang_tt.ir.common import (
    READ,
    WRITE,
    const_int,
    is_cb_buffer,
    keep_span,
    kernel_names,
    loads,
    make_region,
    prim_func_pass,
    seq,
    unique_name,
)

PASS = "LowerParallelScansTT"


def _scan(loop: tirx.For):
    """(i, the serial loop, the stores before the accumulation, the accumulation's vector and term, the
    stores after it) of the form the module's docstring describes; else None."""
    inner = loop.body
    if not isinstance(inner, tirx.For) or inner.kind != tirx.ForKind.SERIAL or const_int(inner.min) != 0 or const_int(inner.extent) is None \
            or const_int(loop.min) != 0 or const_int(loop.extent) is None:
        return None
    i, j = loop.loop_var, inner.loop_var
    body = list(inner.body.seq) if isinstance(inner.body, tirx.SeqStmt) else [inner.body]
    if not all(isinstance(s, tirx.BufferStore) and is_cb_buffer(s.buffer) for s in body):
        return None
    at = [k for k, s in enumerate(body) if len(s.indices) == 1 and s.indices[0].same_as(i)
          and isinstance(s.value, tirx.Add)]
    if len(at) != 1:
        return None
    acc = body[at[0]]

    def is_self(e):
        return isinstance(e, tirx.BufferLoad) and e.buffer.same_as(acc.buffer) and e.indices[0].same_as(i)

    term = acc.value.b if is_self(acc.value.a) else acc.value.a if is_self(acc.value.b) else None
    others = body[:at[0]] + body[at[0] + 1:]
    if term is None or str(acc.buffer.dtype) not in ("float32", "bfloat16", "float16"):
        return None
    if any(len(s.indices) != 2 or not (s.indices[0].same_as(i) and s.indices[1].same_as(j)) for s in others):
        return None
    written = [s.buffer for s in others]
    for k, s in enumerate(body):
        reads = loads(s.value)
        of_acc = [ld for ld in reads if ld.buffer.same_as(acc.buffer)]
        if (k < at[0] and of_acc) or (k == at[0] and len(of_acc) != 1) or \
                not all(ld.indices[0].same_as(i) for ld in of_acc):
            return None  # the accumulator read before its accumulation, or by its own term
        if any(any(ld.buffer.same_as(w) for w in written) and not (
                len(ld.indices) == 2 and ld.indices[0].same_as(i) and ld.indices[1].same_as(j)) for ld in reads):
            return None  # a block the loop writes, read at another column
    return i, inner, body[:at[0]], acc.buffer, term, body[at[0] + 1:]


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    names = kernel_names(func)
    pending: list[tirx.Buffer] = []

    def block(like: tirx.Buffer, suffix: str, shape) -> tirx.Buffer:
        name = unique_name(f"{like.name}_{suffix}", names)
        names.add(name)
        pending.append(tirx.decl_buffer(shape, like.dtype, name, scope="local.fragment"))
        return pending[-1]

    def nest(i, j, rows, cols, stmts, like):
        inner = keep_span(like, tirx.For(j, 0, cols, tirx.ForKind.PARALLEL, seq(stmts)))
        return keep_span(like, tirx.For(i, 0, rows, tirx.ForKind.PARALLEL, inner))

    def rewrite(loop: tirx.For):
        found = _scan(loop)
        if found is None:
            return None
        i, inner, before, acc, term, after = found
        rows, cols = const_int(loop.extent), const_int(inner.extent)
        j = inner.loop_var
        terms, prefix = block(acc, "terms", [rows, cols]), block(acc, "prefix", [rows, cols])
        total = block(acc, "total", [rows])
        value = term if term.dtype == acc.dtype else tirx.Cast(acc.dtype, term)
        first = nest(i, j, rows, cols, [*before, keep_span(inner, tirx.BufferStore(terms, value, [i, j]))], loop)
        whole = [[0, 0], [rows, cols]]
        reduce = keep_span(inner, tirx.Evaluate(tirx.Call("handle", ir.Op.get("tl.tileop.reduce"), [
            make_region(terms, *whole, READ), make_region(total, [0], [rows], WRITE), tirx.StringImm("sum"),
            tirx.IntImm("int32", 1), tirx.IntImm("bool", True)])))
        cumsum = keep_span(inner, tirx.Evaluate(tirx.Call("handle", ir.Op.get("tl.tileop.cumsum"), [
            make_region(terms, *whole, READ), make_region(prefix, *whole, WRITE), tirx.IntImm("int32", 1),
            tirx.IntImm("bool", False)])))
        running = tirx.BufferLoad(acc, [i]) + tirx.BufferLoad(prefix, [i, j])

        def read_running(node):
            if isinstance(node, tirx.BufferLoad) and node.buffer.same_as(acc):
                return running
            return None

        later = [keep_span(s, tirx.stmt_functor.ir_transform(s, None, read_running, ["tirx.BufferLoad"]))
                 for s in after]
        v = tirx.Var(i.name, i.dtype)
        carry = keep_span(loop, tirx.For(v, 0, rows, tirx.ForKind.PARALLEL, keep_span(inner, tirx.BufferStore(
            acc, tirx.BufferLoad(acc, [v]) + tirx.BufferLoad(total, [v]), [v]))))
        out = [first, reduce, cumsum]
        if later:
            i2, j2 = tirx.Var(i.name, i.dtype), tirx.Var(j.name, j.dtype)
            later = [tirx.stmt_functor.substitute(s, {i: i2, j: j2}) for s in later]
            out.append(nest(i2, j2, rows, cols, later, loop))
        return seq([*out, carry])

    def post(node):
        if isinstance(node, tirx.For) and node.kind == tirx.ForKind.PARALLEL:
            return rewrite(node)
        return None

    body = tirx.stmt_functor.ir_transform(func.body, None, post, ["tirx.For"])
    if not pending:
        return func

    def allocate(node):
        if isinstance(node, tirx.SBlock) and node.name_hint == "tilelang_root":
            return tirx.SBlock(node.iter_vars, node.reads, node.writes, node.name_hint, node.body, node.init,
                               list(node.alloc_buffers) + pending, node.match_buffers, node.annotations)
        return None

    return func.with_body(tirx.stmt_functor.ir_transform(body, None, allocate, ["tirx.SBlock"]))


def LowerParallelScansTT():
    return prim_func_pass(_transform, PASS)
