"""CheckKernelFormsTT alone: a kernel of forms Tenstorrent has comes out as it went in (branches on
tensor elements and with an ``else`` included); a dynamic block size and a branch on an on-chip
block around tile operations are refused at the statement at fault. The thread-index rule and the refusals on TileLang kernels (with their
source lines) are in tests/compiler/test_negative.py and test_dynamic_shapes.py."""

import pytest
import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.passes.helpers import tl
from tilelang_tt.errors import TTCompileError
from tilelang_tt.passes.check_kernel_forms_tt import CheckKernelFormsTT

PASS = "CheckKernelFormsTT"


def test_registered_under_its_name():
    assert CheckKernelFormsTT().info.name == PASS


def test_hand_written_kernel_of_known_forms_is_unchanged():
    """Block copies, an ``if`` on a block coordinate around them and a block-sparse branch (the reads
    and an accumulating gemm under a mask element): every form has a Tenstorrent form, nothing changes."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "bfloat16"), B: T.Buffer((64, 64), "bfloat16"),
                 Mask: T.Buffer((2, 2), "uint8"), C: T.Buffer((64, 64), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="shared.dyn")
                    b = T.sblock_alloc_buffer((64, 32), "bfloat16", scope="shared.dyn")
                    acc = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    if Mask[bx, 0] != T.uint8(0):
                        tl.tileop.copy(tl.region(A[bx * 32, 0], 1, 32, 64), tl.region(a[0, 0], 2, 32, 64))
                        tl.tileop.copy(tl.region(B[0, bx * 32], 1, 64, 32), tl.region(b[0, 0], 2, 64, 32))
                        tl.tileop.gemm(tl.region(a[0, 0], 1, 32, 64), tl.region(b[0, 0], 1, 64, 32),
                                       tl.region(acc[0, 0], 3, 32, 32), False, False, 32, 32, 64, 0, False, 0, 0, 0)
                    if bx < 2:
                        tl.tileop.copy(tl.region(acc[0, 0], 1, 32, 32), tl.region(C[bx * 32, 0], 2, 32, 32))

    assert CheckKernelFormsTT()(Before)["main"].same_as(Before["main"])
    tvm.ir.assert_structural_equal(CheckKernelFormsTT()(Before), Before)


def _copy_kernel(branch: str):
    """A copy of one block through ``a`` under the branch named."""
    if branch == "mask":
        @T.prim_func
        def main(A: T.Buffer((64, 32), "bfloat16"), Mask: T.Buffer((2,), "int32"), C: T.Buffer((64, 32), "bfloat16")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                    if Mask[bx] != 0:
                        tl.tileop.copy(tl.region(A[bx * 32, 0], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                        tl.tileop.copy(tl.region(a[0, 0], 1, 32, 32), tl.region(C[bx * 32, 0], 2, 32, 32))
        return main

    @T.prim_func
    def main(A: T.Buffer((64, 32), "bfloat16"), C: T.Buffer((64, 32), "bfloat16")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                if bx < 1:
                    tl.tileop.copy(tl.region(A[bx * 32, 0], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                else:
                    tl.tileop.copy(tl.region(A[0, 0], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                tl.tileop.copy(tl.region(a[0, 0], 1, 32, 32), tl.region(C[bx * 32, 0], 2, 32, 32))
    return main


@pytest.mark.parametrize("branch", ["mask", "else"])
def test_hand_written_branch_on_a_tensor_or_with_else_is_unchanged(branch):
    """A branch on a tensor element (the reader reads it and hands it on) and an if/else around tile
    operations have Tenstorrent forms: the kernel comes out as it went in."""
    before = tvm.IRModule({"main": _copy_kernel(branch)})
    assert CheckKernelFormsTT()(before)["main"].same_as(before["main"])


def test_hand_written_branch_on_an_on_chip_block_refused():
    """Only compute holds an on-chip block; the reader and writer take the branch too."""
    @T.prim_func
    def main(A: T.Buffer((64, 32), "bfloat16"), C: T.Buffer((64, 32), "bfloat16")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                tl.tileop.copy(tl.region(A[bx * 32, 0], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                if a[0, 0] > T.bfloat16(0):
                    tl.tileop.copy(tl.region(a[0, 0], 1, 32, 32), tl.region(C[bx * 32, 0], 2, 32, 32))

    with pytest.raises(TTCompileError) as info:
        CheckKernelFormsTT()(tvm.IRModule({"main": main}))
    assert ("around tile operations (T.copy, T.gemm, T.Parallel) decides on the on-chip buffer `a`"
            in info.value.message)
    assert info.value.pass_name == PASS


def test_hand_written_dynamic_block_refused():
    """An on-chip block sized by a dynamic size: CBs are sized when the kernel is compiled."""
    n = tvm.tirx.Var("n", "int32")

    @T.prim_func
    def main(a: T.handle, c: T.handle):
        A = T.match_buffer(a, (32, n), "float32")
        C = T.match_buffer(c, (32, n), "float32")
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                x = T.sblock_alloc_buffer((32, n), "float32", scope="shared.dyn")
                tl.tileop.copy(tl.region(A[0, 0], 1, 32, n), tl.region(x[0, 0], 2, 32, n))
                tl.tileop.copy(tl.region(x[0, 0], 1, 32, n), tl.region(C[0, 0], 2, 32, n))

    with pytest.raises(TTCompileError) as info:
        CheckKernelFormsTT()(tvm.IRModule({"main": main}))
    assert "on-chip buffer `x` has the shape [32, n], which depends on a dynamic size" in info.value.message
    assert info.value.pass_name == PASS
