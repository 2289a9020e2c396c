"""B2 GridToCoreGrid alone: blockIdx loops → coreIdx launches (tt.core_map names them), threadIdx bindings dropped."""

import tilelang  # noqa: F401
from tvm import ir, tirx

from tests.kernels import bmm, gemm, lower_until, run_pass
from tests.passes.helpers import assert_body, block, launch, loop, nodes, rebuild_block
from tilelang_tt.attrs import Attr, get
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
    assert get(after["main"], Attr.CORE_MAP) == {"m": "coreIdx.y", "n": "coreIdx.x"}


def test_gpu_block_scheduling_hints_are_dropped():
    """T.use_swizzle orders blocks for a GPU's L2; on Tenstorrent the work partition orders them."""
    plain = run_pass(lower_until(gemm(128, 256, 64, 64, 64, 32), PASS), PASS)
    before = lower_until(gemm(128, 256, 64, 64, 64, 32, staged=True), PASS)
    assert nodes(before["main"].body, lambda n: isinstance(n, tirx.AttrStmt)
                 and n.attr_key == "threadblock_swizzle_pattern")
    after = run_pass(before, PASS)
    assert not nodes(after["main"].body, lambda n: isinstance(n, tirx.AttrStmt)
                     and n.attr_key == "threadblock_swizzle_pattern")
    def launches(f):
        return sorted(str(n.node.thread_tag) for n in nodes(f.body, lambda n: isinstance(n, tirx.AttrStmt)
                                                                and n.attr_key == "thread_extent"))

    assert launches(after["main"]) == launches(plain["main"]) == ["coreIdx.x", "coreIdx.y"]


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
    assert get(after, Attr.CORE_MAP) == {"m": "coreIdx.y", "n": "coreIdx.x"}
