"""Thread-level code read as lanes: which variables are thread indices, their extents, the
per-thread arrays (``T.alloc_local``, ``T.alloc_var``) and the lanes each one's values depend on.

ThreadsToLanesTT asks it before it rewrites the statements. A lane is a thread index of extent
above 1; a per-thread array ``varies`` over the lanes its stored values, indices and conditions
use (directly or through other per-thread arrays, to a fixed point; ``if s == 0:`` fixes ``s``
rather than making a value depend on it); the result of ``tvm_thread_allreduce`` over a lane, or of
``T.warp_reduce_*`` over the warp's lane (``threadIdx.x`` of extent 32), does not vary over it, nor
does a sum that is only read to be summed across a lane (:func:`absorb_lane_sums`). ``Lanes`` also
makes each per-thread array's lane array (a dimension per lane it varies over) and indexes accesses
into it (``rewrite_private``). The rewrites that prepare thread code for this analysis are
:mod:`tilelang_tt.ir.lane_forms`; the GPU instructions and warp reductions it knows are also read by
LowerWarpShufflesTT and InlineScalarVarsTT.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import tilelang  # noqa: F401
from tvm import ir, tirx

from tilelang_tt.ir.common import const_int, float_constant, keep_span, loads, uses_var

PRIVATE_SCOPES = ("local", "local.var")
ALLREDUCE = "tirx.tvm_thread_allreduce"
# T.warp_reduce_* (tilelang/language/reduce_op.py): a value reduced over the 32 lanes of a warp
# (CUDA's warp size), consecutive threadIdx.x values
WARP_REDUCERS = {"tl.warp_reduce_sum": "sum", "tl.warp_reduce_max": "max", "tl.warp_reduce_min": "min"}
WARP = 32
# GPU instructions with no block form (the op's name after its namespace: tl.shfl_xor_sync,
# tirx.tvm_warp_shuffle, tirx.ptx_mma...), and what they are
# TileLang's T.rng_init / T.rng_rand / T.rng_rand_float (tilelang/language/random.py): cuRAND device calls
RANDOM = "cuRAND's random stream of each thread (T.rng_init keys it by block and thread)"
GPU_INSTRUCTIONS = {
    "a warp shuffle (lanes exchanging registers)": (
        "shfl_sync", "shfl_xor_sync", "shfl_up_sync", "shfl_down_sync", "tvm_warp_shuffle", "tvm_warp_shuffle_up",
        "tvm_warp_shuffle_down"),
    "a warp vote (lanes' conditions combined)": (
        "ballot", "ballot_sync", "activemask", "any_sync", "all_sync", "match_any_sync", "match_all_sync",
        "tvm_warp_activemask"),
    "ldmatrix (a warp loading MMA fragments)": ("ptx_ldmatrix", "ptx_ldmatrix_x", "ptx_stmatrix"),
    "an MMA instruction on register fragments": (
        "ptx_mma", "ptx_mma_sp", "ptx_wgmma_ss", "ptx_wgmma_rs", "mma_store", "mma_fill", "tvm_mma_sync",
        "tvm_bmma_sync", "tvm_load_matrix_sync", "tvm_store_matrix_sync", "tvm_fill_fragment"),
    RANDOM: ("rng_init", "rng_rand", "rng_rand_float"),
}


def call_name(node) -> str | None:
    if isinstance(node, tirx.Call) and isinstance(node.op, ir.Op):
        return node.op.name
    return None


def gpu_instruction(node) -> tuple[str, str] | None:
    """(op name, what it is) when ``node`` calls a GPU instruction of ``GPU_INSTRUCTIONS``, else None."""
    name = call_name(node)
    what = next((w for w, ops in GPU_INSTRUCTIONS.items() if name.split(".")[-1] in ops), None) if name else None
    return (name, what) if what is not None else None


def exchanges_lanes(expr) -> bool:
    """Whether ``expr`` combines values of several threads: a GPU instruction, a warp reduction, a
    thread all-reduce (its value is no value of one block)."""
    found = []
    tirx.stmt_functor.post_order_visit(expr, lambda n: found.append(n) if gpu_instruction(n) or call_name(n) in (
        *WARP_REDUCERS, ALLREDUCE) else None)
    return bool(found)


@dataclass
class Lanes:
    """The thread indices of a kernel (in binding order), their extents, the per-thread arrays and
    the lanes each array's values depend on."""

    func: tirx.PrimFunc
    extents: dict = field(default_factory=dict)  # lane Var -> int
    order: list = field(default_factory=list)  # lane Vars, in binding order
    private: list = field(default_factory=list)  # per-thread Buffers
    varying: dict = field(default_factory=dict)  # Buffer -> set of lane Vars
    made: dict = field(default_factory=dict)  # per-thread Buffer -> its lane array
    extra: list = field(default_factory=list)  # per-thread Buffers this pass adds (reduced values)
    dropped: list = field(default_factory=list)  # staging registers forwarded to their readers
    absorbed: dict = field(default_factory=dict)  # per-thread sum -> the lanes it is summed across
    merged: dict = field(default_factory=dict)  # lane -> the lane it and a serial loop became
    x: tirx.Var | None = None  # the lane consecutive threads run along: threadIdx.x, its low part once split
    warp: tirx.Var | None = None  # the lane T.warp_reduce_* reduces over: ``x`` of extent WARP

    def is_private(self, buf) -> bool:
        return any(buf.same_as(b) for b in self.private)

    def lanes_of(self, node) -> set:
        """The lanes ``node`` depends on: the thread indices it uses, the lanes of the per-thread
        arrays it reads."""
        out = {v for v in self.order if uses_var(node, v)}

        def visit(n):
            if isinstance(n, tirx.BufferLoad) and self.is_private(n.buffer):
                out.update(self.varying.get(n.buffer, set()))

        tirx.stmt_functor.post_order_visit(node, visit)
        return out

    def sorted(self, lanes) -> list:
        return [v for v in self.order if v in lanes]

    def lane_array(self, buf: tirx.Buffer) -> tirx.Buffer:
        """The array of ``buf`` with a dimension per lane its values depend on, unit dims dropped."""
        if buf not in self.made:
            lanes = self.sorted(self.varying.get(buf, set()))
            shape = [self.extents[v] for v in lanes] + [d for d in buf.shape if const_int(d) != 1]
            scope = "local" if lanes and buf.scope() == "local.var" else buf.scope()  # a T.alloc_var per lane
            self.made[buf] = tirx.decl_buffer(shape or [1], buf.dtype, buf.name, scope=scope, span=buf.span)
        return self.made[buf]

    def lane_indices(self, buf: tirx.Buffer, indices, at: dict) -> list:
        lanes = self.sorted(self.varying.get(buf, set()))
        kept = [i for i, d in zip(indices, buf.shape) if const_int(d) != 1]
        out = [at[v] for v in lanes] + [tirx.stmt_functor.substitute(i, at) for i in kept]
        return out or [tirx.IntImm("int32", 0)]

    def rewrite_private(self, node, at: dict):
        """``node`` with every per-thread access indexed by the lanes ``at`` gives."""

        def post(n):
            if isinstance(n, tirx.BufferLoad) and self.is_private(n.buffer) and \
                    self.varying.get(n.buffer) is not None:
                return tirx.BufferLoad(self.lane_array(n.buffer), self.lane_indices(n.buffer, n.indices, at))
            if isinstance(n, tirx.BufferStore) and self.is_private(n.buffer) and \
                    self.varying.get(n.buffer) is not None:
                return keep_span(n, tirx.BufferStore(self.lane_array(n.buffer), n.value,
                                                     self.lane_indices(n.buffer, n.indices, at)))
            return None

        node = tirx.stmt_functor.ir_transform(node, None, post, ["tirx.BufferLoad", "tirx.BufferStore"]) \
            if isinstance(node, tirx.Stmt) else node
        return tirx.stmt_functor.substitute(node, at)

    def fixed_lanes(self, guards) -> tuple[dict, list]:
        """The lanes a guard ``lane == uniform`` fixes, and the other conditions."""
        fixed, rest = {}, []
        for guard in guards:
            terms, todo = [], [guard]
            while todo:
                g = todo.pop()
                if isinstance(g, tirx.And):
                    todo += [g.b, g.a]
                else:
                    terms.append(g)
            for g in terms:
                if isinstance(g, tirx.EQ) and isinstance(g.a, tirx.Var) and g.a in self.extents and \
                        not self.involved(g.b) and g.a not in fixed:
                    fixed[g.a] = g.b
                else:
                    rest.append(g)
        return fixed, [tirx.stmt_functor.substitute(g, fixed) for g in rest]


    def touches_private(self, node) -> bool:
        """Whether ``node`` reads or writes a per-thread array that varies over lanes."""
        found = []
        tirx.stmt_functor.post_order_visit(node, lambda n: found.append(n) if isinstance(
            n, (tirx.BufferLoad, tirx.BufferStore)) and self.is_private(n.buffer) and
            self.varying.get(n.buffer) else None)
        return bool(found)

    def involved(self, node) -> bool:
        """Whether ``node`` depends on a lane: uses one, or a per-thread array varying over one."""
        return bool(self.lanes_of(node)) or self.touches_private(node)


def thread_bindings(body) -> list[tuple[tirx.Var, int, object]]:
    """(var, thread dimension, the root block's tl.launch_threads or None) of each thread index."""
    found, launch = [], []

    def visit(node):
        if isinstance(node, tirx.Bind) and call_name(node.value) == "tl.launch_thread_idx":
            found.append((node.var, int(node.value.args[0])))
        elif isinstance(node, tirx.For) and node.thread_binding is not None and \
                str(node.thread_binding.thread_tag).startswith("threadIdx."):
            found.append((node.loop_var, -1 - "xyz".index(str(node.thread_binding.thread_tag)[-1]), node.extent))
        elif isinstance(node, tirx.SBlock) and "tl.launch_threads" in node.annotations:
            launch.append([int(x) for x in node.annotations["tl.launch_threads"]])

    tirx.stmt_functor.post_order_visit(body, visit)
    threads = launch[0] if launch else None
    return [(b[0], b[1], b[2] if len(b) > 2 else threads) for b in found]


def inferred_extent(body, var: tirx.Var) -> int | None:
    """The extent of an on-chip buffer dimension indexed by ``var`` alone (the thread count a kernel
    without ``threads=`` implies)."""
    found = []

    def visit(node):
        if isinstance(node, (tirx.BufferLoad, tirx.BufferStore)) and node.buffer.scope() != "global":
            for index, dim in zip(node.indices, node.buffer.shape):
                if isinstance(index, tirx.Var) and index.same_as(var) and const_int(dim) is not None:
                    found.append(const_int(dim))

    tirx.stmt_functor.post_order_visit(body, visit)
    return max(found) if found else None


def loads_of(expr, buf) -> list:
    """The loads of ``buf`` in ``expr``, in post order."""
    return [x for x in loads(expr) if x.buffer.same_as(buf)]


def same_indices(a, b) -> bool:
    return len(a) == len(b) and all(tirx.analysis.expr_deep_equal(x, y) for x, y in zip(a, b))


def varying(body, lanes: Lanes) -> None:
    """The lanes each per-thread array's values depend on, to a fixed point."""
    while True:
        before = {b: set(v) for b, v in lanes.varying.items()}
        _varying_once(body, lanes, ())
        if before == lanes.varying:
            return


def _varying_once(stmt, lanes: Lanes, conditions) -> None:
    if isinstance(stmt, tirx.SeqStmt):
        for s in stmt.seq:
            _varying_once(s, lanes, conditions)
    elif isinstance(stmt, (tirx.SBlock,)):
        _varying_once(stmt.body, lanes, conditions)
    elif isinstance(stmt, tirx.SBlockRealize):
        _varying_once(stmt.block, lanes, conditions)
    elif isinstance(stmt, (tirx.For, tirx.AttrStmt)):
        if isinstance(stmt, tirx.AttrStmt) and stmt.attr_key == "reduce_scope" and \
                isinstance(stmt.body, tirx.Evaluate) and call_name(stmt.body.value) == ALLREDUCE:
            call = stmt.body.value
            src, dst = call.args[1], call.args[3]
            if isinstance(src, tirx.BufferLoad) and isinstance(dst, tirx.BufferLoad) and lanes.is_private(dst.buffer):
                got = lanes.lanes_of(src) - {v for v in call.args[4:] if isinstance(v, tirx.Var)}
                lanes.varying.setdefault(dst.buffer, set()).update(got)
            return
        _varying_once(stmt.body, lanes, conditions)
    elif isinstance(stmt, tirx.IfThenElse):
        more = conditions + (stmt.condition,)
        _varying_once(stmt.then_case, lanes, more)
        if stmt.else_case is not None:
            _varying_once(stmt.else_case, lanes, more)
    elif isinstance(stmt, tirx.BufferStore) and lanes.is_private(stmt.buffer):
        got = lanes.varying.setdefault(stmt.buffer, set())
        reduced = {lanes.warp} if call_name(stmt.value) in WARP_REDUCERS else set()
        reduced |= lanes.absorbed.get(stmt.buffer, set())
        got.update(lanes.lanes_of(stmt.value) - reduced)
        for index in stmt.indices:
            got.update(lanes.lanes_of(index))
        for cond in conditions:
            if not (isinstance(cond, tirx.EQ) and isinstance(cond.a, tirx.Var) and cond.a in lanes.extents):
                got.update(lanes.lanes_of(cond))


def accumulated_term(store: tirx.BufferStore):
    """``term`` of ``v[i] = v[i] + term`` (or ``term + v[i]``), ``term`` not reading ``v``; else None."""
    value = store.value
    if not isinstance(value, tirx.Add):
        return None

    def is_self(e):
        return isinstance(e, tirx.BufferLoad) and e.buffer.same_as(store.buffer) and \
            same_indices(e.indices, store.indices)

    term = value.b if is_self(value.a) else value.a if is_self(value.b) else None
    return None if term is None or loads_of(term, store.buffer) else term


def absorb_lane_sums(body, lanes: Lanes) -> None:
    """A per-thread scalar that starts at 0 (``T.clear``), is only summed into and is read only to be
    summed across a lane (``tvm_thread_allreduce`` with ``+``, ``T.atomic_add`` into an element that
    lane does not index) holds, once summed, the sum over that lane of every term: it need not vary
    over the lane, each accumulation sums over it too (``lanes.absorbed``)."""
    uses: dict = {}

    def note(buf, over):
        uses.setdefault(buf, []).append(set(over))

    def visit(node):
        if isinstance(node, tirx.AttrStmt) and node.attr_key == "reduce_scope" and \
                isinstance(node.body, tirx.Evaluate) and call_name(node.body.value) == ALLREDUCE:
            call = node.body.value
            ok = isinstance(node.node, tirx.CommReducer) and isinstance(node.node.result[0], tirx.Add)
            if isinstance(call.args[1], tirx.BufferLoad):
                note(call.args[1].buffer, call.args[4:] if ok else [])
        elif isinstance(node, tirx.Evaluate) and call_name(node.value) == "tl.atomic_add_elem_op":
            ptr, value = node.value.args[0], node.value.args[1]
            target = ptr.args[0] if isinstance(ptr, tirx.Call) and ptr.args else ptr
            if isinstance(value, tirx.BufferLoad):
                note(value.buffer, [v for v in lanes.order if not uses_var(target, v)])

    tirx.stmt_functor.post_order_visit(body, visit)
    for buf, sets in uses.items():
        if not lanes.is_private(buf) or any(const_int(d) != 1 for d in buf.shape):
            continue
        over = set.intersection(*sets)
        stores = []
        tirx.stmt_functor.post_order_visit(body, lambda n: stores.append(n) if isinstance(
            n, tirx.BufferStore) and n.buffer.same_as(buf) else None)
        reads = loads_of(body, buf)
        summed = [s for s in stores if accumulated_term(s) is not None]
        clears = _clears(body, buf)
        if over and clears and len(summed) == len(stores) and len(reads) == len(stores) + len(sets) + clears:
            lanes.absorbed[buf] = over


def _clears(body, buf) -> int:
    """How many tile ops fill ``buf`` with 0 (``T.clear``); 0 when another tile op touches it."""
    ops = []

    def visit(node):
        if isinstance(node, tirx.Evaluate) and isinstance(node.value, tirx.Call) and \
                call_name(node.value) and call_name(node.value).startswith("tl.tileop."):
            if any(isinstance(a, tirx.Call) and a.args and isinstance(a.args[0], tirx.BufferLoad) and
                   a.args[0].buffer.same_as(buf) for a in node.value.args):
                ops.append(node.value)

    tirx.stmt_functor.post_order_visit(body, visit)
    return len(ops) if all(call_name(op) == "tl.tileop.fill" and float_constant(op.args[1]) == 0 for op in ops) else 0


def fissionable(statements) -> bool:
    """Whether each statement of a loop body may run over all iterations before the next: a buffer
    one writes is read by a later one only at the element it stored, never by an earlier one."""
    for i, s in enumerate(statements):
        for j, t in enumerate(statements):
            if i == j:
                continue
            loads = loads_of(t.value, s.buffer) + ([t] if t.buffer.same_as(s.buffer) else [])
            if loads and (j < i or any(not same_indices(x.indices, s.indices) for x in loads)):
                return False
    return True
