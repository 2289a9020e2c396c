"""WidenMaskBlocksTT alone: a uint8/bool block copied from a tensor and read by element-wise values
becomes a bfloat16 block, its comparisons and conditions on floats."""

import pytest
import tilelang  # noqa: F401
import tvm
from tvm import tirx
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.compiler.test_block_sparse import masked_scores
from tests.kernels import gemm, lower_until, run_pass
from tests.passes.helpers import alloc, nodes, tl
from tilelang_tt.passes.widen_mask_blocks_tt import WidenMaskBlocksTT

PASS = "WidenMaskBlocksTT"


def test_registered_under_its_name():
    assert WidenMaskBlocksTT().info.name == PASS


def test_a_compared_uint8_vector_becomes_a_bfloat16_block_compared_with_zero():
    before = lower_until(masked_scores(64, 64, "uint8", "compare"), PASS)
    assert str(alloc(before["main"], "visible").dtype) == "uint8"
    after = run_pass(before, PASS)["main"]
    visible = alloc(after, "visible")
    assert str(visible.dtype) == "bfloat16"
    (cond,) = nodes(after.body, lambda n: isinstance(n, tirx.NE))
    tvm.ir.assert_structural_equal(cond.b, tirx.Cast("bfloat16", tirx.IntImm("int32", 0)))
    assert isinstance(cond.a, tirx.BufferLoad) and cond.a.buffer.same_as(visible)
    copies = nodes(after.body, lambda n: isinstance(n, tirx.Call) and n.op.name == "tl.tileop.copy"
                   and n.args[0].args[0].buffer.name == "Mask")
    assert [c.args[1].args[0].buffer for c in copies] == [visible]  # the tensor's bytes into the wide block


def test_kernels_without_mask_blocks_are_unchanged():
    before = lower_until(gemm(64, 64, 64, 32, 32, 32), PASS)
    assert run_pass(before, PASS)["main"].same_as(before["main"])


# -- hand-written TIR -------------------------------------------------------------------------------


def _masked(mask_dtype: str, form: str, wide: bool) -> tvm.IRModule:
    """Scores masked by a (32, 64) mask block copied from a tensor, the block of ``mask_dtype``, or
    of bfloat16 with the value as WidenMaskBlocksTT writes it when ``wide``: the mask ``compare``d
    with 0 (TileLang compares it as int32), as the ``condition`` itself, or cast to a float
    ``factor``."""
    dtype = "bfloat16" if wide else mask_dtype

    @I.ir_module
    class Module:
        @T.prim_func
        def main(X: T.Buffer((32, 64), "float32"), Mask: T.Buffer((32, 64), mask_dtype),
                 Y: T.Buffer((32, 64), "float32")):
            for by in T.thread_binding(1, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((32, 64), "float32", scope="shared.dyn")
                    y = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    m = T.sblock_alloc_buffer((32, 64), dtype, scope="local.fragment")
                    tl.tileop.copy(tl.region(Mask[0, 0], 1, 32, 64), tl.region(m[0, 0], 2, 32, 64))
                    tl.tileop.copy(tl.region(X[0, 0], 1, 32, 64), tl.region(x[0, 0], 2, 32, 64))
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            if form == "compare" and wide:
                                y[i, j] = T.if_then_else(m[i, j] != T.Cast("bfloat16", 0), x[i, j], T.float32(-1))
                            elif form == "compare":
                                y[i, j] = T.if_then_else(T.Cast("int32", m[i, j]) != 0, x[i, j], T.float32(-1))
                            elif form == "condition" and wide:
                                y[i, j] = T.if_then_else(m[i, j] != T.bfloat16(0), x[i, j], T.float32(0))
                            elif form == "condition":
                                y[i, j] = T.if_then_else(m[i, j], x[i, j], T.float32(0))
                            else:
                                y[i, j] = x[i, j] * T.Cast("float32", m[i, j])
                    tl.tileop.copy(tl.region(y[0, 0], 1, 32, 64), tl.region(Y[0, 0], 2, 32, 64))

    return Module


@pytest.mark.parametrize("mask_dtype,form", [("uint8", "compare"), ("bool", "condition"), ("uint8", "factor")])
def test_hand_written_mask_block_becomes_bfloat16(mask_dtype, form):
    """The block ``m`` becomes bfloat16 (the copy reads the tensor's bytes into it) and its loads
    are floats: a comparison with 0 compares with bfloat16 0, a mask used as the condition is
    ``m != 0.0``, a cast to float32 casts the bfloat16 value."""
    before, expected = _masked(mask_dtype, form, wide=False), _masked(mask_dtype, form, wide=True)
    tvm.ir.assert_structural_equal(WidenMaskBlocksTT()(before), expected)


def test_hand_written_mask_block_written_by_a_store_is_left_as_it_is():
    """A uint8 block the kernel computes (a store into it) is not a mask read from a tensor: its
    compute is refused later by name, not widened here."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((32, 64), "float32"), Y: T.Buffer((32, 64), "float32")):
            for by in T.thread_binding(1, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((32, 64), "float32", scope="shared.dyn")
                    y = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    m = T.sblock_alloc_buffer((32, 64), "uint8", scope="local.fragment")
                    tl.tileop.copy(tl.region(X[0, 0], 1, 32, 64), tl.region(x[0, 0], 2, 32, 64))
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            m[i, j] = T.Cast("uint8", x[i, j] > T.float32(0))
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            y[i, j] = x[i, j] * T.Cast("float32", m[i, j])
                    tl.tileop.copy(tl.region(y[0, 0], 1, 32, 64), tl.region(Y[0, 0], 2, 32, 64))

    tvm.ir.assert_structural_equal(WidenMaskBlocksTT()(Before), Before)


def _condition_block(wide: bool, mixed: bool = False) -> tvm.IRModule:
    """A bool block ``keep`` compute fills with a condition on a float block and a select reads: as written,
    or (``wide``) as WidenMaskBlocksTT writes it, a bfloat16 block of 1.0 and 0.0; ``mixed``: also copied
    from a tensor."""

    @I.ir_module
    class Module:
        @T.prim_func
        def main(X: T.Buffer((32, 64), "float32"), Mask: T.Buffer((32, 64), "bool"), Y: T.Buffer((32, 64), "float32")):
            for by in T.thread_binding(1, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((32, 64), "float32", scope="shared.dyn")
                    y = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    keep = T.sblock_alloc_buffer((32, 64), "bfloat16" if wide else "bool", scope="local.fragment")
                    tl.tileop.copy(tl.region(X[0, 0], 1, 32, 64), tl.region(x[0, 0], 2, 32, 64))
                    if mixed:
                        tl.tileop.copy(tl.region(Mask[0, 0], 1, 32, 64), tl.region(keep[0, 0], 2, 32, 64))
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            if wide:
                                keep[i, j] = T.if_then_else(x[i, j] > T.float32(0.5), T.bfloat16(1), T.bfloat16(0))
                            else:
                                keep[i, j] = x[i, j] > T.float32(0.5)
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            if wide:
                                y[i, j] = T.if_then_else(keep[i, j] != T.bfloat16(0), x[i, j], T.float32(0))
                            else:
                                y[i, j] = T.if_then_else(keep[i, j], x[i, j], T.float32(0))
                    tl.tileop.copy(tl.region(y[0, 0], 1, 32, 64), tl.region(Y[0, 0], 2, 32, 64))

    return Module


def test_a_bool_block_of_stored_conditions_becomes_a_bfloat16_block_of_ones_and_zeros():
    tvm.ir.assert_structural_equal(WidenMaskBlocksTT()(_condition_block(wide=False)), _condition_block(wide=True))


def test_a_bool_block_both_copied_and_stored_is_left_as_it_is():
    before = _condition_block(wide=False, mixed=True)
    assert WidenMaskBlocksTT()(before)["main"].same_as(before["main"])


def _int_condition(wide: bool) -> tvm.IRModule:
    """A bool vector ``keep`` of a condition on an int32 block, as written or (``wide``) as WidenMaskBlocksTT
    writes it: the int32 comparison's 1 or 0 converted to bfloat16."""

    @I.ir_module
    class Module:
        @T.prim_func
        def main(Idx: T.Buffer((32,), "int32"), X: T.Buffer((32, 32), "float32"), Y: T.Buffer((32, 32), "float32")):
            for by in T.thread_binding(1, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    idx = T.sblock_alloc_buffer((32,), "int32", scope="shared.dyn")
                    x = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                    y = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    keep = T.sblock_alloc_buffer((32,), "bfloat16" if wide else "bool", scope="local.fragment")
                    tl.tileop.copy(tl.region(Idx[0], 1, 32), tl.region(idx[0], 2, 32))
                    tl.tileop.copy(tl.region(X[0, 0], 1, 32, 32), tl.region(x[0, 0], 2, 32, 32))
                    for j in T.parallel(32):
                        if wide:
                            keep[j] = T.Cast("bfloat16", T.Cast("int32", idx[j] >= 0))
                        else:
                            keep[j] = idx[j] >= 0
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            if wide:
                                y[i, j] = T.if_then_else(keep[j] != T.bfloat16(0), x[i, j], T.float32(0))
                            else:
                                y[i, j] = T.if_then_else(keep[j], x[i, j], T.float32(0))
                    tl.tileop.copy(tl.region(y[0, 0], 1, 32, 32), tl.region(Y[0, 0], 2, 32, 32))

    return Module


def test_a_bool_block_of_conditions_on_an_int32_block_holds_the_converted_comparison():
    tvm.ir.assert_structural_equal(WidenMaskBlocksTT()(_int_condition(wide=False)), _int_condition(wide=True))
