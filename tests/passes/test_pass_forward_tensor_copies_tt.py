"""ForwardTensorCopiesTT alone: the reads of a register array one ``T.copy`` fills from a read-only tensor become
the tensor's elements, and the copy and the array go; an array the rewrite cannot prove exact is left alone
(tests/compiler/test_register_copies.py runs the kernels it enables against torch)."""

import tilelang  # noqa: F401
import tvm
from tvm import tirx
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import lower_until, run_pass
from tests.outside import moe
from tests.passes.helpers import tl
from tilelang_tt.ir.common import span_of
from tilelang_tt.passes.forward_tensor_copies_tt import ForwardTensorCopiesTT

PASS = "ForwardTensorCopiesTT"


def test_registered_under_its_name():
    assert ForwardTensorCopiesTT().info.name == PASS


@I.ir_module
class Before:
    @T.prim_func
    def main(X: T.Buffer((4, 64), "bfloat16"), pos: T.Buffer((4, 2), "int32"), Y: T.Buffer((8, 64), "bfloat16")):
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                pos_local = T.sblock_alloc_buffer((2,), "int32", scope="local")
                x = T.sblock_alloc_buffer((64,), "bfloat16", scope="local.fragment")
                tl.tileop.copy(tl.region(pos[bx, 0], 1, 1, 2), tl.region(pos_local[0], 2, 2))
                tl.tileop.copy(tl.region(X[bx, 0], 1, 1, 64), tl.region(x[0], 2, 64))
                for k in range(2):
                    if pos_local[k] >= 0:
                        for i in T.parallel(64):
                            Y[pos_local[k], i] = x[i]


@I.ir_module
class Expected:
    @T.prim_func
    def main(X: T.Buffer((4, 64), "bfloat16"), pos: T.Buffer((4, 2), "int32"), Y: T.Buffer((8, 64), "bfloat16")):
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                x = T.sblock_alloc_buffer((64,), "bfloat16", scope="local.fragment")
                tl.tileop.copy(tl.region(X[bx, 0], 1, 1, 64), tl.region(x[0], 2, 64))
                for k in range(2):
                    if pos[bx, k] >= 0:
                        for i in T.parallel(64):
                            Y[pos[bx, k], i] = x[i]


def test_reads_of_a_register_copy_become_the_tensor_elements():
    """The fragment ``x`` the same way filled is a block, compute's: its copy and reads stay."""
    tvm.ir.assert_structural_equal(ForwardTensorCopiesTT()(Before), Expected)


@I.ir_module
class Cast:
    @T.prim_func
    def main(pos: T.Buffer((4, 8), "int32"), Y: T.Buffer((4, 64), "float32")):
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                s = T.sblock_alloc_buffer((1, 4), "float32", scope="local")
                tl.tileop.copy(tl.region(pos[bx, 4], 1, 1, 4), tl.region(s[0, 0], 2, 1, 4))
                if s[0, 3] > T.float32(0):
                    for i in T.parallel(64):
                        Y[bx, i] = s[0, 1]


@I.ir_module
class CastExpected:
    @T.prim_func
    def main(pos: T.Buffer((4, 8), "int32"), Y: T.Buffer((4, 64), "float32")):
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                if T.Cast("float32", pos[bx, 7]) > T.float32(0):
                    for i in T.parallel(64):
                        Y[bx, i] = T.Cast("float32", pos[bx, 5])


def test_an_offset_region_of_another_rank_and_dtype():
    """The copy's source starts at column 4 and its destination is a 2-D row: element (0, j) is column 4 + j,
    read through a cast to the array's dtype."""
    tvm.ir.assert_structural_equal(ForwardTensorCopiesTT()(Cast), CastExpected)


def _unchanged(func):
    mod = tvm.IRModule({"main": func})
    return ForwardTensorCopiesTT()(mod)["main"].same_as(mod["main"])


def test_an_array_written_twice_is_left_alone():
    @T.prim_func
    def main(pos: T.Buffer((4, 2), "int32"), Y: T.Buffer((8, 64), "bfloat16")):
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                p = T.sblock_alloc_buffer((2,), "int32", scope="local")
                tl.tileop.copy(tl.region(pos[bx, 0], 1, 1, 2), tl.region(p[0], 2, 2))
                p[1] = 0
                if p[1] >= 0:
                    for i in T.parallel(64):
                        Y[p[0], i] = T.bfloat16(1)

    assert _unchanged(main)


def test_a_tensor_the_kernel_writes_is_left_alone():
    @T.prim_func
    def main(pos: T.Buffer((4, 2), "int32"), Y: T.Buffer((8, 64), "bfloat16")):
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                p = T.sblock_alloc_buffer((2,), "int32", scope="local")
                tl.tileop.copy(tl.region(pos[bx, 0], 1, 1, 2), tl.region(p[0], 2, 2))
                pos[bx, 0] = 1
                if p[0] >= 0:
                    for i in T.parallel(64):
                        Y[bx, i] = T.bfloat16(1)

    assert _unchanged(main)


def test_a_read_past_the_copied_elements_or_before_the_copy_is_left_alone():
    @T.prim_func
    def past(pos: T.Buffer((4, 4), "int32"), Y: T.Buffer((8, 64), "bfloat16")):
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                p = T.sblock_alloc_buffer((4,), "int32", scope="local")
                tl.tileop.copy(tl.region(pos[bx, 0], 1, 1, 2), tl.region(p[0], 2, 2))
                for k in range(3):
                    if p[k] >= 0:
                        for i in T.parallel(64):
                            Y[bx, i] = T.bfloat16(1)

    @T.prim_func
    def before(pos: T.Buffer((4, 2), "int32"), Y: T.Buffer((8, 64), "bfloat16")):
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                p = T.sblock_alloc_buffer((2,), "int32", scope="local")
                for k in range(2):
                    if p[k] >= 0:
                        tl.tileop.copy(tl.region(pos[bx, 0], 1, 1, 2), tl.region(p[0], 2, 2))

    assert _unchanged(past) and _unchanged(before)


def test_on_a_real_kernel():
    """TileKernels' expand_to_fused: the positions copied into registers are read from the table."""
    func = moe.expand_to_fused_builder(moe.EXPAND_HIDDEN, moe.TOP_K, "bfloat16").get_tir()
    before = lower_until(func, PASS)
    after = run_pass(before, PASS)["main"].script()
    assert "pos_local" in before["main"].script() and "pos_local" not in after
    assert "if token_topk_to_pos[bx, k] >= 0" in after


def test_the_rewritten_statements_keep_their_lines():
    """A later error at a statement that read the registers points at the user's line."""
    func = moe.expand_to_fused_builder(moe.EXPAND_HIDDEN, moe.TOP_K, "bfloat16").get_tir()
    before = lower_until(func, PASS)["main"]
    after = run_pass(lower_until(func, PASS), PASS)["main"]

    def lines(f, kind):
        out = []
        tirx.stmt_functor.post_order_visit(f.body, lambda n: out.append(span_of(n).line if span_of(n) else None)
                                           if isinstance(n, kind) and "expanded_x" in str(n)[:200] else None)
        return out

    for kind in (tirx.IfThenElse, tirx.BufferStore):
        assert None not in lines(after, kind) and sorted(lines(after, kind)) == sorted(lines(before, kind))


@I.ir_module
class ElementStore:
    @T.prim_func
    def main(A: T.Buffer((64, 64), "bfloat16"), M: T.Buffer((2, 2), "bool"), Y: T.Buffer((64, 64), "bfloat16")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                mask = T.sblock_alloc_buffer((1,), "bool", scope="local")
                for k in range(2):
                    mask[0] = M[bx, k]
                    if mask[0]:
                        for i in T.parallel(32):
                            Y[bx * 32 + i, k] = A[bx * 32 + i, k]


@I.ir_module
class ElementStoreExpected:
    @T.prim_func
    def main(A: T.Buffer((64, 64), "bfloat16"), M: T.Buffer((2, 2), "bool"), Y: T.Buffer((64, 64), "bfloat16")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                for k in range(2):
                    if M[bx, k]:
                        for i in T.parallel(32):
                            Y[bx * 32 + i, k] = A[bx * 32 + i, k]


def test_the_store_of_one_tensor_element_is_a_copy_of_it():
    """TileLang's block-sparse GEMM: ``block_mask[0] = BlockMask[by, bx, k]`` at each step, then the branch on
    it: the branch reads the mask tensor's element."""
    tvm.ir.assert_structural_equal(ForwardTensorCopiesTT()(ElementStore), ElementStoreExpected)


def test_an_array_stored_twice_or_read_at_another_element_is_left_alone():
    @T.prim_func
    def twice(M: T.Buffer((2, 2), "bool"), Y: T.Buffer((64, 64), "bfloat16")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                mask = T.sblock_alloc_buffer((1,), "bool", scope="local")
                mask[0] = M[bx, 0]
                mask[0] = M[bx, 1]
                if mask[0]:
                    for i in T.parallel(32):
                        Y[bx * 32 + i, 0] = T.bfloat16(1)

    @T.prim_func
    def other(M: T.Buffer((2, 2), "bool"), Y: T.Buffer((64, 64), "bfloat16")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                mask = T.sblock_alloc_buffer((2,), "bool", scope="local")
                mask[0] = M[bx, 0]
                if mask[1]:
                    for i in T.parallel(32):
                        Y[bx * 32 + i, 0] = T.bfloat16(1)

    assert _unchanged(twice) and _unchanged(other)
