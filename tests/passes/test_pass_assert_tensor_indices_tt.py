"""D3 AssertTensorIndicesTT alone: a reader or writer checks at run time an index read from a
tensor before it moves data at it, where the index is not proven in range."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import gemm, lower_until, run_pass
from tests.passes.helpers import names, nodes, tl, tt, tt_attrs
from tilelang_tt.ir.common import call_intrin
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.passes.assert_tensor_indices_tt import AssertTensorIndicesTT
from tests.compiler.test_tensor_indices import expert_matmul

PASS = "AssertTensorIndicesTT"


def asserts(mod) -> list:
    return [n for f in mod.functions.values() for n in nodes(
        f.body, lambda n: isinstance(n, tvm.tirx.Evaluate) and call_intrin(n.value) == Intrin.DEVICE_ASSERT)]


def test_registered_under_its_name():
    assert AssertTensorIndicesTT().info.name == PASS


def test_hand_written_expert_index_checked_before_the_read():
    """``B[e, ...]`` with ``e = ids[2]``: the batch index must lie in [0, 3) (extent 1): checked
    before the read, and before the element ``starts[e]`` is read too."""
    attrs = tt_attrs({"tt.kernel_role": "reader"})

    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main(B: T.Buffer((3, 64, 64), "bfloat16"), ids: T.Buffer((4,), "int32"), starts: T.Buffer((3,), "int32")):
            T.func_attr(attrs)
            B_s = T.Buffer((32, 64), "bfloat16", scope="shared.dyn")
            e: T.int32 = ids[2]
            r: T.int32 = starts[e]
            tt.read_to_cb(tl.region(B[e, r, 0], 1, 1, 32, 64), tl.region(B_s[0, 0], 2, 32, 64))

    @I.ir_module(check_well_formed=False)
    class Expected:
        @T.prim_func
        def main(B: T.Buffer((3, 64, 64), "bfloat16"), ids: T.Buffer((4,), "int32"), starts: T.Buffer((3,), "int32")):
            T.func_attr(attrs)
            B_s = T.Buffer((32, 64), "bfloat16", scope="shared.dyn")
            e: T.int32 = ids[2]
            tt.device_assert(0 <= e and e <= 2)
            r: T.int32 = starts[e]
            tt.device_assert(0 <= e and e <= 2)
            tt.read_to_cb(tl.region(B[e, r, 0], 1, 1, 32, 64), tl.region(B_s[0, 0], 2, 32, 64))

    tvm.ir.assert_structural_equal(AssertTensorIndicesTT()(Before), Expected, map_free_vars=True)


def test_hand_written_index_read_directly_is_named_and_clamped_end_left_unchecked():
    """``B[T.min(ids[1], 2), ...]``: the index reads the table itself, so it is named first; T.min
    proves its upper end, only its lower end is checked."""
    attrs = tt_attrs({"tt.kernel_role": "writer"})

    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main(B: T.Buffer((3, 64, 64), "bfloat16"), ids: T.Buffer((4,), "int32")):
            T.func_attr(attrs)
            B_s = T.Buffer((64, 64), "bfloat16", scope="shared.dyn")
            tt.write_from_cb(tl.region(B_s[0, 0], 1, 64, 64), tl.region(B[T.min(ids[1], 2), 0, 0], 2, 1, 64, 64))

    @I.ir_module(check_well_formed=False)
    class Expected:
        @T.prim_func
        def main(B: T.Buffer((3, 64, 64), "bfloat16"), ids: T.Buffer((4,), "int32")):
            T.func_attr(attrs)
            B_s = T.Buffer((64, 64), "bfloat16", scope="shared.dyn")
            B_index: T.int32 = T.min(ids[1], 2)
            tt.device_assert(0 <= B_index)
            tt.write_from_cb(tl.region(B_s[0, 0], 1, 64, 64), tl.region(B[T.min(ids[1], 2), 0, 0], 2, 1, 64, 64))

    after = AssertTensorIndicesTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected, map_free_vars=True)
    assert names(after) == names(Expected) == {"main": ["B_index"]}


def test_hand_written_proven_indices_are_unchanged():
    """A uint8 index modulo 3 lies in [0, 3): no check; nor for a constant index."""
    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main(B: T.Buffer((3, 64, 64), "bfloat16"), ids: T.Buffer((4,), "uint8")):
            T.func_attr(tt_attrs({"tt.kernel_role": "reader"}))
            B_s = T.Buffer((32, 64), "bfloat16", scope="shared.dyn")
            e: T.int32 = T.Cast("int32", ids[0]) % 3
            tt.read_to_cb(tl.region(B[e, 0, 0], 1, 1, 32, 64), tl.region(B_s[0, 0], 2, 32, 64))
            tt.read_to_cb(tl.region(B[1, 0, 0], 1, 1, 32, 64), tl.region(B_s[0, 0], 2, 32, 64))

    assert AssertTensorIndicesTT()(Before)["main"].same_as(Before["main"])


def test_real_kernel_reader_checks_the_expert_and_compute_is_unchanged():
    before = lower_until(expert_matmul(64, 3, 64, 64, 32, 64, 32), PASS)
    after = run_pass(before, PASS)
    checks = asserts(after)
    assert checks and all("reader" in gv.name_hint for gv, f in after.functions.items()
                          if asserts(tvm.IRModule({gv: f})))
    for gv, func in before.functions.items():
        if "compute" in gv.name_hint:
            assert after[gv].same_as(func)


def test_hand_written_guards_around_the_access_prove_its_range():
    """``if 0 <= e and e < 3:`` around the read proves the expert in range: no check; the read in
    the ``else`` (e outside [0, 3)) is checked."""
    attrs = tt_attrs({"tt.kernel_role": "reader"})

    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main(B: T.Buffer((3, 64, 64), "bfloat16"), ids: T.Buffer((4,), "int32")):
            T.func_attr(attrs)
            B_s = T.Buffer((32, 64), "bfloat16", scope="shared.dyn")
            e: T.int32 = ids[2]
            if 0 <= e and e < 3:
                tt.read_to_cb(tl.region(B[e, 0, 0], 1, 1, 32, 64), tl.region(B_s[0, 0], 2, 32, 64))
            else:
                tt.read_to_cb(tl.region(B[e, 0, 0], 1, 1, 32, 64), tl.region(B_s[0, 0], 2, 32, 64))

    @I.ir_module(check_well_formed=False)
    class Expected:
        @T.prim_func
        def main(B: T.Buffer((3, 64, 64), "bfloat16"), ids: T.Buffer((4,), "int32")):
            T.func_attr(attrs)
            B_s = T.Buffer((32, 64), "bfloat16", scope="shared.dyn")
            e: T.int32 = ids[2]
            if 0 <= e and e < 3:
                tt.read_to_cb(tl.region(B[e, 0, 0], 1, 1, 32, 64), tl.region(B_s[0, 0], 2, 32, 64))
            else:
                tt.device_assert(0 <= e and e <= 2)
                tt.read_to_cb(tl.region(B[e, 0, 0], 1, 1, 32, 64), tl.region(B_s[0, 0], 2, 32, 64))

    tvm.ir.assert_structural_equal(AssertTensorIndicesTT()(Before), Expected, map_free_vars=True)


def test_real_kernel_without_indices_read_from_tensors_is_unchanged():
    before = lower_until(gemm(64, 64, 64, 32, 32, 32), PASS)
    after = run_pass(before, PASS)
    for gv, func in before.functions.items():
        assert after[gv].same_as(func), gv.name_hint
