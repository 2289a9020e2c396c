"""PadBlocksTT alone: blocks of any shape become blocks of whole tiles, the nests over them run over
the padded shape, copies with tensors keep their valid extents, and the padding is masked before a
reduction along it or a contraction over it unless it is the reader's zeros; kernels of whole-tile
blocks are left as they are. The kernels that need it run in tests/compiler/test_any_shape.py,
where its refusals are checked at their lines."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import eltwise, lower_until, run_pass
from tests.passes.helpers import names, tl, tt_attrs
from tilelang_tt.passes.pad_blocks_tt import PadBlocksTT

PASS = "PadBlocksTT"


def test_registered_under_its_name():
    assert PadBlocksTT().info.name == PASS


def test_whole_tile_blocks_are_unchanged():
    before = lower_until(eltwise("add", 64, 96, 32, 32), PASS)
    assert run_pass(before, PASS)["main"].same_as(before["main"])


def test_hand_written_max_along_padded_rows_reads_the_padding_as_minus_infinity():
    """A [4, 128] block read from a 4-row matrix: 32 rows of tiles, the copy's block side the 4 valid
    rows; the max along the rows reads ``lse_masked`` (rows 4 on -inf); the nest over [4, 64] runs
    over 32 rows; the valid values go to ``tt.padded_blocks``."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(P: T.Buffer((1, 2, 4, 128), "bfloat16"), R: T.Buffer((128,), "float32"),
                 O: T.Buffer((4, 64), "bfloat16")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    lse = T.sblock_alloc_buffer((4, 128), "bfloat16", scope="local.fragment")
                    peak = T.sblock_alloc_buffer((128,), "float32", scope="local.fragment")
                    o = T.sblock_alloc_buffer((4, 64), "bfloat16", scope="local.fragment")
                    tl.tileop.copy(tl.region(P[0, 1, 0, 0], 1, 1, 1, 4, 128), tl.region(lse[0, 0], 2, 4, 128))
                    tl.tileop.reduce(tl.region(lse[0, 0], 1, 4, 128), tl.region(peak[0], 2, 128), "max", 0, True)
                    for i in T.parallel(4):
                        for d in T.parallel(64):
                            o[i, d] = lse[i, d] * T.bfloat16(2)
                    tl.tileop.copy(tl.region(peak[0], 1, 128), tl.region(R[0], 2, 128))
                    tl.tileop.copy(tl.region(o[0, 0], 1, 4, 64), tl.region(O[0, 0], 2, 4, 64))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(P: T.Buffer((1, 2, 4, 128), "bfloat16"), R: T.Buffer((128,), "float32"),
                 O: T.Buffer((4, 64), "bfloat16")):
            T.func_attr(tt_attrs({"tt.padded_blocks": {"lse": [4, 128], "lse_masked": [4, 128], "o": [4, 64]}}))
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    lse = T.sblock_alloc_buffer((32, 128), "bfloat16", scope="local.fragment")
                    peak = T.sblock_alloc_buffer((128,), "float32", scope="local.fragment")
                    o = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="local.fragment")
                    lse_masked = T.sblock_alloc_buffer((32, 128), "bfloat16", scope="local.fragment")
                    tl.tileop.copy(tl.region(P[0, 1, 0, 0], 1, 1, 1, 4, 128), tl.region(lse[0, 0], 2, 4, 128))
                    for i in T.parallel(32):
                        for j in T.parallel(128):
                            lse_masked[i, j] = T.if_then_else(  # TileLang's T.infinity: the op tl.infinity
                                i < 4, lse[i, j], T.Cast("bfloat16", tl.infinity("float32", dtype="float32")
                                                         * T.float32(-1.0)))
                    tl.tileop.reduce(tl.region(lse_masked[0, 0], 1, 32, 128), tl.region(peak[0], 2, 128), "max", 0,
                                     True)
                    for i in T.parallel(32):
                        for d in T.parallel(64):
                            o[i, d] = lse[i, d] * T.bfloat16(2)
                    tl.tileop.copy(tl.region(peak[0], 1, 128), tl.region(R[0], 2, 128))
                    tl.tileop.copy(tl.region(o[0, 0], 1, 4, 64), tl.region(O[0, 0], 2, 4, 64))

    after = PadBlocksTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)  # assert_structural_equal ignores names


def test_hand_written_contraction_masks_only_computed_padding():
    """K = 40: A comes from a tensor (the reader's zeros past column 40: no mask), B is computed (its
    rows 40.. hold exp(0) = 1: masked to 0 in ``b_masked``); the gemm's M, N and K are the padded ones
    and the sum of A's rows along its padded columns needs no mask either."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((8, 40), "bfloat16"), B: T.Buffer((40, 64), "bfloat16"), C: T.Buffer((8, 64), "float32"),
                 S: T.Buffer((8,), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((8, 40), "bfloat16", scope="shared.dyn")
                    b = T.sblock_alloc_buffer((40, 64), "bfloat16", scope="local.fragment")
                    c = T.sblock_alloc_buffer((8, 64), "float32", scope="local.fragment")
                    s = T.sblock_alloc_buffer((8,), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(A[0, 0], 1, 8, 40), tl.region(a[0, 0], 2, 8, 40))
                    tl.tileop.copy(tl.region(B[0, 0], 1, 40, 64), tl.region(b[0, 0], 2, 40, 64))
                    for k in T.parallel(40):
                        for j in T.parallel(64):
                            b[k, j] = T.exp(b[k, j])
                    tl.tileop.fill(tl.region(c[0, 0], 2, 8, 64), 0)
                    tl.tileop.gemm(tl.region(a[0, 0], 1, 8, 40), tl.region(b[0, 0], 1, 40, 64),
                                   tl.region(c[0, 0], 3, 8, 64), False, False, 8, 64, 40, 1, False, 0, 0, 0)
                    tl.tileop.reduce(tl.region(a[0, 0], 1, 8, 40), tl.region(s[0], 2, 8), "sum", 1, True)
                    tl.tileop.copy(tl.region(c[0, 0], 1, 8, 64), tl.region(C[0, 0], 2, 8, 64))
                    tl.tileop.copy(tl.region(s[0], 1, 8), tl.region(S[0], 2, 8))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((8, 40), "bfloat16"), B: T.Buffer((40, 64), "bfloat16"), C: T.Buffer((8, 64), "float32"),
                 S: T.Buffer((8,), "float32")):
            T.func_attr(tt_attrs({"tt.padded_blocks": {"a": [8, 40], "b": [40, 64], "b_masked": [40, 64],
                                                       "c": [8, 64], "s": [1, 8]}}))
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="shared.dyn")
                    b = T.sblock_alloc_buffer((64, 64), "bfloat16", scope="local.fragment")
                    c = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    s = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    b_masked = T.sblock_alloc_buffer((64, 64), "bfloat16", scope="local.fragment")
                    tl.tileop.copy(tl.region(A[0, 0], 1, 8, 40), tl.region(a[0, 0], 2, 8, 40))
                    tl.tileop.copy(tl.region(B[0, 0], 1, 40, 64), tl.region(b[0, 0], 2, 40, 64))
                    for k in T.parallel(64):
                        for j in T.parallel(64):
                            b[k, j] = T.exp(b[k, j])
                    tl.tileop.fill(tl.region(c[0, 0], 2, 32, 64), 0)
                    for i in T.parallel(64):
                        for j in T.parallel(64):
                            b_masked[i, j] = T.if_then_else(i < 40, b[i, j], T.bfloat16(0))
                    tl.tileop.gemm(tl.region(a[0, 0], 1, 32, 64), tl.region(b_masked[0, 0], 1, 64, 64),
                                   tl.region(c[0, 0], 3, 32, 64), False, False, 32, 64, 64, 1, False, 0, 0, 0)
                    tl.tileop.reduce(tl.region(a[0, 0], 1, 32, 64), tl.region(s[0], 2, 32), "sum", 1, True)
                    tl.tileop.copy(tl.region(c[0, 0], 1, 8, 64), tl.region(C[0, 0], 2, 8, 64))
                    tl.tileop.copy(tl.region(s[0], 1, 8), tl.region(S[0], 2, 8))

    after = PadBlocksTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_hand_written_rank3_block_is_its_stacked_matrices():
    """[2, 64, 32]: the 128 x 32 matrix; the nest over (b, i, j) is one over its 128 rows."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((4, 64, 32), "bfloat16"), Y: T.Buffer((4, 64, 32), "bfloat16")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((2, 64, 32), "bfloat16", scope="shared.dyn")
                    y = T.sblock_alloc_buffer((2, 64, 32), "bfloat16", scope="local.fragment")
                    tl.tileop.copy(tl.region(X[bx * 2, 0, 0], 1, 2, 64, 32), tl.region(x[0, 0, 0], 2, 2, 64, 32))
                    for b in T.parallel(2):
                        for i in T.parallel(64):
                            for j in T.parallel(32):
                                y[b, i, j] = x[b, i, j] + x[b, i, j]
                    tl.tileop.copy(tl.region(y[0, 0, 0], 1, 2, 64, 32), tl.region(Y[bx * 2, 0, 0], 2, 2, 64, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(X: T.Buffer((4, 64, 32), "bfloat16"), Y: T.Buffer((4, 64, 32), "bfloat16")):
            T.func_attr(tt_attrs({"tt.padded_blocks": {"x": [128, 32], "y": [128, 32]}}))
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((128, 32), "bfloat16", scope="shared.dyn")
                    y = T.sblock_alloc_buffer((128, 32), "bfloat16", scope="local.fragment")
                    tl.tileop.copy(tl.region(X[bx * 2, 0, 0], 1, 2, 64, 32), tl.region(x[0, 0], 2, 128, 32))
                    for b_rows in T.parallel(128):
                        for j in T.parallel(32):
                            y[b_rows, j] = x[b_rows, j] + x[b_rows, j]
                    tl.tileop.copy(tl.region(y[0, 0], 1, 128, 32), tl.region(Y[bx * 2, 0, 0], 2, 2, 64, 32))

    after = PadBlocksTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_hand_written_nest_over_part_of_a_block_keeps_its_loops():
    """A nest over 2 of the 4 rows does not cover the block: its loops stay (the element-wise lowering
    judges it); the block is padded all the same."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((4, 64), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((4, 64), "float32", scope="local.fragment")
                    for i in T.parallel(2):
                        for j in T.parallel(64):
                            x[i, j] = T.float32(1)
                    tl.tileop.copy(tl.region(x[0, 0], 1, 4, 64), tl.region(X[0, 0], 2, 4, 64))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(X: T.Buffer((4, 64), "float32")):
            T.func_attr(tt_attrs({"tt.padded_blocks": {"x": [4, 64]}}))
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    for i in T.parallel(2):
                        for j in T.parallel(64):
                            x[i, j] = T.float32(1)
                    tl.tileop.copy(tl.region(x[0, 0], 1, 4, 64), tl.region(X[0, 0], 2, 4, 64))

    tvm.ir.assert_structural_equal(PadBlocksTT()(Before), Expected)
