"""ThreadsToLanesTT (front, after InlineScalarVarsTT): thread-level code is block code over the lanes.

A GPU kernel written per thread (``t = T.get_thread_binding()``, ``T.thread_binding`` loops) runs
one program per thread; the threads are the lanes of a data-parallel loop. A Tenstorrent core runs
one program per block, so each statement that depends on a thread index becomes a ``T.Parallel``
nest over the lanes it depends on, which the element-wise, reduction and copy lowerings take:

* a thread index is a ``T.Parallel`` variable over the thread extent (``tl.launch_threads``; without
  one, the extent of the on-chip dimension it indexes);
* a per-thread array (``T.alloc_local``, ``T.alloc_var``) gets one dimension per lane its stored
  values depend on (from the IR: the thread indices and per-thread arrays each store reads, and
  the conditions around it), its unit dimensions dropped: ``dot[0]`` over 128 lanes is ``dot[t]``
  of a ``(128,)`` array, which LocalBlocksTT makes a fragment; a store whose value depends on no
  lane of its target is done once (every thread wrote the same value);
* a serial loop inside the thread code whose statement stores one element per iteration, or sums
  into an element the loop does not index (``dot[t] += x[e] * w[t, e]``), is one more dimension of
  the nest (LowerParallelReductionsTT makes the sum a ``T.reduce_sum``); any other serial loop runs
  around the lanes (each statement runs for every lane before the next: a barrier between
  statements, which a race-free GPU kernel does not notice);
* staging registers (a per-thread array filled by one loop and read after it: a vector load) are
  their values where they are read; a sum read only to be summed across a lane (allreduce, atomic
  add) sums over that lane where it accumulates, and a lane and a serial loop that index as one run
  (``s * 8 + e``) are one lane (``tilelang_tt.ir.lane_forms``);
* a condition on the lanes guards each statement inside; ``if s == 0:`` fixes lane ``s`` to 0;
* ``T.tvm_thread_allreduce`` (sum, max, min over one lane), ``T.warp_reduce_sum/max/min`` (over
  the warp's lane: ``threadIdx.x`` of extent 32, or its ``% 32`` part when it has more, a lane of its
  own once split) and ``T.atomic_add`` of per-thread
  values into an element indexed by fewer lanes are ``T.reduce`` over that lane's dimension;
  barriers (``T.sync_threads``, ``T.tvm_storage_sync``) go (statements are already ordered);
  LowerWarpShufflesTT, before, made a warp's xor butterfly a ``T.warp_reduce_*`` and refused the
  other GPU instructions.

Reads/writes no attribute; the per-thread arrays are replaced in the root block's allocations. A
kernel that uses no thread index comes out unchanged.

    Before: t: T.int32 = T.launch_thread_idx(0)              # T.Kernel(2, threads=128)
            dot = T.sblock_alloc_buffer((1,), scope="local")
            T.fill(T.region(dot[0], 2, 1), 0)
            for e in range(128):
                dot[0] = dot[0] + T.Cast("float32", w[t, e])
            c[bx * 128 + t] = T.Cast("bfloat16", dot[0])
    After:  dot = T.sblock_alloc_buffer((128,), scope="local")
            T.fill(T.region(dot[0], 2, 128), 0)
            for t in T.parallel(128):
                for e in T.parallel(128):
                    dot[t] = dot[t] + T.Cast("float32", w[t, e])
            for t in T.parallel(128):
                c[bx * 128 + t] = T.Cast("bfloat16", dot[t])
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import ir, tirx

from tilelang_tt.ir.common import (
    READ,
    WRITE,
    as_region,
    const_int,
    error,
    first_stmt_using,
    keep_span,
    kernel_names,
    make_region,
    prim_func_pass,
    seq,
    tile_op_name,
    unique_name,
    uses_var,
)
from tilelang_tt.ir.lane_forms import (
    allocated,
    drop_single_lane_guards,
    forward_staged_registers,
    inline_lane_binds,
    merge_lane_loops,
    reallocate,
    split_flat_lanes,
)
from tilelang_tt.ir.lanes import (
    ALLREDUCE,
    PRIVATE_SCOPES,
    WARP,
    WARP_REDUCERS,
    Lanes,
    absorb_lane_sums,
    accumulated_term,
    call_name,
    fissionable,
    inferred_extent,
    loads_of,
    same_indices,
    thread_bindings,
    varying,
)
from tilelang_tt.ir.slices import block_grid_loops

PASS = "ThreadsToLanesTT"
BARRIERS = ("tirx.tvm_storage_sync", "tl.sync_threads", "tirx.tvm_thread_fence")
ATOMIC_ADD = "tl.atomic_add_elem_op"
REDUCERS = {tirx.Add: "sum", tirx.Max: "max", tirx.Min: "min"}
LANE_RANK = "thread-level arrays are blocks of at most two dimensions"
THREAD = "is a thread index (T.get_thread_binding, T.thread_binding): thread-level code"


def _leaves(stmt) -> list:
    return [x for s in stmt.seq for x in _leaves(s)] if isinstance(stmt, tirx.SeqStmt) else [stmt]


class _Lowering:
    def __init__(self, func: tirx.PrimFunc, lanes: Lanes):
        self.func, self.lanes = func, lanes
        self.names = kernel_names(func)

    # ---- statements
    def lower(self, stmt, guards: tuple, folded: tuple = ()) -> tirx.Stmt:
        if isinstance(stmt, tirx.SeqStmt):
            return seq([self.lower(s, guards, folded) for s in stmt.seq])
        if isinstance(stmt, tirx.SBlock):
            return tirx.SBlock(stmt.iter_vars, stmt.reads, stmt.writes, stmt.name_hint,
                               self.lower(stmt.body, guards, folded), stmt.init, stmt.alloc_buffers,
                               stmt.match_buffers, stmt.annotations)
        if isinstance(stmt, tirx.SBlockRealize):
            return tirx.SBlockRealize(stmt.iter_values, stmt.predicate, self.lower(stmt.block, guards, folded))
        if isinstance(stmt, tirx.For):
            return self.loop(stmt, guards, folded)
        if isinstance(stmt, tirx.IfThenElse):
            return self.branch(stmt, guards, folded)
        if isinstance(stmt, tirx.BufferStore) and call_name(stmt.value) in WARP_REDUCERS:
            return self.warp_reduce(stmt, guards, folded)
        if isinstance(stmt, tirx.BufferStore):
            return self.nest(stmt, guards, folded)
        if isinstance(stmt, tirx.AttrStmt) and stmt.attr_key == "reduce_scope":
            return self.allreduce(stmt, guards)
        if isinstance(stmt, tirx.Evaluate):
            return self.evaluate(stmt, guards, folded)
        if isinstance(stmt, tirx.Bind) and not self.lanes.lanes_of(stmt):
            return stmt
        if self.lanes.lanes_of(stmt) or self.lanes.touches_private(stmt):
            raise self.refuse(stmt, "this statement")
        return stmt

    def refuse(self, stmt, what: str):
        used = self.lanes.sorted(self.lanes.lanes_of(stmt))
        name = used[0].name if used else "a per-thread array"
        return error(PASS, self.func, stmt,
                     f"`{name}` {THREAD} in {what}: its lanes differ there, which a block cannot express",
                     "write the lanes' work as block operations: a T.Parallel over the lanes, "
                     "T.reduce_* across them, serial loops of the same extent in every lane")

    def loop(self, loop: tirx.For, guards, folded) -> tirx.Stmt:
        if loop.thread_binding is not None and str(loop.thread_binding.thread_tag).startswith("threadIdx."):
            return self.lower(loop.body, guards, folded)
        if self.lanes.lanes_of(loop.min) or self.lanes.lanes_of(loop.extent):
            raise self.refuse(loop, f"the extent of the loop over `{loop.loop_var.name}`")
        if not self.lanes.involved(loop.body):
            return loop
        statements = _leaves(loop.body)
        if loop.kind != tirx.ForKind.PARALLEL and const_int(loop.extent) is not None and \
                all(self.foldable(s, loop.loop_var, folded) for s in statements) and fissionable(statements):
            return seq([self.lower(s, guards, folded + (loop,)) for s in statements])
        body = self.lower(loop.body, guards, folded)
        return keep_span(loop, tirx.For(loop.loop_var, loop.min, loop.extent, loop.kind, body, loop.thread_binding,
                                        loop.annotations))

    def foldable(self, stmt, var: tirx.Var, folded) -> bool:
        """Whether the loop over ``var`` around ``stmt`` is a dimension of its lane nest: one
        element stored per iteration, or a sum into an element ``var`` does not index of an array
        over one lane (a 2-D nest, the sum LowerParallelReductionsTT makes a T.reduce_sum)."""
        if not isinstance(stmt, tirx.BufferStore):
            return False
        if any(isinstance(i, tirx.Var) and i.same_as(var) for i in stmt.indices):
            return all(same_indices(load.indices, stmt.indices) for load in loads_of(stmt.value, stmt.buffer)) and \
                not any(uses_var(i, var) and not (isinstance(i, tirx.Var) and i.same_as(var)) for i in stmt.indices)
        term = accumulated_term(stmt)
        return term is not None and uses_var(term, var) and not any(uses_var(i, var) for i in stmt.indices) and \
            (self.lanes.is_private(stmt.buffer) or stmt.buffer.scope() != "global") and self.lanes.involved(stmt) and \
            len(self.lanes.lanes_of(stmt) | self.lanes.varying.get(stmt.buffer, set())) + len(folded) < 2

    def branch(self, branch: tirx.IfThenElse, guards, folded) -> tirx.Stmt:
        if const_int(branch.condition) == 1:  # always taken (simplified with the lanes' ranges)
            return self.lower(branch.then_case, guards, folded)
        if not self.lanes.involved(branch.condition):
            then = self.lower(branch.then_case, guards, folded)
            other = self.lower(branch.else_case, guards, folded) if branch.else_case is not None else None
            return keep_span(branch, tirx.IfThenElse(branch.condition, then, other))
        then = self.lower(branch.then_case, guards + (branch.condition,), folded)
        if branch.else_case is None:
            return then
        return seq([then, self.lower(branch.else_case, guards + (tirx.Not(branch.condition),), folded)])

    def nest(self, stmt: tirx.BufferStore, guards, folded) -> tirx.Stmt:
        """``stmt`` (under ``guards``, in the folded loops) as a T.Parallel nest over its lanes."""
        fixed, rest = self.lanes.fixed_lanes(guards)
        stmt = tirx.stmt_functor.substitute(stmt, fixed) if fixed else stmt
        lanes = self.lanes.lanes_of(stmt)
        for g in rest:
            lanes |= self.lanes.lanes_of(g)
        if self.lanes.is_private(stmt.buffer):
            lanes |= self.lanes.varying.get(stmt.buffer, set())
        lanes = self.lanes.sorted(lanes)
        at = {v: tirx.Var(v.name, v.dtype) for v in lanes}
        loops = [(at[v], 0, self.lanes.extents[v], stmt) for v in lanes]
        for lp in folded:
            if const_int(lp.extent) == 1:  # one iteration: its index is the loop's start
                at[lp.loop_var] = lp.min
                continue
            var = tirx.Var(lp.loop_var.name, lp.loop_var.dtype)
            at[lp.loop_var] = var + lp.min if const_int(lp.min) != 0 else var
            loops.append((var, 0, lp.extent, lp))
        body = self.lanes.rewrite_private(stmt, at)
        if rest:
            cond = rest[0]
            for g in rest[1:]:
                cond = tirx.And(cond, g)
            body = keep_span(stmt, tirx.IfThenElse(self.lanes.rewrite_private(cond, at), body, None))
        for var, lo, extent, like in reversed(loops):
            body = keep_span(like, tirx.For(var, lo, extent, tirx.ForKind.PARALLEL, body))
        return body

    def evaluate(self, stmt: tirx.Evaluate, guards, folded) -> tirx.Stmt:
        name = call_name(stmt.value)
        if name in BARRIERS:
            return tirx.Evaluate(0)
        if name == ATOMIC_ADD:
            return self.atomic_add(stmt, guards, folded)
        if tile_op_name(stmt) is not None and not folded and not guards:
            return self.tile_op(stmt)
        if self.lanes.involved(stmt):
            raise self.refuse(stmt, "this statement")
        return stmt

    def tile_op(self, stmt: tirx.Evaluate) -> tirx.Stmt:
        """A tile op on whole per-thread arrays: on their lane arrays."""
        args = []
        for arg in stmt.value.args:
            region = as_region(arg)
            if region is not None and self.lanes.is_private(region.buffer) and \
                    self.lanes.varying.get(region.buffer) is not None:
                if any(const_int(s) != 0 for s in region.starts) or \
                        list(region.extents) != [const_int(d) for d in region.buffer.shape]:
                    raise self.refuse(stmt, f"a tile op on part of the per-thread array `{region.buffer.name}`")
                new = self.lanes.lane_array(region.buffer)
                args.append(make_region(new, [0] * len(new.shape), [int(d) for d in new.shape], int(arg.args[1])))
            else:
                if self.lanes.lanes_of(arg):
                    raise self.refuse(stmt, "a tile op")
                args.append(arg)
        return keep_span(stmt, tirx.Evaluate(tirx.Call(stmt.value.dtype, stmt.value.op, args)))

    def reduced(self, stmt, src: tirx.Buffer, over: list, kind: str) -> tirx.Buffer:
        """A per-thread scalar holding ``kind`` of ``src`` over the lanes ``over``."""
        name = unique_name(f"{src.name}_{kind}", self.names)
        self.names.add(name)
        out = tirx.decl_buffer([1], src.dtype, name, scope="local")
        self.lanes.private.append(out)
        self.lanes.extra.append(out)
        self.lanes.varying[out] = self.lanes.varying[src] - set(over)
        return out

    def reduce_call(self, stmt, src: tirx.Buffer, dst: tirx.Buffer, lane: tirx.Var, kind: str) -> tirx.Stmt:
        if [const_int(d) for d in src.shape if const_int(d) != 1] or \
                [const_int(d) for d in dst.shape if const_int(d) != 1]:
            raise self.refuse(stmt, "a reduction of per-thread arrays of more than one element")
        dim = self.lanes.sorted(self.lanes.varying[src]).index(lane)
        a, b = self.lanes.lane_array(src), self.lanes.lane_array(dst)
        return keep_span(stmt, tirx.Evaluate(tirx.Call("handle", ir.Op.get("tl.tileop.reduce"), [
            make_region(a, [0] * len(a.shape), [int(d) for d in a.shape], READ),
            make_region(b, [0] * len(b.shape), [int(d) for d in b.shape], WRITE),
            tirx.StringImm(kind), tirx.IntImm("int32", dim), tirx.IntImm("bool", True)])))

    def allreduce(self, attr: tirx.AttrStmt, guards) -> tirx.Stmt:
        """``tvm_thread_allreduce(1, src[0], True, dst[0], lane)`` under a comm_reducer: T.reduce of
        ``src``'s lane array along ``lane`` into ``dst``'s."""
        call = attr.body.value if isinstance(attr.body, tirx.Evaluate) else None
        kind = REDUCERS.get(type(attr.node.result[0])) if isinstance(attr.node, tirx.CommReducer) else None
        if call_name(call) != ALLREDUCE or kind is None or guards:
            raise self.refuse(attr.body, "a thread all-reduce that is not a sum, max or min of one value")
        src, dst, over = call.args[1], call.args[3], list(call.args[4:])
        for k, v in enumerate(over):
            while v in self.lanes.merged:  # the lane it was merged into, with a loop or more
                v = self.lanes.merged[v]
            over[k] = v
        if isinstance(src, tirx.BufferLoad) and len(over) == 1 and kind == "sum" and \
                over[0] in self.lanes.absorbed.get(src.buffer, set()):  # summed across the lane already
            return self.nest(keep_span(attr.body, tirx.BufferStore(dst.buffer, src, dst.indices)), guards, ())
        if not (isinstance(src, tirx.BufferLoad) and isinstance(dst, tirx.BufferLoad) and
                self.lanes.is_private(src.buffer) and self.lanes.is_private(dst.buffer)) or len(over) != 1 or \
                over[0] not in self.lanes.varying.get(src.buffer, set()):
            raise self.refuse(attr.body, "a thread all-reduce of other than one per-thread value over one lane")
        return self.reduce_call(attr.body, src.buffer, dst.buffer, over[0], kind)

    def warp_reduce(self, stmt: tirx.BufferStore, guards, folded) -> tirx.Stmt:
        """``dst = T.warp_reduce_sum(src[0])``: T.reduce of ``src``'s lane array along the warp's lane
        into a new value, stored into ``dst`` for each of its lanes."""
        kind = WARP_REDUCERS[call_name(stmt.value)]
        src = stmt.value.args[0]
        warp = self.lanes.warp
        if warp is None or folded or not (isinstance(src, tirx.BufferLoad) and self.lanes.is_private(src.buffer)) \
                or warp not in self.lanes.varying.get(src.buffer, set()):
            raise self.refuse(stmt, f"a warp reduction (T.warp_reduce_{kind}) of other than a per-thread value over "
                                    f"the {WARP} lanes of threadIdx.x")
        total = self.reduced(stmt, src.buffer, [warp], kind)
        store = keep_span(stmt, tirx.BufferStore(stmt.buffer, tirx.BufferLoad(total, [tirx.IntImm("int32", 0)]),
                                                 stmt.indices))
        return seq([self.reduce_call(stmt, src.buffer, total, warp, kind), self.nest(store, guards, folded)])

    def atomic_add(self, stmt: tirx.Evaluate, guards, folded) -> tirx.Stmt:
        """``T.atomic_add(dst[idx], value)``: the lanes ``value`` depends on and ``idx`` does not are
        summed first (T.reduce), then each element adds its sum."""
        ptr, value = stmt.value.args[0], stmt.value.args[1]
        target = ptr.args[0] if call_name(ptr) == "tirx.tvm_access_ptr" or call_name(ptr) == "tl.access_ptr" \
            else ptr
        if not isinstance(target, tirx.BufferLoad):
            raise self.refuse(stmt, "an atomic add")
        fixed, _ = self.lanes.fixed_lanes(guards)
        over = self.lanes.sorted(self.lanes.lanes_of(tirx.stmt_functor.substitute(value, fixed)) -
                                 self.lanes.lanes_of(tirx.stmt_functor.substitute(target, fixed)))
        pre = []
        if over:
            if not (isinstance(value, tirx.BufferLoad) and self.lanes.is_private(value.buffer)) or len(over) != 1:
                raise self.refuse(stmt, "an atomic add of other than one per-thread value summed over one lane")
            total = self.reduced(stmt, value.buffer, over, "sum")
            pre.append(self.reduce_call(stmt, value.buffer, total, over[0], "sum"))
            value = tirx.BufferLoad(total, [tirx.IntImm("int32", 0)])
        store = keep_span(stmt, tirx.BufferStore(target.buffer, target + value, target.indices))
        return seq(pre + [self.nest(store, guards, folded)])


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    bindings = thread_bindings(func.body)
    used = [(var, dim, threads) for var, dim, threads in bindings if uses_var(func.body, var)]
    if not used:
        return func
    lanes = Lanes(func)
    ones = {}
    for var, dim, threads in used:
        if dim < 0:  # a T.thread_binding loop: its own extent
            extent = const_int(threads)
        elif threads is not None:
            extent = threads[dim]
        else:
            extent = inferred_extent(func.body, var)
        if extent is None:
            users = []
            tirx.stmt_functor.post_order_visit(func.body, lambda n, v=var: users.append(n) if isinstance(
                n, (tirx.BufferStore, tirx.Evaluate)) and uses_var(n, v) else None)
            raise error(PASS, func, users[0] if users else None, f"`{var.name}` {THREAD} with no thread count: the "
                        "lanes' extent is unknown",
                        "give the kernel its thread count: T.Kernel(..., threads=128)")
        if extent == 1:
            ones[var] = tirx.IntImm(var.dtype, 0)
            continue
        lanes.extents[var] = extent
        lanes.order.append(var)
        if dim in (0, -1):
            lanes.x = var
    body = tirx.stmt_functor.substitute(func.body, ones) if ones else func.body
    if not lanes.order:
        return func.with_body(body)
    lanes.private = [b for b in allocated(body) if b.scope() in PRIVATE_SCOPES]
    body = inline_lane_binds(body, lanes)
    body = split_flat_lanes(body, lanes, block_grid_loops(func))
    if lanes.x is not None and lanes.extents.get(lanes.x) == WARP:  # consecutive threads: a warp's lanes
        lanes.warp = lanes.x
    body = forward_staged_registers(body, lanes)
    body = drop_single_lane_guards(body, lanes)
    absorb_lane_sums(body, lanes)
    body = merge_lane_loops(body, lanes, block_grid_loops(func))
    varying(body, lanes)
    _check_lane_ranks(func, body, lanes)
    lowering = _Lowering(func, lanes)
    body = lowering.lower(body, ())
    body = reallocate(body, lanes)
    return func.with_body(body)


def _check_lane_ranks(func, body, lanes: Lanes) -> None:
    """A lane array is a block: at most two dimensions (its lanes and its own non-unit ones)."""
    for buf in lanes.private:
        over = lanes.sorted(lanes.varying.get(buf, set()))
        own = [int(d) for d in buf.shape if const_int(d) != 1]
        if len(over) + len(own) > 2:
            names = ", ".join(f"`{v.name}`" for v in over)
            raise error(PASS, func, first_stmt_using(body, buf) or buf,
                        f"the per-thread array `{buf.name}` {own} varies over the thread indices {names}: with one "
                        f"element per lane it is a block of rank {len(over) + len(own)}, and {LANE_RANK}",
                        "keep per-thread values scalars where the threads have two indices (read the tensor where "
                        "the value is used: partial[0] += x[k] * W[row, k]), or use one thread index")


def ThreadsToLanesTT():
    return prim_func_pass(_transform, PASS)
