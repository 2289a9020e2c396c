"""BoundParallelExtentsTT alone: a T.Parallel over a run-time extent with a constant largest value
becomes the nest over that value, the innermost body guarded by the extent."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.compiler.test_parallel_extents import prefix_minus_one, unbounded
from tests.kernels import lower_until, run_pass
from tests.passes.helpers import nodes
from tilelang_tt.passes.bound_parallel_extents_tt import BoundParallelExtentsTT

PASS = "BoundParallelExtentsTT"


def test_registered_under_its_name():
    assert BoundParallelExtentsTT().info.name == PASS


def test_hand_written_clamped_extent_is_the_nest_over_its_bound_guarded():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64, 32), "float32"), B: T.Buffer((64, 32), "float32"), n: T.int32):
            span: T.int32 = T.min(n, 64)
            for i in T.parallel(span):
                for j in T.parallel(32):
                    B[i, j] = A[i, j] + T.float32(1)

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((64, 32), "float32"), B: T.Buffer((64, 32), "float32"), n: T.int32):
            span: T.int32 = T.min(n, 64)
            for i in T.parallel(64):
                for j in T.parallel(32):
                    if i < span:
                        B[i, j] = A[i, j] + T.float32(1)

    tvm.ir.assert_structural_equal(BoundParallelExtentsTT()(Before), Expected)


def test_hand_written_unbounded_and_constant_extents_are_unchanged():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), n: T.int32):
            for i in T.parallel(n):
                B[i] = A[i]
            for i in T.parallel(64):
                B[i] = A[i] + T.float32(1)

    tvm.ir.assert_structural_equal(BoundParallelExtentsTT()(Before), Before)


def test_real_kernel_nest_over_512_elements():
    before = lower_until(prefix_minus_one(512), PASS)
    after = run_pass(before, PASS)
    extents = [int(n.extent) for n in nodes(after["main"].body, lambda n: isinstance(n, tvm.tirx.For)
                                             and n.kind == tvm.tirx.ForKind.PARALLEL)]
    assert extents == [512, 512]
    assert len(nodes(after["main"].body, lambda n: isinstance(n, tvm.tirx.IfThenElse))) == 1
    untouched = lower_until(unbounded(64), PASS)
    assert run_pass(untouched, PASS)["main"].same_as(untouched["main"])
