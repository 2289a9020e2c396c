"""B1 LayoutAwareWorkPartitionTT alone: TIR unchanged; core grid and work partition per policy."""

import pytest
import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests import op_kernels
from tests.kernels import bmm, gemm, lower_until, run_pass
from tests.passes.helpers import attrs_without, tl, tt_attrs
from tilelang_tt.ir.attrs import Attr, PartitionMode
from tilelang_tt.errors import TTCompileError
from tilelang_tt.layout import BufferLayout
from tilelang_tt.options import CompileOptions
from tilelang_tt.contract.vocabulary import Policy, WorkItem, WorkPolicy
from tilelang_tt.passes.layout_aware_work_partition_tt import LayoutAwareWorkPartitionTT, zigzag

PASS = "LayoutAwareWorkPartitionTT"
KEYS = (Attr.BLOCK_GRID, Attr.GRID_TILES, Attr.BLOCK_TILES, Attr.CORE_GRID, Attr.CORE_RANGES,
        Attr.PARTITION_MODE, Attr.WORK_PARTITION)


def work(item: WorkItem) -> list[int]:
    """A tt.work_partition entry as [x, y, start_id, count, width, shard row, shard col]."""
    return [*item.core, item.start_id, item.count, item.width, *item.shard]


def _new_attrs(before, after):
    new = attrs_without(after["main"])
    old = attrs_without(before["main"])
    return {k: v for k, v in new.items() if k not in old}


def test_registered_under_spec_name():
    assert LayoutAwareWorkPartitionTT().info.name == PASS


def test_default_grid_one_block_per_core():
    """A 4x2 block grid fits the device: a 2x4 core grid, one rectangle (block) per core."""
    before = lower_until(gemm(256, 128, 64, 64, 64, 32), PASS)
    after = run_pass(before, PASS)
    tvm.ir.assert_structural_equal(after["main"].body, before["main"].body)
    assert _new_attrs(before, after) == {
        "tt.block_grid": [4, 2],
        "tt.grid_tiles": [8, 4],
        "tt.block_tiles": [2, 2],
        "tt.core_grid": [2, 4],
        "tt.core_ranges": [[[0, 0], [1, 3]]],
        "tt.partition_mode": "global",
        "tt.work_policy": {"policy": "block", "stride": 1, "shard_blocks": [0, 0]},
        "tt.work_partition": [{"core": [x, y], "start_id": 2 * y + x, "count": 1, "width": 1, "shard": [0, 0]}
                              for y in range(4) for x in range(2)],
    }


def test_user_grid_contiguous_split():
    """3x2 cores do not divide the 4x2 block grid: auto falls back to contiguous."""
    opts = CompileOptions(grid=(3, 2))
    before = lower_until(gemm(256, 128, 64, 64, 64, 32), PASS, opts)
    after = run_pass(before, PASS, opts)
    tvm.ir.assert_structural_equal(after["main"].body, before["main"].body)
    new = _new_attrs(before, after)
    assert new["tt.core_grid"] == [3, 2]
    assert new["tt.core_ranges"] == [[[0, 0], [2, 1]]]
    assert new["tt.work_policy"]["policy"] == "contiguous"
    assert [work(w)[:4] for w in Attr.WORK_PARTITION.read(after["main"])] == [[0, 0, 0, 2], [1, 0, 2, 2], [2, 0, 4, 1],
                                                               [0, 1, 5, 1], [1, 1, 6, 1], [2, 1, 7, 1]]


def test_row_major_round_robin():
    opts = CompileOptions(grid=(3, 1), partition="row_major")
    after = run_pass(lower_until(gemm(256, 128, 64, 64, 64, 32), PASS, opts), PASS, opts)
    assert Attr.WORK_POLICY.read(after["main"]) == WorkPolicy(Policy.ROW_MAJOR, stride=3)
    assert [work(w)[:4] for w in Attr.WORK_PARTITION.read(after["main"])] == [[0, 0, 0, 3], [1, 0, 1, 3], [2, 0, 2, 2]]


def test_zigzag_deals_every_other_round_in_reverse():
    """8 blocks over 3 cores: rounds 0-2, then 5-3 (reversed), then 6, 7: core 0 gets 0, 5, 6, core 1
    1, 4, 7, core 2 2, 3. WorkPolicy.blocks, which the per-core loop (MaterializeCoreLoopTT) binds, walks them."""
    opts = CompileOptions(grid=(3, 1), partition="zigzag")
    after = run_pass(lower_until(gemm(256, 128, 64, 64, 64, 32), PASS, opts), PASS, opts)["main"]
    policy = Attr.WORK_POLICY.read(after)
    assert (policy.policy, policy.stride) == (Policy.ZIGZAG, 3)
    items = Attr.WORK_PARTITION.read(after)
    assert [(w.core, w.start_id, w.count) for w in items] == [((0, 0), 0, 3), ((1, 0), 1, 3), ((2, 0), 2, 2)]
    grid = Attr.BLOCK_GRID.read(after)  # 4 x 2 blocks: id = row * 2 + bx
    assert [[r * 2 + c for r, c in policy.blocks(w, grid)] for w in items] == [[0, 5, 6], [1, 4, 7], [2, 3]]


@pytest.mark.parametrize("total,cores", [(8, 3), (16, 4), (17, 4), (5, 8), (64, 64), (130, 64)])
def test_zigzag_walks_every_block_once(total, cores):
    items = zigzag(total, (cores, 1))
    policy = WorkPolicy(Policy.ZIGZAG, stride=len(items))
    walked = [row for w in items for row, _ in policy.blocks(w, (total, 1))]
    assert sorted(walked) == list(range(total))


def test_blocks_of_unequal_work_are_balanced():
    """Causal attention, 4 heads of 8 query blocks on 4x2 cores: query block bx walks bx + 1 K/V
    blocks. The rectangles auto would pick give core x the blocks 2x, 2x+1 of two heads (core 3: 7 +
    8 K/V steps per head); zigzag gives every core blocks bx and 7 - bx twice (9 steps each): auto
    takes it, and every core walks 18 K/V steps."""
    opts = CompileOptions(grid=(4, 2))
    after = run_pass(lower_until(op_kernels.flash_attention(512, 64, heads=4, causal=True), PASS, opts), PASS,
                     opts)["main"]
    assert Attr.CORE_GRID.read(after) == (4, 2)
    policy = Attr.WORK_POLICY.read(after)
    assert policy.policy == Policy.ZIGZAG
    grid = Attr.BLOCK_GRID.read(after)
    assert grid == (4, 8)
    steps = [sum(bx + 1 for _, bx in policy.blocks(w, grid)) for w in Attr.WORK_PARTITION.read(after)]
    assert steps == [18] * 8
    # blocks of equal work keep the partition auto picks without looking at work
    plain = run_pass(lower_until(op_kernels.flash_attention(512, 64, heads=4), PASS, opts), PASS, opts)["main"]
    assert Attr.WORK_POLICY.read(plain).policy == Policy.BLOCK


def test_uneven_block_rectangles():
    """5x3 blocks over 2x2 cores: balanced rectangles (3+2 rows, 2+1 columns)."""
    opts = CompileOptions(grid=(2, 2), partition="block")
    after = run_pass(lower_until(gemm(320, 192, 64, 64, 64, 32), PASS, opts), PASS, opts)
    assert [work(w)[:5] for w in Attr.WORK_PARTITION.read(after["main"])] == [
        [0, 0, 0, 6, 2], [1, 0, 2, 3, 1], [0, 1, 9, 4, 2], [1, 1, 11, 2, 1]]


def test_the_arch_comes_from_the_function():
    """B1 reads tt.arch (InferTTLayout recorded it): blackhole's 13x10 grid takes a 13-block row whole."""
    opts = CompileOptions(arch="blackhole")
    before = lower_until(gemm(64, 13 * 32, 64, 64, 32, 32), PASS, opts)
    assert Attr.ARCH.read(before["main"]).name == "blackhole"
    assert Attr.CORE_GRID.read(run_pass(before, PASS, opts)["main"]) == (13, 1)


def test_third_grid_dimension_is_folded_into_the_block_rows():
    """T.Kernel(Bx, By, Bz) partitions a (Bz * By) x Bx block grid."""
    after = run_pass(lower_until(bmm(3, 64, 64, 96, 32, 32, 32), PASS), PASS)["main"]
    assert Attr.BLOCK_GRID.read(after) == (6, 2) and Attr.GRID_TILES.read(after) == (6, 2)
    assert Attr.CORE_GRID.read(after) == (2, 6)


def test_one_row_block_grid_fills_the_core_grid():
    """One head of 1024 queries in 64-row blocks is a 1 x 16 block grid: rectangles would use one
    core row (8 cores), contiguous shares use 16 (an 8x2 grid, one block each)."""
    after = run_pass(lower_until(op_kernels.flash_attention(1024, 64), PASS), PASS)["main"]
    assert Attr.WORK_POLICY.read(after).policy == Policy.CONTIGUOUS
    assert Attr.CORE_GRID.read(after) == (8, 2)
    assert [w.count for w in Attr.WORK_PARTITION.read(after)] == [1] * 16


def test_local_shard_follows_the_output_shards():
    """C height-sharded over 4 cores (64-row shards): each core computes the 2x? blocks of its shard."""
    layouts = {"C": BufferLayout(memory="L1", layout="height_sharded", shard_grid=(2, 2))}
    opts = CompileOptions(layouts=layouts)
    after = run_pass(lower_until(gemm(256, 128, 64, 64, 64, 32), PASS, opts), PASS, opts)
    assert Attr.PARTITION_MODE.read(after["main"]) == PartitionMode.LOCAL_SHARD
    assert Attr.WORK_POLICY.read(after["main"]) == WorkPolicy(Policy.LOCAL_SHARD, stride=1, shard_blocks=(1, 2))
    assert [work(w) for w in Attr.WORK_PARTITION.read(after["main"])] == [[x, y, 2 * (2 * y + x), 2, 2, 2 * y + x, 0]
                                                                       for y in range(2) for x in range(2)]
    assert Attr.CORE_GRID.read(after["main"]) == (2, 2)


def test_local_shard_needs_blocks_that_tile_the_shard():
    layouts = {"C": BufferLayout(memory="L1", layout="height_sharded", shard_grid=(8, 1))}  # 32-row shards
    opts = CompileOptions(layouts=layouts)
    with pytest.raises(TTCompileError, match="do not tile the 32x128 shards"):
        run_pass(lower_until(gemm(256, 128, 64, 64, 64, 32), PASS, opts), PASS, opts)


C_LAYOUT = {"C": {"memory": "DRAM", "layout": "interleaved", "dtype": "bfloat16", "shape": [64, 64],
                  "tile_shape": [32, 32], "data_format": "Float16_b", "page_size": 2048}}


# one block per core of a 2x2 grid, in the plan's form
WORK_2X2 = [{"core": [x, y], "start_id": 2 * y + x, "count": 1, "width": 1, "shard": [0, 0]} for y in range(2) for x in range(2)]


def test_hand_written_block_partition():
    """Hand-written TIR: a 2x2 block grid of 32x32 output blocks, one block per core of a 2x2 grid."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64, 32), "bfloat16"), B: T.Buffer((32, 64), "bfloat16"),
                 C: T.Buffer((64, 64), "bfloat16")):
            T.func_attr(tt_attrs({"tt.arch": "wormhole_b0", "tt.layout_desc": C_LAYOUT}))
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                for by in T.thread_binding(2, thread="blockIdx.y"):
                    with T.sblock("tilelang_root"):
                        T.reads()
                        T.writes()
                        A_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                        B_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                        C_l = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                        tl.tileop.copy(tl.region(A[by * 32, 0], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))
                        tl.tileop.copy(tl.region(B[0, bx * 32], 1, 32, 32), tl.region(B_s[0, 0], 2, 32, 32))
                        tl.tileop.copy(tl.region(C_l[0, 0], 1, 32, 32), tl.region(C[by * 32, bx * 32], 2, 32, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((64, 32), "bfloat16"), B: T.Buffer((32, 64), "bfloat16"),
                 C: T.Buffer((64, 64), "bfloat16")):
            T.func_attr(tt_attrs({
                "tt.layout_desc": C_LAYOUT,
                "tt.arch": "wormhole_b0",
                "tt.block_grid": [2, 2],
                "tt.grid_tiles": [2, 2],
                "tt.block_tiles": [1, 1],
                "tt.core_grid": [2, 2],
                "tt.core_ranges": [[[0, 0], [1, 1]]],
                "tt.partition_mode": "global",
                "tt.work_policy": {"policy": "block", "stride": 1, "shard_blocks": [0, 0]},
                "tt.work_partition": WORK_2X2,
            }))
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                for by in T.thread_binding(2, thread="blockIdx.y"):
                    with T.sblock("tilelang_root"):
                        T.reads()
                        T.writes()
                        A_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                        B_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                        C_l = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                        tl.tileop.copy(tl.region(A[by * 32, 0], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))
                        tl.tileop.copy(tl.region(B[0, bx * 32], 1, 32, 32), tl.region(B_s[0, 0], 2, 32, 32))
                        tl.tileop.copy(tl.region(C_l[0, 0], 1, 32, 32), tl.region(C[by * 32, bx * 32], 2, 32, 32))

    tvm.ir.assert_structural_equal(LayoutAwareWorkPartitionTT()(Before), Expected)


def guarded_row_sums(valid: int):
    """Each of 8 blocks sums 32 rows of X starting at row 4 * g and stores the first ``valid`` sums
    (``if i < valid``) into column 0 of L at rows 4 * g + i: 4 keep the blocks' stores apart, 8 do not."""
    import tilelang.language as TL

    @TL.prim_func
    def main(X: TL.Tensor((64, 64), "float32"), L: TL.Tensor((64, 32), "float32")):
        with TL.Kernel(8) as g:
            x = TL.alloc_shared((32, 64), "float32")
            s = TL.alloc_fragment((32,), "float32")
            TL.copy(X[g * 4 : g * 4 + 32, :], x)
            TL.reduce_sum(x, s, dim=1)
            for i in TL.Parallel(32):
                if i < valid:
                    L[g * 4 + i, 0] = s[i]

    return main


def test_a_store_guarded_by_the_rows_it_keeps_covers_those_rows():
    before = lower_until(guarded_row_sums(4), PASS)
    after = run_pass(before, PASS)["main"]
    assert Attr.BLOCK_GRID.read(after) == (1, 8)
    # (TileLang names the grid variable of a one-dimensional T.Kernel bx)
    with pytest.raises(TTCompileError, match=r"the 8 blocks along `bx` write overlapping regions of `L`: one step of "
                                             r"`bx` moves its slice by 4 along dimension 0, less than the slice covers"):
        run_pass(lower_until(guarded_row_sums(8), PASS), PASS)
