"""DropOverwrittenStoresTT alone, on hand-written TIR, and on a kernel: a store into a tensor that a
later copy overwrites goes; one that something reads first, or that the copy may miss, stays."""

import tilelang  # noqa: F401
import tilelang.language as TL
import torch
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

import tilelang_tt
from tests.kernels import lower_until, run_pass
from tests.passes.helpers import tl
from tilelang_tt.passes.drop_overwritten_stores_tt import PASS, DropOverwrittenStoresTT


def test_registered_under_its_name():
    assert DropOverwrittenStoresTT().info.name == PASS


def test_a_store_the_copy_out_overwrites_goes():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((256,), "int32"), B: T.Buffer((256,), "int32")):
            for bx in T.thread_binding(4, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    B_l = T.sblock_alloc_buffer((64,), "int32", scope="local.fragment")
                    B[bx * 64 + 3] = A[bx * 64]
                    for i in T.parallel(64):
                        B_l[i] = 5
                    tl.tileop.copy(tl.region(B_l[0], 1, 64), tl.region(B[bx * 64], 2, 64))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((256,), "int32"), B: T.Buffer((256,), "int32")):
            for bx in T.thread_binding(4, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    B_l = T.sblock_alloc_buffer((64,), "int32", scope="local.fragment")
                    for i in T.parallel(64):
                        B_l[i] = 5
                    tl.tileop.copy(tl.region(B_l[0], 1, 64), tl.region(B[bx * 64], 2, 64))

    tvm.ir.assert_structural_equal(DropOverwrittenStoresTT()(Before), Expected)


def test_a_store_read_before_or_outside_the_copy_stays():
    """The first store is read into ``B_l`` before the copy; the second lies past the copied region."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((256,), "int32"), B: T.Buffer((256,), "int32")):
            for bx in T.thread_binding(4, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    B_l = T.sblock_alloc_buffer((64,), "int32", scope="local.fragment")
                    B[bx * 64] = A[bx * 64]
                    for i in T.parallel(64):
                        B_l[i] = B[bx * 64]
                    tl.tileop.copy(tl.region(B_l[0], 1, 64), tl.region(B[bx * 64], 2, 64))
                    B[bx * 64 + 64] = A[bx * 64]
                    tl.tileop.copy(tl.region(B_l[0], 1, 64), tl.region(B[bx * 64], 2, 64))

    assert DropOverwrittenStoresTT()(Before)["main"].same_as(Before["main"])


def alloc_var_with_initializer(N=256, block=64, init=5):
    """TileLang's test_tilelang_language_alloc.py ``alloc_var_with_initializer``: ``T.copy`` given two
    element accesses copies one element, which the T.Parallel nest then overwrites."""

    @TL.prim_func
    def main(A: TL.Tensor((N,), "int32"), B: TL.Tensor((N,), "int32")):
        with TL.Kernel(TL.ceildiv(N, block), threads=block) as bx:
            tmp = TL.alloc_var("int32", init)
            TL.copy(A[bx * block], B[bx * block])
            for i in TL.Parallel(block):
                B[bx * block + i] = tmp

    return main


def test_the_scalar_copy_before_a_nest_over_the_block_goes_and_the_kernel_runs():
    before = lower_until(alloc_var_with_initializer(), PASS)
    after = run_pass(before, PASS)["main"]
    assert "B[bx * 64] = A[bx * 64]" in before["main"].script() and "A[" not in after.script()
    a = torch.randint(-9, 9, (256,), generator=torch.Generator().manual_seed(1), dtype=torch.int32)
    out = torch.as_tensor(tilelang_tt.compile(alloc_var_with_initializer()).run(a))
    assert torch.equal(out, torch.full_like(a, 5))
