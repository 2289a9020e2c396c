"""LegalizeGlobalAccessTT (first, before A1): element accesses of global tensors inside
``T.Parallel`` become the tile-level copies the pipeline works with.

TileLang kernels may index global tensors directly in a ``T.Parallel`` nest, the GPU way
(``C[by * bm + i, bx * bn + j] = A[by * bm + i, bx * bn + j] + 1``). Tenstorrent cores reach DRAM
only through the reader and writer kernels, so each such access is rewritten: every global slice
the nest reads is copied into a shared block before it (``T.copy(A[by * bm, bx * bn], A_s)``),
every global slice it writes is computed into a fragment and copied out after it. Which slice an
access touches is read from its index expressions (``ir/element_access.py``): each index ``base + v``
of one loop variable, or of none (a single index between them too: a head ``Q[b, t0 + t, h, d0 + d]``
of a (B, S, H, D) tensor is the slice [1, bm, 1, bd]), the indices after the last loop index 0 on
dimensions of extent 1 (the column of a (n, 1) tensor); a store of a one-loop nest may index them at
any value of no loop (per-row scales ``S[by * 32 + i, bx]``: a column vector block copied out to the
slice [32, 1], which the writer writes an element per row). A store names every loop variable; a load may
name one of a 2-D nest's (a per-row ``S[by * bm + i]`` or per-column ``B[bx * bn + j]`` vector, read
into a vector block) or both swapped (the block read transposed: compute's ``transpose_tile``); a
shifted read ``x[i, j + 64]`` is its own block. A nest whose stores all swap its loops is written in
their order (``Y[bx * 32 + j, by * 32 + i] = ..``: the nest over (j, i)); a nest of several loops
used only through one flat index ``(bx * t + i) * n + j`` becomes one loop over its elements, and so
does a nest that indexes rank-1 on-chip blocks at that flat index only (``y_reg[i * 8 + j]``); a
one-loop nest whose stores into matrices of rows of ``n`` take their rows and columns from a flat index
``Y[g // n, g % n]`` over a multiple of ``n`` elements is the nest over (rows, ``n`` columns), its blocks
whole rows (``Y[bx * 2 + r, c]``: 2 rows of a (64, 128) tensor). An
``if`` in the nest whose conditions the block coordinates' ranges and the values named before the nest
prove is dropped (``if m_start + i < m`` where the blocks tile ``m``; an ``else`` taken or not); a store
guarded on the first index, ``if i < valid: C[row + i, ..] = ..`` (the rows a block holds), is computed
for every row and copied out under ``tt.valid_rows`` = ``valid``: the writer writes the first ``valid``
rows; a store guarded on its last index by a constant, ``if j < N: Y[.., j] = ..`` over a nest of more columns
(rows padded past the tensor's), is computed for every column and its first ``N`` columns copied out. An
``if``/``else`` storing the same element in both branches stores the selected value. Other nests are left for the later passes, which refuse a global store in them at its line;
in a kernel that then writes no global tensor with T.copy (they could only name the kernel), this
pass refuses the first such store. The extents of a region that the values named before it make
constant become that constant (``Y[b, H0:H1]`` with ``H1 = H0 + 64``: 64).
Writes the ``tt.valid_rows`` AttrStmts. Every new statement carries the span of the ``T.Parallel`` nest.
A nest whose accesses are no blocks over its whole range but are over parts of it, where its
conditions and integer divisions are constant (rotary embedding's partner half ``T.if_then_else(j <
half, -x[i, j + half], x[i, j - half])``, ``cos[i, j % half]``), is the nest of each part
(``ir/partition.py``): ``j`` in [0, half) reads ``x[i, j + half]``, ``j`` in [half, n) is ``j' + half``
and reads ``x[i, j']``, each part with its own blocks.
A row of a tensor read per row of the nest (``A[0, k0 + i]``, A (1, K)), a (K, 1) column per column
(``B[k0 + j, 0]``), and a row read or written by a 1-D nest over vectors used per row (``s[i] = S[0, by
* 32 + i]``; ``ir.common.vector_kinds``) move as the row's (column's) block of the tensor's tiles, turned
on-chip (``ir/element_access.py`` ``Turn``). A batch index read from a tensor (a paged KV cache's page,
``K[block_table[b, p], t, h, d]``) is a slice start as in a T.copy: AssertTensorIndicesTT checks it.
A read at an index computed from its loop (``x[i, j ^ 1]``) reads a block at that index inside it, and, when
no other form applies, so does a shifted read partly outside its tensor or within a row (a pair's partners
``x[i, j + 1]`` / ``x[i, j - 1]`` read ``x[i, j]``'s block): LowerBlockGathersTT gathers them (ElementNest.gathered).
Errors: a global tensor read at an index read from a tensor at the nest's indices (a gather of rows,
``E[ids[i], j]``: not built); a slice partly outside its tensor (in every form and part); a nest storing into a global
tensor at no block in a kernel that copies no block out, or a store into one outside T.Parallel in
such a kernel (scalar code over rows). (CheckKernelFormsTT, just before, refuses what has no form at all.)

    Before: for i, j in T.Parallel(32, 32):
                C[by * 32 + i, bx * 32 + j] = A[by * 32 + i, bx * 32 + j] + T.float32(1)
    After:  T.copy(T.region(A[by * 32, bx * 32], 1, 32, 32), T.region(A_s[0, 0], 2, 32, 32))
            for i, j in T.Parallel(32, 32):
                C_l[i, j] = A_s[i, j] + T.float32(1)
            T.copy(T.region(C_l[0, 0], 1, 32, 32), T.region(C[by * 32, bx * 32], 2, 32, 32))

    Before: for i in T.Parallel(32):
                Mean[bx * 32 + i] = mean[i]
    After:  for i in T.Parallel(32):
                Mean_l[i] = mean[i]
            T.copy(T.region(Mean_l[0], 1, 32), T.region(Mean[bx * 32], 2, 32))

    Before: for i, j in T.Parallel(32, 32):
                Y[bx * 32 + j, by * 32 + i] = X[by * 32 + i, bx * 32 + j]
    After:  T.copy(T.region(X[by * 32, bx * 32], 1, 32, 32), T.region(X_s[0, 0], 2, 32, 32))
            for j, i in T.Parallel(32, 32):
                Y_l[j, i] = X_s[i, j]
            T.copy(T.region(Y_l[0, 0], 1, 32, 32), T.region(Y[bx * 32, by * 32], 2, 32, 32))

    Before: for i, j in T.Parallel(32, 32):                      # R: (1, 64)
                C[by * 32 + i, j] = A[by * 32 + i, j] * R[0, by * 32 + i]
    After:  T.copy(A[by * 32, 0:32] -> A_s); T.copy(R[0, by * 32:by * 32 + 32] -> R_s)   # R_s: (1, 32)
            T.copy(R_s, R_v)                                      # the row vector of R_s's tiles
            for k in T.Parallel(32):
                R_t[k] = R_v[k]                                   # its tiles transposed: a column
            for i, j in T.Parallel(32, 32):
                C_l[i, j] = A_s[i, j] * R_t[i]
            T.copy(C_l, C[by * 32, 0])
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import ir, tirx

from tilelang_tt.ir.attrs import Scope
from tilelang_tt.ir.common import (
    READ,
    WRITE,
    const_int,
    contains,
    error,
    is_global_buffer,
    keep_span,
    kernel_names,
    make_region,
    parallel_nest,
    prim_func_pass,
    rebuild_nest,
    seq,
    tile_op_name,
    uses_var,
    vector_kinds,
)
from tilelang_tt.ir.element_access import (
    ElementNest,
    Facts,
    flattened,
    gather,
    guard_bound,
    per_row,
    split_rows,
    statements,
    store_order,
)
from tilelang_tt.ir.partition import partitioned
from tilelang_tt.ir.slices import global_copy

PASS = "LegalizeGlobalAccessTT"


def _copy(src, dst, like) -> tirx.Stmt:
    return keep_span(like, tirx.Evaluate(tirx.Call("handle", ir.Op.get("tl.tileop.copy"), [src, dst])))


def _legalize(func, loop: tirx.For, names: set[str], allocated: list[tirx.Buffer], facts: Facts) -> tirx.Stmt | None:
    """The nest at ``loop`` with its global accesses made block copies, as written, with its loops
    reordered to its stores' order, or flattened (ir/element_access.py); else the nests of the parts
    of one of those forms (ir/partition.py: as written first, then over whole rows, then flat); None
    when none applies."""
    loops, body = parallel_nest(loop)
    _refuse_gathers(func, loops, body)
    forms: list[tuple] = []
    taken = set(names)
    found = _forms(func, loop, loops, body, names, allocated, facts, forms, refuse=False)
    if found is None and not contains(body, lambda n: isinstance(n, (tirx.BufferLoad, tirx.BufferStore))
                                      and is_global_buffer(n.buffer)):
        return None  # on-chip blocks only: their reads at computed indices are LowerBlockGathersTT's, not parts
    for form_loops, form_body in ([] if found is not None else [forms[0], *forms[:0:-1]]):  # as written, rows, flat
        names.intersection_update(taken)  # the blocks of the forms that did not apply were not made
        parts = partitioned(form_loops, form_body, facts.analyzer)
        if parts is not None:
            nests = [_legalize_nest(func, loop, *part, names, allocated, facts, complete=True) for part in parts]
            if None not in nests:
                return seq(nests)
    if found is None:  # reads at computed indices inside blocks (pairs, rotations), gathered on-chip
        names.intersection_update(taken)
        found = _forms(func, loop, loops, body, names, allocated, facts, [], refuse=False, gather=True)
    if found is None:  # the refusal of a slice partly outside its tensor, where it was met
        names.intersection_update(taken)
        found = _forms(func, loop, loops, body, names, allocated, facts, [], refuse=True)
    return found


def _forms(func, loop, loops, body, names, allocated, facts, forms: list, refuse: bool,
           gather: bool = False) -> tirx.Stmt | None:
    """:func:`_legalize` of the nest as written, flattened, or over whole rows, the first that
    applies; ``forms`` gets each (loops, body) tried; ``refuse``: a slice partly outside its tensor
    is refused (else that form does not apply); ``gather``: reads at computed indices are reads of blocks
    (ElementNest.gathered)."""
    taken = set(names)
    forms.append((loops, body))
    found = _legalize_nest(func, loop, loops, body, names, allocated, facts, refuse=refuse, gather=gather)
    flat = flattened(loops, body, facts) if found is None else None
    if flat is not None:
        names.intersection_update(taken)  # the blocks of a form that did not apply were not made
        forms.append(flat)
        found = _legalize_nest(func, loop, *flat, names, allocated, facts, complete=True, refuse=refuse, gather=gather)
    rows = split_rows(*(flat or (loops, body))) if found is None else None
    if rows is not None:
        names.intersection_update(taken)
        forms.append(rows)
        found = _legalize_nest(func, loop, *rows, names, allocated, facts, complete=True, refuse=refuse, gather=gather)
    return found


def _legalize_nest(func, loop, loops, body, names, allocated, facts, complete=False, refuse=True,
                   gather=False) -> tirx.Stmt | None:
    """:func:`_legalize` of the nest ``loops`` around ``body``; ``complete``: None unless every global
    access becomes a block access (a flattened nest: what is left would be reported in the flat loop
    the user did not write); ``refuse``: a slice partly outside its tensor is refused, else None;
    ``gather``: reads at computed indices are reads of blocks."""
    nest = ElementNest(loops, names, facts, per_row=len(loops) == 1 and per_row(body, facts.kinds), gather=gather)
    named = {}
    items = statements(body, named, facts)
    stores = [s for s, _ in items if isinstance(s, tirx.BufferStore)]
    orders = {store_order(nest, s, named) for s in stores if is_global_buffer(s.buffer)}
    if len(orders) == 1 and None not in orders and all(is_global_buffer(s.buffer) for s in stores):
        order = orders.pop()  # every store swaps the loops: the nest in the stores' order
        if order != tuple(range(len(loops))):
            loops = [loops[k] for k in order]
            nest = ElementNest(loops, names, facts, gather=gather)
    named, stmts = {}, []
    limits = {}  # tensor -> (the rows its guarded store writes, the guard)
    clips = {}  # tensor -> the columns its store guarded on the column writes (a constant)
    for s, guard in items:
        if isinstance(s, tirx.Bind):  # substituted into the stores below
            named[s.var] = tirx.stmt_functor.substitute(s.value, named)
            continue
        if not isinstance(s, tirx.BufferStore):
            return None
        if guard is not None:  # computed for every row, the writer writes the valid ones
            bound = guard_bound(guard[0], loops, facts) if is_global_buffer(s.buffer) else None
            columns = _column_bound(guard[0], loops, s, facts) if bound is None and is_global_buffer(s.buffer) \
                else None
            if columns is not None:  # the block's first columns copied out: the writer writes those tiles
                clips[s.buffer] = columns
            elif bound is None:
                return None
            elif not facts.prove(bound >= loops[0].extent):  # a guard always true needs no limit
                limits[s.buffer] = (bound, guard[1])
        value = nest.rewrite_expr(tirx.stmt_functor.substitute(s.value, named))
        target, indices = s.buffer, [tirx.stmt_functor.substitute(e, named) for e in s.indices]
        if nest.outside:
            if not refuse:
                return None
            _refuse_outside(func, s, *nest.outside[0])
        if is_global_buffer(s.buffer):
            found = nest.access(s.buffer, [tirx.stmt_functor.substitute(e, named) for e in s.indices], "write")
            if found is None:
                return None
            target, indices = found
        stmts.append(keep_span(s, tirx.BufferStore(target, value, indices)))
    if (not nest.order and not complete) or (complete and any(contains(s, lambda n: isinstance(
            n, tirx.BufferLoad) and is_global_buffer(n.buffer)) for s in stmts)):
        return None
    new_body = rebuild_nest(loops, seq(stmts))
    before, after = [], []
    for block, buf, bases, extents, role in nest.order:
        allocated.append(block)
        tensor = make_region(buf, bases, extents, READ if role == "read" else WRITE)
        shape = [int(d) for d in block.shape]
        zeros = [tirx.IntImm("int32", 0)] * len(shape)
        if role == "read":
            before.append(_copy(tensor, make_region(block, zeros, shape, WRITE), loop))
        else:
            if buf in clips:  # the block computes every column, the first ones are copied out
                extents = [*extents[:-1], clips[buf]]
                tensor = make_region(buf, bases, extents, WRITE)
                copy = _copy(make_region(block, zeros, [*shape[:-1], clips[buf]], READ), tensor, loop)
            elif buf in limits:  # the block computes every row, the writer writes the valid ones
                valid, guard = limits[buf]
                copy = _copy(make_region(block, zeros, shape, READ), tensor, guard)
                copy = keep_span(guard, tirx.AttrStmt(buf.data, Scope.VALID_ROWS.value, valid, copy))
            else:
                copy = _copy(make_region(block, zeros, shape, READ), tensor, loop)
            after.append(copy)
    turned = []  # a vector moved along the other dimension than it lies in the tensor: the tensor's tiles, turned
    for turn in nest.turns:
        allocated.extend(b for b in (turn.vector, turn.used) if b is not None)
        (before if turn.role == "read" else turned).extend(turn.statements(loop))
    return seq(before + [new_body] + turned + after)


def _column_bound(cond, loops: list[tirx.For], store: tirx.BufferStore, facts: Facts) -> int | None:
    """The columns a store guarded on its nest's last index writes: ``j < N`` (``base + j < limit``, ``<=``) with
    ``base`` and ``limit`` constant and the store's last index ``j`` itself, a constant ``N`` inside the nest's
    extent (TileOPs' rows padded to 256 elements and stored up to their length); None for any other guard."""
    j = loops[-1].loop_var
    if len(loops) < 2 or not store.indices or not store.indices[-1].same_as(j):
        return None
    if isinstance(cond, (tirx.GT, tirx.GE)):  # bound > x is x < bound
        cond = (tirx.LT if isinstance(cond, tirx.GT) else tirx.LE)(cond.b, cond.a)
    if not isinstance(cond, (tirx.LT, tirx.LE)) or not uses_var(cond.a, j):
        return None
    bound = const_int(facts.analyzer.simplify(cond.b - (cond.a - j) + (1 if isinstance(cond, tirx.LE) else 0)))
    extent = const_int(loops[-1].extent)
    return bound if bound is not None and extent is not None and 0 < bound < extent else None


def _refuse_gathers(func, loops: list[tirx.For], body: tirx.Stmt) -> None:
    """Refuses the first statement of the nest that gathers rows (ir/element_access.py ``gather``):
    which row each element of its block reads is known only on device, and the reader moves blocks of
    a tensor, not rows picked one by one."""
    found = gather(loops, body)
    if found is None:
        return
    stmt, load, table = found
    raise error(PASS, func, stmt, f"`{load}` reads the rows of `{load.buffer.name}` at indices read from the tensor "
                f"`{table.name}` (a gather): which row each element of the block reads is known only on the device, "
                "and the reader moves blocks of a tensor, not rows picked one by one (not built yet)",
                f"gather the rows before the kernel (torch.index_select, or {load.buffer.name}[{table.name}] in torch) "
                "and pass the gathered tensor, indexed by the nest's loops")


def _refuse_outside(func, stmt, buf: tirx.Buffer, bases, extents) -> None:
    """Refuses ``stmt``, whose access of ``buf`` reads the slice (``bases``, ``extents``) that may
    lie partly outside ``buf`` (ElementNest.inside)."""
    where = ", ".join(f"{b}:{b} + {e}" if e != 1 else str(b) for b, e in zip(bases, extents))
    raise error(PASS, func, stmt, f"the slice {buf.name}[{where}] that this statement reads element-wise may "
                f"lie partly outside `{buf.name}` (shape {list(buf.shape)}): its block would read or write memory "
                "past the tensor",
                "a partner chosen by a condition on the index that changes at a few points (T.if_then_else(j < half, "
                "x[.., j + half], x[.., j - half])) is read part by part; one that changes every few elements (a "
                "pair T.if_then_else(j % 2 == 0, x[.., j + 1], x[.., j - 1]), j ^ 1) permutes the block's columns: "
                "compute it as T.gemm(x_s, P_s, p_l) with a permutation matrix P passed as a tensor (P[k, j] = 1, or "
                "-1 for a negated partner, where column j takes column k), then use p_l[i, j] in the nest")


def _refuse_global_stores(func: tirx.PrimFunc, body: tirx.Stmt) -> None:
    """Refuses the first store into a global tensor left in ``body`` (the kernel after the pass) when
    ``body`` writes no global tensor with T.copy: no block would be written, and the later passes could
    only name the kernel. A store in a T.Parallel nest is one whose accesses are no blocks of its loops;
    one outside any nest is scalar code (KernelBench's one program per row, serial sweeps over it).
    Otherwise the later passes refuse such a store at its line (LowerTTTileIntrinsics: not an
    element-wise access of an on-chip block, a scalar store), after the errors of the other statements."""
    def copies_out(n):  # a T.copy into a global tensor, of constant extents or not
        if tile_op_name(n) != "copy":
            return False
        dst = n.value.args[1]
        load = dst.args[0] if isinstance(dst, tirx.Call) and dst.op.same_as(ir.Op.get("tl.region")) else dst
        return isinstance(load, tirx.BufferLoad) and is_global_buffer(load.buffer)

    if contains(body, copies_out):
        return
    stores, nested = [], []  # the stores into global tensors in program order; those in a T.Parallel nest

    def visit(n):
        if isinstance(n, tirx.BufferStore) and is_global_buffer(n.buffer):
            stores.append(n)
        elif isinstance(n, tirx.For) and n.kind == tirx.ForKind.PARALLEL:
            tirx.stmt_functor.post_order_visit(n.body, lambda m: nested.append(m) if isinstance(
                m, tirx.BufferStore) else None)

    tirx.stmt_functor.post_order_visit(body, visit)
    if not stores:
        return
    store = stores[0]
    access = f"`{store.buffer.name}[{', '.join(str(x) for x in store.indices)}]`"
    if not any(store.same_as(m) for m in nested):
        raise error(PASS, func, store, f"{access}: a scalar store into the global tensor `{store.buffer.name}` outside "
                    "T.Parallel, and the kernel writes no global buffer with T.copy: a Tenstorrent core computes "
                    "whole tiles of a block and its writer copies them out",
                    "compute a block of rows in T.Parallel nests and tile ops (T.reduce_max, T.reduce_sum, "
                    "T.cumsum) into a T.alloc_fragment and T.copy it out: for i, j in T.Parallel(32, n): "
                    "Y_l[i, j] = ...; then T.copy(Y_l, Y[bx * 32, 0])")
    raise error(PASS, func, store, f"{access}: a T.Parallel nest stores into the global tensor `{store.buffer.name}` "
                "and its global accesses are not blocks of its loops: each index is `base + v` of one loop variable "
                "(every loop once, in any order), or all are one flat index of the loops into a tensor of rank 1; the "
                "nest holds values, stores and guards `if base + i < bound` on its first index",
                "compute the block into a T.alloc_fragment indexed by the loop variables and T.copy it to the "
                "tensor's slice: for i, j in T.Parallel(bm, bn): Y_l[i, j] = ...; then T.copy(Y_l, Y[by * bm, bx * bn])")


def _static_extents(stmt: tirx.Evaluate, facts: Facts) -> tirx.Evaluate:
    """``stmt`` with each extent of its regions that the values named before it make a constant
    replaced by that constant: ``T.copy(y, Y[b, H0:H1])`` with ``H1 = H0 + 64`` has the extent
    ``H1 - H0``, which is 64."""
    def post(node):
        if isinstance(node.op, ir.Op) and node.op.name == "tl.region" and any(
                const_int(e) is None for e in node.args[2:]):
            extents = [facts.constant(e) for e in node.args[2:]]
            if all(e is not None for e in extents):
                return tirx.Call(node.dtype, node.op, list(node.args[:2]) + [tirx.IntImm("int32", e) for e in extents])
        return None

    new = tirx.stmt_functor.ir_transform(stmt, None, post, ["tirx.Call"])
    return stmt if new.same_as(stmt) else keep_span(stmt, new)


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    names = kernel_names(func)
    pending: list[tirx.Buffer] = []

    facts = Facts(vector_kinds(func))  # the ranges of the block coordinates and loops around a nest, the values named

    def visit(stmt):
        if isinstance(stmt, tirx.For) and stmt.kind == tirx.ForKind.PARALLEL:
            return _legalize(func, stmt, names, pending, facts) or stmt
        if isinstance(stmt, tirx.Evaluate):
            stmt = _static_extents(stmt, facts)
            return global_copy(stmt, names, pending) or stmt
        if isinstance(stmt, tirx.Bind) and str(stmt.var.dtype).startswith("int"):  # m_start = by * bm
            facts.name(stmt.var, stmt.value)
            return stmt
        if isinstance(stmt, tirx.SeqStmt):
            return seq([visit(s) for s in stmt.seq])
        if isinstance(stmt, tirx.For):
            facts.analyzer.bind(stmt.loop_var, ir.Range.from_min_extent(stmt.min, stmt.extent))
            return keep_span(stmt, tirx.For(stmt.loop_var, stmt.min, stmt.extent, stmt.kind, visit(stmt.body),
                                            stmt.thread_binding, stmt.annotations))
        if isinstance(stmt, tirx.AttrStmt):
            if stmt.attr_key == "thread_extent":
                facts.analyzer.bind(stmt.node.var, ir.Range(0, stmt.value))
            return keep_span(stmt, tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value, visit(stmt.body)))
        if isinstance(stmt, tirx.IfThenElse):  # a branch around tile work: the nests of its cases too
            return keep_span(stmt, tirx.IfThenElse(stmt.condition, visit(stmt.then_case),
                                                   None if stmt.else_case is None else visit(stmt.else_case)))
        if isinstance(stmt, tirx.SBlockRealize):
            blk = stmt.block
            first = len(pending)
            body = visit(blk.body)
            allocs = list(blk.alloc_buffers)
            if len(pending) > first:  # the innermost block around the nest: the kernel's own
                allocs += pending[first:]
                del pending[first:]
            new_blk = tirx.SBlock(blk.iter_vars, blk.reads, blk.writes, blk.name_hint, body, blk.init, allocs,
                                  blk.match_buffers, blk.annotations)
            return keep_span(stmt, tirx.SBlockRealize(stmt.iter_values, stmt.predicate, new_blk))
        return stmt

    body = visit(func.body)
    _refuse_global_stores(func, body)
    return func if body.same_as(func.body) else func.with_body(body)


def LegalizeGlobalAccessTT():
    return prim_func_pass(_transform, PASS)
