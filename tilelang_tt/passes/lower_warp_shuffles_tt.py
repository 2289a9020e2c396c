"""LowerWarpShufflesTT (front, after UniqueBufferNamesTT): a warp's xor butterfly is a warp reduction;
every other GPU instruction is refused at its statement.

A GPU warp combines its 32 lanes' values by exchanging registers: the butterfly
``for s in range(5): v = T.max(v, T.shfl_xor(v, 16 >> s))`` leaves in every lane the max over the
warp (lane ``l`` combines with ``l ^ 16``, then ``l ^ 8``, ..., ``l ^ 1``: after the step with mask
``m`` each lane holds the combination of the lanes that differ from it in the bits done so far). That
is recognised by its dataflow, not by a kernel: a serial loop of constant trip count whose only
statement is ``v[i] = f(v[i], T.shfl_xor(v[i], mask(s)))``, ``f`` ``+``, ``T.max`` or ``T.min`` (either
operand order), the shuffle's width the warp (32) and its masks, over the loop's iterations, each
power of two below the width once. It becomes ``r[0] = T.warp_reduce_<f>(v[i])`` into a new per-thread
value, which ThreadsToLanesTT makes a ``T.reduce`` across the warp's lanes; the statements after it
read ``r`` (see ``_Butterflies``). (A butterfly over part of a warp, a
shuffle of another value than the one combined, ``shfl_up`` / ``shfl_down`` prefix sums, votes,
ldmatrix and MMA fragments have no block form here.)

Reads/writes no attribute. Errors: each GPU instruction left (warp shuffles ``T.shfl_*``,
``tvm_warp_shuffle*``, votes, ``ldmatrix``, MMA fragments), at the first statement calling one, with
what to write instead. A kernel without them comes out unchanged.

    Before: for s in range(5):
                acc[0] = acc[0] + T.shfl_xor_sync(T.uint32(4294967295), acc[0], T.shift_right(16, s), 32)
            if lane == 0:
                y[row] = acc[0]
    After:  acc_sum[0] = T.warp_reduce_sum(acc[0])      # acc_sum: a new per-thread value of one element
            if lane == 0:
                y[row] = acc_sum[0]
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import arith, ir, tirx

from tilelang_tt.ir.common import (
    const_int,
    contains,
    error,
    keep_span,
    kernel_names,
    loads,
    prim_func_pass,
    stores,
    unique_name,
)
from tilelang_tt.ir.lanes import RANDOM, WARP, WARP_REDUCERS, call_name, gpu_instruction, same_indices

PASS = "LowerWarpShufflesTT"
SHFL_XOR = "tl.shfl_xor_sync"  # (member mask, value, lane mask, width): T.shfl_xor
REDUCER_OF = {kind: name for name, kind in WARP_REDUCERS.items()}
KINDS = {tirx.Add: "sum", tirx.Max: "max", tirx.Min: "min"}


def _butterfly(loop: tirx.For) -> tuple[tirx.BufferStore, tirx.Call] | None:
    """(the store, ``T.warp_reduce_<f>(v[i])``) of a warp's xor butterfly loop over ``v[i]``; else None."""
    store, trips = loop.body, const_int(loop.extent)
    if not isinstance(store, tirx.BufferStore) or trips is None or const_int(loop.min) is None or \
            type(store.value) not in KINDS:
        return None

    def is_self(e):
        return isinstance(e, tirx.BufferLoad) and e.buffer.same_as(store.buffer) and \
            same_indices(e.indices, store.indices)

    value = store.value
    shuffle = value.b if is_self(value.a) else value.a if is_self(value.b) else None
    if call_name(shuffle) != SHFL_XOR or not is_self(shuffle.args[1]) or const_int(shuffle.args[3]) != WARP:
        return None
    analyzer = arith.Analyzer()
    masks = [const_int(analyzer.simplify(tirx.stmt_functor.substitute(
        shuffle.args[2], {loop.loop_var: tirx.const(const_int(loop.min) + k, loop.loop_var.dtype)})))
        for k in range(trips)]
    if sorted(m for m in masks if m is not None) != [1 << k for k in range(WARP.bit_length() - 1)]:
        return None
    return store, tirx.Call(store.value.dtype, ir.Op.get(REDUCER_OF[KINDS[type(value)]]), [shuffle.args[1]])


class _Butterflies:
    """Each butterfly loop becomes ``r[0] = T.warp_reduce_<f>(v[i])`` into a new per-thread value ``r``
    (the warp's total, the same in each of its lanes) and ``v[i] = r[0]``; the statements after it in
    its sequence read ``r`` until one stores into ``v``, and the copy back into ``v`` goes when nothing
    else reads ``v``. (``r`` varies over fewer lanes than ``v``: a lane-0 store of it is one per warp.)"""

    def __init__(self, func: tirx.PrimFunc):
        self.names = kernel_names(func)
        self.made: dict = {}  # allocating buffer -> the totals it allocates too
        self.reductions: list = []  # (reduce store, copy back, v, r)

    def loop(self, loop: tirx.For):
        found = _butterfly(loop) if loop.kind == tirx.ForKind.SERIAL and loop.thread_binding is None else None
        if found is None:
            return None
        store, reduced = found
        name = unique_name(f"{store.buffer.name}_{call_name(reduced).split('_')[-1]}", self.names)
        self.names.add(name)
        total = tirx.decl_buffer([1], store.buffer.dtype, name, scope="local")
        self.made.setdefault(store.buffer, []).append(total)
        at = [tirx.IntImm("int32", 0)]
        reduce = keep_span(store, tirx.BufferStore(total, reduced, at))
        back = keep_span(store, tirx.BufferStore(store.buffer, tirx.BufferLoad(total, at), store.indices))
        self.reductions.append((reduce, back, store, total))
        return tirx.SeqStmt([reduce, back])

    def sequence(self, node: tirx.SeqStmt):
        flat = [x for s in node.seq for x in (s.seq if isinstance(s, tirx.SeqStmt) else [s])]
        out, renaming = [], None
        for s in flat:
            if renaming is not None:
                store, total = renaming
                if any(x.buffer.same_as(store.buffer) for x in stores(s)):
                    renaming = None
                else:
                    s = tirx.stmt_functor.ir_transform(s, None, lambda n, store=store, total=total: tirx.BufferLoad(
                        total, [tirx.IntImm("int32", 0)]) if isinstance(n, tirx.BufferLoad) and n.buffer.same_as(
                        store.buffer) and same_indices(n.indices, store.indices) else None, ["tirx.BufferLoad"])
            out.append(s)
            hit = next((r for r in self.reductions if r[1].same_as(s)), None)
            if hit is not None:
                renaming = (hit[2], hit[3])
        return tirx.SeqStmt(out)

    def finish(self, body) -> tirx.Stmt:
        """Drops the copies back nothing reads; allocates the totals beside their values."""
        readers = []  # the statements' parts that read: values, indices, conditions, loop bounds

        def visit(node):
            if isinstance(node, (tirx.BufferStore, tirx.Bind, tirx.Evaluate)) and \
                    not any(node.same_as(r[0]) for r in self.reductions):
                readers.append(node)
            elif isinstance(node, tirx.IfThenElse):
                readers.append(tirx.Evaluate(node.condition))
            elif isinstance(node, tirx.For):
                readers.extend([tirx.Evaluate(node.min), tirx.Evaluate(node.extent)])

        tirx.stmt_functor.post_order_visit(body, visit)
        kept = [back for _, back, store, _ in self.reductions  # read other than by its reductions
                if any(x.buffer.same_as(store.buffer) for r in readers for x in loads(r))]

        def post(node):
            if isinstance(node, tirx.BufferStore) and any(node.same_as(r[1]) for r in self.reductions) and \
                    not any(node.same_as(k) for k in kept):
                return tirx.Evaluate(0)
            if isinstance(node, tirx.SBlock) and any(b in self.made for b in node.alloc_buffers):
                extra = [t for b in node.alloc_buffers for t in self.made.get(b, [])]
                return tirx.SBlock(node.iter_vars, node.reads, node.writes, node.name_hint, node.body, node.init,
                                   list(node.alloc_buffers) + extra, node.match_buffers, node.annotations)
            return None

        return tirx.stmt_functor.ir_transform(body, None, post, ["tirx.BufferStore", "tirx.SBlock"])


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    if not contains(func.body, gpu_instruction):
        return func
    butterflies = _Butterflies(func)

    def post(node):
        if isinstance(node, tirx.For):
            return butterflies.loop(node)
        if isinstance(node, tirx.SeqStmt):
            return butterflies.sequence(node)
        return None

    body = tirx.stmt_functor.ir_transform(func.body, None, post, ["tirx.For", "tirx.SeqStmt"])
    body = butterflies.finish(body)
    leaves = []
    tirx.stmt_functor.post_order_visit(body, lambda n: leaves.append(n) if isinstance(
        n, (tirx.BufferStore, tirx.Evaluate, tirx.Bind)) and _calls_gpu_instruction(n) else None)
    if leaves:
        name, what = _calls_gpu_instruction(leaves[0])
        if what == RANDOM:
            raise error(PASS, func, leaves[0], f"`T.{name.split('.')[-1]}` is {what}: a GPU instruction with no "
                        "Tenstorrent form (a core computes whole tiles, with no thread ids to key a stream by)",
                        "draw the random numbers (or the mask they make) with torch on the host and pass them as an "
                        "input tensor: keep: T.Tensor((N,), 'uint8'), then y[idx] = T.if_then_else(keep[idx] != 0, "
                        "x[idx] * scale, 0)")
        raise error(PASS, func, leaves[0], f"`T.{name.split('.')[-1]}` is {what}: a GPU instruction with no "
                    "Tenstorrent form (a core computes whole tiles, it has no lanes that exchange registers)",
                    "write what the lanes compute together as block operations on an array with one element per "
                    "lane: T.reduce_max / T.reduce_sum over the lanes' dimension, T.cumsum for a prefix sum, "
                    "T.gemm for a product of fragments; a warp's xor butterfly all-reduce of one value, "
                    "for s in range(5): v = T.max(v, T.shfl_xor(v, 16 >> s)), compiles as it is")
    return func.with_body(body)


def _calls_gpu_instruction(stmt) -> tuple[str, str] | None:
    """(op name, what it is) of the first GPU instruction ``stmt`` calls, else None."""
    found = []
    tirx.stmt_functor.post_order_visit(stmt, lambda n: found.append(gpu_instruction(n)) if not found and
                                       gpu_instruction(n) else None)
    return found[0] if found else None


def LowerWarpShufflesTT():
    return prim_func_pass(_transform, PASS)
