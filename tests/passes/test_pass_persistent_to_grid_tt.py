"""PersistentToGridTT alone: a persistent kernel's waves (``for w in range(W)`` around a guarded
body, tile ``w * P + pid``) become blocks of a grid of ``W * P``, or of the tiles when the guard
holds for exactly the first blocks; anything else is left as it is. The pipeline-built cases
(T.Persistent, the GEMM of TileLang's example) are in tests/compiler/test_persistent.py."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.passes.helpers import tl
from tilelang_tt.passes.persistent_to_grid_tt import PersistentToGridTT

PASS = "PersistentToGridTT"


def test_registered_under_its_name():
    assert PersistentToGridTT().info.name == PASS


def test_hand_written_tail_guard_becomes_the_block_count():
    """4 programs walk 6 row tiles in 2 waves, ``tile = w * 4 + pid`` guarded by ``tile < 6``: the
    guard holds for blocks 0..5 of the 8, so the grid is the 6 tiles, ``tile`` is the block id,
    and no wave loop or branch is left."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((192, 32), "bfloat16"), C: T.Buffer((192, 32), "bfloat16")):
            for pid in T.thread_binding(4, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                    for w in range(2):
                        tile: T.int32 = w * 4 + pid
                        if tile < 6:
                            tl.tileop.copy(tl.region(A[tile * 32, 0], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                            tl.tileop.copy(tl.region(a[0, 0], 1, 32, 32), tl.region(C[tile * 32, 0], 2, 32, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((192, 32), "bfloat16"), C: T.Buffer((192, 32), "bfloat16")):
            for pid in T.thread_binding(6, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                    tile: T.int32 = pid
                    tl.tileop.copy(tl.region(A[tile * 32, 0], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                    tl.tileop.copy(tl.region(a[0, 0], 1, 32, 32), tl.region(C[tile * 32, 0], 2, 32, 32))

    tvm.ir.assert_structural_equal(PersistentToGridTT()(Before), Expected)


def test_hand_written_guard_with_gaps_stays_a_branch():
    """4 row slots per column for 3 rows: ``tm = tile % 4`` is past C for every fourth tile, so the
    guard holds for no first run of block ids: the grid is all 2 * 4 blocks, ``tile`` is the block
    id, and the guard stays."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((96, 64), "bfloat16"), C: T.Buffer((96, 64), "bfloat16")):
            for pid in T.thread_binding(4, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                    for w in range(2):
                        tile: T.int32 = w * 4 + pid
                        tm: T.int32 = tile % 4
                        tn: T.int32 = tile // 4
                        if tm < 3:
                            tl.tileop.copy(tl.region(A[tm * 32, tn * 32], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                            tl.tileop.copy(tl.region(a[0, 0], 1, 32, 32), tl.region(C[tm * 32, tn * 32], 2, 32, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((96, 64), "bfloat16"), C: T.Buffer((96, 64), "bfloat16")):
            for pid in T.thread_binding(8, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                    tile: T.int32 = pid
                    tm: T.int32 = tile % 4
                    tn: T.int32 = tile // 4
                    if tm < 3:
                        tl.tileop.copy(tl.region(A[tm * 32, tn * 32], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                        tl.tileop.copy(tl.region(a[0, 0], 1, 32, 32), tl.region(C[tm * 32, tn * 32], 2, 32, 32))

    tvm.ir.assert_structural_equal(PersistentToGridTT()(Before), Expected)


def test_hand_written_wave_loop_without_a_guard_is_left_as_it_is():
    """The loop over ``w`` ends the block but its body is no single ``if``: not the persistent
    pattern (the loop may be the kernel's own), so nothing changes."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((128, 32), "bfloat16"), C: T.Buffer((64, 32), "bfloat16")):
            for pid in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                    for w in range(2):
                        tl.tileop.copy(tl.region(A[pid * 64 + w * 32, 0], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                        tl.tileop.copy(tl.region(a[0, 0], 1, 32, 32), tl.region(C[pid * 32, 0], 2, 32, 32))

    tvm.ir.assert_structural_equal(PersistentToGridTT()(Before), Before)
