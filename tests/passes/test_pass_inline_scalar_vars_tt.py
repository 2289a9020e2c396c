"""InlineScalarVarsTT alone: a T.alloc_var stored once from block coordinates is replaced by its value."""

import tilelang  # noqa: F401
import tvm
from tvm import tirx

from tests.compiler.test_scalar_loads import decayed_rows
from tests.kernels import gemm, lower_until, run_pass
from tests.passes.helpers import nodes
from tilelang_tt.passes.inline_scalar_vars_tt import InlineScalarVarsTT

PASS = "InlineScalarVarsTT"


def test_registered_under_its_name():
    assert InlineScalarVarsTT().info.name == PASS


def test_the_loads_of_the_variable_are_its_value():
    before = lower_until(decayed_rows(2, 32), PASS)["main"]
    (store,) = nodes(before.body, lambda n: isinstance(n, tirx.BufferStore) and n.buffer.scope() == "local.var")
    after = run_pass(tvm.IRModule({"main": before}), PASS)["main"]
    assert not nodes(after.body, lambda n: isinstance(n, (tirx.BufferLoad, tirx.BufferStore)) and n.buffer.scope()
                     == "local.var")
    assert not any(b.scope() == "local.var" for blk in nodes(after.body, lambda n: isinstance(n, tirx.SBlock))
                   for b in blk.alloc_buffers)
    (exp2,) = nodes(after.body, lambda n: isinstance(n, tirx.Call) and n.op.name == "tirx.exp2" and isinstance(
        n.args[0], tirx.Mul))
    tvm.ir.assert_structural_equal(exp2.args[0].b, store.value)  # (i + 1) * <the value of lg>


def test_a_variable_updated_in_a_loop_and_kernels_without_variables_are_unchanged():
    before = lower_until(decayed_rows(2, 32, accumulate=True), PASS)
    assert run_pass(before, PASS)["main"].same_as(before["main"])
    before = lower_until(gemm(64, 64, 64, 32, 32, 32), PASS)
    assert run_pass(before, PASS)["main"].same_as(before["main"])
