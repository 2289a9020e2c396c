"""ScalarRowsToBlocksTT alone: serial loops sweeping a block's row with scalars become row blocks,
reductions along the row and copies of the row out. Kernels run in tests/compiler/test_scalar_rows.py,
which also holds the refusals."""

import tilelang  # noqa: F401
import tilelang.language as TL
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import eltwise, lower_until, run_pass
from tests.passes.helpers import names, nodes, tl
from tilelang_tt.passes.scalar_rows_to_blocks_tt import ScalarRowsToBlocksTT

PASS = "ScalarRowsToBlocksTT"


def test_registered_under_its_name():
    assert ScalarRowsToBlocksTT().info.name == PASS


def test_kernels_without_scalar_sweeps_are_unchanged():
    before = lower_until(eltwise("add", 64, 96, 32, 32), PASS)
    assert run_pass(before, PASS)["main"].same_as(before["main"])


@I.ir_module
class Before:
    @T.prim_func
    def main(X: T.Buffer((32, 64), "float32"), Y: T.Buffer((32, 64), "float32")):
        for bx in T.thread_binding(32, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                m = T.sblock_alloc_buffer((1,), "float32", scope="local")
                m[0] = X[bx, 0]
                for j in range(1, 64):
                    m[0] = T.max(m[0], X[bx, j])
                for j in range(64):
                    Y[bx, j] = X[bx, j] - m[0]


@I.ir_module
class Expected:
    @T.prim_func
    def main(X: T.Buffer((32, 64), "float32"), Y: T.Buffer((32, 64), "float32")):
        for bx in T.thread_binding(32, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                m = T.sblock_alloc_buffer((1,), "float32", scope="local.fragment")
                m_terms = T.sblock_alloc_buffer((1, 64), "float32", scope="local.fragment")
                m_max = T.sblock_alloc_buffer((1,), "float32", scope="local.fragment")
                X_row = T.sblock_alloc_buffer((1, 64), "float32", scope="shared.dyn")
                Y_row = T.sblock_alloc_buffer((1, 64), "float32", scope="local.fragment")
                tl.tileop.copy(tl.region(X[bx, 0], 1, 1, 64), tl.region(X_row[0, 0], 2, 1, 64))
                for i in T.parallel(1):
                    for j in T.parallel(64):
                        m_terms[i, j] = X_row[i, j]
                tl.tileop.reduce(tl.region(m_terms[0, 0], 1, 1, 64), tl.region(m_max[0], 2, 1), "max", 1, T.bool(True))
                for i in T.parallel(1):
                    m[i] = m_max[i]
                for i in T.parallel(1):
                    for j in T.parallel(64):
                        Y_row[i, j] = X_row[i, j] - m[i]
                tl.tileop.copy(tl.region(Y_row[0, 0], 1, 1, 64), tl.region(Y[bx, 0], 2, 1, 64))


def test_a_running_max_started_at_the_first_element_is_a_row_reduction_over_the_whole_row():
    """``m[0] = X[bx, 0]`` then ``for j in range(1, 64): m = max(m, X[bx, j])``: one max over the 64
    elements (the first store is the term at j = 0); the store sweep is a row block copied out."""
    after = ScalarRowsToBlocksTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


@I.ir_module
class SumThenScale:
    @T.prim_func
    def main(X: T.Buffer((8, 32), "float32"), Y: T.Buffer((8, 32), "float32")):
        for bx in T.thread_binding(8, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                s = T.sblock_alloc_buffer((1,), "float32", scope="local")
                s[0] = T.float32(0)
                for j in range(32):
                    e: T.float32 = T.exp(X[bx, j])
                    Y[bx, j] = e
                    s[0] = s[0] + e
                inv: T.float32 = T.float32(1) / s[0]
                for j in range(32):
                    Y[bx, j] = Y[bx, j] * inv


@I.ir_module
class SumThenScaleBlocks:
    @T.prim_func
    def main(X: T.Buffer((8, 32), "float32"), Y: T.Buffer((8, 32), "float32")):
        for bx in T.thread_binding(8, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                s = T.sblock_alloc_buffer((1,), "float32", scope="local.fragment")
                inv = T.sblock_alloc_buffer((1,), "float32", scope="local.fragment")
                X_row = T.sblock_alloc_buffer((1, 32), "float32", scope="shared.dyn")
                Y_row = T.sblock_alloc_buffer((1, 32), "float32", scope="local.fragment")
                s_terms = T.sblock_alloc_buffer((1, 32), "float32", scope="local.fragment")
                s_sum = T.sblock_alloc_buffer((1,), "float32", scope="local.fragment")
                Y_row1 = T.sblock_alloc_buffer((1, 32), "float32", scope="local.fragment")
                for i in T.parallel(1):
                    s[i] = T.float32(0)
                tl.tileop.copy(tl.region(X[bx, 0], 1, 1, 32), tl.region(X_row[0, 0], 2, 1, 32))
                for i in T.parallel(1):
                    for j in T.parallel(32):
                        Y_row[i, j] = T.exp(X_row[i, j])
                for i in T.parallel(1):
                    for j in T.parallel(32):
                        s_terms[i, j] = T.exp(X_row[i, j])
                tl.tileop.reduce(tl.region(s_terms[0, 0], 1, 1, 32), tl.region(s_sum[0], 2, 1), "sum", 1, T.bool(True))
                for i in T.parallel(1):
                    s[i] = s[i] + s_sum[i]
                for i in T.parallel(1):
                    inv[i] = T.float32(1) / s[i]
                for i in T.parallel(1):
                    for j in T.parallel(32):
                        Y_row1[i, j] = Y_row[i, j] * inv[i]
                tl.tileop.copy(tl.region(Y_row1[0, 0], 1, 1, 32), tl.region(Y[bx, 0], 2, 1, 32))


def test_a_sweep_storing_and_summing_is_fissioned_and_a_later_sweep_reads_the_stored_row_block():
    """The named value ``e`` is inlined, the row of X copied in once, the loop's store and sum run one
    after the other over the row, ``inv`` becomes a row scalar, the second sweep reads the first's
    block (not the tensor it has not written yet), and only the last copy of the slice out is kept."""
    after = ScalarRowsToBlocksTT()(SumThenScale)
    tvm.ir.assert_structural_equal(after, SumThenScaleBlocks)
    assert names(after) == names(SumThenScaleBlocks)


def column_sweep():
    @TL.prim_func
    def main(X: TL.Tensor((64, 32), "float32"), Y: TL.Tensor((64, 32), "float32")):
        with TL.Kernel(32, threads=1) as bx:
            for j in range(64):
                Y[j, bx] = X[j, bx] * 2.0

    return main


def test_a_sweep_down_a_column_is_left_to_the_later_passes():
    before = lower_until(column_sweep(), PASS)
    after = run_pass(before, PASS)
    assert after["main"].same_as(before["main"])
    assert not nodes(after["main"].body, lambda n: isinstance(n, tvm.tirx.For) and n.kind == tvm.tirx.ForKind.PARALLEL)


def previous_element():
    """``Y[bx, j]`` reads the element the previous iteration stored: a recurrence along the row, which
    running each statement over the whole row would change."""
    @TL.prim_func
    def main(X: TL.Tensor((32, 64), "float32"), Y: TL.Tensor((32, 64), "float32")):
        with TL.Kernel(32, threads=1) as bx:
            for j in range(1, 64):
                Y[bx, j] = Y[bx, j - 1] + X[bx, j]

    return main


def test_a_read_of_an_element_an_earlier_iteration_stored_is_left_to_the_later_passes():
    before = lower_until(previous_element(), PASS)
    assert run_pass(before, PASS)["main"].same_as(before["main"])


def halved_scalar():
    """``g`` halved in a loop that reads no tensor element: no row is swept (InlineScalarVarsTT's)."""
    @TL.prim_func
    def main(X: TL.Tensor((32, 64), "float32"), Y: TL.Tensor((32, 64), "float32")):
        with TL.Kernel(1, threads=1) as bx:
            g = TL.alloc_local((1,), "float32")
            g[0] = TL.float32(1)
            for k in TL.serial(3):
                g[0] = g[0] * 0.5
            for i, j in TL.Parallel(32, 64):
                Y[bx * 32 + i, j] = X[bx * 32 + i, j] * g[0]

    return main


def test_a_loop_sweeping_no_row_is_left_to_the_later_passes():
    before = lower_until(halved_scalar(), PASS)
    assert run_pass(before, PASS)["main"].same_as(before["main"])


@I.ir_module
class RunningProduct:
    @T.prim_func
    def main(X: T.Buffer((32, 64), "float32"), Y: T.Buffer((32, 64), "float32")):
        for bx in T.thread_binding(32, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                r = T.sblock_alloc_buffer((1,), "float32", scope="local")
                r[0] = T.float32(1)
                for j in range(64):
                    r[0] = r[0] * X[bx, j]
                    Y[bx, j] = r[0]


@I.ir_module
class RunningProductSerial:
    @T.prim_func
    def main(X: T.Buffer((32, 64), "float32"), Y: T.Buffer((32, 64), "float32")):
        for bx in T.thread_binding(32, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                r = T.sblock_alloc_buffer((1,), "float32", scope="local.fragment")
                for i in T.parallel(1):
                    r[i] = T.float32(1)
                for j in range(64):
                    for i in T.parallel(1):
                        r[i] = r[i] * X[bx + i, j]
                    for i in T.parallel(1):
                        Y[bx + i, j] = r[i]


def test_a_running_product_keeps_its_serial_loop_each_statement_a_nest_over_the_rows_element():
    """No block scan multiplies in the kernel's order: the loop stays, each statement at row ``bx + i``."""
    after = ScalarRowsToBlocksTT()(RunningProduct)
    tvm.ir.assert_structural_equal(after, RunningProductSerial)
    assert names(after) == names(RunningProductSerial)
