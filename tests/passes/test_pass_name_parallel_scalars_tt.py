"""NameParallelScalarsTT alone: a T.alloc_var scalar that a T.Parallel nest stores before it reads it becomes a
named value per store; a scalar read before its store in the nest, or used outside nests, is left as it is.
tests/outside (DeepSeek TileKernels' per-token casts) runs kernels written so."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import eltwise, lower_until, run_pass
from tests.passes.helpers import names, tl
from tilelang_tt.passes.name_parallel_scalars_tt import NameParallelScalarsTT

PASS = "NameParallelScalarsTT"


def test_registered_under_its_name():
    assert NameParallelScalarsTT().info.name == PASS


def test_stores_of_a_scalar_in_a_nest_are_named_values():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((32, 64), "float32"), Y: T.Buffer((32, 64), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((32, 64), "float32", scope="shared.dyn")
                    y = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    v = T.sblock_alloc_buffer((1,), "float32", scope="local.var")
                    tl.tileop.copy(tl.region(X[0, 0], 1, 32, 64), tl.region(x[0, 0], 2, 32, 64))
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            v = x[i, j] * T.float32(2)
                            v = T.min(v, T.float32(1))
                            y[i, j] = v + x[i, j]
                    tl.tileop.copy(tl.region(y[0, 0], 1, 32, 64), tl.region(Y[0, 0], 2, 32, 64))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(X: T.Buffer((32, 64), "float32"), Y: T.Buffer((32, 64), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((32, 64), "float32", scope="shared.dyn")
                    y = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(X[0, 0], 1, 32, 64), tl.region(x[0, 0], 2, 32, 64))
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            v1: T.float32 = x[i, j] * T.float32(2)
                            v2: T.float32 = T.min(v1, T.float32(1))
                            y[i, j] = v2 + x[i, j]
                    tl.tileop.copy(tl.region(y[0, 0], 1, 32, 64), tl.region(Y[0, 0], 2, 32, 64))

    after = NameParallelScalarsTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_a_scalar_read_before_its_store_or_outside_nests_is_left():
    @I.ir_module
    class Carried:  # a running value across the nest's iterations: no name per element
        @T.prim_func
        def main(Y: T.Buffer((32, 64), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    y = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    v = T.sblock_alloc_buffer((1,), "float32", scope="local.var")
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            y[i, j] = v
                            v = y[i, j] + T.float32(1)
                    tl.tileop.copy(tl.region(y[0, 0], 1, 32, 64), tl.region(Y[0, 0], 2, 32, 64))

    tvm.ir.assert_structural_equal(NameParallelScalarsTT()(Carried), Carried)

    @I.ir_module
    class Outside:  # set before the nest: InlineScalarVarsTT's
        @T.prim_func
        def main(Y: T.Buffer((32, 64), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    y = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    v = T.sblock_alloc_buffer((1,), "float32", scope="local.var")
                    v = T.float32(3)
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            v = v * T.float32(2)
                            y[i, j] = v
                    tl.tileop.copy(tl.region(y[0, 0], 1, 32, 64), tl.region(Y[0, 0], 2, 32, 64))

    tvm.ir.assert_structural_equal(NameParallelScalarsTT()(Outside), Outside)


def test_a_kernel_without_scalars_is_unchanged():
    before = lower_until(eltwise("add", 64, 96, 32, 32), PASS)
    assert run_pass(before, PASS)["main"].same_as(before["main"])
