"""LowerParallelScansTT alone: a running sum per row kept by a serial loop over the columns inside
T.Parallel over the rows becomes the block of its terms, their row totals and prefix sums (T.reduce_sum,
T.cumsum), the later stores reading the running value, and the carry into the accumulator; loops of any
other form are left as they are. Kernels run in tests/compiler/test_parallel_scans.py."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.passes.helpers import names, tl
from tilelang_tt.passes.lower_parallel_scans_tt import LowerParallelScansTT

PASS = "LowerParallelScansTT"


def test_registered_under_its_name():
    assert LowerParallelScansTT().info.name == PASS


def test_hand_written_running_sum_becomes_a_cumsum():
    """TileOPs' form, with a store before the accumulation (the square of the element) whose block the term
    reads: the first nest stores it and the terms, the second the running value scaled."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((32, 64), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((32, 64), "float32", scope="shared.dyn")
                    sq = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    out = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    acc = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    for i in T.parallel(32):
                        for j in range(64):
                            sq[i, j] = x[i, j] * x[i, j]
                            acc[i] = acc[i] + sq[i, j]
                            out[i, j] = acc[i] * T.float32(0.5)

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(X: T.Buffer((32, 64), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((32, 64), "float32", scope="shared.dyn")
                    sq = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    out = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    acc = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    acc_terms = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    acc_prefix = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    acc_total = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            sq[i, j] = x[i, j] * x[i, j]
                            acc_terms[i, j] = sq[i, j]
                    tl.tileop.reduce(tl.region(acc_terms[0, 0], 1, 32, 64), tl.region(acc_total[0], 2, 32), "sum", 1,
                                     T.bool(True))
                    tl.tileop.cumsum(tl.region(acc_terms[0, 0], 1, 32, 64), tl.region(acc_prefix[0, 0], 2, 32, 64), 1,
                                     T.bool(False))
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            out[i, j] = (acc[i] + acc_prefix[i, j]) * T.float32(0.5)
                    for i in T.parallel(32):
                        acc[i] = acc[i] + acc_total[i]

    after = LowerParallelScansTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_hand_written_loops_of_other_forms_are_left_as_they_are():
    """The accumulator read before its accumulation (an exclusive scan), and a block the loop writes read at
    the previous column: no cumsum of the terms has that meaning, the loops stay for C2 to refuse."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((32, 64), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((32, 64), "float32", scope="shared.dyn")
                    out = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    acc = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    for i in T.parallel(32):
                        for j in range(64):
                            out[i, j] = acc[i]
                            acc[i] = acc[i] + x[i, j]
                    for i in T.parallel(32):
                        for j in range(64):
                            acc[i] = acc[i] + x[i, j]
                            out[i, j] = out[i, T.max(j - 1, 0)] + acc[i]

    after = LowerParallelScansTT()(Before)
    assert after["main"].same_as(Before["main"])
