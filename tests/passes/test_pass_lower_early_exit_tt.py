"""LowerEarlyExitTT alone: ``if cond: T.thread_return()`` in a block's straight-line code becomes the
guard of the block's remaining statements; a kernel without an exit is unchanged; an exit inside a
loop is refused at the return (tests/compiler/test_value_control.py: at the user's line, and the
early exit run against torch)."""

import pytest
import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.passes.helpers import tl
from tilelang_tt.errors import TTCompileError
from tilelang_tt.passes.lower_early_exit_tt import LowerEarlyExitTT

PASS = "LowerEarlyExitTT"


def test_registered_under_its_name():
    assert LowerEarlyExitTT().info.name == PASS


@I.ir_module
class Before:
    @T.prim_func
    def main(A: T.Buffer((64, 32), "bfloat16"), counts: T.Buffer((2,), "int32"), C: T.Buffer((64, 32), "bfloat16")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                if counts[bx] == 0:
                    T.thread_return()
                tl.tileop.copy(tl.region(A[bx * 32, 0], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                if bx == 1:
                    T.thread_return()
                tl.tileop.copy(tl.region(a[0, 0], 1, 32, 32), tl.region(C[bx * 32, 0], 2, 32, 32))


@I.ir_module
class Expected:
    @T.prim_func
    def main(A: T.Buffer((64, 32), "bfloat16"), counts: T.Buffer((2,), "int32"), C: T.Buffer((64, 32), "bfloat16")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                if counts[bx] != 0:
                    tl.tileop.copy(tl.region(A[bx * 32, 0], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                    if bx != 1:
                        tl.tileop.copy(tl.region(a[0, 0], 1, 32, 32), tl.region(C[bx * 32, 0], 2, 32, 32))


def test_each_exit_guards_the_statements_after_it():
    tvm.ir.assert_structural_equal(LowerEarlyExitTT()(Before), Expected)


def test_a_kernel_without_an_exit_is_unchanged():
    mod = tvm.IRModule({"main": Expected["main"]})
    assert LowerEarlyExitTT()(mod)["main"].same_as(mod["main"])


def test_an_exit_inside_a_loop_is_refused():
    @T.prim_func
    def main(A: T.Buffer((64, 32), "bfloat16"), counts: T.Buffer((2,), "int32"), C: T.Buffer((64, 32), "bfloat16")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                for k in range(2):
                    if counts[k] == 0:
                        T.thread_return()
                    tl.tileop.copy(tl.region(A[bx * 32, 0], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                    tl.tileop.copy(tl.region(a[0, 0], 1, 32, 32), tl.region(C[bx * 32, 0], 2, 32, 32))

    with pytest.raises(TTCompileError) as info:
        LowerEarlyExitTT()(tvm.IRModule({"main": main}))
    assert "T.thread_return() inside a loop" in info.value.message and info.value.pass_name == PASS
