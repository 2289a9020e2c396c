"""MapParameterViewsTT alone: a view of a parameter regrouping its leading dimensions becomes the
parameter's own accesses (slices as boxes of the parameter, elements at their flat row's digits);
a kernel without views comes out as it went in; a slice of a view that is no box is refused. The
refusals with their source lines are in tests/compiler/test_negative.py, the numbers in
tests/compiler/test_parameter_views.py."""

import pytest
import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.passes.helpers import tl
from tilelang_tt.errors import TTCompileError
from tilelang_tt.passes.map_parameter_views_tt import MapParameterViewsTT

PASS = "MapParameterViewsTT"


def test_registered_under_its_name():
    assert MapParameterViewsTT().info.name == PASS


def test_slices_and_elements_of_views_become_the_parameters():
    """The filters' (288, 128) view read in 32-row slices: one channel block of one tap,
    ``W[kk // 3, kk % 3, 0:32, :]``; the output's (128, 64) view written in 64-row slices: two whole
    images ``O[by * 2:by * 2 + 2, 0:4, 0:8, :]``; an element of the view at its flat row's digits."""
    @I.ir_module(check_well_formed=False)  # the views are no declared buffers, as TileLang makes them
    class Before:
        @T.prim_func
        def main(W: T.Buffer((3, 3, 32, 128), "bfloat16"), O: T.Buffer((4, 4, 8, 64), "bfloat16")):
            for by in T.thread_binding(2, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    taps = T.sblock_alloc_buffer((32, 128), "bfloat16", scope="shared.dyn")
                    o = T.sblock_alloc_buffer((64, 64), "bfloat16", scope="shared.dyn")
                    w_2d = T.Buffer((288, 128), "bfloat16", data=W.data)
                    o_2d = T.Buffer((128, 64), "bfloat16", data=O.data)
                    for kk in range(9):
                        tl.tileop.copy(tl.region(w_2d[kk * 32, 0], 1, 32, 128), tl.region(taps[0, 0], 2, 32, 128))
                    tl.tileop.copy(tl.region(o[0, 0], 1, 64, 64), tl.region(o_2d[by * 64, 0], 2, 64, 64))
                    for i in T.parallel(64):
                        o_2d[by * 64 + i, 5] = w_2d[by * 64 + i, 3]

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(W: T.Buffer((3, 3, 32, 128), "bfloat16"), O: T.Buffer((4, 4, 8, 64), "bfloat16")):
            for by in T.thread_binding(2, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    taps = T.sblock_alloc_buffer((32, 128), "bfloat16", scope="shared.dyn")
                    o = T.sblock_alloc_buffer((64, 64), "bfloat16", scope="shared.dyn")
                    for kk in range(9):
                        tl.tileop.copy(tl.region(W[kk // 3, kk % 3, 0, 0], 1, 1, 1, 32, 128),
                                       tl.region(taps[0, 0], 2, 32, 128))
                    tl.tileop.copy(tl.region(o[0, 0], 1, 64, 64), tl.region(O[by * 2, 0, 0, 0], 2, 2, 4, 8, 64))
                    for i in T.parallel(64):
                        O[by * 2 + i // 32, i % 32 // 8, i % 8, 5] = W[(by * 64 + i) // 96, (by * 2 + i // 32) % 3, i % 32, 3]

    after = MapParameterViewsTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)


def test_kernel_without_views_is_unchanged():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((2, 32, 64), "bfloat16"), C: T.Buffer((2, 32, 64), "bfloat16")):
            for by in T.thread_binding(2, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="shared.dyn")
                    tl.tileop.copy(tl.region(A[by, 0, 0], 1, 1, 32, 64), tl.region(a[0, 0], 2, 32, 64))
                    tl.tileop.copy(tl.region(a[0, 0], 1, 32, 64), tl.region(C[by, 0, 0], 2, 1, 32, 64))

    assert MapParameterViewsTT()(Before)["main"].same_as(Before["main"])


def test_slice_straddling_two_matrices_is_refused():
    """Rows 32..63 of the (96, 64) view of a (2, 48, 64) tensor: the end of one matrix and the
    start of the next, no box of the tensor."""
    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main(Y: T.Buffer((2, 48, 64), "bfloat16")):
            for by in T.thread_binding(3, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    y = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="shared.dyn")
                    y_flat = T.Buffer((96, 64), "bfloat16", data=Y.data)
                    tl.tileop.copy(tl.region(y[0, 0], 1, 32, 64), tl.region(y_flat[by * 32, 0], 2, 32, 64))

    with pytest.raises(TTCompileError) as info:
        MapParameterViewsTT()(Before)
    assert info.value.pass_name == PASS
    assert "the slice of the view `y_flat` [96, 64]" in info.value.message


def test_view_in_another_dtype_is_refused():
    """The bits of a float32 parameter read as int32: no element of the parameter, refused."""
    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main(Y: T.Buffer((2, 32, 64), "float32")):
            for by in T.thread_binding(2, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    y = T.sblock_alloc_buffer((32, 64), "int32", scope="shared.dyn")
                    bits = T.Buffer((64, 64), "int32", data=Y.data)
                    tl.tileop.copy(tl.region(bits[by * 32, 0], 1, 32, 64), tl.region(y[0, 0], 2, 32, 64))

    with pytest.raises(TTCompileError) as info:
        MapParameterViewsTT()(Before)
    assert "`bits` [64, 64] is a view of the parameter `Y` [2, 32, 64]" in info.value.message
    assert "does not keep its dtype" in info.value.message
