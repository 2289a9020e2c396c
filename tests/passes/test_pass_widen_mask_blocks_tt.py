"""WidenMaskBlocksTT alone: a uint8/bool block copied from a tensor and read by element-wise values
becomes a bfloat16 block, its comparisons and conditions on floats."""

import tilelang  # noqa: F401
import tvm
from tvm import tirx

from tests.compiler.test_block_sparse import masked_scores
from tests.kernels import gemm, lower_until, run_pass
from tests.passes.helpers import alloc, nodes
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


def test_a_bool_condition_tests_the_float_against_zero():
    after = run_pass(lower_until(masked_scores(64, 64, "bool", "condition"), PASS), PASS)["main"]
    (select,) = nodes(after.body, lambda n: isinstance(n, tirx.Call) and n.op.name == "tirx.if_then_else")
    cond = select.args[0]
    assert isinstance(cond, tirx.NE) and str(cond.a.dtype) == "bfloat16" and float(cond.b.value) == 0.0


def test_kernels_without_mask_blocks_are_unchanged():
    before = lower_until(gemm(64, 64, 64, 32, 32, 32), PASS)
    assert run_pass(before, PASS)["main"].same_as(before["main"])
