"""FuseInnerLoopsTT alone: a T.Parallel loop whose body is named values and one serial loop of a constant extent,
each iteration storing its own element, is one T.Parallel loop over both; a loop carrying a running value, or
beside another statement, stays. What it enables: TileLang's T.atomic_addx2 test runs (tests/outside/atomic.py,
tests/compiler/test_atomic_pairs.py)."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import lower_until, run_pass
from tests.outside import atomic
from tests.passes.helpers import names
from tilelang_tt.passes.fuse_inner_loops_tt import FuseInnerLoopsTT

PASS = "FuseInnerLoopsTT"


def test_registered_under_its_name():
    assert FuseInnerLoopsTT().info.name == PASS


def test_hand_written_pairs_of_element_adds_are_one_loop_over_the_elements():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "float32"), B: T.Buffer((32, 64), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    for i in T.parallel(32):
                        for j in T.parallel(16):
                            c: T.int32 = bx * 32 + j * 2
                            for t in range(2):
                                B[i, c + t] = B[i, c + t] + A[i, c + t]

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "float32"), B: T.Buffer((32, 64), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    for i in T.parallel(32):
                        for j_t in T.parallel(32):
                            c: T.int32 = bx * 32 + j_t // 2 * 2
                            B[i, c + j_t % 2] = B[i, c + j_t % 2] + A[i, c + j_t % 2]

    after = FuseInnerLoopsTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_a_running_value_a_statement_beside_the_loop_or_an_on_chip_store_stays():
    @T.prim_func
    def running(A: T.Buffer((32, 64), "float32"), S: T.Buffer((32,), "float32")):
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                for i in T.parallel(32):
                    for t in range(64):
                        S[i] = S[i] + A[i, t]

    @T.prim_func
    def beside(A: T.Buffer((32, 64), "float32"), B: T.Buffer((32, 64), "float32")):
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                for i in T.parallel(32):
                    B[i, 0] = A[i, 0]
                    for t in range(2):
                        B[i, t + 1] = A[i, t + 1]

    @T.prim_func
    def on_chip(A: T.Buffer((32, 64), "float32")):
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                f = T.sblock_alloc_buffer((32, 2), "float32", scope="local.fragment")
                for i in T.parallel(32):
                    for t in range(2):
                        f[i, t] = A[i, t]

    for func in (running, beside, on_chip):
        mod = tvm.IRModule({"main": func})
        assert FuseInnerLoopsTT()(mod)["main"].same_as(mod["main"])


def test_on_a_real_kernel():
    """TileLang's T.atomic_addx2 test: LowerAtomicAddTT's pair of adds in the T.Parallel over half the columns is
    one loop over the columns; the nests of a kernel without such loops come out unchanged."""
    example = next(e for e in atomic.EXAMPLES if e.name == "atomic/addx2")
    before = lower_until(example.kernel.get_tir(**example.args), PASS)
    after = run_pass(before, PASS)["main"].script()
    assert "for t in range(2)" in before["main"].script() and "for t in range(2)" not in after
    assert "j_t in T.parallel(32)" in after
    other = next(e for e in atomic.EXAMPLES if e.name == "atomic/memory_orders")
    plain = lower_until(other.kernel.get_tir(**other.args), PASS)
    assert run_pass(plain, PASS)["main"].same_as(plain["main"])
