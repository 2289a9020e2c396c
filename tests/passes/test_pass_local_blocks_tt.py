"""LocalBlocksTT alone: a T.alloc_local array used only in T.Parallel nests and tile ops becomes a
fragment; one read or written in serial code stays local (refused by name later, at its store).
A kernel using such an array runs in tests/compiler/test_any_shape.py."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import eltwise, lower_until, run_pass
from tests.passes.helpers import alloc, names, tl
from tilelang_tt.passes.local_blocks_tt import LocalBlocksTT

PASS = "LocalBlocksTT"


def test_registered_under_its_name():
    assert LocalBlocksTT().info.name == PASS


def test_kernels_without_local_arrays_are_unchanged():
    before = lower_until(eltwise("add", 64, 96, 32, 32), PASS)
    assert run_pass(before, PASS)["main"].same_as(before["main"])


def test_hand_written_local_block_becomes_a_fragment():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16, 64), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((16, 64), "float32", scope="local")
                    tl.tileop.copy(tl.region(A[0, 0], 1, 16, 64), tl.region(a[0, 0], 2, 16, 64))
                    for i in T.parallel(16):
                        for j in T.parallel(64):
                            a[i, j] = a[i, j] * T.float32(2)
                    tl.tileop.copy(tl.region(a[0, 0], 1, 16, 64), tl.region(B[0, 0], 2, 16, 64))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16, 64), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((16, 64), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(A[0, 0], 1, 16, 64), tl.region(a[0, 0], 2, 16, 64))
                    for i in T.parallel(16):
                        for j in T.parallel(64):
                            a[i, j] = a[i, j] * T.float32(2)
                    tl.tileop.copy(tl.region(a[0, 0], 1, 16, 64), tl.region(B[0, 0], 2, 16, 64))

    after = LocalBlocksTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)
    assert alloc(after["main"], "a").scope() == "local.fragment"  # structural equality ignores the scope's name


def test_hand_written_local_register_of_serial_code_stays_local():
    """``acc[0] = ..`` outside a T.Parallel: a GPU thread's register, not a block."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    acc = T.sblock_alloc_buffer((1,), "float32", scope="local")
                    acc[0] = T.float32(0)
                    for i in T.parallel(64):
                        B[i] = A[i] + acc[0]

    after = LocalBlocksTT()(Before)
    tvm.ir.assert_structural_equal(after, Before)
    assert alloc(after["main"], "acc").scope() == "local"
