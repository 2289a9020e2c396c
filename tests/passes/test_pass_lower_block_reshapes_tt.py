"""LowerBlockReshapesTT alone: a row of a block copied into a vector (T.copy or a T.Parallel of its
elements) becomes a masked block and its T.reduce_sum, along the rows for a row vector, along the
columns of the transposed block for a column (per-row) vector; a copy between blocks of the same
tiles stays. Numbers in tests/compiler/test_block_reshapes.py, with the float32 refusal's line."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.passes.helpers import names, tl
from tilelang_tt.passes.lower_block_reshapes_tt import LowerBlockReshapesTT

PASS = "LowerBlockReshapesTT"


def test_registered_under_its_name():
    assert LowerBlockReshapesTT().info.name == PASS


def test_row_into_a_row_vector_and_a_column_vector():
    """``v`` is a row vector (copied to a rank-1 tensor); ``w`` a column one (per row of ``x``):
    row ``s`` of ``parts`` summed down the rows into ``v``, row 1 read transposed and summed along
    the columns into ``w``."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(P: T.Buffer((4, 64), "bfloat16"), O: T.Buffer((64,), "float32"),
                 X: T.Buffer((64, 32), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    parts = T.sblock_alloc_buffer((4, 64), "bfloat16", scope="local.fragment")
                    v = T.sblock_alloc_buffer((64,), "float32", scope="local.fragment")
                    w = T.sblock_alloc_buffer((64,), "float32", scope="local.fragment")
                    x = T.sblock_alloc_buffer((64, 32), "float32", scope="local.fragment")
                    for s in range(4):
                        tl.tileop.copy(tl.region(parts[s, 0], 1, 1, 64), tl.region(v[0], 2, 64))
                    for i in T.parallel(64):
                        w[i] = T.Cast("float32", parts[1, i])
                    for i in T.parallel(64):
                        for j in T.parallel(32):
                            x[i, j] = x[i, j] * w[i]
                    tl.tileop.copy(tl.region(v[0], 1, 64), tl.region(O[0], 2, 64))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(P: T.Buffer((4, 64), "bfloat16"), O: T.Buffer((64,), "float32"),
                 X: T.Buffer((64, 32), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    parts = T.sblock_alloc_buffer((4, 64), "bfloat16", scope="local.fragment")
                    v = T.sblock_alloc_buffer((64,), "float32", scope="local.fragment")
                    w = T.sblock_alloc_buffer((64,), "float32", scope="local.fragment")
                    x = T.sblock_alloc_buffer((64, 32), "float32", scope="local.fragment")
                    parts_row = T.sblock_alloc_buffer((4, 64), "float32", scope="local.fragment")
                    parts_row1 = T.sblock_alloc_buffer((64, 4), "float32", scope="local.fragment")
                    for s in range(4):
                        for i in T.parallel(4):
                            for j in T.parallel(64):
                                parts_row[i, j] = T.if_then_else(i == s, T.Cast("float32", parts[i, j]),
                                                                 T.float32(0))
                        tl.tileop.reduce(tl.region(parts_row[0, 0], 1, 4, 64), tl.region(v[0], 2, 64), "sum", 0,
                                         True)
                    for i in T.parallel(64):
                        for j in T.parallel(4):
                            parts_row1[i, j] = T.if_then_else(j == 1, T.Cast("float32", parts[j, i]), T.float32(0))
                    tl.tileop.reduce(tl.region(parts_row1[0, 0], 1, 64, 4), tl.region(w[0], 2, 64), "sum", 1, True)
                    for i in T.parallel(64):
                        for j in T.parallel(32):
                            x[i, j] = x[i, j] * w[i]
                    tl.tileop.copy(tl.region(v[0], 1, 64), tl.region(O[0], 2, 64))

    after = LowerBlockReshapesTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_copy_between_blocks_of_the_same_tiles_is_unchanged():
    """A [1, 64] block into a row vector of 64: row 0 of the same tiles, a plain copy."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(P: T.Buffer((1, 64), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    p = T.sblock_alloc_buffer((1, 64), "float32", scope="local.fragment")
                    v = T.sblock_alloc_buffer((64,), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(P[0, 0], 1, 1, 64), tl.region(p[0, 0], 2, 1, 64))
                    tl.tileop.copy(tl.region(p[0, 0], 1, 1, 64), tl.region(v[0], 2, 64))

    assert LowerBlockReshapesTT()(Before)["main"].same_as(Before["main"])
