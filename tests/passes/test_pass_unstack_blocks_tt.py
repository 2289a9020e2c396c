"""UnstackBlocksTT alone: a stack of blocks used one slice per iteration of a loop, each slice written before it
is read, is one block; a stack whose slice carries a value into a later iteration, or is used at several
indices, is left as it is. tests/outside runs TileLang's batched GEMM test written so (gemm/matmul_batched)."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import eltwise, lower_until, run_pass
from tests.passes.helpers import names, tl
from tilelang_tt.passes.unstack_blocks_tt import UnstackBlocksTT

PASS = "UnstackBlocksTT"


def test_registered_under_its_name():
    assert UnstackBlocksTT().info.name == PASS


def test_a_stack_used_one_slice_per_iteration_is_one_block():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((2, 32, 32), "bfloat16"), C: T.Buffer((2, 32, 32), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    A_s = T.sblock_alloc_buffer((2, 32, 32), "bfloat16", scope="shared.dyn")
                    C_l = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    for b in T.serial(2):
                        tl.tileop.copy(tl.region(A[b, 0, 0], 1, 1, 32, 32), tl.region(A_s[b, 0, 0], 2, 1, 32, 32))
                        for i in T.parallel(32):
                            for j in T.parallel(32):
                                C_l[i, j] = T.Cast("float32", A_s[b, i, j])
                        tl.tileop.copy(tl.region(C_l[0, 0], 1, 32, 32), tl.region(C[b, 0, 0], 2, 1, 32, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((2, 32, 32), "bfloat16"), C: T.Buffer((2, 32, 32), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    A_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                    C_l = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    for b in T.serial(2):
                        tl.tileop.copy(tl.region(A[b, 0, 0], 1, 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))
                        for i in T.parallel(32):
                            for j in T.parallel(32):
                                C_l[i, j] = T.Cast("float32", A_s[i, j])
                        tl.tileop.copy(tl.region(C_l[0, 0], 1, 32, 32), tl.region(C[b, 0, 0], 2, 1, 32, 32))

    after = UnstackBlocksTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_a_stack_carrying_a_slice_into_a_later_iteration_is_left():
    @I.ir_module
    class Carried:  # slice b read before it is written in the iteration: its value comes from elsewhere
        @T.prim_func
        def main(A: T.Buffer((2, 32, 32), "bfloat16"), C: T.Buffer((2, 32, 32), "bfloat16")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    A_s = T.sblock_alloc_buffer((2, 32, 32), "bfloat16", scope="shared.dyn")
                    for k in T.serial(2):
                        for b in T.serial(2):
                            tl.tileop.copy(tl.region(A_s[b, 0, 0], 1, 1, 32, 32), tl.region(C[b, 0, 0], 2, 1, 32, 32))
                            tl.tileop.copy(tl.region(A[b, 0, 0], 1, 1, 32, 32), tl.region(A_s[b, 0, 0], 2, 1, 32, 32))

    tvm.ir.assert_structural_equal(UnstackBlocksTT()(Carried), Carried)


def test_a_kernel_without_stacks_is_unchanged():
    before = lower_until(eltwise("add", 64, 96, 32, 32), PASS)
    assert run_pass(before, PASS)["main"].same_as(before["main"])
