"""LowerAtomicAddTT alone: ``T.atomic_add`` (per element in a T.Parallel, or per block) becomes the
element read-modify-write ``C[..] = C[..] + v`` in a T.Parallel nest; the grid axes no atomic
destination depends on (the summing axes) are re-tagged as the innermost blockIdx dimensions and
recorded with the summed tensors in ``tt.reduction``; an add into an on-chip buffer is a plain
add; kernels without atomics are returned as they are."""

import pytest
import tilelang  # noqa: F401
import tvm
from tvm import tirx
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.compiler.test_split_k import add_per_iteration, two_summing_axes
from tests.kernels import gemm, lower_until, run_pass, split_k_gemm
from tests.passes.helpers import loop, nodes, param, tl
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.errors import TTCompileError
from tilelang_tt.passes.lower_atomic_add_tt import LowerAtomicAddTT

PASS = "LowerAtomicAddTT"
ATOMIC_OPS = ("tl.atomic_add_elem_op", "tl.tileop.atomicadd")


def test_registered_under_its_name():
    assert LowerAtomicAddTT().info.name == PASS


def _tags(func) -> dict[str, str]:
    """Grid loop variable name -> its blockIdx tag."""
    return {f.loop_var.name: str(f.thread_binding.thread_tag) for f in nodes(
        func.body, lambda n: isinstance(n, tirx.For) and n.thread_binding is not None
        and str(n.thread_binding.thread_tag).startswith("blockIdx"))}


def _atomics(func) -> list:
    return nodes(func.body, lambda n: isinstance(n, tirx.Call) and isinstance(n.op, tvm.ir.Op)
                 and n.op.name in ATOMIC_OPS)


def _assert_reduction(func, buffers, axes, blocks):
    reduction = Attr.REDUCTION.read(func)
    assert reduction is not None
    assert [b.name for b in reduction.buffers] == buffers
    assert all(b.same_as(param(func, b.name)) for b in reduction.buffers)
    assert [a.name for a in reduction.axes] == axes
    assert all(a.same_as(loop(func, a.name).loop_var) for a in reduction.axes)
    assert (reduction.blocks, reduction.semaphore) == (blocks, -1)


def test_hand_written_block_add_becomes_element_adds_and_bz_becomes_blockIdx_x():
    """Split into bz: the block add is a 32x32 T.Parallel nest of C[..] = C[..] + s[i, j]; bz, the
    summing axis, takes blockIdx.x, the other axes the outer tags in their order (bx y, by z)."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((2, 64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                for by in T.thread_binding(2, thread="blockIdx.y"):
                    for bz in T.thread_binding(2, thread="blockIdx.z"):
                        with T.sblock("tilelang_root"):
                            T.reads()
                            T.writes()
                            s = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                            tl.tileop.copy(tl.region(A[bz, by * 32, bx * 32], 1, 1, 32, 32),
                                           tl.region(s[0, 0], 2, 32, 32))
                            tl.tileop.atomicadd(tl.region(s[0, 0], 1, 32, 32), tl.region(C[by * 32, bx * 32], 2, 32, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((2, 64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.y"):
                for by in T.thread_binding(2, thread="blockIdx.z"):
                    for bz in T.thread_binding(2, thread="blockIdx.x"):
                        with T.sblock("tilelang_root"):
                            T.reads()
                            T.writes()
                            s = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                            tl.tileop.copy(tl.region(A[bz, by * 32, bx * 32], 1, 1, 32, 32),
                                           tl.region(s[0, 0], 2, 32, 32))
                            for i in T.parallel(32):
                                for j in T.parallel(32):
                                    C[by * 32 + i, bx * 32 + j] = C[by * 32 + i, bx * 32 + j] + s[i, j]

    after = run_pass(Before, PASS)["main"]
    tvm.ir.assert_structural_equal(after.without_attr(Attr.REDUCTION.key), Expected["main"])
    _assert_reduction(after, ["C"], ["bz"], 2)


def test_hand_written_element_add_into_bfloat16_casts_the_value():
    """The element form in a T.Parallel: the store replaces the call in place, the float32 value cast
    to C's bfloat16. A 2-D grid split along bx: bx takes blockIdx.x (already its tag), by keeps y."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((32, 64), "bfloat16")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                for by in T.thread_binding(2, thread="blockIdx.y"):
                    with T.sblock("tilelang_root"):
                        T.reads()
                        T.writes()
                        s = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                        tl.tileop.copy(tl.region(A[bx * 32, by * 32], 1, 32, 32), tl.region(s[0, 0], 2, 32, 32))
                        for i in T.parallel(32):
                            for j in T.parallel(32):
                                tl.atomic_add_elem_op(tl.access_ptr(C[i, by * 32 + j], 1, 3), s[i, j])

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((32, 64), "bfloat16")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                for by in T.thread_binding(2, thread="blockIdx.y"):
                    with T.sblock("tilelang_root"):
                        T.reads()
                        T.writes()
                        s = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                        tl.tileop.copy(tl.region(A[bx * 32, by * 32], 1, 32, 32), tl.region(s[0, 0], 2, 32, 32))
                        for i in T.parallel(32):
                            for j in T.parallel(32):
                                C[i, by * 32 + j] = C[i, by * 32 + j] + T.Cast("bfloat16", s[i, j])

    after = run_pass(Before, PASS)["main"]
    tvm.ir.assert_structural_equal(after.without_attr(Attr.REDUCTION.key), Expected["main"])
    _assert_reduction(after, ["C"], ["bx"], 2)


def test_hand_written_add_into_an_on_chip_buffer_is_a_plain_add():
    """T.atomic_add into a fragment: the add, with no reduction (no tt.reduction, no re-tagging)."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                for by in T.thread_binding(2, thread="blockIdx.y"):
                    with T.sblock("tilelang_root"):
                        T.reads()
                        T.writes()
                        s = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                        acc = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                        tl.tileop.copy(tl.region(A[by * 32, bx * 32], 1, 32, 32), tl.region(s[0, 0], 2, 32, 32))
                        for i in T.parallel(32):
                            for j in T.parallel(32):
                                tl.atomic_add_elem_op(tl.access_ptr(acc[i, j], 1, 3), s[i, j])
                        tl.tileop.copy(tl.region(acc[0, 0], 1, 32, 32), tl.region(C[by * 32, bx * 32], 2, 32, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                for by in T.thread_binding(2, thread="blockIdx.y"):
                    with T.sblock("tilelang_root"):
                        T.reads()
                        T.writes()
                        s = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                        acc = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                        tl.tileop.copy(tl.region(A[by * 32, bx * 32], 1, 32, 32), tl.region(s[0, 0], 2, 32, 32))
                        for i in T.parallel(32):
                            for j in T.parallel(32):
                                acc[i, j] = acc[i, j] + s[i, j]
                        tl.tileop.copy(tl.region(acc[0, 0], 1, 32, 32), tl.region(C[by * 32, bx * 32], 2, 32, 32))

    after = run_pass(Before, PASS)
    tvm.ir.assert_structural_equal(after, Expected)
    assert not Attr.REDUCTION.has(after["main"])


@pytest.mark.parametrize("form", ["element", "block"])
def test_split_k_gemm(form):
    """TileLang's split-K GEMM (T.Kernel(bx, by, bz)), either form: no atomic call is left; C is
    stored C + part in a 2-deep T.Parallel nest (the same IR for both forms); bz carries blockIdx.x,
    bx blockIdx.y, by blockIdx.z; tt.reduction names C, bz and the 3 blocks, no semaphore yet."""
    before = lower_until(split_k_gemm(96, 128, 192, 32, 64, 32, 3, form), PASS)
    assert _atomics(before["main"]) and _tags(before["main"]) == {"bx": "blockIdx.x", "by": "blockIdx.y",
                                                                  "bz": "blockIdx.z"}
    after = run_pass(before, PASS)["main"]
    assert not _atomics(after)
    assert _tags(after) == {"bx": "blockIdx.y", "by": "blockIdx.z", "bz": "blockIdx.x"}
    _assert_reduction(after, ["C"], ["bz"], 3)

    C = param(after, "C")
    (store,) = nodes(after.body, lambda n: isinstance(n, tirx.BufferStore) and n.buffer.same_as(C))
    # the parallel loops around the store, outermost first (post-order visits the inner one first)
    i_loop, j_loop = [f for f in nodes(after.body, lambda n: isinstance(n, tirx.For) and n.kind == tirx.ForKind.PARALLEL)
                      if _contains(f, store)][::-1]
    assert i_loop.body.same_as(j_loop) and j_loop.body.same_as(store)
    part = store.value.b.buffer
    assert part.name == "part"
    bx, by = loop(after, "bx").loop_var, loop(after, "by").loop_var
    index = [by * 32 + i_loop.loop_var, bx * 64 + j_loop.loop_var]
    expected = tirx.BufferStore(C, tirx.BufferLoad(C, index) + tirx.BufferLoad(part, [i_loop.loop_var, j_loop.loop_var]),
                                index)
    tvm.ir.assert_structural_equal(store, expected)
    assert (int(i_loop.extent), int(j_loop.extent)) == (32, 64)


def _contains(stmt, node) -> bool:
    return bool(nodes(stmt, lambda n: n.same_as(node)))


def test_both_forms_lower_to_the_same_body():
    element = run_pass(lower_until(split_k_gemm(96, 128, 192, 32, 64, 32, 2, "element"), PASS), PASS)["main"]
    block = run_pass(lower_until(split_k_gemm(96, 128, 192, 32, 64, 32, 2, "block"), PASS), PASS)["main"]
    tvm.ir.assert_structural_equal(element.body, block.body, map_free_vars=True)


def test_no_summing_axis_keeps_the_grid():
    """One K slice (T.Kernel(bx, by, 1)): C is still a read-modify-write, the destination depends on
    every grid axis of extent above 1, so nothing sums: blocks 1, no axes, tags unchanged."""
    before = lower_until(split_k_gemm(96, 128, 192, 32, 64, 32, 1), PASS)
    after = run_pass(before, PASS)["main"]
    assert not _atomics(after)
    assert _tags(after) == _tags(before["main"])
    _assert_reduction(after, ["C"], [], 1)


def test_two_summing_axes_are_innermost():
    """Out[0, bx * 32] summed over by and bz: bx takes the outer tag (z), the summing axes the inner
    ones in their tag order (bz y, by x); 3 * 2 blocks per region."""
    after = run_pass(lower_until(two_summing_axes(3, 64, 96), PASS), PASS)["main"]
    assert _tags(after) == {"bx": "blockIdx.z", "bz": "blockIdx.y", "by": "blockIdx.x"}
    _assert_reduction(after, ["Out"], ["bz", "by"], 6)


def test_add_in_a_loop_into_a_region_of_each_step():
    """The dQ idiom: the destination depends on the loop variable k and the head by, not on the key
    block bx, which sums (already blockIdx.x)."""
    before = lower_until(add_per_iteration(2, 3, 4), PASS)
    after = run_pass(before, PASS)["main"]
    assert not _atomics(after)
    assert _tags(after) == _tags(before["main"]) == {"bx": "blockIdx.x", "by": "blockIdx.y"}
    _assert_reduction(after, ["Out"], ["bx"], 4)
    # the add stays inside the k loop
    k = loop(after, "k")
    assert len(nodes(k.body, lambda n: isinstance(n, tirx.BufferStore) and n.buffer.name == "Out")) == 1


def test_kernels_without_atomics_are_unchanged():
    before = lower_until(gemm(128, 128, 64, 64, 64, 32), PASS)
    assert run_pass(before, PASS)["main"].same_as(before["main"])


def test_hand_written_add_into_the_same_region_at_every_step_is_an_error():
    """The destination does not move with k: block b would read C while it still holds its own
    previous add."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((2, 64, 64), "float32"), C: T.Buffer((32, 64), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                for bz in T.thread_binding(2, thread="blockIdx.y"):
                    with T.sblock("tilelang_root"):
                        T.reads()
                        T.writes()
                        s = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                        for k in range(2):
                            tl.tileop.copy(tl.region(A[bz, k * 32, bx * 32], 1, 1, 32, 32),
                                           tl.region(s[0, 0], 2, 32, 32))
                            tl.tileop.atomicadd(tl.region(s[0, 0], 1, 32, 32), tl.region(C[0, bx * 32], 2, 32, 32))

    with pytest.raises(TTCompileError, match="adds into the same region at every iteration of the loop over `k`") as info:
        run_pass(Before, PASS)
    assert info.value.pass_name == PASS and info.value.hint


def _guarded_sums_and_stores(store_row: str):
    """Blocks of row 0 (by == 0) sum their slice of A into row 0 of C (both blocks along bx, into
    columns 0..31); the others store theirs into row ``store_row`` of C."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((2, 64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                for by in T.thread_binding(2, thread="blockIdx.y"):
                    with T.sblock("tilelang_root"):
                        T.reads()
                        T.writes()
                        s = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                        tl.tileop.copy(tl.region(A[bx, by * 32, 0], 1, 1, 32, 32), tl.region(s[0, 0], 2, 32, 32))
                        if by == 0:
                            for i in T.parallel(32):
                                for j in T.parallel(32):
                                    tl.atomic_add_elem_op(tl.access_ptr(C[by * 32 + i, j], 1, 3), s[i, j])
                        else:
                            tl.tileop.copy(tl.region(s[0, 0], 1, 32, 32),
                                           tl.region(C[by * 32 if store_row == "own" else 0, bx * 32], 2, 32, 32))

    return Before


def test_hand_written_stores_apart_from_the_sums_are_kept():
    """C[0:32, 0:32] is summed into by the blocks (bx 0, by 0) and (bx 1, by 0); the blocks of row 1
    store their own tiles of row 1: the regions are apart, the store stays as it is and the sum is
    lowered, bx summing (by, which the destination names, does not)."""
    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((2, 64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                for by in T.thread_binding(2, thread="blockIdx.y"):
                    with T.sblock("tilelang_root"):
                        T.reads()
                        T.writes()
                        s = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                        tl.tileop.copy(tl.region(A[bx, by * 32, 0], 1, 1, 32, 32), tl.region(s[0, 0], 2, 32, 32))
                        if by == 0:
                            for i in T.parallel(32):
                                for j in T.parallel(32):
                                    C[by * 32 + i, j] = C[by * 32 + i, j] + s[i, j]
                        else:
                            tl.tileop.copy(tl.region(s[0, 0], 1, 32, 32), tl.region(C[by * 32, bx * 32], 2, 32, 32))

    after = run_pass(_guarded_sums_and_stores("own"), PASS)["main"]
    tvm.ir.assert_structural_equal(after.without_attr(Attr.REDUCTION.key), Expected["main"])
    _assert_reduction(after, ["C"], ["bx"], 2)


def test_hand_written_store_into_a_summed_region_is_an_error():
    """The blocks of row 1 store into row 0, which the blocks of row 0 sum into: block (bx 0, by 1)
    stores C[0:32, 0:32], which block (bx 0, by 0) sums into."""
    with pytest.raises(TTCompileError) as info:
        run_pass(_guarded_sums_and_stores("first"), PASS)
    assert "`C` is summed into with T.atomic_add and also read or written here" in info.value.message
    assert "block (bx 0, by 1) touches [0:32, 0:32] here and block (bx 0, by 0) may sum into [0:32, 0:32]" in info.value.message


def test_hand_written_split_whose_blocks_skip_their_add_is_an_error():
    """The destination names neither bx nor by, and only the blocks of by == 0 add: the blocks of
    by == 1 would pass their turn on without adding."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((2, 64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                for by in T.thread_binding(2, thread="blockIdx.y"):
                    with T.sblock("tilelang_root"):
                        T.reads()
                        T.writes()
                        s = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                        tl.tileop.copy(tl.region(A[bx, by * 32, 0], 1, 1, 32, 32), tl.region(s[0, 0], 2, 32, 32))
                        if by == 0:
                            for i in T.parallel(32):
                                for j in T.parallel(32):
                                    tl.atomic_add_elem_op(tl.access_ptr(C[i, j], 1, 3), s[i, j])

    with pytest.raises(TTCompileError) as info:
        run_pass(Before, PASS)
    assert "of the 4 blocks along bx, by that take turns summing into one region, 2 add" in info.value.message


def test_hand_written_element_max_and_block_min_into_regions_of_their_own_become_plain_updates():
    """Each block's own region (the destinations use bx and by): T.atomic_max per element is the store of
    T.max of the old value and the operand, T.atomic_min of a block a T.Parallel nest of T.min; no
    blocks take turns, so no ``tt.reduction`` and the grid keeps its tags."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32"),
                 D: T.Buffer((64, 64), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                for by in T.thread_binding(2, thread="blockIdx.y"):
                    with T.sblock("tilelang_root"):
                        T.reads()
                        T.writes()
                        s = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                        tl.tileop.copy(tl.region(A[by * 32, bx * 32], 1, 32, 32), tl.region(s[0, 0], 2, 32, 32))
                        for i in T.parallel(32):
                            for j in T.parallel(32):
                                tl.atomic_max_elem_op(tl.access_ptr(C[by * 32 + i, bx * 32 + j], 1, 3), s[i, j], 0)
                        tl.tileop.atomicmin(tl.region(s[0, 0], 1, 32, 32), tl.region(D[by * 32, bx * 32], 2, 32, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32"),
                 D: T.Buffer((64, 64), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                for by in T.thread_binding(2, thread="blockIdx.y"):
                    with T.sblock("tilelang_root"):
                        T.reads()
                        T.writes()
                        s = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                        tl.tileop.copy(tl.region(A[by * 32, bx * 32], 1, 32, 32), tl.region(s[0, 0], 2, 32, 32))
                        for i in T.parallel(32):
                            for j in T.parallel(32):
                                C[by * 32 + i, bx * 32 + j] = T.max(C[by * 32 + i, bx * 32 + j], s[i, j])
                        for i in T.parallel(32):
                            for j in T.parallel(32):
                                D[by * 32 + i, bx * 32 + j] = T.min(D[by * 32 + i, bx * 32 + j], s[i, j])

    after = run_pass(Before, PASS)["main"]
    tvm.ir.assert_structural_equal(after, Expected["main"])
    assert Attr.REDUCTION.read(after) is None


def test_hand_written_max_of_blocks_combining_into_one_region_is_left_for_the_partition():
    """The blocks along by all combine into C[0:32, 0:32] with T.atomic_max: the blocks' turns are made
    for sums, so the statement stays (LayoutAwareWorkPartitionTT refuses it at the statement)."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64, 32), "float32"), C: T.Buffer((32, 32), "float32")):
            for by in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    s = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                    tl.tileop.copy(tl.region(A[by * 32, 0], 1, 32, 32), tl.region(s[0, 0], 2, 32, 32))
                    tl.tileop.atomicmax(tl.region(s[0, 0], 1, 32, 32), tl.region(C[0, 0], 2, 32, 32))

    assert run_pass(Before, PASS)["main"].same_as(Before["main"])
