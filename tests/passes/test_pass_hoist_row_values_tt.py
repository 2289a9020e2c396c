"""HoistRowValuesTT alone: a value of a 2-D element-wise store depending on one loop alone is computed once into
a vector before the nest."""

import pytest
import tilelang  # noqa: F401
import tvm
from tvm import tirx
from tvm.script import ir as I
from tvm.script import tirx as T

from tests import op_kernels as OPS
from tests.kernels import gemm, lower_until, run_pass
from tests.passes.helpers import alloc, names, nodes, tl
from tilelang_tt.options import CompileOptions
from tilelang_tt.passes.hoist_row_values_tt import HoistRowValuesTT

PASS = "HoistRowValuesTT"


def test_registered_under_its_name():
    assert HoistRowValuesTT().info.name == PASS


def _scaled(form: str) -> tvm.IRModule:
    """``y[i, j] = exp2(x[i, j] * 0.5 - m[i] * 0.5) + m[i] * 0.5`` over a (160, 160) block, as written (``before``), as
    HoistRowValuesTT writes it (``after``: ``m[i] * 0.5`` computed once, into ``m_row``), or per column
    (``column``: ``w[j] * 0.5``, ``column_after``)."""

    @I.ir_module
    class Module:
        @T.prim_func
        def main(X: T.Buffer((160, 160), "float32"), M: T.Buffer((160,), "float32"), W: T.Buffer((160,), "float32"),
                 Y: T.Buffer((160, 160), "float32")):
            for by in T.thread_binding(1, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((160, 160), "float32", scope="shared.dyn")
                    y = T.sblock_alloc_buffer((160, 160), "float32", scope="local.fragment")
                    m = T.sblock_alloc_buffer((160,), "float32", scope="local.fragment")
                    w = T.sblock_alloc_buffer((160,), "float32", scope="local.fragment")
                    m_row = T.sblock_alloc_buffer((160,), "float32", scope="local.fragment")
                    w_row = T.sblock_alloc_buffer((160,), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(X[0, 0], 1, 160, 160), tl.region(x[0, 0], 2, 160, 160))
                    tl.tileop.copy(tl.region(M[0], 1, 160), tl.region(m[0], 2, 160))
                    tl.tileop.copy(tl.region(W[0], 1, 160), tl.region(w[0], 2, 160))
                    if form == "after":
                        for i in T.parallel(160):
                            m_row[i] = m[i] * T.float32(0.5)
                    if form == "column_after":
                        for j in T.parallel(160):
                            w_row[j] = w[j] * T.float32(0.5)
                    for i in T.parallel(160):
                        for j in T.parallel(160):
                            if form == "before":
                                y[i, j] = T.exp2(x[i, j] * T.float32(0.5) - m[i] * T.float32(0.5)) + m[i] * T.float32(0.5)
                            elif form == "after":
                                y[i, j] = T.exp2(x[i, j] * T.float32(0.5) - m_row[i]) + m_row[i]
                            elif form == "column":
                                y[i, j] = x[i, j] - w[j] * T.float32(0.5)
                            else:
                                y[i, j] = x[i, j] - w_row[j]
                    tl.tileop.copy(tl.region(y[0, 0], 1, 160, 160), tl.region(Y[0, 0], 2, 160, 160))

    return Module


def _without(mod: tvm.IRModule, *unused: str) -> tvm.IRModule:
    """``mod`` with the blocks ``unused`` not allocated (the hand-written modules allocate both hoisted vectors)."""
    def drop(node):
        if isinstance(node, tirx.SBlock) and node.name_hint == "tilelang_root":
            return tirx.SBlock(node.iter_vars, node.reads, node.writes, node.name_hint, node.body, node.init,
                               [b for b in node.alloc_buffers if b.name not in unused], node.match_buffers,
                               node.annotations)
        return None

    func = mod["main"]
    return tvm.IRModule({"main": func.with_body(tirx.stmt_functor.ir_transform(func.body, None, drop,
                                                                                 ["tirx.SBlock"]))})


def _appended_last(mod: tvm.IRModule, name: str) -> tvm.IRModule:
    """``mod`` with block ``name`` allocated last, where the pass adds it."""
    def move(node):
        if isinstance(node, tirx.SBlock) and node.name_hint == "tilelang_root":
            bufs = [b for b in node.alloc_buffers if b.name != name] + [b for b in node.alloc_buffers
                                                                        if b.name == name]
            return tirx.SBlock(node.iter_vars, node.reads, node.writes, node.name_hint, node.body, node.init, bufs,
                               node.match_buffers, node.annotations)
        return None

    func = mod["main"]
    return tvm.IRModule({"main": func.with_body(tirx.stmt_functor.ir_transform(func.body, None, move,
                                                                                 ["tirx.SBlock"]))})


@pytest.mark.parametrize("form, hoisted, unused", [("before", "m_row", "w_row"), ("column", "w_row", "m_row")])
def test_a_value_of_one_loop_is_computed_once_into_a_vector(form, hoisted, unused):
    """Per row (``m[i] * 0.5``, read twice: hoisted once) and per column (``w[j] * 0.5``): the value is stored by a
    1-D nest before the 2-D one, which reads the new vector."""
    before = _without(_scaled(form), "m_row", "w_row")
    expected = _appended_last(_without(_scaled("after" if form == "before" else "column_after"), unused), hoisted)
    after = HoistRowValuesTT()(before)
    tvm.ir.assert_structural_equal(after, expected)
    assert names(after) == names(expected)


def test_under_fast_math_the_exps_argument_is_left_to_the_scale_fold():
    """With fast_math the exp2's argument keeps ``m[i] * 0.5`` (ops/eltwise.py folds the scale into the exp); the
    same product outside the exp is still hoisted."""
    after = HoistRowValuesTT(fast_math=True)(_without(_scaled("before"), "m_row", "w_row"))["main"]
    (store,) = nodes(after.body, lambda n: isinstance(n, tirx.BufferStore) and n.buffer.name == "y")
    exp, outside = store.value.a, store.value.b
    assert [x.buffer.name for x in nodes(exp, lambda n: isinstance(n, tirx.BufferLoad))] == ["x", "m"]
    assert outside.buffer.name == "m_row"


def test_a_value_reading_the_stored_block_or_both_loops_or_narrower_than_float32_stays():
    """``x[i, j] * m[i]`` reads a 2-D block, ``i + j`` both loops: nothing to hoist; ``mb[i] * 0.5`` of a bfloat16
    vector would be rounded to bfloat16 in a vector of its own, where the nest keeps DST's width."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((160, 160), "float32"), M: T.Buffer((160,), "float32"), Y: T.Buffer((160, 160), "float32")):
            for by in T.thread_binding(1, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((160, 160), "float32", scope="shared.dyn")
                    m = T.sblock_alloc_buffer((160,), "float32", scope="local.fragment")
                    y = T.sblock_alloc_buffer((160, 160), "float32", scope="local.fragment")
                    mb = T.sblock_alloc_buffer((160,), "bfloat16", scope="local.fragment")
                    yb = T.sblock_alloc_buffer((160, 160), "bfloat16", scope="local.fragment")
                    tl.tileop.copy(tl.region(X[0, 0], 1, 160, 160), tl.region(x[0, 0], 2, 160, 160))
                    tl.tileop.copy(tl.region(M[0], 1, 160), tl.region(m[0], 2, 160))
                    tl.tileop.copy(tl.region(M[0], 1, 160), tl.region(mb[0], 2, 160))
                    for i in T.parallel(160):
                        for j in T.parallel(160):
                            y[i, j] = x[i, j] * m[i] + T.Cast("float32", i + j)
                    for i in T.parallel(160):
                        for j in T.parallel(160):
                            yb[i, j] = T.Cast("bfloat16", x[i, j]) - mb[i] * T.bfloat16(0.5)
                    tl.tileop.copy(tl.region(y[0, 0], 1, 160, 160), tl.region(Y[0, 0], 2, 160, 160))

    assert HoistRowValuesTT()(Before)["main"].same_as(Before["main"])


# -- real kernels -----------------------------------------------------------------------------------


def test_flash_attention_multiplies_the_row_maximum_once_per_kv_step():
    """TileLang's flash attention with K/V blocks of 256 (8 tiles a row): ``m[i] * scale`` of the exp's argument
    becomes ``m_row``, computed once per K/V step; under fast math the exp keeps it (its scale folds)."""
    before = lower_until(OPS.flash_attention(512, 64, bn=256), PASS)
    after = run_pass(before, PASS)["main"]
    m_row = alloc(after, "m_row")
    (store,) = nodes(after.body, lambda n: isinstance(n, tirx.BufferStore) and n.buffer.same_as(m_row))
    assert isinstance(store.value, tirx.Mul) and store.value.a.buffer.name == "m"
    exp = nodes(after.body, lambda n: isinstance(n, tirx.BufferStore) and n.buffer.name == "acc_s")[0].value
    assert any(x.buffer.same_as(m_row) for x in nodes(exp, lambda n: isinstance(n, tirx.BufferLoad)))
    fast = CompileOptions(fast_math=True)
    before = lower_until(OPS.flash_attention(512, 64, bn=256), PASS, fast)
    assert run_pass(before, PASS, fast)["main"].same_as(before["main"])


@pytest.mark.parametrize("kernel", [lambda: gemm(64, 64, 64, 32, 32, 32),
                                    lambda: OPS.flash_attention(256, 64, bn=128)], ids=["gemm", "flash_bn128"])
def test_kernels_without_such_values_are_unchanged(kernel):
    """No per-row value (GEMM); K/V blocks of 128 (4 tiles a row: one acquire of a 32-bit DST computes a tile row
    with its broadcast ``m[i] * scale`` once already)."""
    before = lower_until(kernel(), PASS)
    assert run_pass(before, PASS)["main"].same_as(before["main"])
