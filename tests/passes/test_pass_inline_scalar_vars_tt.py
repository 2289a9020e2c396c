"""InlineScalarVarsTT alone: a T.alloc_var stored once from block coordinates is replaced by its value."""

import tilelang  # noqa: F401
import tvm
from tvm import tirx
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.compiler.test_scalar_loads import decayed_rows
from tests.kernels import gemm, lower_until, run_pass
from tests.passes.helpers import names, nodes, tl
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


# -- hand-written TIR -------------------------------------------------------------------------------


def test_hand_written_variable_of_the_block_coordinates_is_its_value():
    """The retention example's per-head decay: ``lg``, set once from ``by``, is read in the
    element-wise value; the read becomes the value, the store and the allocation go (its value
    reads no tensor: nothing is named). TVMScript, like TileLang, writes
    a ``local.var`` variable ``lg = ..`` and reads it ``lg`` (printed ``lg[0]``)."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((2, 32, 32), "float32"), Y: T.Buffer((2, 32, 32), "float32")):
            for by in T.thread_binding(2, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    lg = T.sblock_alloc_buffer((1,), "float32", scope="local.var")
                    x = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                    y = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    lg = T.log2(T.float32(1) - T.exp2(T.float32(-5) - T.Cast("float32", by)))
                    tl.tileop.copy(tl.region(X[by, 0, 0], 1, 1, 32, 32), tl.region(x[0, 0], 2, 32, 32))
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            y[i, j] = x[i, j] * T.exp2(T.Cast("float32", i + 1) * lg)
                    tl.tileop.copy(tl.region(y[0, 0], 1, 32, 32), tl.region(Y[by, 0, 0], 2, 1, 32, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(X: T.Buffer((2, 32, 32), "float32"), Y: T.Buffer((2, 32, 32), "float32")):
            for by in T.thread_binding(2, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                    y = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(X[by, 0, 0], 1, 1, 32, 32), tl.region(x[0, 0], 2, 32, 32))
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            y[i, j] = x[i, j] * T.exp2(T.Cast("float32", i + 1) * T.log2(
                                T.float32(1) - T.exp2(T.float32(-5) - T.Cast("float32", by))))
                    tl.tileop.copy(tl.region(y[0, 0], 1, 32, 32), tl.region(Y[by, 0, 0], 2, 1, 32, 32))

    tvm.ir.assert_structural_equal(InlineScalarVarsTT()(Before), Expected)


def test_hand_written_scan_over_a_tensor_is_unrolled_into_named_values():
    """The grouped GEMM's group index: the loop of constant trip count that only names values and
    sets ``g`` is unrolled; each value reads an element of ``offsets``, so it is named where it is
    stored (g1, g2: the kernel reads the element once) and the copy of B reads the last name."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(B: T.Buffer((2, 32, 32), "bfloat16"), offsets: T.Buffer((2,), "int32"),
                 C: T.Buffer((64, 32), "bfloat16")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    g = T.sblock_alloc_buffer((1,), "int32", scope="local.var")
                    b = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                    g = 0
                    for i in range(2):
                        reached: T.bool = bx * 32 >= offsets[i]
                        g = T.if_then_else(reached, i, g)
                    tl.tileop.copy(tl.region(B[g, 0, 0], 1, 1, 32, 32), tl.region(b[0, 0], 2, 32, 32))
                    tl.tileop.copy(tl.region(b[0, 0], 1, 32, 32), tl.region(C[bx * 32, 0], 2, 32, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(B: T.Buffer((2, 32, 32), "bfloat16"), offsets: T.Buffer((2,), "int32"),
                 C: T.Buffer((64, 32), "bfloat16")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    b = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                    g1: T.int32 = T.if_then_else(bx * 32 >= offsets[0], 0, 0)
                    g2: T.int32 = T.if_then_else(bx * 32 >= offsets[1], 1, g1)
                    tl.tileop.copy(tl.region(B[g2, 0, 0], 1, 1, 32, 32), tl.region(b[0, 0], 2, 32, 32))
                    tl.tileop.copy(tl.region(b[0, 0], 1, 32, 32), tl.region(C[bx * 32, 0], 2, 32, 32))

    after = InlineScalarVarsTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)  # assert_structural_equal ignores names


def test_hand_written_variable_summed_in_a_loop_of_tile_ops_is_left_as_it_is():
    """``s`` is updated in the K loop, which also copies blocks (not a loop of named values only):
    its value at a read is not one expression, so nothing is inlined (the later passes name it)."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "float32"), C: T.Buffer((32, 32), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    s = T.sblock_alloc_buffer((1,), "float32", scope="local.var")
                    a = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                    s = T.float32(0)
                    for k in range(2):
                        tl.tileop.copy(tl.region(A[0, k * 32], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                        s = s + T.float32(1)
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            C[i, j] = a[i, j] * s

    tvm.ir.assert_structural_equal(InlineScalarVarsTT()(Before), Before)


def test_hand_written_clear_of_a_variable_and_a_value_set_per_iteration():
    """A combine loop over splits: ``T.clear(total)`` is the store ``total = 0``, summed in a loop of
    named values only (unrolled); ``w``, stored in the body of a loop of tile ops before the nest of
    the same iteration reads it, holds one value per iteration: named there (it reads a tensor).
    TVMScript reads a ``local.var`` by its name, so ``T.clear(total)`` stands in Before as the store
    ``total = -1``, replaced below by the fill TileLang makes."""
    @I.ir_module
    class Written:
        @T.prim_func
        def main(L: T.Buffer((2,), "float32"), P: T.Buffer((2, 32), "float32"), O: T.Buffer((32,), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    total = T.sblock_alloc_buffer((1,), "float32", scope="local.var")
                    w = T.sblock_alloc_buffer((1,), "float32", scope="local.var")
                    acc = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    total = T.float32(-1)
                    tl.tileop.fill(tl.region(acc[0], 2, 32), 0)
                    for s in range(2):
                        total = total + L[s]
                    for s in range(2):
                        w = L[s] / total
                        for d in T.parallel(32):
                            acc[d] = acc[d] + P[s, d] * w
                    tl.tileop.copy(tl.region(acc[0], 1, 32), tl.region(O[0], 2, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(L: T.Buffer((2,), "float32"), P: T.Buffer((2, 32), "float32"), O: T.Buffer((32,), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    acc = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    tl.tileop.fill(tl.region(acc[0], 2, 32), 0)
                    total1: T.float32 = T.Cast("float32", 0) + L[0]
                    total2: T.float32 = total1 + L[1]
                    for s in range(2):
                        w1: T.float32 = L[s] / total2
                        for d in T.parallel(32):
                            acc[d] = acc[d] + P[s, d] * w1
                    tl.tileop.copy(tl.region(acc[0], 1, 32), tl.region(O[0], 2, 32))

    def clear(node):
        if isinstance(node, tirx.BufferStore) and isinstance(node.value, tirx.FloatImm) and node.value.value == -1:
            return tirx.Evaluate(tl.tileop.fill(tl.region(tirx.BufferLoad(node.buffer, [0]), 2, 1), 0))
        return None

    written = Written["main"]
    before = written.with_body(tirx.stmt_functor.ir_transform(written.body, None, clear, ["tirx.BufferStore"]))
    after = InlineScalarVarsTT()(tvm.IRModule({"main": before}))
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_hand_written_variable_read_before_its_store_in_a_loop_is_left_as_it_is():
    """``w`` is read by the nest before the loop body stores it: each iteration reads the previous
    one's value (the first reads the store before the loop), which is no one expression."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(L: T.Buffer((2,), "float32"), P: T.Buffer((2, 32), "float32"), O: T.Buffer((32,), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    w = T.sblock_alloc_buffer((1,), "float32", scope="local.var")
                    acc = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    w = T.float32(1)
                    for s in range(2):
                        for d in T.parallel(32):
                            acc[d] = P[s, d] * w
                        w = L[s]
                    tl.tileop.copy(tl.region(acc[0], 1, 32), tl.region(O[0], 2, 32))

    tvm.ir.assert_structural_equal(InlineScalarVarsTT()(Before), Before)


def test_hand_written_variable_stored_under_a_condition_in_a_loop_is_left_as_it_is():
    """``w`` is stored only where ``L[s] > 0``: an iteration that skips the store reads the previous
    iteration's value, which is no one expression."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(L: T.Buffer((2,), "float32"), P: T.Buffer((2, 32), "float32"), O: T.Buffer((32,), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    w = T.sblock_alloc_buffer((1,), "float32", scope="local.var")
                    acc = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    w = T.float32(1)
                    for s in range(2):
                        if L[s] > T.float32(0):
                            w = L[s]
                        for d in T.parallel(32):
                            acc[d] = P[s, d] * w
                    tl.tileop.copy(tl.region(acc[0], 1, 32), tl.region(O[0], 2, 32))

    tvm.ir.assert_structural_equal(InlineScalarVarsTT()(Before), Before)
