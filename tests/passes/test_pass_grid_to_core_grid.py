"""B2 GridToCoreGrid alone: blockIdx loops → coreIdx launches (tt.core_map names them), threadIdx bindings dropped."""

import tilelang  # noqa: F401
import tvm
from tvm import ir, tirx
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import bmm, gemm, lower_until, run_pass
from tests.passes.helpers import assert_body, block, launch, loop, names, nodes, rebuild_block, tl, tt_attrs
from tilelang_tt.ir.attrs import Attr, CoreMap
from tilelang_tt.passes.grid_to_core_grid import GridToCoreGrid

PASS = "GridToCoreGrid"


def test_registered_under_spec_name():
    assert GridToCoreGrid().info.name == PASS


def core_launch(var, tag, extent, body):
    iv = tirx.IterVar(ir.Range(0, extent), var, tirx.IterVar.ThreadIndex, tag)
    return tirx.AttrStmt(iv, "thread_extent", tirx.IntImm("int32", extent), body)


def test_block_grid_becomes_core_launches():
    before = lower_until(gemm(128, 256, 64, 64, 64, 32), PASS)
    f = before["main"]
    bx, by = loop(f, "bx"), loop(f, "by")
    (inner,) = nodes(f.body, lambda n: isinstance(n, tirx.SBlockRealize) and n.block.name_hint == "tilelang_root")

    expected = rebuild_block(f.body, core_launch(bx.loop_var, "coreIdx.x", 4, core_launch(by.loop_var, "coreIdx.y", 2, inner)))
    after = run_pass(before, PASS)
    assert_body(after["main"].body, expected)
    assert block(after["main"], "tilelang_root").same_as(block(f, "tilelang_root"))
    assert Attr.CORE_MAP.read(after["main"]) == CoreMap(m="coreIdx.y", n="coreIdx.x")


def test_third_grid_dimension_folds_into_the_block_rows():
    """T.Kernel(Bx, By, Bz): one coreIdx.y launch over Bz * By rows, bz and by read from it."""
    before = lower_until(bmm(3, 64, 64, 96, 32, 32, 32), PASS)
    f = before["main"]
    bx, by, bz = (loop(f, name).loop_var for name in ("bx", "by", "bz"))
    (inner,) = nodes(f.body, lambda n: isinstance(n, tirx.SBlockRealize) and n.block.name_hint == "tilelang_root")
    after = run_pass(before, PASS)["main"]
    row = launch(after, "coreIdx.y").node.var
    assert row.name == "bz_by"
    inner = tirx.stmt_functor.substitute(inner, {bz: tirx.FloorDiv(row, 2), by: tirx.FloorMod(row, 2)})
    expected = rebuild_block(f.body, core_launch(bx, "coreIdx.x", 2, core_launch(row, "coreIdx.y", 6, inner)))
    assert_body(after.body, expected)
    assert Attr.CORE_MAP.read(after) == CoreMap(m="coreIdx.y", n="coreIdx.x")


CORE_MAP = {"tt.core_map": {"m": "coreIdx.y", "n": "coreIdx.x"}}


def test_hand_written_grid_loops_become_core_launches():
    """Hand-written TIR: each blockIdx loop becomes a coreIdx launch of the same variable; the
    thread index binding TileLang adds is dropped."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64, 96), "bfloat16")):
            for bx in T.thread_binding(3, thread="blockIdx.x"):
                for by in T.thread_binding(2, thread="blockIdx.y"):
                    tx: T.int32 = tl.launch_thread_idx(0, dtype="int32")
                    with T.sblock("tilelang_root"):
                        T.reads()
                        T.writes()
                        A_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                        tl.tileop.copy(tl.region(A[by * 32, bx * 32], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((64, 96), "bfloat16")):
            T.func_attr(tt_attrs(CORE_MAP))
            bx = T.launch_thread("coreIdx.x", 3)
            by = T.launch_thread("coreIdx.y", 2)
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                A_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                tl.tileop.copy(tl.region(A[by * 32, bx * 32], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))

    after = GridToCoreGrid()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)  # assert_structural_equal ignores names


def test_hand_written_third_grid_dimension_folds_into_the_rows():
    """Hand-written TIR: blockIdx.z (3) and blockIdx.y (2) become one coreIdx.y launch of 6 rows,
    bz and by read from it."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((3, 64, 32), "bfloat16")):
            for by in T.thread_binding(2, thread="blockIdx.y"):
                for bz in T.thread_binding(3, thread="blockIdx.z"):
                    with T.sblock("tilelang_root"):
                        T.reads()
                        T.writes()
                        A_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                        tl.tileop.copy(tl.region(A[bz, by * 32, 0], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((3, 64, 32), "bfloat16")):
            T.func_attr(tt_attrs(CORE_MAP))
            bz_by = T.launch_thread("coreIdx.y", 6)
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                A_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                tl.tileop.copy(tl.region(A[bz_by // 2, bz_by % 2 * 32, 0], 1, 32, 32),
                               tl.region(A_s[0, 0], 2, 32, 32))

    after = GridToCoreGrid()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)  # assert_structural_equal ignores names


def test_hand_written_swizzle_hint_is_dropped():
    """Hand-written TIR: T.use_swizzle's rasterization hint (a GPU's L2 order of blocks) goes with
    the grid loops; on Tenstorrent the work partition orders the blocks."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "bfloat16")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    A_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                    T.attr(None, "threadblock_swizzle_pattern", T.tvm_tuple("rasterization2DRow", 10))
                    tl.tileop.copy(tl.region(A[0, bx * 32], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "bfloat16")):
            T.func_attr(tt_attrs(CORE_MAP))
            bx = T.launch_thread("coreIdx.x", 2)
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                A_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                tl.tileop.copy(tl.region(A[0, bx * 32], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))

    tvm.ir.assert_structural_equal(GridToCoreGrid()(Before), Expected)
