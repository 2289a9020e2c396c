"""VersionOnChipBuffersTT alone, on hand-written TIR, and on real kernels: a block holding values
from two kernels, or written after the writer copied it out, gets one buffer per value."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import lower_until, run_pass
from tests.passes.helpers import alloc, names, tl
from tilelang_tt.passes.version_on_chip_buffers_tt import PASS, VersionOnChipBuffersTT


def test_registered_under_its_name():
    assert VersionOnChipBuffersTT().info.name == PASS


def test_a_block_the_reader_fills_and_compute_overwrites_becomes_two():
    """TileOPs' RMS norm: ``x_s`` is filled by the reader, then overwritten by compute for the way
    out; the second value is a fragment ``x_s_v`` of its own, which the copy-out reads."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((32, 64), "bfloat16"), Y: T.Buffer((32, 64), "bfloat16")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x_s = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="shared.dyn")
                    x_f = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="local.fragment")
                    tl.tileop.copy(tl.region(X[0, 0], 1, 32, 64), tl.region(x_s[0, 0], 2, 32, 64))
                    tl.tileop.copy(tl.region(x_s[0, 0], 1, 32, 64), tl.region(x_f[0, 0], 2, 32, 64))
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            x_f[i, j] = x_f[i, j] * T.bfloat16(2)
                    tl.tileop.copy(tl.region(x_f[0, 0], 1, 32, 64), tl.region(x_s[0, 0], 2, 32, 64))
                    tl.tileop.copy(tl.region(x_s[0, 0], 1, 32, 64), tl.region(Y[0, 0], 2, 32, 64))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(X: T.Buffer((32, 64), "bfloat16"), Y: T.Buffer((32, 64), "bfloat16")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x_s = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="shared.dyn")
                    x_s_v = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="local.fragment")
                    x_f = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="local.fragment")
                    tl.tileop.copy(tl.region(X[0, 0], 1, 32, 64), tl.region(x_s[0, 0], 2, 32, 64))
                    tl.tileop.copy(tl.region(x_s[0, 0], 1, 32, 64), tl.region(x_f[0, 0], 2, 32, 64))
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            x_f[i, j] = x_f[i, j] * T.bfloat16(2)
                    tl.tileop.copy(tl.region(x_f[0, 0], 1, 32, 64), tl.region(x_s_v[0, 0], 2, 32, 64))
                    tl.tileop.copy(tl.region(x_s_v[0, 0], 1, 32, 64), tl.region(Y[0, 0], 2, 32, 64))

    after = VersionOnChipBuffersTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)  # assert_structural_equal ignores names
    # the fragment compute updates in place keeps its one buffer: one producer, compute
    assert alloc(after["main"], "x_f").same_as(alloc(Before["main"], "x_f"))


def test_a_fragment_copied_out_then_updated_gets_a_version_per_value():
    """``f`` is copied to S, updated in place (reading its old value), copied to Y: the update
    writes ``f_v`` (after the writer took ``f``); a name ``f_v`` the kernel has is not reused."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32, 32), "float32"), S: T.Buffer((32, 32), "float32"),
                 Y: T.Buffer((32, 32), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    f_v = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                    f = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(A[0, 0], 1, 32, 32), tl.region(f_v[0, 0], 2, 32, 32))
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            f[i, j] = f_v[i, j] + T.float32(1)
                    tl.tileop.copy(tl.region(f[0, 0], 1, 32, 32), tl.region(S[0, 0], 2, 32, 32))
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            f[i, j] = f[i, j] * T.float32(2)
                    tl.tileop.copy(tl.region(f[0, 0], 1, 32, 32), tl.region(Y[0, 0], 2, 32, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((32, 32), "float32"), S: T.Buffer((32, 32), "float32"),
                 Y: T.Buffer((32, 32), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    f_v = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                    f = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    f_v1 = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(A[0, 0], 1, 32, 32), tl.region(f_v[0, 0], 2, 32, 32))
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            f[i, j] = f_v[i, j] + T.float32(1)
                    tl.tileop.copy(tl.region(f[0, 0], 1, 32, 32), tl.region(S[0, 0], 2, 32, 32))
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            f_v1[i, j] = f[i, j] * T.float32(2)
                    tl.tileop.copy(tl.region(f_v1[0, 0], 1, 32, 32), tl.region(Y[0, 0], 2, 32, 32))

    after = VersionOnChipBuffersTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_an_update_of_part_of_a_reader_block_starts_from_a_copy():
    """A row sum accumulating (``clear=False``) into a vector the reader filled: the new version
    starts as a copy of the reader's block, then the reduction accumulates into it."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32,), "float32"), Y: T.Buffer((32,), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                    r = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(A[0, 0], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                    tl.tileop.copy(tl.region(B[0], 1, 32), tl.region(r[0], 2, 32))
                    tl.tileop.reduce(tl.region(a[0, 0], 1, 32, 32), tl.region(r[0], 2, 32), "sum", 1, T.bool(False))
                    tl.tileop.copy(tl.region(r[0], 1, 32), tl.region(Y[0], 2, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32,), "float32"), Y: T.Buffer((32,), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                    r = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    r_v = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(A[0, 0], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                    tl.tileop.copy(tl.region(B[0], 1, 32), tl.region(r[0], 2, 32))
                    tl.tileop.copy(tl.region(r[0], 1, 32), tl.region(r_v[0], 2, 32))
                    tl.tileop.reduce(tl.region(a[0, 0], 1, 32, 32), tl.region(r_v[0], 2, 32), "sum", 1, T.bool(False))
                    tl.tileop.copy(tl.region(r_v[0], 1, 32), tl.region(Y[0], 2, 32))

    after = VersionOnChipBuffersTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_a_tile_op_in_place_on_a_reader_block_reads_it_and_writes_the_version():
    """``T.cumsum(A_s, A_s)`` after the reader filled ``A_s``: the scan reads the reader's block and
    writes ``A_s_v`` (no copy first: it defines every element)."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    A_s = T.sblock_alloc_buffer((64, 64), "float32", scope="shared.dyn")
                    tl.tileop.copy(tl.region(A[0, 0], 1, 64, 64), tl.region(A_s[0, 0], 2, 64, 64))
                    tl.tileop.cumsum(tl.region(A_s[0, 0], 1, 64, 64), tl.region(A_s[0, 0], 2, 64, 64), 1,
                                     T.bool(False))
                    tl.tileop.copy(tl.region(A_s[0, 0], 1, 64, 64), tl.region(B[0, 0], 2, 64, 64))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    A_s = T.sblock_alloc_buffer((64, 64), "float32", scope="shared.dyn")
                    A_s_v = T.sblock_alloc_buffer((64, 64), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(A[0, 0], 1, 64, 64), tl.region(A_s[0, 0], 2, 64, 64))
                    tl.tileop.cumsum(tl.region(A_s[0, 0], 1, 64, 64), tl.region(A_s_v[0, 0], 2, 64, 64), 1,
                                     T.bool(False))
                    tl.tileop.copy(tl.region(A_s_v[0, 0], 1, 64, 64), tl.region(B[0, 0], 2, 64, 64))

    after = VersionOnChipBuffersTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_a_block_filled_by_the_reader_in_two_loops_keeps_one_buffer_per_loop_value():
    """RMSNorm over column blocks (op_kernels.rmsnorm_split): the reader fills ``X_s`` in two loops
    (one CB, filled each iteration); in the second loop compute scales it in place: inside that
    loop the scaled value is ``X_s_v``. The first loop, the fills and the reads of ``X_s`` stay."""
    from tests import op_kernels as K

    before = lower_until(K.rmsnorm_split(64, 256, 32, 64), PASS)
    after = run_pass(before, PASS)["main"]
    text = after.script()
    assert text.count("X_s_v[i, j] = ") == 1 and "X_s_v1" not in text
    assert "tl.region(X_s_v[0, 0], 1, 32, 64), tl.region(Y" in text.replace("T.region", "tl.region")
    assert text.count("tl.region(X_s[0, 0], 2, 32, 64)".replace("tl.", "T.")) == 2  # both loops' fills


def test_kernels_with_a_role_per_block_come_out_unchanged():
    from tests import kernels as K

    before = lower_until(K.gemm(64, 64, 128, 32, 32, 32), PASS)
    assert run_pass(before, PASS)["main"].same_as(before["main"])
