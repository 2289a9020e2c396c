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


def test_a_scan_over_a_tensor_is_unrolled_into_named_values():
    """The grouped GEMM's group index: g = 0; for i in range(2): g = T.if_then_else(row >= offsets[i], i, g):
    unrolled, each value read from the tensor named where it is stored (the kernels read its elements
    once), the slice of B at the last one."""
    from tests.examples.blocksparse_grouped_gemm import EXAMPLES
    from tests.examples.harness import prim_func

    before = lower_until(prim_func(EXAMPLES[1]), PASS)
    after = run_pass(before, PASS)["main"]
    assert not nodes(after.body, lambda n: isinstance(n, (tirx.BufferLoad, tirx.BufferStore)) and n.buffer.scope()
                     == "local.var")
    assert not nodes(after.body, lambda n: isinstance(n, tirx.For) and n.thread_binding is None and n.extent.value == 2
                     and not n.annotations)
    binds = {b.var.name: b for b in nodes(after.body, lambda n: isinstance(n, tirx.Bind))}
    padded = binds["padded_row"].var
    offsets = next(b for b in after.buffer_map.values() if b.name == "group_padded_starts")
    first = tirx.if_then_else(padded >= tirx.BufferLoad(offsets, [0]), 0, 0)
    tvm.ir.assert_structural_equal(binds["g1"].value, first)
    second = tirx.if_then_else(padded >= tirx.BufferLoad(offsets, [1]), 1, binds["g1"].var)
    tvm.ir.assert_structural_equal(binds["g2"].value, second)
    (copy_b,) = nodes(after.body, lambda n: isinstance(n, tirx.Call) and n.op.name == "tl.region" and
                      n.args[0].buffer.name == "B")
    assert copy_b.args[0].indices[0].same_as(binds["g2"].var)


def test_a_variable_reading_a_tensor_the_kernel_writes_is_left_as_it_is():
    import tilelang.language as T

    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(2, 1, threads=128) as (bx, by):
            v = T.alloc_var("float32")
            v = C[0, 0]
            c = T.alloc_fragment((32, 64), "float32")
            a = T.alloc_shared((32, 64), "float32")
            T.copy(A[bx * 32, 0], a)
            for i, j in T.Parallel(32, 64):
                c[i, j] = a[i, j] * v
            T.copy(c, C[bx * 32, 0])

    before = lower_until(main, PASS)
    assert run_pass(before, PASS)["main"].same_as(before["main"])
