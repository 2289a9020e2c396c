"""ThreadsToLanesTT alone: thread indices become T.Parallel lanes, a per-thread accumulator one element
per lane, the serial loops of a thread folded into its nest. Kernels run in
tests/compiler/test_thread_lanes.py; refusals in tests/compiler/test_negative.py."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import eltwise, lower_until, run_pass
from tests.passes.helpers import nodes, tl
from tilelang_tt.passes.threads_to_lanes_tt import ThreadsToLanesTT

PASS = "ThreadsToLanesTT"


def test_registered_under_its_name():
    assert ThreadsToLanesTT().info.name == PASS


def test_kernels_without_thread_indices_are_unchanged():
    before = lower_until(eltwise("add", 64, 96, 32, 32), PASS)
    assert run_pass(before, PASS)["main"].same_as(before["main"])


@I.ir_module
class Before:
    @T.prim_func
    def main(W: T.Buffer((64, 32), "bfloat16"), c: T.Buffer((64,), "bfloat16")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            t: T.int32 = tl.launch_thread_idx(0, dtype="int32")
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                T.sblock_attr({"tl.launch_threads": [32, 1, 1]})
                dot = T.sblock_alloc_buffer((1,), "float32", scope="local")
                tl.tileop.fill(tl.region(dot[0], 2, 1), 0)
                for e in range(32):
                    dot[0] = dot[0] + T.Cast("float32", W[bx * 32 + t, e])
                c[bx * 32 + t] = T.Cast("bfloat16", dot[0])


@I.ir_module
class Expected:
    @T.prim_func
    def main(W: T.Buffer((64, 32), "bfloat16"), c: T.Buffer((64,), "bfloat16")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            t: T.int32 = tl.launch_thread_idx(0, dtype="int32")
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                T.sblock_attr({"tl.launch_threads": [32, 1, 1]})
                dot = T.sblock_alloc_buffer((32,), "float32", scope="local")
                tl.tileop.fill(tl.region(dot[0], 2, 32), 0)
                for t_1 in T.parallel(32):
                    for e in T.parallel(32):
                        dot[t_1] = dot[t_1] + T.Cast("float32", W[bx * 32 + t_1, e])
                for t_1 in T.parallel(32):
                    c[bx * 32 + t_1] = T.Cast("bfloat16", dot[t_1])


def test_a_thread_per_row_is_a_lane_nest_with_one_accumulator_per_lane():
    after = ThreadsToLanesTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    thread = [n.var for n in nodes(after["main"].body, lambda n: isinstance(n, tvm.tirx.Bind))][0]
    lanes = nodes(after["main"].body, lambda n: isinstance(n, tvm.tirx.For) and n.kind == tvm.tirx.ForKind.PARALLEL)
    assert lanes and not any(lp.loop_var.same_as(thread) for lp in lanes)  # each nest binds a lane var of its own


@I.ir_module
class SplitK:
    @T.prim_func
    def main(W: T.Buffer((64, 128), "float32"), c: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            t: T.int32 = tl.launch_thread_idx(0, dtype="int32")
            s: T.int32 = tl.launch_thread_idx(1, dtype="int32")
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                T.sblock_attr({"tl.launch_threads": [32, 32, 1]})
                partial = T.sblock_alloc_buffer((1,), "float32", scope="local")
                total = T.sblock_alloc_buffer((1,), "float32", scope="local")
                tl.tileop.fill(tl.region(partial[0], 2, 1), 0)
                for kb in range(4):
                    partial[0] = partial[0] + W[bx * 32 + t, kb * 32 + s]
                with T.attr(T.comm_reducer(lambda a, b: a + b, [T.float32(0)]), "reduce_scope",
                            T.reinterpret("handle", T.uint64(0))):
                    T.tvm_thread_allreduce(T.uint32(1), partial[0], T.bool(True), total[0], s)
                if s == 0:
                    c[bx * 32 + t] = total[0]


@I.ir_module
class SplitKLanes:
    @T.prim_func
    def main(W: T.Buffer((64, 128), "float32"), c: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            t: T.int32 = tl.launch_thread_idx(0, dtype="int32")
            s: T.int32 = tl.launch_thread_idx(1, dtype="int32")
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                T.sblock_attr({"tl.launch_threads": [32, 32, 1]})
                partial = T.sblock_alloc_buffer((32,), "float32", scope="local")
                total = T.sblock_alloc_buffer((32,), "float32", scope="local")
                tl.tileop.fill(tl.region(partial[0], 2, 32), 0)
                for kb in range(4):
                    for t_1 in T.parallel(32):
                        for s_1 in T.parallel(32):
                            partial[t_1] = partial[t_1] + W[bx * 32 + t_1, kb * 32 + s_1]
                for t_1 in T.parallel(32):
                    total[t_1] = partial[t_1]
                for t_1 in T.parallel(32):
                    c[bx * 32 + t_1] = total[t_1]


def test_a_sum_read_only_by_a_thread_allreduce_sums_across_the_lane_and_lane_zero_writes_once():
    """Two lanes: the accumulator, cleared, summed into and read only by the allreduce over ``s``,
    is one value per ``t`` whose sums run over ``s`` too (a reduction along the nest's second loop);
    the K loop stays around it (``kb * 32 + s`` is no run of one thread); the allreduce is then a
    copy, and the store under ``if s == 0`` one nest over ``t``."""
    tvm.ir.assert_structural_equal(ThreadsToLanesTT()(SplitK), SplitKLanes)


@I.ir_module
class FlatLanes:
    @T.prim_func
    def main(X: T.Buffer((4, 64, 64), "float32"), Y: T.Buffer((64, 64), "float32")):
        for bx in T.thread_binding(16, thread="blockIdx.x"):
            tx: T.int32 = tl.launch_thread_idx(0, dtype="int32")
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                T.sblock_attr({"tl.launch_threads": [256, 1, 1]})
                m = T.sblock_alloc_buffer((1,), "float32", scope="local")
                idx: T.int32 = bx * 256 + tx
                if idx < 4096:
                    m[0] = X[0, idx // 64, idx % 64]
                    for b in range(1, 4):
                        m[0] = T.max(m[0], X[b, idx // 64, idx % 64])
                    Y[idx // 64, idx % 64] = m[0]


@I.ir_module
class FlatLanesSplit:
    @T.prim_func
    def main(X: T.Buffer((4, 64, 64), "float32"), Y: T.Buffer((64, 64), "float32")):
        for bx in T.thread_binding(16, thread="blockIdx.x"):
            tx: T.int32 = tl.launch_thread_idx(0, dtype="int32")
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                T.sblock_attr({"tl.launch_threads": [256, 1, 1]})
                m = T.sblock_alloc_buffer((4, 64), "float32", scope="local")
                for hi in T.parallel(4):
                    for lo in T.parallel(64):
                        m[hi, lo] = X[0, bx * 4 + hi, lo]
                for b in range(1, 4):
                    for hi in T.parallel(4):
                        for lo in T.parallel(64):
                            m[hi, lo] = T.max(m[hi, lo], X[b, bx * 4 + hi, lo])
                for hi in T.parallel(4):
                    for lo in T.parallel(64):
                        Y[bx * 4 + hi, lo] = m[hi, lo]


def test_a_flat_lane_is_split_into_rows_and_columns_and_a_carried_loop_runs_around_the_lanes():
    """``idx // 64`` and ``idx % 64`` of ``idx = bx * 256 + tx``: the lane ``tx`` is (4, 64) lanes, the
    guard of the last block true for every block (bx < 16), the running max's loop over ``b`` around
    the nest (each step reads the last)."""
    tvm.ir.assert_structural_equal(ThreadsToLanesTT()(FlatLanes), FlatLanesSplit)


@I.ir_module
class StagedRuns:
    @T.prim_func
    def main(x: T.Buffer((256,), "float32"), W: T.Buffer((64, 256), "float32"), c: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            t: T.int32 = tl.launch_thread_idx(0, dtype="int32")
            s: T.int32 = tl.launch_thread_idx(1, dtype="int32")
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                T.sblock_attr({"tl.launch_threads": [32, 32, 1]})
                w_regs = T.sblock_alloc_buffer((8,), "float32", scope="local")
                partial = T.sblock_alloc_buffer((1,), "float32", scope="local")
                total = T.sblock_alloc_buffer((1,), "float32", scope="local")
                tl.tileop.fill(tl.region(partial[0], 2, 1), 0)
                for e in T.vectorized(8):
                    w_regs[e] = W[bx * 32 + t, s * 8 + e]
                for e in range(8):
                    partial[0] = partial[0] + w_regs[e] * x[s * 8 + e]
                with T.attr(T.comm_reducer(lambda a, b: a + b, [T.float32(0)]), "reduce_scope",
                            T.reinterpret("handle", T.uint64(0))):
                    T.tvm_thread_allreduce(T.uint32(1), partial[0], T.bool(True), total[0], s)
                c[bx * 32 + t] = total[0]


@I.ir_module
class StagedRunsLanes:
    @T.prim_func
    def main(x: T.Buffer((256,), "float32"), W: T.Buffer((64, 256), "float32"), c: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            t: T.int32 = tl.launch_thread_idx(0, dtype="int32")
            s: T.int32 = tl.launch_thread_idx(1, dtype="int32")
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                T.sblock_attr({"tl.launch_threads": [32, 32, 1]})
                partial = T.sblock_alloc_buffer((32,), "float32", scope="local")
                total = T.sblock_alloc_buffer((32,), "float32", scope="local")
                tl.tileop.fill(tl.region(partial[0], 2, 32), 0)
                for t_1 in T.parallel(32):
                    for k in T.parallel(256):
                        partial[t_1] = partial[t_1] + W[bx * 32 + t_1, k] * x[k]
                for t_1 in T.parallel(32):
                    total[t_1] = partial[t_1]
                for t_1 in T.parallel(32):
                    c[bx * 32 + t_1] = total[t_1]


def test_staged_registers_are_forwarded_and_a_run_per_thread_is_one_lane_of_the_whole_k():
    """``w_regs``, filled by one loop and read after it, is its value ``W[.., s * 8 + e]``; the sum
    over ``e`` into an accumulator summed across ``s`` makes ``(s, e)`` one lane ``s * 8 + e`` of 256:
    a row sum of the (32, 256) block."""
    after = ThreadsToLanesTT()(StagedRuns)
    tvm.ir.assert_structural_equal(after, StagedRunsLanes)
    assert [b.name for b in nodes(after["main"].body, lambda n: isinstance(n, tvm.tirx.SBlock))[0].alloc_buffers] \
        == ["partial", "total"]  # the staging registers go
