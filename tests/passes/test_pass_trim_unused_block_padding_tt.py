"""TrimUnusedBlockPaddingTT alone: a block allocated larger than every access to it (shared memory padded
against bank conflicts) is reallocated as the region its accesses touch; blocks used whole, or whose data
pointer a statement uses, keep their shape. Kernels that need it run in tests/compiler/test_parallel_scans.py."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.passes.helpers import names, tl
from tilelang_tt.passes.trim_unused_block_padding_tt import TrimUnusedBlockPaddingTT

PASS = "TrimUnusedBlockPaddingTT"


def test_registered_under_its_name():
    assert TrimUnusedBlockPaddingTT().info.name == PASS


def test_hand_written_padded_columns_are_trimmed():
    """``s`` [32, 72] is written and read in nests of [32, 64] and copied out as a [32, 64] region: the
    block is [32, 64]; ``o`` [32, 64], used whole, is unchanged."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((32, 64), "float32"), Y: T.Buffer((32, 64), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    s = T.sblock_alloc_buffer((32, 72), "float32", scope="shared.dyn")
                    o = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            s[i, j] = X[i, j]
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            o[i, j] = s[i, j] * T.float32(2)
                    tl.tileop.copy(tl.region(s[0, 0], 1, 32, 64), tl.region(Y[0, 0], 2, 32, 64))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(X: T.Buffer((32, 64), "float32"), Y: T.Buffer((32, 64), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    s = T.sblock_alloc_buffer((32, 64), "float32", scope="shared.dyn")
                    o = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            s[i, j] = X[i, j]
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            o[i, j] = s[i, j] * T.float32(2)
                    tl.tileop.copy(tl.region(s[0, 0], 1, 32, 64), tl.region(Y[0, 0], 2, 32, 64))

    after = TrimUnusedBlockPaddingTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_hand_written_blocks_used_whole_or_by_pointer_keep_their_shape():
    """``s`` is copied whole once (a region of [32, 72]); ``p`` is touched only in [32, 64] but its data
    pointer is an argument of a call (what the call reads is not known): both keep their shapes."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((32, 64), "float32"), Y: T.Buffer((32, 72), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    s = T.sblock_alloc_buffer((32, 72), "float32", scope="shared.dyn")
                    p = T.sblock_alloc_buffer((32, 72), "float32", scope="shared.dyn")
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            s[i, j] = X[i, j]
                            p[i, j] = X[i, j]
                    tl.tileop.copy(tl.region(s[0, 0], 1, 32, 72), tl.region(Y[0, 0], 2, 32, 72))
                    T.evaluate(T.call_extern("int32", "use", p.data))

    after = TrimUnusedBlockPaddingTT()(Before)
    assert after["main"].same_as(Before["main"])


def test_hand_written_window_at_an_offset_is_the_block_and_a_clear_fills_its_part_of_it():
    """TileLang's strided GEMM: ``a`` [32, 64] is cleared whole, written in columns 32..63 and multiplied as the
    slice ``a[:, 32:]``: the block is [32, 32], its accesses 32 columns to the left, the clear of the window
    alone; ``b`` [32, 32] is filled outside what its accesses touch alone, and keeps its shape (the fill would
    be lost)."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((32, 32), "float32"), Y: T.Buffer((32, 32), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((32, 64), "float32", scope="shared.dyn")
                    b = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                    tl.tileop.fill(tl.region(a[0, 0], 2, 32, 64), T.float32(0))
                    tl.tileop.fill(tl.region(b[0, 16], 2, 32, 16), T.float32(0))
                    for i in T.parallel(32):
                        for k in T.parallel(32):
                            a[i, k + 32] = X[i, k]
                            b[i, k // 2] = X[i, k]
                    tl.tileop.copy(tl.region(a[0, 32], 1, 32, 32), tl.region(Y[0, 0], 2, 32, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(X: T.Buffer((32, 32), "float32"), Y: T.Buffer((32, 32), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                    b = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                    tl.tileop.fill(tl.region(a[0, 0], 2, 32, 32), T.float32(0))
                    tl.tileop.fill(tl.region(b[0, 16], 2, 32, 16), T.float32(0))
                    for i in T.parallel(32):
                        for k in T.parallel(32):
                            a[i, k] = X[i, k]
                            b[i, k // 2] = X[i, k]
                    tl.tileop.copy(tl.region(a[0, 0], 1, 32, 32), tl.region(Y[0, 0], 2, 32, 32))

    after = TrimUnusedBlockPaddingTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)
