"""C1 LowerSharedToCB alone: T.copy global<->CB → tt.read_to_cb / tt.write_from_cb."""

import tilelang  # noqa: F401
import tvm
from tvm import tirx
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import gemm, lower_until, run_pass
from tests.passes.helpers import (
    alloc,
    assert_body,
    block,
    ev,
    launch,
    loop,
    param,
    region,
    seq,
    tl,
    tt,
)
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.ir.common import tile_op_name
from tilelang_tt.passes.lower_shared_to_cb import LowerSharedToCB

PASS = "LowerSharedToCB"


def test_registered_under_spec_name():
    assert LowerSharedToCB().info.name == PASS


def test_gemm_copies_become_abstract_cb_moves():
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    f = before["main"]
    A, B, C = (param(f, n) for n in "ABC")
    A_s, B_s, C_l = (alloc(f, n) for n in ("A_s", "B_s", "C_l"))
    bx = launch(f, "coreIdx.x").node.var
    by = launch(f, "coreIdx.y").node.var
    k = loop(f, "k")
    fill, _, _ = block(f, "tilelang_root").body.seq
    gemm_stmt = k.body.seq[2]
    assert tile_op_name(fill) == "fill" and tile_op_name(gemm_stmt) == "gemm"
    expected = seq(
        fill,
        tirx.For(k.loop_var, 0, 4, tirx.ForKind.SERIAL, seq(
            ev(Intrin.READ_TO_CB, region(A, [by * 64, k.loop_var * 32], 1, [64, 32]), region(A_s, [0, 0], 2, [64, 32])),
            ev(Intrin.READ_TO_CB, region(B, [k.loop_var * 32, bx * 64], 1, [32, 64]), region(B_s, [0, 0], 2, [32, 64])),
            gemm_stmt,
        ), annotations=k.annotations),
        ev(Intrin.WRITE_FROM_CB, region(C_l, [0, 0], 1, [64, 64]), region(C, [by * 64, bx * 64], 2, [64, 64])),
    )
    after = run_pass(before, PASS)
    assert_body(block(after["main"], "tilelang_root").body, expected)


def test_hand_written_copies_to_and_from_tensors():
    """Hand-written TIR: the copy from A into a shared block becomes tt.read_to_cb, the one from a
    fragment into C tt.write_from_cb; the on-chip copy between them is compute and stays."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64, 32), "bfloat16"), C: T.Buffer((64, 32), "bfloat16")):
            by = T.launch_thread("coreIdx.y", 2)
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                A_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                C_l = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="local.fragment")
                tl.tileop.copy(tl.region(A[by * 32, 0], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))
                tl.tileop.copy(tl.region(A_s[0, 0], 1, 32, 32), tl.region(C_l[0, 0], 2, 32, 32))
                tl.tileop.copy(tl.region(C_l[0, 0], 1, 32, 32), tl.region(C[by * 32, 0], 2, 32, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((64, 32), "bfloat16"), C: T.Buffer((64, 32), "bfloat16")):
            by = T.launch_thread("coreIdx.y", 2)
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                A_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                C_l = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="local.fragment")
                tt.read_to_cb(tl.region(A[by * 32, 0], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))
                tl.tileop.copy(tl.region(A_s[0, 0], 1, 32, 32), tl.region(C_l[0, 0], 2, 32, 32))
                tt.write_from_cb(tl.region(C_l[0, 0], 1, 32, 32), tl.region(C[by * 32, 0], 2, 32, 32))

    tvm.ir.assert_structural_equal(LowerSharedToCB()(Before), Expected)
