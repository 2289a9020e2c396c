"""CoarsenRowBlocksTT alone: blocks of r < 32 rows whose blocks are independent become blocks of 32
rows (the grid shrinks by 32 / r); a kernel with a statement that mixes the rows of a block is left
as it is (PadBlocksTT pads its blocks to whole tiles: tests/compiler/test_any_shape.py runs such
kernels); kernels with tile-sized blocks are left as they are."""

import tilelang  # noqa: F401
import tilelang.language as TL
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import eltwise, lower_until, run_pass
from tests.passes.helpers import tl
from tilelang_tt.ir.common import span_of
from tilelang_tt.passes.coarsen_row_blocks_tt import CoarsenRowBlocksTT

PASS = "CoarsenRowBlocksTT"


def test_registered_under_its_name():
    assert CoarsenRowBlocksTT().info.name == PASS


def test_tile_sized_blocks_are_unchanged():
    before = lower_until(eltwise("add", 64, 96, 32, 32), PASS)
    tvm.ir.assert_structural_equal(run_pass(before, PASS), before)


def test_one_row_blocks_become_32_row_blocks():
    """TileLang's rms_norm with blk_m = 1: 64 blocks of one row become 2 blocks of 32 rows; the row
    loop of each T.Parallel runs over 32 rows and the per-row store to the rank-1 output follows."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((64, 128), "bfloat16"), S: T.Buffer((64,), "float32")):
            for bx in T.thread_binding(64, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((1, 128), "bfloat16", scope="shared.dyn")
                    sq = T.sblock_alloc_buffer((1, 128), "float32", scope="local.fragment")
                    s = T.sblock_alloc_buffer((1,), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(X[bx, 0], 1, 1, 128), tl.region(x[0, 0], 2, 1, 128))
                    for i in T.parallel(1):
                        for j in T.parallel(128):
                            sq[i, j] = T.Cast("float32", x[i, j]) * T.Cast("float32", x[i, j])
                    tl.tileop.reduce(tl.region(sq[0, 0], 1, 1, 128), tl.region(s[0], 2, 1), "sum", 1, True)
                    for i in T.parallel(1):
                        S[bx + i] = T.rsqrt(s[i])

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(X: T.Buffer((64, 128), "bfloat16"), S: T.Buffer((64,), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((32, 128), "bfloat16", scope="shared.dyn")
                    sq = T.sblock_alloc_buffer((32, 128), "float32", scope="local.fragment")
                    s = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(X[bx * 32, 0], 1, 32, 128), tl.region(x[0, 0], 2, 32, 128))
                    for i in T.parallel(32):
                        for j in T.parallel(128):
                            sq[i, j] = T.Cast("float32", x[i, j]) * T.Cast("float32", x[i, j])
                    tl.tileop.reduce(tl.region(sq[0, 0], 1, 32, 128), tl.region(s[0], 2, 32), "sum", 1, True)
                    for i in T.parallel(32):
                        S[bx * 32 + i] = T.rsqrt(s[i])

    tvm.ir.assert_structural_equal(CoarsenRowBlocksTT()(Before), Expected)


def test_four_row_blocks_index_their_rows_in_the_group():
    """blk_m = 4: 8 blocks form a group; row i % 4 of block g = i // 4 of the group is row
    4 * (i // 4) + i % 4 = i of the 32-row block: a loop over the 4 rows of a block becomes a loop over
    the 32 rows of the group."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((64, 64), "bfloat16"), Y: T.Buffer((64, 64), "bfloat16")):
            for by in T.thread_binding(16, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((4, 64), "bfloat16", scope="shared.dyn")
                    y = T.sblock_alloc_buffer((4, 64), "bfloat16", scope="local.fragment")
                    tl.tileop.copy(tl.region(X[by * 4, 0], 1, 4, 64), tl.region(x[0, 0], 2, 4, 64))
                    for i in T.parallel(4):
                        for j in T.parallel(64):
                            y[i, j] = x[i, j] + x[i, j]
                    tl.tileop.copy(tl.region(y[0, 0], 1, 4, 64), tl.region(Y[by * 4, 0], 2, 4, 64))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(X: T.Buffer((64, 64), "bfloat16"), Y: T.Buffer((64, 64), "bfloat16")):
            for by in T.thread_binding(2, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="shared.dyn")
                    y = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="local.fragment")
                    tl.tileop.copy(tl.region(X[by * 32, 0], 1, 32, 64), tl.region(x[0, 0], 2, 32, 64))
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            y[i, j] = x[i, j] + x[i, j]
                    tl.tileop.copy(tl.region(y[0, 0], 1, 32, 64), tl.region(Y[by * 32, 0], 2, 32, 64))

    after = CoarsenRowBlocksTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)


def _left_as_it_is(mod):
    """The pass leaves ``mod`` unchanged: its row blocks cannot be grouped."""
    tvm.ir.assert_structural_equal(CoarsenRowBlocksTT()(mod), mod)


def test_reduction_along_the_rows_is_left_to_padding():
    @I.ir_module
    class Mod:
        @T.prim_func
        def main(X: T.Buffer((64, 128), "bfloat16"), S: T.Buffer((1, 128), "bfloat16")):
            for bx in T.thread_binding(64, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((1, 128), "bfloat16", scope="shared.dyn")
                    s = T.sblock_alloc_buffer((128,), "bfloat16", scope="local.fragment")
                    tl.tileop.copy(tl.region(X[bx, 0], 1, 1, 128), tl.region(x[0, 0], 2, 1, 128))
                    tl.tileop.reduce(tl.region(x[0, 0], 1, 1, 128), tl.region(s[0], 2, 128), "sum", 0, True)

    _left_as_it_is(Mod)


def test_row_block_stored_into_a_shared_buffer_is_left_to_padding():
    @I.ir_module
    class Mod:
        @T.prim_func
        def main(X: T.Buffer((64, 128), "bfloat16"), Y: T.Buffer((64, 128), "bfloat16")):
            for bx in T.thread_binding(64, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((1, 128), "bfloat16", scope="shared.dyn")
                    w = T.sblock_alloc_buffer((32, 128), "bfloat16", scope="shared.dyn")
                    tl.tileop.copy(tl.region(X[bx, 0], 1, 1, 128), tl.region(x[0, 0], 2, 1, 128))
                    for i in T.parallel(1):
                        for j in T.parallel(128):
                            w[0, j] = x[i, j]
                    tl.tileop.copy(tl.region(w[0, 0], 1, 32, 128), tl.region(Y[0, 0], 2, 32, 128))

    _left_as_it_is(Mod)


def test_block_index_in_a_loop_bound_is_left_to_padding():
    @I.ir_module
    class Mod:
        @T.prim_func
        def main(X: T.Buffer((64, 128), "bfloat16"), Y: T.Buffer((64, 128), "bfloat16")):
            for bx in T.thread_binding(64, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((1, 32), "bfloat16", scope="shared.dyn")
                    for k in range(bx):
                        tl.tileop.copy(tl.region(X[bx, k * 32], 1, 1, 32), tl.region(x[0, 0], 2, 1, 32))
                        tl.tileop.copy(tl.region(x[0, 0], 1, 1, 32), tl.region(Y[bx, k * 32], 2, 1, 32))

    _left_as_it_is(Mod)


def test_partial_rows_of_a_tensor_slice_is_left_to_padding():
    """Block bx reads rows 2*bx..2*bx+1 into a one-row block: not the row the block index picks."""
    @I.ir_module
    class Mod:
        @T.prim_func
        def main(X: T.Buffer((128, 128), "bfloat16"), Y: T.Buffer((64, 128), "bfloat16")):
            for bx in T.thread_binding(64, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((1, 128), "bfloat16", scope="shared.dyn")
                    tl.tileop.copy(tl.region(X[bx * 2, 0], 1, 1, 128), tl.region(x[0, 0], 2, 1, 128))
                    tl.tileop.copy(tl.region(x[0, 0], 1, 1, 128), tl.region(Y[bx, 0], 2, 1, 128))

    _left_as_it_is(Mod)


def test_rows_that_do_not_divide_a_tile_are_left_to_padding():
    @I.ir_module
    class Mod:
        @T.prim_func
        def main(X: T.Buffer((60, 128), "bfloat16"), Y: T.Buffer((60, 128), "bfloat16")):
            for bx in T.thread_binding(20, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((3, 128), "bfloat16", scope="shared.dyn")
                    tl.tileop.copy(tl.region(X[bx * 3, 0], 1, 3, 128), tl.region(x[0, 0], 2, 3, 128))
                    tl.tileop.copy(tl.region(x[0, 0], 1, 3, 128), tl.region(Y[bx * 3, 0], 2, 3, 128))

    _left_as_it_is(Mod)


def test_same_rows_for_every_block_is_left_to_padding():
    """Every block would store the same element of S: several blocks writing one place."""
    @I.ir_module
    class Mod:
        @T.prim_func
        def main(X: T.Buffer((64, 128), "bfloat16"), S: T.Buffer((64,), "float32")):
            for bx in T.thread_binding(64, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((1, 128), "bfloat16", scope="shared.dyn")
                    s = T.sblock_alloc_buffer((1,), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(X[bx, 0], 1, 1, 128), tl.region(x[0, 0], 2, 1, 128))
                    tl.tileop.reduce(tl.region(x[0, 0], 1, 1, 128), tl.region(s[0], 2, 1), "sum", 1, True)
                    for i in T.parallel(1):
                        S[i] = s[i]

    _left_as_it_is(Mod)


def test_a_block_index_picking_the_columns_of_square_blocks_is_not_a_row_index():
    """(16, 16) blocks at A[by * 16, bx * 16]: bx moves 16 columns, as many as the blocks have rows, but picks
    their columns; grouping along it once made one block of two column blocks, and the T.gemm of that block
    gave zeros for the second one (a wrong result the idiom fuzz family found: tests/fuzz/idioms.py)."""
    @I.ir_module
    class Mod:
        @T.prim_func
        def main(A: T.Buffer((16, 32), "float32"), W: T.Buffer((16, 16), "float32"),
                 C: T.Buffer((16, 32), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                for by in T.thread_binding(1, thread="blockIdx.y"):
                    with T.sblock("tilelang_root"):
                        T.reads()
                        T.writes()
                        a = T.sblock_alloc_buffer((16, 16), "float32", scope="shared.dyn")
                        w = T.sblock_alloc_buffer((16, 16), "float32", scope="shared.dyn")
                        g = T.sblock_alloc_buffer((16, 16), "float32", scope="local.fragment")
                        tl.tileop.copy(tl.region(A[by * 16, bx * 16], 1, 16, 16), tl.region(a[0, 0], 2, 16, 16))
                        tl.tileop.copy(tl.region(W[0, 0], 1, 16, 16), tl.region(w[0, 0], 2, 16, 16))
                        tl.tileop.copy(tl.region(g[0, 0], 1, 16, 16), tl.region(C[by * 16, bx * 16], 2, 16, 16))

    _left_as_it_is(Mod)


def test_a_scan_along_the_columns_of_one_row_blocks_is_grouped_and_one_down_the_rows_is_not():
    """T.cumsum along dim 1 runs within each row: 64 one-row blocks become 2 of 32 rows; along dim 0
    it would mix the grouped rows, and the kernel is left to padding."""
    def scan(dim, blocks, rows):
        @T.prim_func
        def main(X: T.Buffer((64, 64), "float32"), Y: T.Buffer((64, 64), "float32")):
            for bx in T.thread_binding(blocks, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((rows, 64), "float32", scope="shared.dyn")
                    tl.tileop.copy(tl.region(X[bx * rows, 0], 1, rows, 64), tl.region(x[0, 0], 2, rows, 64))
                    tl.tileop.cumsum(tl.region(x[0, 0], 1, rows, 64), tl.region(x[0, 0], 2, rows, 64), dim, False)
                    tl.tileop.copy(tl.region(x[0, 0], 1, rows, 64), tl.region(Y[bx * rows, 0], 2, rows, 64))

        return tvm.IRModule({"main": main})

    tvm.ir.assert_structural_equal(CoarsenRowBlocksTT()(scan(1, 64, 1)), scan(1, 2, 32))
    _left_as_it_is(scan(0, 64, 1))


def test_a_nest_storing_rows_of_the_block_index_from_no_row_block_is_left_to_padding():
    """The gemm of a block computed without the block index (no row block) stored at the rows ``by`` picks:
    grouping would store the same 16 rows for each block of the group from one nest over the group's 32 rows
    (LegalizeGlobalAccessTT refused that nest at the kernel's line, the idiom fuzz's rank-4 gemm cases)."""
    @I.ir_module
    class Mod:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "float32"), W: T.Buffer((64, 64), "float32"), C: T.Buffer((32, 64), "float32")):
            for by in T.thread_binding(2, thread="blockIdx.y"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((16, 64), scope="shared.dyn")
                    f = T.sblock_alloc_buffer((16, 64), scope="local.fragment")
                    w = T.sblock_alloc_buffer((64, 64), scope="shared.dyn")
                    g = T.sblock_alloc_buffer((16, 64), scope="local.fragment")
                    tl.tileop.copy(tl.region(A[by * 16, 0], 1, 16, 64), tl.region(a[0, 0], 2, 16, 64))
                    for i in T.parallel(16):
                        for j in T.parallel(64):
                            f[i, j] = T.float32(1.5)
                    tl.tileop.copy(tl.region(W[0, 0], 1, 64, 64), tl.region(w[0, 0], 2, 64, 64))
                    tl.tileop.gemm(tl.region(f[0, 0], 1, 16, 64), tl.region(w[0, 0], 1, 64, 64),
                                   tl.region(g[0, 0], 3, 16, 64), False, False, 16, 64, 64, 0, False, 0, 0, 0)
                    for i in T.parallel(16):
                        for j in T.parallel(64):
                            C[by * 16 + i, j] = g[i, j]

    _left_as_it_is(Mod)


def test_a_serial_sweep_of_row_elements_groups_the_rows_its_nests_read_and_store():
    """ScalarRowsToBlocksTT's running product over 64 one-row blocks: no copy moves the rows, the nests
    over the row's element (``X[bx + i, j]``) pick them; 2 blocks of 32 rows, each step a column."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((64, 48), "float32"), Y: T.Buffer((64, 48), "float32")):
            for bx in T.thread_binding(64, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    r = T.sblock_alloc_buffer((1,), "float32", scope="local.fragment")
                    for i in T.parallel(1):
                        r[i] = T.float32(1)
                    for j in range(48):
                        for i in T.parallel(1):
                            r[i] = r[i] * X[bx + i, j]
                        for i in T.parallel(1):
                            Y[bx + i, j] = r[i]

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(X: T.Buffer((64, 48), "float32"), Y: T.Buffer((64, 48), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    r = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    for i in T.parallel(32):
                        r[i] = T.float32(1)
                    for j in range(48):
                        for i in T.parallel(32):
                            r[i] = r[i] * X[bx * 32 + i, j]
                        for i in T.parallel(32):
                            Y[bx * 32 + i, j] = r[i]

    tvm.ir.assert_structural_equal(CoarsenRowBlocksTT()(Before), Expected)


def test_the_grouped_stores_keep_the_users_lines():
    """A store the pass rewrites keeps its span: a later refusal of it names the user's line, not the def
    line (TileOPs' group norm, its weight read at a channel computed from the row and the column)."""
    @TL.prim_func
    def main(X: TL.Tensor((64, 128), "bfloat16"), W: TL.Tensor((128,), "bfloat16"), Y: TL.Tensor((64, 128), "bfloat16")):
        with TL.Kernel(64, threads=128) as bx:
            x = TL.alloc_shared((1, 128), "bfloat16")
            y = TL.alloc_fragment((1, 128), "bfloat16")
            TL.copy(X[bx, 0], x)
            for i, j in TL.Parallel(1, 128):
                y[i, j] = x[i, j] * W[j]
            TL.copy(y, Y[bx, 0])

    def store_lines(mod):
        found = []
        tvm.tirx.stmt_functor.post_order_visit(mod["main"].body, lambda n: found.append(
            span_of(n) and int(span_of(n).line)) if isinstance(n, tvm.tirx.BufferStore) else None)
        return found

    before = lower_until(main, PASS)
    after = run_pass(before, PASS)
    assert not tvm.ir.structural_equal(after, before)  # grouped into blocks of 32 rows
    assert store_lines(after) == store_lines(before) and None not in store_lines(before)
