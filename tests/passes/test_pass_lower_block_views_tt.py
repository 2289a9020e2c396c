"""LowerBlockViewsTT alone: a view of an on-chip block (T.reshape) becomes the block's own accesses; a
reduction of an [m, g, s] view along s is one masked reduction per group merged into the result's columns;
kernels without views come out unchanged. tests/compiler/test_block_views.py runs them on the emulator."""

import tilelang  # noqa: F401
import tilelang.language as TL
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import eltwise, lower_until, run_pass
from tests.passes.helpers import names, nodes, tl
from tilelang_tt.ir.common import tile_op_name
from tilelang_tt.passes.lower_block_views_tt import LowerBlockViewsTT

PASS = "LowerBlockViewsTT"


def test_registered_under_its_name():
    assert LowerBlockViewsTT().info.name == PASS


def test_elements_of_a_view_are_the_blocks_elements():
    @I.ir_module(check_well_formed=False)  # TileLang's T.reshape declares the view where it is used
    class Before:
        @T.prim_func(check_well_formed=False)
        def main(Y: T.Buffer((32, 128), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((32, 128), "float32", scope="local.fragment")
                    x_r = T.Buffer((32, 1, 128), "float32", data=x.data, scope="local.fragment")
                    for i in T.parallel(32):
                        for k in T.parallel(128):
                            x_r[i, 0, k] = x_r[i, 0, k] * T.float32(2)
                    tl.tileop.copy(tl.region(x[0, 0], 1, 32, 128), tl.region(Y[0, 0], 2, 32, 128))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(Y: T.Buffer((32, 128), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((32, 128), "float32", scope="local.fragment")
                    for i in T.parallel(32):
                        for k in T.parallel(128):
                            x[i, k] = x[i, k] * T.float32(2)
                    tl.tileop.copy(tl.region(x[0, 0], 1, 32, 128), tl.region(Y[0, 0], 2, 32, 128))

    after = LowerBlockViewsTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)


def per_group_absmax(M=32, G=2, S=128):
    @TL.prim_func
    def main(X: TL.Tensor((M, G * S), "bfloat16"), O: TL.Tensor((M, G), "bfloat16")):
        with TL.Kernel(1, threads=128) as bx:
            x = TL.alloc_fragment((M, G * S), "bfloat16")
            r = TL.alloc_fragment((M, G), "bfloat16")
            TL.copy(X[0, 0], x)
            TL.reduce_absmax(TL.reshape(x, [M, G, S]), r, dim=2)
            TL.copy(r, O[0, 0])

    return main


def test_a_reduction_of_a_view_is_a_masked_reduction_per_group():
    """Two groups: two masked copies of the block (the mask from the column's group), two whole-row reductions
    into one vector, the first filling the result, the second its own column; two blocks added."""
    before = lower_until(per_group_absmax(), PASS)
    after = run_pass(before, PASS)
    ops = [tile_op_name(n) for n in nodes(after["main"].body, lambda n: isinstance(n, tvm.tirx.Evaluate))]
    assert ops.count("reduce") == 2 and ops.count("copy") == 2
    reductions = [n for n in nodes(after["main"].body, lambda n: tile_op_name(n) == "reduce")]
    assert {str(n.value.args[2].value) for n in reductions} == {"absmax"}
    assert {int(n.value.args[3]) for n in reductions} == {1}
    assert set(names(after)["main"]) - set(names(before)["main"]) == {"x_group", "x_absmax", "i", "j"}
    conditions = [n for n in nodes(after["main"].body, lambda n: isinstance(n, tvm.tirx.Call) and
                                   n.op.same_as(tvm.ir.Op.get("tirx.if_then_else")))]
    assert len(conditions) == 3  # two group masks, the second group's column


def test_a_kernel_without_views_is_unchanged():
    before = lower_until(eltwise("add", 64, 96, 32, 32), PASS)
    assert run_pass(before, PASS)["main"].same_as(before["main"])
