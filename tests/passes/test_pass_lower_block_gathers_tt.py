"""LowerBlockGathersTT alone: a read of an on-chip block at computed indices in a T.Parallel nest becomes the
product of the block with a selection matrix the reader generates (x @ P along columns, Q @ x along rows), read
in the nest instead; float32 blocks in three bfloat16 pieces; a serial loop whose steps change the selection
unrolled; nests of other forms left as they are; reads outside the block and indices of tensor values refused.
Kernels run in tests/compiler/test_block_gathers.py."""

import pytest
import tilelang  # noqa: F401
import tvm
from tvm import tirx
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.passes.helpers import names, tl
from tilelang_tt.errors import TTCompileError
from tilelang_tt.passes.lower_block_gathers_tt import LowerBlockGathersTT

PASS = "LowerBlockGathersTT"


def test_registered_under_its_name():
    assert LowerBlockGathersTT().info.name == PASS


def test_a_rotation_of_columns_is_a_product_with_its_selection_matrix():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32, 32), "bfloat16")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                    b = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="local.fragment")
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            b[i, j] = a[i, (j + 3) % 32]

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((32, 32), "bfloat16")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                    b = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="local.fragment")
                    a_sel = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                    a_gather = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            a_sel[i, j] = T.if_then_else(i == (j + 3) % 32, T.bfloat16(1.0), T.bfloat16(0.0))
                    tl.tileop.fill(tl.region(a_gather[0, 0], 2, 32, 32), 0)
                    tl.tileop.gemm(tl.region(a[0, 0], 1, 32, 32), tl.region(a_sel[0, 0], 1, 32, 32),
                                   tl.region(a_gather[0, 0], 3, 32, 32), T.bool(False), T.bool(False), 32, 32, 32, 0,
                                   T.bool(False), 0, 0, 0)
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            b[i, j] = T.Cast("bfloat16", a_gather[i, j])

    after = LowerBlockGathersTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_a_float32_row_partner_under_a_condition_is_gathered_in_three_pieces_from_the_left():
    """``a[i + 1, j]`` read where ``i % 2 == 0`` only: Q's rows where the condition fails are zero, so no
    index past the block is read; float32 data multiplied as hi + mid + lo bfloat16 pieces."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64, 32), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((64, 32), "float32", scope="shared.dyn")
                    b = T.sblock_alloc_buffer((64, 32), "float32", scope="local.fragment")
                    for i in T.parallel(64):
                        for j in T.parallel(32):
                            b[i, j] = T.if_then_else(i % 2 == 0, a[i + 1, j], a[i, j] * T.float32(2))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((64, 32), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((64, 32), "float32", scope="shared.dyn")
                    b = T.sblock_alloc_buffer((64, 32), "float32", scope="local.fragment")
                    a_sel = T.sblock_alloc_buffer((64, 64), "bfloat16", scope="shared.dyn")
                    a_hi = T.sblock_alloc_buffer((64, 32), "bfloat16", scope="local.fragment")
                    a_mid = T.sblock_alloc_buffer((64, 32), "bfloat16", scope="local.fragment")
                    a_lo = T.sblock_alloc_buffer((64, 32), "bfloat16", scope="local.fragment")
                    a_gather = T.sblock_alloc_buffer((64, 32), "float32", scope="local.fragment")
                    for i in T.parallel(64):
                        for j in T.parallel(64):
                            a_sel[i, j] = T.if_then_else(i % 2 == 0 and j == i + 1, T.bfloat16(1.0), T.bfloat16(0.0))
                    for i in T.parallel(64):
                        for j in T.parallel(32):
                            a_hi[i, j] = T.Cast("bfloat16", a[i, j])
                    for i in T.parallel(64):
                        for j in T.parallel(32):
                            a_mid[i, j] = T.Cast("bfloat16", a[i, j] - T.Cast("float32", a_hi[i, j]))
                    for i in T.parallel(64):
                        for j in T.parallel(32):
                            a_lo[i, j] = T.Cast("bfloat16", a[i, j] - T.Cast("float32", a_hi[i, j])
                                                - T.Cast("float32", a_mid[i, j]))
                    tl.tileop.fill(tl.region(a_gather[0, 0], 2, 64, 32), 0)
                    tl.tileop.gemm(tl.region(a_sel[0, 0], 1, 64, 64), tl.region(a_hi[0, 0], 1, 64, 32),
                                   tl.region(a_gather[0, 0], 3, 64, 32), T.bool(False), T.bool(False), 64, 32, 64, 0,
                                   T.bool(False), 0, 0, 0)
                    tl.tileop.gemm(tl.region(a_sel[0, 0], 1, 64, 64), tl.region(a_mid[0, 0], 1, 64, 32),
                                   tl.region(a_gather[0, 0], 3, 64, 32), T.bool(False), T.bool(False), 64, 32, 64, 0,
                                   T.bool(False), 0, 0, 0)
                    tl.tileop.gemm(tl.region(a_sel[0, 0], 1, 64, 64), tl.region(a_lo[0, 0], 1, 64, 32),
                                   tl.region(a_gather[0, 0], 3, 64, 32), T.bool(False), T.bool(False), 64, 32, 64, 0,
                                   T.bool(False), 0, 0, 0)
                    for i in T.parallel(64):
                        for j in T.parallel(32):
                            b[i, j] = T.if_then_else(i % 2 == 0, a_gather[i, j], a[i, j] * T.float32(2))

    after = LowerBlockGathersTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


@I.ir_module
class Stages:
    """Butterfly stages in a serial loop: the partner ``a[i, j ^ (1 << s)]`` changes with ``s``."""

    @T.prim_func
    def main(A: T.Buffer((32, 64), "bfloat16")):
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                a = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="local.fragment")
                b = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="local.fragment")
                for s in range(3):
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            b[i, j] = a[i, T.bitwise_xor(j, T.shift_left(1, s))]
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            a[i, j] = b[i, j]


def test_a_serial_loop_changing_the_selection_is_unrolled_one_matrix_per_step_blocks_shared():
    after = LowerBlockGathersTT()(Stages)["main"]
    loops, gemms, sels = [], [], []

    def visit(n):
        if isinstance(n, tirx.For) and n.kind == tirx.ForKind.SERIAL:
            loops.append(n)
        if isinstance(n, tirx.Call) and n.op.name == "tl.tileop.gemm":
            gemms.append(n)
        if isinstance(n, tirx.BufferStore) and n.buffer.name == "a_sel":
            sels.append(n)

    tirx.stmt_functor.post_order_visit(after.body, visit)
    assert not loops and len(gemms) == 3 and len(sels) == 3  # one selection matrix per step, in one block
    # step 2 selects column j ^ 4, written as index arithmetic the reader evaluates
    assert "tirx.bitwise_xor" not in str(sels[2].value) and "4" in str(sels[2].value)


@I.ir_module
class Untouched:
    """Element-wise, transposed and vector reads, and a nest storing at computed indices into the block it reads:
    C2's forms."""

    @T.prim_func
    def main(A: T.Buffer((32, 32), "bfloat16")):
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                v = T.sblock_alloc_buffer((32,), "bfloat16", scope="local.fragment")
                b = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="local.fragment")
                for i in T.parallel(32):
                    for j in T.parallel(32):
                        b[i, j] = a[i, j] + a[j, i] + v[i]
                for i in T.parallel(32):
                    for j in T.parallel(32):
                        b[i, (j + 1) % 32] = b[i, (j + 3) % 32]


def test_nests_of_other_forms_are_left_as_they_are():
    assert LowerBlockGathersTT()(Untouched)["main"].same_as(Untouched["main"])


@I.ir_module
class Outside:
    @T.prim_func
    def main(A: T.Buffer((32, 32), "bfloat16")):
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                b = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="local.fragment")
                for i in T.parallel(32):
                    for j in T.parallel(32):
                        b[i, j] = a[i, j * 2]


@I.ir_module
class BothAxes:
    @T.prim_func
    def main(A: T.Buffer((32, 32), "bfloat16")):
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                b = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="local.fragment")
                for i in T.parallel(32):
                    for j in T.parallel(32):
                        b[i, j] = a[i, (i + j) % 32]


@pytest.mark.parametrize("mod, message", [
    (Outside, "`a[i, j * 2]` reads outside the block `a` (extent 32 along dim 1): at element [0, 16]"),
    (BothAxes, "`a[i, (i + j) % 32]`: its index along dim 1 differs along the other loop"),
], ids=["outside", "both_axes"])
def test_a_read_without_a_selection_matrix_is_refused(mod, message):
    with pytest.raises(TTCompileError) as err:
        LowerBlockGathersTT()(mod)
    assert err.value.pass_name == PASS and message in err.value.message


@I.ir_module
class Partners:
    """GPT-J's pair partners: two reads of the block used at complementary columns."""

    @T.prim_func
    def main(A: T.Buffer((32, 64), "bfloat16")):
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                a = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="shared.dyn")
                b = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="local.fragment")
                for i in T.parallel(32):
                    for j in T.parallel(64):
                        b[i, j] = T.if_then_else(j % 2 == 0, -a[i, j + 1], a[i, j - 1])


def test_reads_used_at_complementary_elements_share_one_selection():
    after = LowerBlockGathersTT()(Partners)["main"]
    gemms, sels, gathered = [], [], []

    def visit(n):
        if isinstance(n, tirx.Call) and n.op.name == "tl.tileop.gemm":
            gemms.append(n)
        if isinstance(n, tirx.BufferStore) and n.buffer.name == "a_sel":
            sels.append(n)
        if isinstance(n, tirx.BufferStore) and n.buffer.name == "b":
            gathered.append(str(n.value).count("a_gather[i, j]"))

    tirx.stmt_functor.post_order_visit(after.body, visit)
    assert len(gemms) == 1 and len(sels) == 1 and gathered == [2]  # both branches read the one product
