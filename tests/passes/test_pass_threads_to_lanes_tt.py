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
