"""ChooseMeshAxisTT alone: the grid dimension a mesh splits, chosen once and recorded as ``tt.mesh_axis``
(the ``mesh_axis`` option's, the summing dimension under ``mesh_reduce``, else the outermost row dimension
of more than one block, else the columns); what cannot be split is refused at its line."""

import re

import pytest
import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import gemm, lower_until, run_pass, split_k_gemm
from tests.passes.helpers import tl, tt_attrs
from tilelang_tt.errors import TTCompileError
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.options import CompileOptions
from tilelang_tt.passes.choose_mesh_axis_tt import ChooseMeshAxisTT

PASS = "ChooseMeshAxisTT"


def test_registered_under_its_name():
    assert ChooseMeshAxisTT().info.name == PASS


def _product(columns: int):
    """A product of ``columns`` block columns (bx, blockIdx.x) by 2 block rows (by, blockIdx.y)."""

    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64, 32), "bfloat16"), B: T.Buffer((32, columns * 32), "bfloat16"),
                 C: T.Buffer((64, columns * 32), "bfloat16")):
            for bx in T.thread_binding(columns, thread="blockIdx.x"):
                for by in T.thread_binding(2, thread="blockIdx.y"):
                    with T.sblock("tilelang_root"):
                        T.reads()
                        T.writes()
                        a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                        b = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                        tl.tileop.copy(tl.region(A[by * 32, 0], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                        tl.tileop.copy(tl.region(B[0, bx * 32], 1, 32, 32), tl.region(b[0, 0], 2, 32, 32))
                        tl.tileop.copy(tl.region(b[0, 0], 1, 32, 32), tl.region(C[by * 32, bx * 32], 2, 32, 32))

    return Before


@pytest.mark.parametrize("axis", [None, "blockIdx.x"])
def test_hand_written_the_columns_when_asked_else_the_rows(axis):
    """Two block rows: unasked the mesh splits them (blockIdx.y); ``mesh_axis="blockIdx.x"`` splits the 4
    block columns (a column-parallel product). Only the attribute changes."""
    chosen = axis or "blockIdx.y"

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((64, 32), "bfloat16"), B: T.Buffer((32, 128), "bfloat16"),
                 C: T.Buffer((64, 128), "bfloat16")):
            T.func_attr(tt_attrs({"tt.mesh_axis": chosen}))
            for bx in T.thread_binding(4, thread="blockIdx.x"):
                for by in T.thread_binding(2, thread="blockIdx.y"):
                    with T.sblock("tilelang_root"):
                        T.reads()
                        T.writes()
                        a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                        b = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                        tl.tileop.copy(tl.region(A[by * 32, 0], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                        tl.tileop.copy(tl.region(B[0, bx * 32], 1, 32, 32), tl.region(b[0, 0], 2, 32, 32))
                        tl.tileop.copy(tl.region(b[0, 0], 1, 32, 32), tl.region(C[by * 32, bx * 32], 2, 32, 32))

    tvm.ir.assert_structural_equal(ChooseMeshAxisTT(mesh=(1, 2), axis=axis)(_product(4)), Expected)


def test_on_a_real_kernel_the_option_chooses_and_one_chip_changes_nothing():
    options = CompileOptions(mesh=(2, 2), mesh_axis="blockIdx.x")
    before = lower_until(gemm(128, 256, 64, 64, 64, 64), PASS, options)
    after = run_pass(before, PASS, options)["main"]
    assert Attr.MESH_AXIS.read(after) == "blockIdx.x" and not Attr.MESH_AXIS.has(before["main"])
    tvm.ir.assert_structural_equal(after.body, before["main"].body)
    unsplit = lower_until(gemm(128, 256, 64, 64, 64, 64), PASS)
    assert run_pass(unsplit, PASS)["main"].same_as(unsplit["main"])


def test_mesh_reduce_chooses_the_summing_dimension():
    options = CompileOptions(mesh=(1, 2), mesh_reduce="all_reduce")
    after = run_pass(lower_until(split_k_gemm(128, 64, 128, 32, 64, 32, 2), PASS, options), PASS, options)["main"]
    assert Attr.MESH_AXIS.read(after) == "blockIdx.x"  # LowerAtomicAddTT tagged the K slices so


@pytest.mark.parametrize("case", ["three columns", "no such dimension"])
def test_hand_written_a_dimension_the_chips_cannot_take_is_refused(case):
    columns = 3 if case == "three columns" else 4
    axis = {"three columns": "blockIdx.x", "no such dimension": "blockIdx.z"}[case]
    message = {"three columns": "mesh=(1, 2) has 2 devices, which do not divide the 3 blocks of `bx` (blockIdx.x)",
               "no such dimension": "mesh_axis='blockIdx.z' asks the mesh to split the grid dimension blockIdx.z, "
                                    "but the kernel's grid has none"}[case]
    with pytest.raises(TTCompileError, match=re.escape(message)) as info:
        ChooseMeshAxisTT(mesh=(1, 2), axis=axis)(_product(columns))
    assert info.value.pass_name == PASS and info.value.hint


def test_mesh_axis_on_a_kernel_whose_blocks_sum_is_refused():
    # LowerAtomicAddTT made the summing slices blockIdx.x: the user's blockIdx.x is no longer that dimension
    options = CompileOptions(mesh=(1, 2), mesh_axis="blockIdx.x")
    with pytest.raises(TTCompileError, match="the blocks of this kernel sum into `C` with T.atomic_add") as info:
        run_pass(lower_until(split_k_gemm(128, 64, 128, 32, 64, 32, 2), PASS, options), PASS, options)
    assert "mesh_reduce='all_reduce'" in info.value.hint


def test_mesh_reduce_without_blocks_summing_is_refused():
    options = CompileOptions(mesh=(1, 2), mesh_reduce="all_reduce")
    with pytest.raises(TTCompileError, match="mesh_reduce='all_reduce' asks for the mesh to split a grid dimension "
                                             "whose blocks sum") as info:
        run_pass(lower_until(gemm(128, 128, 64, 64, 64, 64), PASS, options), PASS, options)
    assert info.value.hint



def test_replicate_splits_no_dimension_even_of_one_block():
    """``mesh_axis="replicate"``: every chip runs the whole grid, so any grid is taken (one block column,
    which no split could cut) and only the attribute changes."""
    before = _product(1)
    after = ChooseMeshAxisTT(mesh=(2, 4), axis="replicate")(before)["main"]
    assert Attr.MESH_AXIS.read(after) == "replicate"
    tvm.ir.assert_structural_equal(after.body, before["main"].body)
