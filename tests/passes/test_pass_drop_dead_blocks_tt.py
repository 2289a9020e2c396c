"""C3a DropDeadBlocksTT alone: the statements filling a block nothing reads go, and its multicast."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import lower_until, run_pass
from tests.passes.helpers import tl, tt, tt_attrs
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.ir.intrin import Intrin, call_intrin
from tilelang_tt.passes.drop_dead_blocks_tt import DropDeadBlocksTT

PASS = "DropDeadBlocksTT"
UNNUMBERED = {"axis": "x", "sender_semaphore": -1, "receiver_semaphore": -1, "groups": []}


def test_registered_under_its_name():
    assert DropDeadBlocksTT().info.name == PASS


def test_hand_written_dead_value_and_its_operands_go():
    """D_l is computed from D_s and X_s and read by nothing: its value goes, then D_s, which only that
    value read (the reader's copy into it, and its multicast). The gemm accumulating into the unread
    G_l goes with its tt.accumulate scope and its pack. X_s, read by Y_l's value too, stays."""
    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main(X: T.Buffer((32, 32), "bfloat16"), Y: T.Buffer((32, 32), "bfloat16")):
            T.func_attr(tt_attrs({"tt.multicast": {"X_s": UNNUMBERED, "D_s": UNNUMBERED}}))
            i = T.int32()
            j = T.int32()
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                X_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                D_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                Y_l = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                D_l = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                G_l = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                tt.read_to_cb(tl.region(X[0, 0], 1, 32, 32), tl.region(X_s[0, 0], 2, 32, 32))
                tt.read_to_cb(tl.region(X[0, 0], 1, 32, 32), tl.region(D_s[0, 0], 2, 32, 32))
                tt.tile.eltwise(Y_l.data, i, j, T.Cast("float32", X_s[i, j]) * T.float32(2))
                tt.tile.eltwise(D_l.data, i, j, T.Cast("float32", D_s[i, j] + X_s[i, j]))
                with T.attr(G_l.data, "tt.accumulate", 0):
                    tt.mm.mma(X_s.data, X_s.data, G_l.data, 0, 0, 1, 1, False, True)
                    tt.pack_block(G_l.data, 0, 0, 1, 1)
                tt.write_from_cb(tl.region(Y_l[0, 0], 1, 32, 32), tl.region(Y[0, 0], 2, 32, 32))

    @I.ir_module(check_well_formed=False)
    class Expected:
        @T.prim_func
        def main(X: T.Buffer((32, 32), "bfloat16"), Y: T.Buffer((32, 32), "bfloat16")):
            T.func_attr(tt_attrs({"tt.multicast": {"X_s": UNNUMBERED}}))
            i = T.int32()
            j = T.int32()
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                X_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                D_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                Y_l = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                D_l = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                G_l = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                tt.read_to_cb(tl.region(X[0, 0], 1, 32, 32), tl.region(X_s[0, 0], 2, 32, 32))
                T.evaluate(0)
                tt.tile.eltwise(Y_l.data, i, j, T.Cast("float32", X_s[i, j]) * T.float32(2))
                T.evaluate(0)
                T.evaluate(0)
                T.evaluate(0)
                tt.write_from_cb(tl.region(Y_l[0, 0], 1, 32, 32), tl.region(Y[0, 0], 2, 32, 32))

    tvm.ir.assert_structural_equal(DropDeadBlocksTT()(Before), Expected, map_free_vars=True)


def test_hand_written_kernel_without_dead_blocks_is_unchanged():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((32, 32), "bfloat16"), Y: T.Buffer((32, 32), "bfloat16")):
            T.func_attr(tt_attrs({"tt.multicast": {"X_s": UNNUMBERED}}))
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                X_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                tt.read_to_cb(tl.region(X[0, 0], 1, 32, 32), tl.region(X_s[0, 0], 2, 32, 32))
                tt.write_from_cb(tl.region(X_s[0, 0], 1, 32, 32), tl.region(Y[0, 0], 2, 32, 32))

    tvm.ir.assert_structural_equal(DropDeadBlocksTT()(Before), Before)


def test_a_value_folded_to_zero_leaves_its_operand_unread():
    """``C = A + 0.0 * B``: the parser folds ``0.0 * B`` away, B's block is read by nothing, so the
    reader's copy of B goes (before BuildTileDFGTT, which then makes no CB of it)."""
    import tilelang.language as T2

    @T2.prim_func
    def main(A: T2.Tensor((64, 64), "bfloat16"), B: T2.Tensor((64, 64), "bfloat16"),
             C: T2.Tensor((64, 64), "bfloat16")):
        with T2.Kernel(2, 2, threads=128) as (bx, by):
            a = T2.alloc_shared((32, 32), "bfloat16")
            b = T2.alloc_shared((32, 32), "bfloat16")
            c = T2.alloc_fragment((32, 32), "bfloat16")
            T2.copy(A[by * 32, bx * 32], a)
            T2.copy(B[by * 32, bx * 32], b)
            for i, j in T2.Parallel(32, 32):
                c[i, j] = a[i, j] + T2.bfloat16(0.0) * b[i, j]
            T2.copy(c, C[by * 32, bx * 32])

    before = lower_until(main, PASS)
    after = run_pass(before, PASS)["main"]

    def read_blocks(func):
        calls = []
        tvm.tirx.stmt_functor.post_order_visit(func.body, lambda n: calls.append(n) if isinstance(
            n, tvm.tirx.Call) and call_intrin(n) == Intrin.READ_TO_CB else None)
        return sorted(c.args[1].args[0].buffer.name for c in calls)

    assert read_blocks(before["main"]) == ["a", "b"]
    assert read_blocks(after) == ["a"]
    assert "b" not in Attr.CB_DESC.read(run_pass(lower_until(main, "NumberCBsTT"), "NumberCBsTT")["main"])
