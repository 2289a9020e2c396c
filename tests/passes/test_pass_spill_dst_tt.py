"""C2b SpillDSTTT alone: an element-wise value whose DST registers exceed the budget computes its
longest-held operand into a block of its own first, until it fits; values that fit, and values no spill
makes fit, are left as they are (D5 refuses the latter). Kernels that need it run in
tests/compiler/test_dst_spills.py."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.passes.helpers import cb_entry, names, tt, tt_attrs
from tilelang_tt.passes.spill_dst_tt import SpillDSTTT, _Spiller

PASS = "SpillDSTTT"

F32 = cb_entry(page_size=4096, data_format="Float32")


def attrs(budget: int, fast_math: bool = False, **extra) -> dict:
    return tt_attrs({"tt.cb_desc": {"a": F32, "b": F32, "c": F32, "d": F32, "y": F32, **extra},
                     "tt.compute_config": {"dst_budget": budget, "fp32_dest_acc_en": True, "math_approx_mode": False,
                                           "fast_math": fast_math, "math_fidelity": "HiFi4", "unpack_to_dest": []}})


def test_registered_under_its_name():
    assert SpillDSTTT().info.name == PASS


def test_both_contexts_read_fast_math_from_the_compute_config():
    """The element-wise lowering's context (the blocks it makes) and the DST context (the programs it sizes) see
    the fast math C2 recorded in tt.compute_config, one answer: the option is read once, by C2."""
    for fast_math in (False, True):
        @T.prim_func(check_well_formed=False)
        def main(Y: T.Buffer((32, 32), "float32")):
            T.func_attr(attrs(4, fast_math=fast_math))
            T.evaluate(0)

        spiller = _Spiller(main)
        assert spiller.lower.fast_math is spiller.dst.fast_math is fast_math


def test_hand_written_value_of_five_registers_spills_its_first_operand():
    """``L + R`` with L and R products of sums of products: each needs 4 float32 DST registers, the sum 5
    (L held while R is computed), over the budget of 4. L, the operand held longest, is computed into
    ``y_spill`` (float32, as DST holds it, with a CB of y's geometry) just before; the value reads it
    and needs 4. (No square: ``x * x`` takes one register, eltwise.SfpuBinaryOperands.)"""
    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main(Y: T.Buffer((32, 32), "float32")):
            T.func_attr(attrs(4))
            with T.sblock("tilelang_root"):
                a = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                b = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                c = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                d = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                y = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                i = T.int32()
                j = T.int32()
                tt.tile.eltwise(y.data, i, j, (a[i, j] * b[i, j] + c[i, j] * d[i, j]) *
                                (a[i, j] * c[i, j] + b[i, j] * d[i, j]) +
                                (a[i, j] * d[i, j] + b[i, j] * c[i, j]) * (a[i, j] * b[i, j] - c[i, j] * d[i, j]))

    @I.ir_module(check_well_formed=False)
    class Expected:
        @T.prim_func
        def main(Y: T.Buffer((32, 32), "float32")):
            T.func_attr(attrs(4, y_spill=F32))
            with T.sblock("tilelang_root"):
                a = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                b = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                c = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                d = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                y = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                y_spill = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                i = T.int32()
                j = T.int32()
                tt.tile.eltwise(y_spill.data, i, j, (a[i, j] * b[i, j] + c[i, j] * d[i, j]) *
                                (a[i, j] * c[i, j] + b[i, j] * d[i, j]))
                tt.tile.eltwise(y.data, i, j, y_spill[i, j] +
                                (a[i, j] * d[i, j] + b[i, j] * c[i, j]) * (a[i, j] * b[i, j] - c[i, j] * d[i, j]))

    after = SpillDSTTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected, map_free_vars=True)  # i, j: free variables
    assert names(after) == names(Expected)


def test_hand_written_repeated_operand_is_spilled_once_and_read_twice():
    """``exp(a + b) * (exp(a + b) + c * d)`` needs 3 registers, over a budget of 2; of the operands that fit
    (``a + b``, ``exp(a + b)`` and ``c * d``, 2 each; ``exp(a + b) + c * d`` needs 3) the largest,
    ``exp(a + b)``, spills, and both places read it. (Not ``exp(a + b) * exp(a + b)``: a square computes its
    operand once, in 2 registers, eltwise.SfpuBinaryOperands.)"""
    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main(Y: T.Buffer((32, 32), "float32")):
            T.func_attr(attrs(2))
            with T.sblock("tilelang_root"):
                a = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                b = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                c = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                d = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                y = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                i = T.int32()
                j = T.int32()
                tt.tile.eltwise(y.data, i, j, T.exp(a[i, j] + b[i, j]) * (T.exp(a[i, j] + b[i, j]) + c[i, j] * d[i, j]))

    @I.ir_module(check_well_formed=False)
    class Expected:
        @T.prim_func
        def main(Y: T.Buffer((32, 32), "float32")):
            T.func_attr(attrs(2, y_spill=F32))
            with T.sblock("tilelang_root"):
                a = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                b = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                c = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                d = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                y = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                y_spill = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                i = T.int32()
                j = T.int32()
                tt.tile.eltwise(y_spill.data, i, j, T.exp(a[i, j] + b[i, j]))
                tt.tile.eltwise(y.data, i, j, y_spill[i, j] * (y_spill[i, j] + c[i, j] * d[i, j]))

    after = SpillDSTTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected, map_free_vars=True)  # i, j: free variables
    assert names(after) == names(Expected)


def test_hand_written_value_that_fits_or_cannot_fit_is_left_as_it_is():
    """A value within the budget is unchanged; so is a selection of two products on a mask with a budget
    of 2 (where_tile holds its three operands at once: 3 registers, however its operands are spilled)."""
    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main(Y: T.Buffer((32, 32), "float32")):
            T.func_attr(attrs(2))
            with T.sblock("tilelang_root"):
                a = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                b = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                c = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                d = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                y = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                i = T.int32()
                j = T.int32()
                tt.tile.eltwise(y.data, i, j, T.exp(a[i, j]) * b[i, j])
                tt.tile.eltwise(y.data, i, j, T.Select(d[i, j] != T.float32(0), a[i, j] * b[i, j], c[i, j] * d[i, j]))

    after = SpillDSTTT()(Before)
    assert after["main"].same_as(Before["main"])
