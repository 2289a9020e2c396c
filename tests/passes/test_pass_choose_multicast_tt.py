"""B1b ChooseMulticastTT alone: TIR unchanged; the blocks a core row, column or the grid share."""

import pytest
import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests import op_kernels
from tests.kernels import bmm, eltwise, gemm, lower_until, run_pass, split_k_gemm
from tests.passes.helpers import tl, tt_attrs
from tilelang_tt.contract.vocabulary import MulticastDesc, MulticastGroup
from tilelang_tt.errors import TTCompileError
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.options import CompileOptions
from tilelang_tt.contract.arch import ARCHS
from tilelang_tt.passes.choose_multicast_tt import ChooseMulticastTT, multicast_groups, multicast_pays

PASS = "ChooseMulticastTT"
ON = CompileOptions(multicast="on")  # where the cores can share a block (multicast="auto" also weighs the costs)


def shared(kernel, options=None) -> dict:
    """CB -> (axis, groups) of the kernel's tt.multicast after the pass."""
    after = run_pass(lower_until(kernel, PASS, options), PASS, options)["main"]
    return {cb: (mc.axis, mc.groups) for cb, mc in Attr.MULTICAST.read(after).items()}


def test_registered_under_its_name():
    assert ChooseMulticastTT().info.name == PASS


def test_block_rows_along_core_rows_block_columns_along_core_columns():
    """A 4x2 block grid on a 2x4 core grid, one rectangle (block) per core: A's block (rows by) is
    shared by each core row, B's (columns bx) by each core column: four groups of two cores (senders
    x = 0) and two of four (senders y = 0), each with its rectangle; the semaphores are not numbered
    yet, and the TIR is unchanged."""
    before = lower_until(gemm(256, 128, 64, 64, 64, 32), PASS, ON)
    after = run_pass(before, PASS, ON)
    tvm.ir.assert_structural_equal(after["main"].body, before["main"].body)
    rows = tuple(MulticastGroup(((0, y), (1, y)), (0, y), (1, y)) for y in range(4))
    cols = tuple(MulticastGroup(tuple((x, y) for y in range(4)), (x, 0), (x, 3)) for x in range(2))
    assert Attr.MULTICAST.read(after["main"]) == {"A_s": MulticastDesc("A_s", "x", -1, -1, rows),
                                                  "B_s": MulticastDesc("B_s", "y", -1, -1, cols)}


def test_contiguous_shares_of_unequal_size_share_nothing():
    """3x2 cores do not divide the 4x2 block grid: contiguous shares of 2 and 1 blocks, out of step."""
    assert shared(gemm(256, 128, 64, 64, 64, 32), CompileOptions(grid=(3, 2))) == {}


def test_uneven_block_rectangles_share_nothing_and_on_says_why():
    """5x3 blocks over 2x2 cores: rectangles of different shapes fall out of lockstep."""
    assert shared(gemm(320, 192, 64, 64, 64, 32), CompileOptions(grid=(2, 2), partition="block")) == {}
    with pytest.raises(TTCompileError, match="multicast='on' needs the cores in step") as err:
        shared(gemm(320, 192, 64, 64, 64, 32), CompileOptions(grid=(2, 2), partition="block", multicast="on"))
    assert err.value.pass_name == PASS


def test_off_shares_nothing():
    assert shared(gemm(256, 128, 64, 64, 64, 32), CompileOptions(multicast="off")) == {}


def test_multicast_follows_the_access_expressions():
    """GEMM with transpose_B: B's slice B[bx * bn, k * bk] depends on bx only: shared down a core column;
    a kernel whose reads depend on both coordinates shares nothing."""
    axes = {cb: axis for cb, (axis, _) in shared(op_kernels.gemm_bias_relu(128, 128, 64, 64, 64, 32), ON).items()}
    assert axes == {"A_s": "x", "B_s": "y", "bias_s": "y"}
    assert shared(eltwise("add", 128, 128, 64, 64)) == {}


def test_multicast_groups_per_axis():
    """Rows (same y), columns (same x) or the whole grid: cores row-major in each group, the first the
    sender, the rectangle from the smallest to the largest x and y; groups ordered by their senders."""
    cores = [(x, y) for y in range(2) for x in range(3)]
    assert multicast_groups("x", cores) == (MulticastGroup(((0, 0), (1, 0), (2, 0)), (0, 0), (2, 0)),
                                            MulticastGroup(((0, 1), (1, 1), (2, 1)), (0, 1), (2, 1)))
    assert [g.sender for g in multicast_groups("y", cores)] == [(0, 0), (1, 0), (2, 0)]
    assert multicast_groups("y", cores)[2] == MulticastGroup(((2, 0), (2, 1)), (2, 0), (2, 1))
    (whole,) = multicast_groups("xy", list(reversed(cores)))
    assert whole == MulticastGroup(tuple(cores), (0, 0), (2, 1)) and whole.sender == (0, 0)
    assert MulticastGroup.from_dict(whole.to_dict()) == whole


def test_third_grid_dimension_counts_as_the_block_row():
    """B's slice B[bz, k * bk, bx * bn] depends on the block row through bz: only A is shared along
    the core rows."""
    assert {cb: axis for cb, (axis, _) in shared(bmm(3, 64, 64, 96, 32, 32, 32), ON).items()} == {"A_s": "x"}


def test_no_multicast_where_loop_bounds_differ_within_a_group():
    """Flash attention shares each head's K and V blocks along a core row; the causal form's K/V
    loop runs up to the query block bx, which differs along the row: the cores would not keep step."""
    plain = shared(op_kernels.flash_attention(256, 64, heads=2), ON)
    assert {cb: axis for cb, (axis, _) in plain.items()} == {"K_s": "x", "V_s": "x"}
    with pytest.raises(TTCompileError, match="multicast='on' but no block read from a tensor is the same"):
        shared(op_kernels.flash_attention(256, 64, heads=2, causal=True), ON)


def test_equal_shares_share_with_all_what_depends_on_no_block_coordinate():
    """One head of 1024 queries in 64-row blocks on an 8x2 grid, one block each: every core walks one
    block, so they keep step; K and V do not depend on any block coordinate that varies (by = bz = 0
    throughout): both go to all 16 cores from core (0, 0); Q (on bx) is not shared."""
    everyone = (MulticastGroup(tuple((x, y) for y in range(2) for x in range(8)), (0, 0), (7, 1)),)
    assert shared(op_kernels.flash_attention(1024, 64), ON) == {"K_s": ("xy", everyone), "V_s": ("xy", everyone)}


def test_unequal_shares_share_nothing():
    """20 blocks of one row over 8x2 cores (explicit grid): shares of 2 and 1 blocks, out of step;
    nothing is multicast, and multicast='on' says why."""
    assert shared(op_kernels.flash_attention(1280, 64), CompileOptions(grid=(8, 2))) == {}
    with pytest.raises(TTCompileError, match=r"needs the cores in step.*16 cores with \[1, 2\] blocks"):
        shared(op_kernels.flash_attention(1280, 64), CompileOptions(grid=(8, 2), multicast="on"))


def test_blocks_that_sum_into_a_tensor_share_nothing_and_on_says_why():
    kernel = split_k_gemm(64, 64, 128, 32, 32, 32, 2)
    assert shared(kernel) == {}
    with pytest.raises(TTCompileError, match="sum into `C` with T.atomic_add; multicast needs cores in lockstep"):
        shared(kernel, CompileOptions(multicast="on"))


C_LAYOUT = {"C": {"memory": "DRAM", "layout": "interleaved", "dtype": "bfloat16", "shape": [64, 64],
                  "tile_shape": [32, 32], "data_format": "Float16_b", "page_size": 2048}}
# one block per core of a 2x2 grid, in the plan's form
PARTITION_2X2 = {
    "tt.arch": "wormhole_b0", "tt.layout_desc": C_LAYOUT, "tt.block_grid": [2, 2], "tt.core_grid": [2, 2],
    "tt.core_ranges": [[[0, 0], [1, 1]]], "tt.work_policy": {"policy": "block", "stride": 1, "shard_blocks": [0, 0]},
    "tt.work_partition": [{"core": [x, y], "start_id": 2 * y + x, "count": 1, "width": 1, "shard": [0, 0]}
                          for y in range(2) for x in range(2)],
}
MULTICAST_2X2 = {
    "A_s": {"axis": "x", "sender_semaphore": -1, "receiver_semaphore": -1, "groups": [
        {"cores": [[0, 0], [1, 0]], "near": [0, 0], "far": [1, 0]},
        {"cores": [[0, 1], [1, 1]], "near": [0, 1], "far": [1, 1]}]},
    "B_s": {"axis": "y", "sender_semaphore": -1, "receiver_semaphore": -1, "groups": [
        {"cores": [[0, 0], [0, 1]], "near": [0, 0], "far": [0, 1]},
        {"cores": [[1, 0], [1, 1]], "near": [1, 0], "far": [1, 1]}]},
}


def test_hand_written_block_partition_shares_rows_and_columns():
    """Hand-written TIR: a 2x2 block grid, one block per core of a 2x2 grid; A's slice depends on by
    only (shared along a core row, x), B's on bx only (a column, y)."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64, 32), "bfloat16"), B: T.Buffer((32, 64), "bfloat16"),
                 C: T.Buffer((64, 64), "bfloat16")):
            T.func_attr(tt_attrs(PARTITION_2X2))
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
            T.func_attr(tt_attrs(PARTITION_2X2 | {"tt.multicast": MULTICAST_2X2}))
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

    tvm.ir.assert_structural_equal(ChooseMulticastTT("on")(Before), Expected)


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_auto_multicasts_where_the_dram_reads_it_spares_cost_more_than_its_fixed_costs(arch):
    """A 4 KB block read by every core at each step, shared by groups of 8: on few cores each core's own
    DRAM read is shorter than the multicast's handshake, reservation and NOC transfer; on many the
    cores' reads together saturate the DRAM and the senders' reads alone are cheaper. A group of one spares
    nothing."""
    figures = ARCHS[arch]
    assert not multicast_pays(figures, 4096, 8, 8)
    assert multicast_pays(figures, 4096, 512, 8)
    assert not multicast_pays(figures, 4096, 512, 1)
    threshold = next(c for c in range(2, 513) if multicast_pays(figures, 4096, c, 8))
    assert all(multicast_pays(figures, 4096, c, 8) for c in range(threshold, 513))


def test_auto_drops_the_multicast_of_a_small_grid_and_keeps_it_on_a_saturated_one():
    """A 4x2 block grid on 8 cores (64 x 32 bfloat16 blocks, 4 KB): "on" shares A along the core rows and
    B down the columns, "auto" finds every core's own read cheaper (a tensor-parallel chip's panel of a
    few cores); an 8x8 block grid on 64 cores saturates the DRAM, so "auto" shares both."""
    small = gemm(256, 128, 64, 64, 64, 32)
    assert set(shared(small, ON)) == {"A_s", "B_s"} and shared(small) == {}
    wormhole = ARCHS["wormhole_b0"]
    assert not multicast_pays(wormhole, 64 * 32 * 2, 8, 2) and not multicast_pays(wormhole, 64 * 32 * 2, 8, 4)
    large = shared(gemm(512, 512, 64, 64, 64, 32))
    assert {cb: (axis, len(groups), len(groups[0].cores)) for cb, (axis, groups) in large.items()} == {
        "A_s": ("x", 8, 8), "B_s": ("y", 8, 8)}
    assert multicast_pays(wormhole, 64 * 32 * 2, 64, 8)
