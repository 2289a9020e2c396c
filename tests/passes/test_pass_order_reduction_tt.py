"""OrderReductionTT alone: in a kernel whose blocks sum into a tensor (``tt.reduction`` with a
semaphore), the reader waits before each read of the summed tensor in a block that is not the first
of its group (``b % S != 0``) until its core's semaphore counts every such block of the core so far;
the writer, after a block that is not the last of its group, makes its writes visible and increments
the semaphore of the core running block ``b + 1`` (its own, or the next core's for its last block).
Compute, and kernels without summing blocks, are unchanged."""

import pytest
import tilelang  # noqa: F401
import tvm
from tvm import arith, tirx
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import gemm, lower_until, run_pass, split_k_gemm
from tests.passes.helpers import assert_body, attr_launch, ev, launch, nodes, param, seq, tl, tt, tt_attrs
from tilelang_tt.contract.vocabulary import ArgKind
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.ir.intrin import Intrin, call_intrin
from tilelang_tt.options import CompileOptions
from tilelang_tt.passes.order_reduction_tt import OrderReductionTT

PASS = "OrderReductionTT"
I32, U32 = "int32", "uint32"
ROLES = ("main_reader", "main_compute", "main_writer")


def test_registered_under_its_name():
    assert OrderReductionTT().info.name == PASS


def _split_k(split):
    """64 x 64 x 128 in 32 x 32 x 32 blocks: 4 regions of `split` blocks, one block per core."""
    return split_k_gemm(64, 64, 128, 32, 32, 32, split)


def _arg(func, kind, what=""):
    (var,) = [a.var for a in Attr.RUNTIME_ARGS.read(func) if a.kind == kind and (not what or a.what == what)]
    return var


def _intrin_calls(stmt, intrin):
    return nodes(stmt, lambda n: isinstance(n, tirx.Evaluate) and call_intrin(n.value) == intrin)


def _reads_of(func, name):
    return [n for n in _intrin_calls(func.body, Intrin.READ_TO_CB) if n.value.args[0].args[0].buffer.name == name]


def test_reader_waits_before_the_read_of_the_summed_tensor_only():
    """Split 2: block b = by_bx * 2 + bz; bz > 0 waits for the count of blocks of the core with
    bz > 0 so far, itself included: (start + 1) // 2 + by_bx + bz - start."""
    before = lower_until(_split_k(2), PASS)
    rd = before["main_reader"]
    C = param(rd, "C")
    row, col = launch(rd, "coreIdx.y").node.var, launch(rd, "coreIdx.x").node.var
    assert (row.name, col.name) == ("by_bx", "bz")
    start = tirx.Cast(I32, _arg(rd, ArgKind.START_ID))
    count = tirx.Cast(U32, tirx.floordiv(start + 1, 2) + row + col - start)
    wait = tirx.IfThenElse(tirx.IntImm(I32, 0) < col, ev(Intrin.SEM_WAIT_MIN, 0, count), None)

    def add_wait(node):
        if call_intrin(node.value) == Intrin.READ_TO_CB and node.value.args[0].args[0].buffer.same_as(C):
            return tirx.SeqStmt([wait, node])
        return None

    expected = tirx.stmt_functor.ir_transform(rd.body, None, add_wait, ["tirx.Evaluate"])
    assert not expected.same_as(rd.body)  # the read of C was found
    after = run_pass(before, PASS)
    assert_body(after["main_reader"].body, expected)
    # one wait, right before the read of C; the reads of A and B (in the K loop) are not guarded
    body = after["main_reader"].body
    (guard,) = nodes(body, lambda n: isinstance(n, tirx.IfThenElse))
    assert len(_intrin_calls(body, Intrin.SEM_WAIT_MIN)) == 1 and _intrin_calls(guard, Intrin.SEM_WAIT_MIN)
    (around,) = nodes(body, lambda n: isinstance(n, tirx.SeqStmt) and any(s.same_as(guard) for s in n.seq))
    position = [s.same_as(guard) for s in around.seq].index(True)
    assert around.seq[position + 1].same_as(_reads_of(after["main_reader"], "C")[0])
    (k_loop,) = nodes(body, lambda n: isinstance(n, tirx.For))
    assert len(_reads_of(after["main_reader"], "A")) == len(_reads_of(after["main_reader"], "B")) == 1
    assert not nodes(k_loop, lambda n: isinstance(n, tirx.IfThenElse))
    assert any(n.same_as(_reads_of(after["main_reader"], "A")[0]) for n in nodes(k_loop, lambda n: isinstance(n, tirx.Evaluate)))
    assert after["main_compute"].same_as(before["main_compute"])


def test_writer_signals_after_the_block():
    """Split 2: after its write of C, a block with bz < 1 waits for its writes and increments the
    semaphore of its own core when block b + 1 is still its own, else the next core's."""
    before = lower_until(_split_k(2), PASS)
    wr = before["main_writer"]
    outer, inner = launch(wr, "coreIdx.y"), launch(wr, "coreIdx.x")
    row, col = outer.node.var, inner.node.var
    start, count = (tirx.Cast(I32, _arg(wr, kind)) for kind in (ArgKind.START_ID, ArgKind.COUNT))
    chain = {what: _arg(wr, ArgKind.CHAIN, what) for what in ("self_x", "self_y", "next_x", "next_y")}
    signal = tirx.IfThenElse(col < 1, tirx.SeqStmt([
        ev(Intrin.NOC_WRITE_BARRIER),
        tirx.IfThenElse(row * 2 + col + 1 < start + count,
                        ev(Intrin.SEM_INC, chain["self_x"], chain["self_y"], 0, 1),
                        ev(Intrin.SEM_INC, chain["next_x"], chain["next_y"], 0, 1)),
    ]), None)
    assert outer.body.same_as(inner)
    expected = attr_launch(outer, attr_launch(inner, seq(inner.body, signal)))
    after = run_pass(before, PASS)
    assert_body(after["main_writer"].body, expected)
    # the signal is the writer's last statement, after the write of C
    last = after["main_writer"].body.body.body.seq
    assert isinstance(last[-1], tirx.IfThenElse) and _intrin_calls(last[-1], Intrin.SEM_INC)
    assert any(_intrin_calls(stmt, Intrin.WRITE_FROM_CB) for stmt in last[:-1])


def _at(func, expr, row: int, col: int, start: int, count: int) -> int:
    """``expr`` of kernel ``func`` at block (row, col) of a core whose run starts at ``start``."""
    values = {launch(func, "coreIdx.y").node.var: tirx.IntImm(I32, row),
              launch(func, "coreIdx.x").node.var: tirx.IntImm(I32, col),
              _arg(func, ArgKind.START_ID): tirx.IntImm(U32, start), _arg(func, ArgKind.COUNT): tirx.IntImm(U32, count)}
    return int(arith.Analyzer().simplify(tirx.stmt_functor.substitute(expr, values)))


@pytest.mark.parametrize("grid", [(1, 1), (2, 2), (3, 1), (5, 1)], ids=lambda g: f"{g[0]}x{g[1]}")
def test_wait_counts_and_signal_targets_over_a_partition(grid):
    """Split 3, 12 blocks (4 regions), on grids giving runs of 12; 3; 4; 3, 3, 2, 2, 2 consecutive
    blocks: for every block of every core, the wait (if any) asks for exactly the number of blocks
    of the core so far that are not first in their group, itself included (each signalled once, by
    the block before it), and the writer signals iff the block is not last in its group, its own
    core while b + 1 is still its own."""
    split = 3
    opts = CompileOptions(grid=grid)
    after = run_pass(lower_until(_split_k(split), PASS, opts), PASS, opts)
    rd, wr = after["main_reader"], after["main_writer"]
    (guard,) = nodes(rd.body, lambda n: isinstance(n, tirx.IfThenElse))
    (wait,) = _intrin_calls(guard, Intrin.SEM_WAIT_MIN)
    (signal,) = [n for n in nodes(wr.body, lambda n: isinstance(n, tirx.IfThenElse)) if _intrin_calls(n, Intrin.NOC_WRITE_BARRIER)]
    (target,) = [n for n in nodes(signal, lambda n: isinstance(n, tirx.IfThenElse)) if not n.same_as(signal)]
    self_x = _arg(wr, ArgKind.CHAIN, "self_x")
    work = Attr.WORK_PARTITION.read(rd)
    assert sum(w.count for w in work) == 12
    for w in work:
        first, n = w.start_id, w.count
        for b in range(first, first + n):
            block = (b // split, b % split, first, n)
            waits = bool(_at(rd, guard.condition, *block))
            assert waits == (b % split != 0)
            if waits:
                assert _at(rd, wait.value.args[1], *block) == sum(1 for c in range(first, b + 1) if c % split != 0)
            assert bool(_at(wr, signal.condition, *block)) == (b % split != split - 1)
            own = bool(_at(wr, target.condition, *block))
            assert own == (b + 1 < first + n)
            (inc,) = _intrin_calls(target.then_case if own else target.else_case, Intrin.SEM_INC)
            assert inc.value.args[0].same_as(self_x) == own


def test_kernels_without_summing_blocks_are_unchanged():
    before = lower_until(gemm(128, 128, 64, 64, 64, 32), PASS)
    after = run_pass(before, PASS)
    assert all(after[name].same_as(before[name]) for name in ROLES)


def test_a_read_modify_write_without_summing_axis_is_unchanged():
    """Split 1: C is read and written by one block per region; nothing to order."""
    before = lower_until(_split_k(1), PASS)
    after = run_pass(before, PASS)
    assert all(after[name].same_as(before[name]) for name in ROLES)


# -- hand-written TIR -------------------------------------------------------------------------------
# Split-K over 2 blocks per region on a 2 x 2 core grid, one block per core: block b = by * 2 + bz,
# bz (coreIdx.x) the summing axis; the runtime arguments and the summing axis are the variables the
# kernel launches and reads (declared before T.func_attr, as E1 and LowerAtomicAddTT store them).
# A function attribute is compared before the body, where the summing axis is free: the comparisons
# map free variables.

CORE_MAP = {"m": "coreIdx.y", "n": "coreIdx.x"}


def _args(*named) -> list[dict]:
    return [{"name": name, "kind": kind, **({"what": what} if what else {}), "var": var}
            for name, kind, what, var in named]


def test_hand_written_reader_waits_before_reading_the_summed_tensor():
    """Block b reads A unguarded; before its read of C, a block that is not first of its group
    (bz > 0) waits for the count of such blocks of its core so far:
    (b - start) - b // 2 + (start + 1) // 2 = (start + 1) // 2 + by + bz - start."""
    @I.ir_module(check_well_formed=False)  # split kernels use their CBs' buffers unallocated
    class Before:
        @T.prim_func
        def main_reader(A: T.Buffer((64, 128), "float32"), C: T.Buffer((64, 32), "float32")):
            bz = T.env_thread("coreIdx.x")
            start_id = T.uint32()
            count = T.uint32()
            T.func_attr(tt_attrs({
                "tt.kernel_role": "reader", "tt.core_map": CORE_MAP,
                "tt.reduction": {"buffers": [C], "axes": [bz], "blocks": 2, "semaphore": 0},
                "tt.runtime_args": _args(("start_id", "start_id", "", start_id), ("count", "count", "", count))}))
            by = T.launch_thread("coreIdx.y", 2)
            T.launch_thread(bz, 2)
            A_s = T.Buffer((32, 64), "float32", scope="shared.dyn")
            C_s = T.Buffer((32, 32), "float32", scope="shared.dyn")
            tt.read_to_cb(tl.region(A[by * 32, bz * 64], 1, 32, 64), tl.region(A_s[0, 0], 2, 32, 64))
            tt.read_to_cb(tl.region(C[by * 32, 0], 1, 32, 32), tl.region(C_s[0, 0], 2, 32, 32))

    @I.ir_module(check_well_formed=False)
    class Expected:
        @T.prim_func
        def main_reader(A: T.Buffer((64, 128), "float32"), C: T.Buffer((64, 32), "float32")):
            bz = T.env_thread("coreIdx.x")
            start_id = T.uint32()
            count = T.uint32()
            T.func_attr(tt_attrs({
                "tt.kernel_role": "reader", "tt.core_map": CORE_MAP,
                "tt.reduction": {"buffers": [C], "axes": [bz], "blocks": 2, "semaphore": 0},
                "tt.runtime_args": _args(("start_id", "start_id", "", start_id), ("count", "count", "", count))}))
            by = T.launch_thread("coreIdx.y", 2)
            T.launch_thread(bz, 2)
            A_s = T.Buffer((32, 64), "float32", scope="shared.dyn")
            C_s = T.Buffer((32, 32), "float32", scope="shared.dyn")
            tt.read_to_cb(tl.region(A[by * 32, bz * 64], 1, 32, 64), tl.region(A_s[0, 0], 2, 32, 64))
            if 0 < bz:
                tt.noc_semaphore_wait_min(0, T.Cast("uint32", (T.Cast("int32", start_id) + 1) // 2 + by + bz
                                                    - T.Cast("int32", start_id)))
            tt.read_to_cb(tl.region(C[by * 32, 0], 1, 32, 32), tl.region(C_s[0, 0], 2, 32, 32))

    tvm.ir.assert_structural_equal(OrderReductionTT()(Before), Expected, map_free_vars=True)


def test_hand_written_writer_signals_the_core_of_the_next_block():
    """After its write of C, a block that is not last of its group (bz < 1) waits for its writes
    and increments the semaphore of the core running block b + 1: its own while b + 1 is one of
    its blocks (b + 1 < start + count), else the next core's (the chain arguments)."""
    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main_writer(C: T.Buffer((64, 32), "float32")):
            bz = T.env_thread("coreIdx.x")
            start_id = T.uint32()
            count = T.uint32()
            sum_self_x = T.uint32()
            sum_self_y = T.uint32()
            sum_next_x = T.uint32()
            sum_next_y = T.uint32()
            T.func_attr(tt_attrs({
                "tt.kernel_role": "writer", "tt.core_map": CORE_MAP,
                "tt.reduction": {"buffers": [C], "axes": [bz], "blocks": 2, "semaphore": 0},
                "tt.runtime_args": _args(("start_id", "start_id", "", start_id), ("count", "count", "", count),
                                         ("sum_self_x", "chain", "self_x", sum_self_x),
                                         ("sum_self_y", "chain", "self_y", sum_self_y),
                                         ("sum_next_x", "chain", "next_x", sum_next_x),
                                         ("sum_next_y", "chain", "next_y", sum_next_y))}))
            by = T.launch_thread("coreIdx.y", 2)
            T.launch_thread(bz, 2)
            C_l = T.Buffer((32, 32), "float32", scope="local.fragment")
            tt.write_from_cb(tl.region(C_l[0, 0], 1, 32, 32), tl.region(C[by * 32, 0], 2, 32, 32))

    @I.ir_module(check_well_formed=False)
    class Expected:
        @T.prim_func
        def main_writer(C: T.Buffer((64, 32), "float32")):
            bz = T.env_thread("coreIdx.x")
            start_id = T.uint32()
            count = T.uint32()
            sum_self_x = T.uint32()
            sum_self_y = T.uint32()
            sum_next_x = T.uint32()
            sum_next_y = T.uint32()
            T.func_attr(tt_attrs({
                "tt.kernel_role": "writer", "tt.core_map": CORE_MAP,
                "tt.reduction": {"buffers": [C], "axes": [bz], "blocks": 2, "semaphore": 0},
                "tt.runtime_args": _args(("start_id", "start_id", "", start_id), ("count", "count", "", count),
                                         ("sum_self_x", "chain", "self_x", sum_self_x),
                                         ("sum_self_y", "chain", "self_y", sum_self_y),
                                         ("sum_next_x", "chain", "next_x", sum_next_x),
                                         ("sum_next_y", "chain", "next_y", sum_next_y))}))
            by = T.launch_thread("coreIdx.y", 2)
            T.launch_thread(bz, 2)
            C_l = T.Buffer((32, 32), "float32", scope="local.fragment")
            tt.write_from_cb(tl.region(C_l[0, 0], 1, 32, 32), tl.region(C[by * 32, 0], 2, 32, 32))
            if bz < 1:
                tt.noc_async_write_barrier()
                if by * 2 + bz + 1 < T.Cast("int32", start_id) + T.Cast("int32", count):
                    tt.noc_semaphore_inc(sum_self_x, sum_self_y, 0, 1)
                else:
                    tt.noc_semaphore_inc(sum_next_x, sum_next_y, 0, 1)

    tvm.ir.assert_structural_equal(OrderReductionTT()(Before), Expected, map_free_vars=True)


def test_hand_written_reduction_without_a_semaphore_is_unchanged():
    """Before the work partition allocates the semaphore (-1), or in compute, there are no turns
    to take."""
    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main_reader(C: T.Buffer((64, 32), "float32")):
            bz = T.env_thread("coreIdx.x")
            start_id = T.uint32()
            count = T.uint32()
            T.func_attr(tt_attrs({
                "tt.kernel_role": "reader", "tt.core_map": CORE_MAP,
                "tt.reduction": {"buffers": [C], "axes": [bz], "blocks": 2, "semaphore": -1},
                "tt.runtime_args": _args(("start_id", "start_id", "", start_id), ("count", "count", "", count))}))
            by = T.launch_thread("coreIdx.y", 2)
            T.launch_thread(bz, 2)
            C_s = T.Buffer((32, 32), "float32", scope="shared.dyn")
            tt.read_to_cb(tl.region(C[by * 32, 0], 1, 32, 32), tl.region(C_s[0, 0], 2, 32, 32))

    tvm.ir.assert_structural_equal(OrderReductionTT()(Before), Before)
