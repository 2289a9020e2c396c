"""LegalizeGlobalAccessTT alone: element accesses of global tensors in a T.Parallel nest become
copies into shared blocks before it and from fragments after it; kernels written with blocks are
left as they are."""

import pytest
import tilelang  # noqa: F401
import tvm
from tvm import ir, tirx
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import eltwise, eltwise_direct, lower_until, run_pass
from tests.passes.helpers import alloc, assert_body, block, loop, names, param, seq, tl
from tilelang_tt.errors import TTCompileError
from tilelang_tt.passes.legalize_global_access_tt import LegalizeGlobalAccessTT

PASS = "LegalizeGlobalAccessTT"


def test_registered_under_its_name():
    assert LegalizeGlobalAccessTT().info.name == PASS


def region(buf, starts, mask, extents):
    return tirx.Call("handle", ir.Op.get("tl.region"), [tirx.BufferLoad(buf, list(starts)), tirx.IntImm("int32", mask)]
                     + [tirx.IntImm("int32", e) for e in extents])


def copy(src, dst):
    return tirx.Evaluate(tirx.Call("handle", ir.Op.get("tl.tileop.copy"), [src, dst]))


def test_global_accesses_become_block_copies():
    before = lower_until(eltwise_direct("add", 64, 96, 32, 32), PASS)
    f = before["main"]
    A, B, C = (param(f, n) for n in ("A", "B", "C"))
    start_x, start_y, _ = block(f, "tilelang_root").body.seq
    i, j = loop(f, "local_y").loop_var, loop(f, "local_x").loop_var
    after = run_pass(before, PASS)["main"]
    A_s, B_s, C_l = (alloc(after, n) for n in ("A_s", "B_s", "C_l"))
    assert [A_s.scope(), B_s.scope(), C_l.scope()] == ["shared.dyn", "shared.dyn", "local.fragment"]
    origin, zeros, ext = [start_y.var, start_x.var], [0, 0], [32, 32]
    nest = tirx.For(i, 0, 32, tirx.ForKind.PARALLEL, tirx.For(j, 0, 32, tirx.ForKind.PARALLEL, tirx.BufferStore(
        C_l, tirx.BufferLoad(A_s, [i, j]) + tirx.BufferLoad(B_s, [i, j]), [i, j])))
    expected = seq(start_x, start_y, seq(
        copy(region(A, origin, 1, ext), region(A_s, zeros, 2, ext)),
        copy(region(B, origin, 1, ext), region(B_s, zeros, 2, ext)),
        nest,
        copy(region(C_l, zeros, 1, ext), region(C, origin, 2, ext)),
    ))
    assert_body(block(after, "tilelang_root").body, expected)


def test_kernels_with_blocks_are_unchanged():
    before = lower_until(eltwise("add", 64, 96, 32, 32), PASS)
    assert_body(run_pass(before, PASS)["main"].body, before["main"].body)


def test_hand_written_parallel_nest_gets_block_copies():
    """Hand-written TIR: the nest reads A and writes C at (0, bx * 32) + (i, j); A is copied into a
    shared block before it, the result computed into a fragment and copied to C after it."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "bfloat16"), C: T.Buffer((32, 64), "bfloat16")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            C[i, bx * 32 + j] = A[i, bx * 32 + j] * T.bfloat16(2)

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "bfloat16"), C: T.Buffer((32, 64), "bfloat16")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    A_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                    C_l = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="local.fragment")
                    tl.tileop.copy(tl.region(A[0, bx * 32], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            C_l[i, j] = A_s[i, j] * T.bfloat16(2)
                    tl.tileop.copy(tl.region(C_l[0, 0], 1, 32, 32), tl.region(C[0, bx * 32], 2, 32, 32))

    after = LegalizeGlobalAccessTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)  # assert_structural_equal ignores names


def test_a_head_of_a_bshd_tensor_read_element_wise_becomes_its_slice():
    """Linear attention's load ``q[t, d] = Q[b, t0 + t, h, d0 + d] * scale``: the loop indices are
    dimensions 1 and 3, the head index between them a single index: the slice [1, 32, 1, 32]."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(Q: T.Buffer((1, 64, 2, 32), "bfloat16"), C: T.Buffer((64, 64), "bfloat16")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                for by in T.thread_binding(2, thread="blockIdx.y"):
                    with T.sblock("tilelang_root"):
                        T.reads()
                        T.writes()
                        q = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                        for t in T.parallel(32):
                            for d in T.parallel(32):
                                q[t, d] = Q[0, by * 32 + t, bx, d] * T.bfloat16(0.5)
                        tl.tileop.copy(tl.region(q[0, 0], 1, 32, 32), tl.region(C[by * 32, bx * 32], 2, 32, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(Q: T.Buffer((1, 64, 2, 32), "bfloat16"), C: T.Buffer((64, 64), "bfloat16")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                for by in T.thread_binding(2, thread="blockIdx.y"):
                    with T.sblock("tilelang_root"):
                        T.reads()
                        T.writes()
                        q = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                        Q_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                        tl.tileop.copy(tl.region(Q[0, by * 32, bx, 0], 1, 1, 32, 1, 32),
                                       tl.region(Q_s[0, 0], 2, 32, 32))
                        for t in T.parallel(32):
                            for d in T.parallel(32):
                                q[t, d] = Q_s[t, d] * T.bfloat16(0.5)
                        tl.tileop.copy(tl.region(q[0, 0], 1, 32, 32), tl.region(C[by * 32, bx * 32], 2, 32, 32))

    after = LegalizeGlobalAccessTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)  # assert_structural_equal ignores names


def test_hand_written_store_guarded_on_its_rows_writes_the_valid_rows():
    """The last block's boundary guard ``if by * 32 + i < 40`` around the store to C: the fragment
    ``C_l`` takes every row (unguarded), and the copy out writes the first ``40 - by * 32`` rows
    (``tt.valid_rows`` on C around it); no branch is left."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(C: T.Buffer((40, 32), "float32")):
            for by in T.thread_binding(2, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    c = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    tl.tileop.fill(tl.region(c[0, 0], 2, 32, 32), T.float32(1))
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            if by * 32 + i < 40:
                                C[by * 32 + i, j] = c[i, j]

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(C: T.Buffer((40, 32), "float32")):
            for by in T.thread_binding(2, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    c = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    C_l = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    tl.tileop.fill(tl.region(c[0, 0], 2, 32, 32), T.float32(1))
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            C_l[i, j] = c[i, j]
                    with T.attr(C.data, "tt.valid_rows", 40 - by * 32):
                        tl.tileop.copy(tl.region(C_l[0, 0], 1, 32, 32), tl.region(C[by * 32, 0], 2, 32, 32))

    after = LegalizeGlobalAccessTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_hand_written_column_store_is_a_column_block_copied_out():
    """Per-row scales ``S[by * 32 + i, bx] = s[i]`` of a (64, 4) tensor: the store names the nest's one
    loop on S's rows and indexes its columns at ``bx``: a vector block ``S_l`` of the rows, copied out
    to the column, the slice [32, 1]."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(S: T.Buffer((64, 4), "float32")):
            for bx in T.thread_binding(4, thread="blockIdx.x"):
                for by in T.thread_binding(2, thread="blockIdx.y"):
                    with T.sblock("tilelang_root"):
                        T.reads()
                        T.writes()
                        s = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                        tl.tileop.fill(tl.region(s[0], 2, 32), T.float32(1))
                        for i in T.parallel(32):
                            S[by * 32 + i, bx] = s[i] * T.float32(2)

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(S: T.Buffer((64, 4), "float32")):
            for bx in T.thread_binding(4, thread="blockIdx.x"):
                for by in T.thread_binding(2, thread="blockIdx.y"):
                    with T.sblock("tilelang_root"):
                        T.reads()
                        T.writes()
                        s = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                        S_l = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                        tl.tileop.fill(tl.region(s[0], 2, 32), T.float32(1))
                        for i in T.parallel(32):
                            S_l[i] = s[i] * T.float32(2)
                        tl.tileop.copy(tl.region(S_l[0], 1, 32), tl.region(S[by * 32, bx], 2, 32, 1))

    after = LegalizeGlobalAccessTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_hand_written_partner_half_is_the_nest_of_each_half():
    """Rotary embedding's partner ``T.if_then_else(j < 32, -X[.., j + 32], X[.., j - 32])`` over 64
    columns reads slices half outside X; the nest is split where the condition changes, ``j`` in [0,
    32) reading ``X[.., j + 32]`` and ``j = j' + 32`` reading ``X[.., j']``, each half its own blocks
    (the names of the first tries, which did not apply, are free again)."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((64, 64), "float32"), Y: T.Buffer((64, 64), "float32")):
            for by in T.thread_binding(2, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            Y[by * 32 + i, j] = T.if_then_else(j < 32, X[by * 32 + i, j + 32] * T.float32(-1),
                                                               X[by * 32 + i, j - 32])

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(X: T.Buffer((64, 64), "float32"), Y: T.Buffer((64, 64), "float32")):
            for by in T.thread_binding(2, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    X_s = T.sblock_alloc_buffer((32, 32), scope="shared.dyn")
                    Y_l = T.sblock_alloc_buffer((32, 32), scope="local.fragment")
                    X_s1 = T.sblock_alloc_buffer((32, 32), scope="shared.dyn")
                    Y_l1 = T.sblock_alloc_buffer((32, 32), scope="local.fragment")
                    tl.tileop.copy(tl.region(X[by * 32, 32], 1, 32, 32), tl.region(X_s[0, 0], 2, 32, 32))
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            Y_l[i, j] = X_s[i, j] * T.float32(-1)
                    tl.tileop.copy(tl.region(Y_l[0, 0], 1, 32, 32), tl.region(Y[by * 32, 0], 2, 32, 32))
                    tl.tileop.copy(tl.region(X[by * 32, 0], 1, 32, 32), tl.region(X_s1[0, 0], 2, 32, 32))
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            Y_l1[i, j] = X_s1[i, j]
                    tl.tileop.copy(tl.region(Y_l1[0, 0], 1, 32, 32), tl.region(Y[by * 32, 32], 2, 32, 32))

    after = LegalizeGlobalAccessTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_hand_written_transposed_store_is_the_nest_in_the_stores_order():
    """``C[bx * 32 + j, i] = A[i, bx * 32 + j]``: the store follows the loops (j, i), so the nest is
    written over (j, i) (parallel loops commute); A's block is read ``A_s[i, j]`` in that nest, the
    transposed operand compute takes on-chip."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "float32"), C: T.Buffer((64, 32), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            C[bx * 32 + j, i] = A[i, bx * 32 + j]

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "float32"), C: T.Buffer((64, 32), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    A_s = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                    C_l = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(A[0, bx * 32], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))
                    for j in T.parallel(32):
                        for i in T.parallel(32):
                            C_l[j, i] = A_s[i, j]
                    tl.tileop.copy(tl.region(C_l[0, 0], 1, 32, 32), tl.region(C[bx * 32, 0], 2, 32, 32))

    after = LegalizeGlobalAccessTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_hand_written_flat_index_of_two_loops_is_one_loop():
    """``Y[(bx * 4 + i) * 8 + j]`` over a (4, 8) nest: one loop over the 32 elements, whose index is
    ``bx * 32 + i_j``; the guard ``idx < 64`` every block passes is dropped."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((64,), "float32"), Y: T.Buffer((64,), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    for i in T.parallel(4):
                        for j in T.parallel(8):
                            if (bx * 4 + i) * 8 + j < 64:
                                Y[(bx * 4 + i) * 8 + j] = X[(bx * 4 + i) * 8 + j] * T.float32(2)

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(X: T.Buffer((64,), "float32"), Y: T.Buffer((64,), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    X_s = T.sblock_alloc_buffer((32,), "float32", scope="shared.dyn")
                    Y_l = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(X[bx * 32], 1, 32), tl.region(X_s[0], 2, 32))
                    for i_j in T.parallel(32):
                        Y_l[i_j] = X_s[i_j] * T.float32(2)
                    tl.tileop.copy(tl.region(Y_l[0], 1, 32), tl.region(Y[bx * 32], 2, 32))

    after = LegalizeGlobalAccessTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_hand_written_rows_of_a_flat_index_are_a_block_of_whole_rows():
    """``Y[g // 16, g % 16]`` with ``g = (bx * 4 + i) * 8 + j`` over a (4, 8) nest: its 32 elements are
    2 whole rows of 16, the nest over (2 rows, 16 columns) and the blocks [2, 16] at row ``bx * 2``."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((8, 16), "float32"), Y: T.Buffer((8, 16), "float32")):
            for bx in T.thread_binding(4, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    for i in T.parallel(4):
                        for j in T.parallel(8):
                            Y[((bx * 4 + i) * 8 + j) // 16, ((bx * 4 + i) * 8 + j) % 16] = X[
                                ((bx * 4 + i) * 8 + j) // 16, ((bx * 4 + i) * 8 + j) % 16] * T.float32(2)

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(X: T.Buffer((8, 16), "float32"), Y: T.Buffer((8, 16), "float32")):
            for bx in T.thread_binding(4, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    X_s = T.sblock_alloc_buffer((2, 16), "float32", scope="shared.dyn")
                    Y_l = T.sblock_alloc_buffer((2, 16), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(X[bx * 2, 0], 1, 2, 16), tl.region(X_s[0, 0], 2, 2, 16))
                    for i_j_row in T.parallel(2):
                        for i_j_col in T.parallel(16):
                            Y_l[i_j_row, i_j_col] = X_s[i_j_row, i_j_col] * T.float32(2)
                    tl.tileop.copy(tl.region(Y_l[0, 0], 1, 2, 16), tl.region(Y[bx * 2, 0], 2, 2, 16))

    after = LegalizeGlobalAccessTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_hand_written_flat_index_of_on_chip_blocks_is_one_loop():
    """TileOPs' register copy ``y_reg[i * 8 + j] = x_reg[i * 8 + j]`` over a (4, 8) nest of rank-1
    blocks of 32: one loop over the 32 elements, each block indexed by it; a nest indexing a block
    ``a[i * 8 + j + 1]`` (not the flat index itself) is left as it is."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(Y: T.Buffer((64,), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x_reg = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    y_reg = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    for i in T.parallel(4):
                        for j in T.parallel(8):
                            y_reg[i * 8 + j] = x_reg[i * 8 + j] * T.float32(2)
                    tl.tileop.copy(tl.region(y_reg[0], 1, 32), tl.region(Y[bx * 32], 2, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(Y: T.Buffer((64,), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x_reg = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    y_reg = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    for i_j in T.parallel(32):
                        y_reg[i_j] = x_reg[i_j] * T.float32(2)
                    tl.tileop.copy(tl.region(y_reg[0], 1, 32), tl.region(Y[bx * 32], 2, 32))

    after = LegalizeGlobalAccessTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)

    @I.ir_module
    class Shifted:
        @T.prim_func
        def main(Y: T.Buffer((64,), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x_reg = T.sblock_alloc_buffer((33,), "float32", scope="local.fragment")
                    y_reg = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    for i in T.parallel(4):
                        for j in T.parallel(8):
                            y_reg[i * 8 + j] = x_reg[i * 8 + j + 1]
                    tl.tileop.copy(tl.region(y_reg[0], 1, 32), tl.region(Y[bx * 32], 2, 32))

    tvm.ir.assert_structural_equal(LegalizeGlobalAccessTT()(Shifted), Shifted)


def test_hand_written_named_flat_index_of_on_chip_blocks_is_one_loop():
    """TileOPs' masked fill names the flat index, ``k = i * 8 + j; x_reg[k] = ..x_reg[k]..``: the name is
    simplified to the one loop's variable and substituted into the blocks' indices as well."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(Y: T.Buffer((64,), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    m_reg = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    x_reg = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    for i in T.parallel(4):
                        for j in T.parallel(8):
                            k: T.int32 = i * 8 + j
                            x_reg[k] = T.if_then_else(m_reg[k] != T.float32(0), T.float32(-1), x_reg[k])
                    tl.tileop.copy(tl.region(x_reg[0], 1, 32), tl.region(Y[bx * 32], 2, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(Y: T.Buffer((64,), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    m_reg = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    x_reg = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    for i_j in T.parallel(32):
                        x_reg[i_j] = T.if_then_else(m_reg[i_j] != T.float32(0), T.float32(-1), x_reg[i_j])
                    tl.tileop.copy(tl.region(x_reg[0], 1, 32), tl.region(Y[bx * 32], 2, 32))

    after = LegalizeGlobalAccessTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_hand_written_if_else_storing_one_element_is_a_selected_value():
    """TileLang's ``if 16 < row < 96: B[row, col] = A[row, col] * 2 else: B[row, col] = A[row, col] * 0.5``
    (testing/python/language/test_tilelang_language_if_range.py): both branches store the same element, so the
    nest stores ``T.if_then_else`` of the two values into the block copied out."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
            for by in T.thread_binding(4, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    for i in T.parallel(32):
                        for j in T.parallel(128):
                            if 16 < by * 32 + i and by * 32 + i < 96:
                                B[by * 32 + i, j] = A[by * 32 + i, j] * T.float32(2)
                            else:
                                B[by * 32 + i, j] = A[by * 32 + i, j] * T.float32(0.5)

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
            for by in T.thread_binding(4, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    A_s = T.sblock_alloc_buffer((32, 128), "float32", scope="shared.dyn")
                    B_l = T.sblock_alloc_buffer((32, 128), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(A[by * 32, 0], 1, 32, 128), tl.region(A_s[0, 0], 2, 32, 128))
                    for i in T.parallel(32):
                        for j in T.parallel(128):
                            B_l[i, j] = T.if_then_else(16 < by * 32 + i and by * 32 + i < 96,
                                                       A_s[i, j] * T.float32(2), A_s[i, j] * T.float32(0.5))
                    tl.tileop.copy(tl.region(B_l[0, 0], 1, 32, 128), tl.region(B[by * 32, 0], 2, 32, 128))

    after = LegalizeGlobalAccessTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_hand_written_store_guarded_on_its_column_copies_the_first_columns():
    """TileOPs' layer norm over rows of 200 padded to 256: ``if j < 200: y[row, j] = ..`` is the block computed over
    every column and its first 200 columns copied out (the writer writes their tiles)."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((64, 200), "float32"), Y: T.Buffer((64, 200), "float32")):
            for by in T.thread_binding(2, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((32, 256), "float32", scope="shared.dyn")
                    for i in T.parallel(32):
                        for j in T.parallel(256):
                            if j < 200:
                                Y[by * 32 + i, j] = x[i, j] * T.float32(2)

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(X: T.Buffer((64, 200), "float32"), Y: T.Buffer((64, 200), "float32")):
            for by in T.thread_binding(2, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((32, 256), "float32", scope="shared.dyn")
                    Y_l = T.sblock_alloc_buffer((32, 256), "float32", scope="local.fragment")
                    for i in T.parallel(32):
                        for j in T.parallel(256):
                            Y_l[i, j] = x[i, j] * T.float32(2)
                    tl.tileop.copy(tl.region(Y_l[0, 0], 1, 32, 200), tl.region(Y[by * 32, 0], 2, 32, 200))

    after = LegalizeGlobalAccessTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_a_nest_storing_into_a_tensor_at_no_block_is_refused_at_the_store():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((64, 64), "float32"), Y: T.Buffer((64, 64), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            Y[i + j, bx * 32 + j] = X[i, bx * 32 + j]

    with pytest.raises(TTCompileError, match=r"`Y\[i \+ j, bx \* 32 \+ j\]`: a T.Parallel nest stores into the "
                                             r"global tensor `Y` and its global accesses are not blocks of its loops"):
        LegalizeGlobalAccessTT()(Before)


def test_hand_written_row_read_per_row_is_its_tiles_turned_into_a_column():
    """``R[0, i]`` of a (1, 64) tensor in a nest over (i, j): a row of R's tiles used per row of the
    nest. It is read as the [1, 32] block it is (``R_s``), copied into the row vector of the same tiles
    (``R_v``), whose tiles a 1-D nest turns into the column vector ``R_t`` (element k in row k) the nest
    reads."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64, 32), "float32"), R: T.Buffer((1, 64), "float32"), C: T.Buffer((64, 32), "float32")):
            for by in T.thread_binding(2, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            C[by * 32 + i, j] = A[by * 32 + i, j] * R[0, by * 32 + i]

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((64, 32), "float32"), R: T.Buffer((1, 64), "float32"), C: T.Buffer((64, 32), "float32")):
            for by in T.thread_binding(2, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    A_s = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                    R_s = T.sblock_alloc_buffer((1, 32), "float32", scope="shared.dyn")
                    C_l = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    R_v = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    R_t = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(A[by * 32, 0], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))
                    tl.tileop.copy(tl.region(R[0, by * 32], 1, 1, 32), tl.region(R_s[0, 0], 2, 1, 32))
                    tl.tileop.copy(tl.region(R_s[0, 0], 1, 1, 32), tl.region(R_v[0], 2, 32))
                    for R_t_k in T.parallel(32):
                        R_t[R_t_k] = R_v[R_t_k]
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            C_l[i, j] = A_s[i, j] * R_t[i]
                    tl.tileop.copy(tl.region(C_l[0, 0], 1, 32, 32), tl.region(C[by * 32, 0], 2, 32, 32))

    after = LegalizeGlobalAccessTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_hand_written_column_read_per_column_is_its_tiles_turned_into_a_row():
    """``B[bx * 32 + j, 0]`` of a (64, 1) tensor in a nest over (i, j): a column of B's tiles used per
    column of the nest: the [32, 1] block ``B_s``, the column vector ``B_v`` of its tiles, turned into
    the row vector ``B_t``."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "bfloat16"), B: T.Buffer((64, 1), "bfloat16"), C: T.Buffer((32, 64), "bfloat16")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            C[i, bx * 32 + j] = A[i, bx * 32 + j] + B[bx * 32 + j, 0]

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "bfloat16"), B: T.Buffer((64, 1), "bfloat16"), C: T.Buffer((32, 64), "bfloat16")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    A_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                    B_s = T.sblock_alloc_buffer((32, 1), "bfloat16", scope="shared.dyn")
                    C_l = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="local.fragment")
                    B_v = T.sblock_alloc_buffer((32,), "bfloat16", scope="local.fragment")
                    B_t = T.sblock_alloc_buffer((32,), "bfloat16", scope="local.fragment")
                    tl.tileop.copy(tl.region(A[0, bx * 32], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))
                    tl.tileop.copy(tl.region(B[bx * 32, 0], 1, 32, 1), tl.region(B_s[0, 0], 2, 32, 1))
                    tl.tileop.copy(tl.region(B_s[0, 0], 1, 32, 1), tl.region(B_v[0], 2, 32))
                    for B_t_k in T.parallel(32):
                        B_t[B_t_k] = B_v[B_t_k]
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            C_l[i, j] = A_s[i, j] + B_t[j]
                    tl.tileop.copy(tl.region(C_l[0, 0], 1, 32, 32), tl.region(C[0, bx * 32], 2, 32, 32))

    after = LegalizeGlobalAccessTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_hand_written_row_staged_into_a_vector_used_per_row_is_its_tiles_copied_then_turned():
    """``s[i] = S[0, by * 32 + i]`` of a (1, 64) tensor in a 1-D nest whose vector ``s`` is used per row
    (``y[i, j] = x[i, j] * s[i]``): the row is read as the [1, 32] block it is (``S_s``) and copied into
    the row vector of its tiles ``S_v``, which the nest reads (compute turns each tile into ``s``); a
    store of a row, ``O[0, by * 32 + i] = s[i]``, is the same backwards."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(S: T.Buffer((1, 64), "float32"), O: T.Buffer((1, 64), "float32")):
            for by in T.thread_binding(2, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    s = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    y = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    for i in T.parallel(32):
                        s[i] = S[0, by * 32 + i]
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            y[i, j] = s[i]
                    for i in T.parallel(32):
                        O[0, by * 32 + i] = s[i]

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(S: T.Buffer((1, 64), "float32"), O: T.Buffer((1, 64), "float32")):
            for by in T.thread_binding(2, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    s = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    y = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    S_s = T.sblock_alloc_buffer((1, 32), "float32", scope="shared.dyn")
                    S_v = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    O_l = T.sblock_alloc_buffer((1, 32), "float32", scope="local.fragment")
                    O_v = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(S[0, by * 32], 1, 1, 32), tl.region(S_s[0, 0], 2, 1, 32))
                    tl.tileop.copy(tl.region(S_s[0, 0], 1, 1, 32), tl.region(S_v[0], 2, 32))
                    for i in T.parallel(32):
                        s[i] = S_v[i]
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            y[i, j] = s[i]
                    for i in T.parallel(32):
                        O_v[i] = s[i]
                    tl.tileop.copy(tl.region(O_v[0], 1, 32), tl.region(O_l[0, 0], 2, 1, 32))
                    tl.tileop.copy(tl.region(O_l[0, 0], 1, 1, 32), tl.region(O[0, by * 32], 2, 1, 32))

    after = LegalizeGlobalAccessTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_hand_written_page_read_at_a_block_table_entry_is_a_block_copy():
    """``K[table[bx], t, d]``: the page index is read from a tensor and names no loop, a batch index as
    in a T.copy: the slice [1, 32, 64] at it (AssertTensorIndicesTT checks the entry at run time)."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(K: T.Buffer((4, 32, 64), "float32"), table: T.Buffer((2,), "int32"), Y: T.Buffer((2, 32, 64), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    for t in T.parallel(32):
                        for d in T.parallel(64):
                            Y[bx, t, d] = K[table[bx], t, d]

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(K: T.Buffer((4, 32, 64), "float32"), table: T.Buffer((2,), "int32"), Y: T.Buffer((2, 32, 64), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    K_s = T.sblock_alloc_buffer((32, 64), "float32", scope="shared.dyn")
                    Y_l = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(K[table[bx], 0, 0], 1, 1, 32, 64), tl.region(K_s[0, 0], 2, 32, 64))
                    for t in T.parallel(32):
                        for d in T.parallel(64):
                            Y_l[t, d] = K_s[t, d]
                    tl.tileop.copy(tl.region(Y_l[0, 0], 1, 32, 64), tl.region(Y[bx, 0, 0], 2, 1, 32, 64))

    after = LegalizeGlobalAccessTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)
