"""ParallelizeRowLoopsTT alone: a serial loop over a block's rows around or inside a 1-D T.Parallel
is the 2-D nest, an accumulation over the rows among other statements a nest of its own; a body
whose rows depend on each other keeps its loops. The kernels run in tests/compiler/test_any_shape.py."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import eltwise, lower_until, run_pass
from tests.passes.helpers import names
from tilelang_tt.passes.parallelize_row_loops_tt import ParallelizeRowLoopsTT

PASS = "ParallelizeRowLoopsTT"


def test_registered_under_its_name():
    assert ParallelizeRowLoopsTT().info.name == PASS


def test_kernels_without_row_loops_are_unchanged():
    before = lower_until(eltwise("add", 64, 96, 32, 32), PASS)
    assert run_pass(before, PASS)["main"].same_as(before["main"])


def test_hand_written_rows_around_a_parallel_loop_are_one_nest():
    """The combine step of flash decoding: each split's log-sum-exps added into the total."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main():
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    parts = T.sblock_alloc_buffer((4, 128), "float32", scope="local.fragment")
                    peak = T.sblock_alloc_buffer((128,), "float32", scope="local.fragment")
                    total = T.sblock_alloc_buffer((128,), "float32", scope="local.fragment")
                    for sp in range(4):
                        for t in T.parallel(128):
                            total[t] = total[t] + T.exp2(parts[sp, t] - peak[t])

    @I.ir_module
    class Expected:
        @T.prim_func
        def main():
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    parts = T.sblock_alloc_buffer((4, 128), "float32", scope="local.fragment")
                    peak = T.sblock_alloc_buffer((128,), "float32", scope="local.fragment")
                    total = T.sblock_alloc_buffer((128,), "float32", scope="local.fragment")
                    for sp in T.parallel(4):
                        for t in T.parallel(128):
                            total[t] = total[t] + T.exp2(parts[sp, t] - peak[t])

    after = ParallelizeRowLoopsTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_hand_written_rows_inside_a_parallel_loop_with_a_sum_are_a_nest_per_statement():
    """A thread per column walking the rows: the row's product and the column sum become two nests
    over (rows, columns), rows first as ``y[i, j]`` indexes them, the named value substituted."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main():
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((8, 64), "float32", scope="shared.dyn")
                    y = T.sblock_alloc_buffer((8, 64), "float32", scope="local.fragment")
                    col = T.sblock_alloc_buffer((64,), "float32", scope="local.fragment")
                    for j in T.parallel(64):
                        for i in range(8):
                            v: T.float32 = x[i, j] * T.float32(2)
                            y[i, j] = v
                            col[j] = col[j] + v

    @I.ir_module
    class Expected:
        @T.prim_func
        def main():
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((8, 64), "float32", scope="shared.dyn")
                    y = T.sblock_alloc_buffer((8, 64), "float32", scope="local.fragment")
                    col = T.sblock_alloc_buffer((64,), "float32", scope="local.fragment")
                    for i in T.parallel(8):
                        for j in T.parallel(64):
                            y[i, j] = x[i, j] * T.float32(2)
                    for i in T.parallel(8):
                        for j in T.parallel(64):
                            col[j] = col[j] + x[i, j] * T.float32(2)

    after = ParallelizeRowLoopsTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_hand_written_dependent_rows_keep_their_loops():
    """Row i reads row i - 1 (a recurrence): the rows cannot run at once."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main():
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    y = T.sblock_alloc_buffer((8, 64), "float32", scope="local.fragment")
                    for i in range(1, 8):
                        for j in T.parallel(64):
                            y[i, j] = y[i - 1, j] * T.float32(2)

    tvm.ir.assert_structural_equal(ParallelizeRowLoopsTT()(Before), Before)


def test_hand_written_halves_of_a_rank1_block_at_a_flat_index_are_one_nest():
    """TileOPs' FFT staging, ``smem[i + h * 128] = x[bx, i + h * 128]`` over the two halves ``h``: the
    element ``h * 128 + i`` is each iteration's own, the rows ``h`` first; a half read by the other
    iteration (``smem[i + (1 - h) * 128]``) keeps its loops."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(x: T.Buffer((8, 256), "float32")):
            for bx in T.thread_binding(8, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    smem = T.sblock_alloc_buffer((256,), "float32", scope="shared.dyn")
                    for h in range(2):
                        for i in T.parallel(128):
                            smem[i + h * 128] = x[bx, i + h * 128]

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(x: T.Buffer((8, 256), "float32")):
            for bx in T.thread_binding(8, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    smem = T.sblock_alloc_buffer((256,), "float32", scope="shared.dyn")
                    for h in T.parallel(2):
                        for i in T.parallel(128):
                            smem[i + h * 128] = x[bx, i + h * 128]

    after = ParallelizeRowLoopsTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)

    @I.ir_module
    class Swapped:
        @T.prim_func
        def main():
            for bx in T.thread_binding(8, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    smem = T.sblock_alloc_buffer((256,), "float32", scope="shared.dyn")
                    for h in range(2):
                        for i in T.parallel(128):
                            smem[i + h * 128] = smem[i + (1 - h) * 128]

    tvm.ir.assert_structural_equal(ParallelizeRowLoopsTT()(Swapped), Swapped)


def test_hand_written_rows_reading_a_tensor_at_swapped_indices_are_ordered_as_the_block():
    """``F[i, j] = A[bx * 64 + j, i]``: the nest's rows are the block's rows i (the tensor read transposed), not
    the tensor's rows j, which would make the block's own store the swapped access."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((128, 32), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    F = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    for i in range(32):
                        for j in T.parallel(64):
                            F[i, j] = A[bx * 64 + j, i]

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((128, 32), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    F = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            F[i, j] = A[bx * 64 + j, i]

    tvm.ir.assert_structural_equal(ParallelizeRowLoopsTT()(Before), Expected)


def test_hand_written_stores_at_row_r0_plus_i_of_a_tensor_are_one_nest():
    """A thread per column storing row ``by * 32 + i`` of a tensor: each row its own; two stores writing rows
    ``i`` and ``i + 1`` of one block write each other's rows and keep their loops."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
            for by in T.thread_binding(2, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    for j in T.parallel(64):
                        for i in range(32):
                            B[by * 32 + i, j] = A[j, by * 32 + i] + T.float32(1)

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
            for by in T.thread_binding(2, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            B[by * 32 + i, j] = A[j, by * 32 + i] + T.float32(1)

    tvm.ir.assert_structural_equal(ParallelizeRowLoopsTT()(Before), Expected)

    @I.ir_module
    class Overlapping:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "float32")):
            for by in T.thread_binding(2, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    y = T.sblock_alloc_buffer((33, 64), "float32", scope="local.fragment")
                    for i in range(32):
                        for j in T.parallel(64):
                            y[i, j] = A[by * 32 + i, j]
                            y[i + 1, j] = y[i, j] * T.float32(2)

    tvm.ir.assert_structural_equal(ParallelizeRowLoopsTT()(Overlapping), Overlapping)
