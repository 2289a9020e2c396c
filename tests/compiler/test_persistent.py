"""Persistent kernels and guarded blocks (issue 12, item 3): a GPU persistent kernel launches one
program per SM and walks the output tiles in waves (``T.Persistent``, or written out); its waves
become blocks of the grid (PersistentToGridTT), and an ``if`` on block coordinates around tile
operations is taken by the reader, compute and writer kernels alike. Run on the emulator against
torch, single- and multi-core."""

import pytest
import tilelang
import tilelang.language as T
import torch
from tvm import tirx

import tilelang_tt
from tests.compiler.test_ops import assert_close, bf16
from tests.kernels import gemm, lower_until, run_pass
from tests.passes.helpers import nodes
from tilelang_tt.passes.persistent_to_grid_tt import PersistentToGridTT


def guarded_copy(m, blocks):
    """``blocks`` blocks of 32 rows, of which those past the tensor skip their copy."""

    @T.prim_func
    def main(A: T.Tensor((m, 32), "float32"), C: T.Tensor((m, 32), "float32")):
        with T.Kernel(1, blocks, threads=128) as (bx, by):
            a = T.alloc_shared((32, 32), "float32")
            c = T.alloc_fragment((32, 32), "float32")
            if by * 32 < m:
                T.copy(A[by * 32, 0], a)
                for i, j in T.Parallel(32, 32):
                    c[i, j] = a[i, j] * 2.0
                T.copy(c, C[by * 32, 0])

    return main


@pytest.mark.parametrize("grid", [(1, 1), (3, 1)])
def test_blocks_past_the_tensor_skip_their_work(grid):
    x = torch.randn(128, 32)
    out = torch.as_tensor(tilelang_tt.compile(guarded_copy(128, 6), grid=grid).run(x))
    assert torch.equal(out, x * 2)


def gemm_in_waves(m, n, k, bm, bn, bk, programs, persistent_primitive, slots=None):
    """The persistent GEMM of TileLang's examples/gemm/example_gemm_persistent.py: ``programs``
    programs, each taking every programs-th output tile, through T.Persistent or in waves of
    hand-computed tile coordinates guarded by the tile being inside C. ``slots``: the written-out
    walk numbers ``slots`` row slots per column (more than the rows), so the tiles outside C are
    not the last ones."""
    rows, cols = T.ceildiv(m, bm), T.ceildiv(n, bn)
    per_column = slots or rows
    waves = T.ceildiv(per_column * cols, programs)

    @T.prim_func
    def main(A: T.Tensor((m, k), "bfloat16"), B: T.Tensor((k, n), "bfloat16"), C: T.Tensor((m, n), "bfloat16")):
        with T.Kernel(programs, threads=128) as pid:
            a = T.alloc_shared((bm, bk), "bfloat16")
            b = T.alloc_shared((bk, bn), "bfloat16")
            acc = T.alloc_fragment((bm, bn), "float32")
            if persistent_primitive:
                for tm, tn in T.Persistent([rows, cols], programs, pid):
                    T.clear(acc)
                    for kk in T.Pipelined(T.ceildiv(k, bk), num_stages=2):
                        T.copy(A[tm * bm, kk * bk], a)
                        T.copy(B[kk * bk, tn * bn], b)
                        T.gemm(a, b, acc)
                    T.copy(acc, C[tm * bm, tn * bn])
            else:
                for wave in T.serial(waves):
                    tile = wave * programs + pid
                    tm = tile % per_column if slots else tile // cols
                    tn = tile // per_column if slots else tile % cols
                    if tm * bm < m:
                        T.clear(acc)
                        for kk in T.Pipelined(T.ceildiv(k, bk), num_stages=2):
                            T.copy(A[tm * bm, kk * bk], a)
                            T.copy(B[kk * bk, tn * bn], b)
                            T.gemm(a, b, acc)
                        T.copy(acc, C[tm * bm, tn * bn])

    return main


@pytest.mark.parametrize("form", ["T.Persistent", "waves", "waves with gaps"])
@pytest.mark.parametrize("grid", [(1, 1), (2, 2), None])
def test_a_persistent_gemm_runs_as_a_grid_of_its_tiles(form, grid):
    """6 tiles over 4 programs: two waves, the second half empty; with gaps, 4 row slots per
    column for 3 rows, every fourth block's guard fails (it stays a branch every kernel takes)."""
    a, b = bf16(96, 64, seed=1), bf16(64, 64, seed=2)
    kernel = gemm_in_waves(96, 64, 64, 32, 32, 32, 4, form == "T.Persistent", 4 if "gaps" in form else None)
    out = torch.as_tensor(tilelang_tt.compile(kernel, **({"grid": grid} if grid else {})).run(a, b)).float()
    assert_close(out, a.float() @ b.float(), 2.0 ** -7)


def test_the_waves_become_blocks_and_a_tail_guard_becomes_the_block_count():
    """PersistentToGridTT alone: T.Persistent's guard, and the written-out one, stop the blocks
    past the last tile, so the grid is the 6 tiles and no loop over waves or branch is left; a walk
    with gaps keeps its guard (it holds for no first run of block ids only) over 4 * 2 blocks."""
    for primitive, slots, blocks, branches in ((True, None, 6, 0), (False, None, 6, 0), (False, 4, 8, 1)):
        before = lower_until(gemm_in_waves(96, 64, 64, 32, 32, 32, 4, primitive, slots), "PersistentToGridTT")
        after = run_pass(before, "PersistentToGridTT")["main"]
        (grid,) = nodes(after.body, lambda n: isinstance(n, tirx.For) and n.thread_binding is not None
                        and str(n.thread_binding.thread_tag) == "blockIdx.x")
        assert int(grid.extent) == blocks
        assert len(nodes(after.body, lambda n: isinstance(n, tirx.IfThenElse))) == branches
        serial = nodes(after.body, lambda n: isinstance(n, tirx.For) and n.thread_binding is None
                       and n.kind == tirx.ForKind.SERIAL)
        assert [str(lp.loop_var.name) for lp in serial] == ["kk"]  # the K loop only


def test_a_kernel_without_waves_is_unchanged():
    before = lower_until(gemm(64, 64, 64, 32, 32, 32), "PersistentToGridTT")
    assert run_pass(before, "PersistentToGridTT")["main"].same_as(before["main"])
    assert PersistentToGridTT().info.name == "PersistentToGridTT"

