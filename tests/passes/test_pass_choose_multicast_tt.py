"""B1b ChooseMulticastTT alone: TIR unchanged; the blocks a core row, column or the grid share."""

import pytest
import tilelang  # noqa: F401
import torch
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

import tilelang_tt
from tests import op_kernels
from tests.kernels import bmm, eltwise, gemm, lower_until, run_pass, split_k_gemm
from tests.passes.helpers import tl, tt_attrs
from tilelang_tt.contract.arch import ARCHS
from tilelang_tt.contract.vocabulary import MulticastDesc, MulticastGroup
from tilelang_tt.errors import TTCompileError
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.options import CompileOptions
from tilelang_tt.passes.choose_multicast_tt import (
    BlockRead,
    ChooseMulticastTT,
    multicast_choice,
    multicast_groups,
    step_cycles,
)

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
    with pytest.raises(TTCompileError, match=r"needs the cores in step.*6 cores with \[1, 2\] blocks"):
        shared(gemm(256, 128, 64, 64, 64, 32), CompileOptions(grid=(3, 2), multicast="on"))


def test_uneven_block_rectangles_share_nothing_and_on_says_why():
    """5x3 blocks over 2x2 cores: rectangles of different shapes fall out of lockstep."""
    assert shared(gemm(320, 192, 64, 64, 64, 32), CompileOptions(grid=(2, 2), partition="block")) == {}
    with pytest.raises(TTCompileError, match="multicast='on' needs the cores in step") as err:
        shared(gemm(320, 192, 64, 64, 64, 32), CompileOptions(grid=(2, 2), partition="block", multicast="on"))
    assert err.value.pass_name == PASS


def test_off_shares_nothing():
    kernel = gemm(256, 128, 64, 64, 64, 32)
    assert shared(kernel, ON) and shared(kernel, CompileOptions(multicast="off")) == {}


def test_multicast_follows_the_access_expressions():
    """GEMM with transpose_B: B's slice B[bx * bn, k * bk] depends on bx only: shared down a core column;
    a kernel whose reads depend on both coordinates shares nothing."""
    axes = {cb: axis for cb, (axis, _) in shared(op_kernels.gemm_bias_relu(128, 128, 64, 64, 64, 32), ON).items()}
    assert axes == {"A_s": "x", "B_s": "y", "bias_s": "y"}
    with pytest.raises(TTCompileError, match="no block read from a tensor is the same for a row or column"):
        shared(eltwise("add", 128, 128, 64, 64), ON)


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


def _read(cb, kib, cores, senders, *, step=0, times=16, late=False, shared=True, axis="x", write=False):
    """A bfloat16 block of ``kib`` KiB (2 KiB tiles) for :func:`step_cycles`: its group's rectangle is a row
    of ``cores // senders`` cores."""
    return BlockRead(cb, kib * 1024, kib // 2, times, step, late, cores, senders if shared else cores, shared,
                     axis if shared else "", cores // senders if shared else 0, write)


def test_auto_multicasts_a_step_read_where_the_dram_saturates():
    """A GEMM step on Wormhole: A's 4 KB block shared by rows of 8 cores, B's own to each core. On 8 cores
    each core's reads are quicker than the multicast's read, handshake and transfer; on 64 the cores' reads
    together exceed the DRAM's rate and the senders' reads alone fit in it (Blackhole's DRAM, at 500 GB/s,
    keeps up with 64). A group of one spares nothing."""
    figures = ARCHS["wormhole_b0"]

    def choice(cores, senders):
        return multicast_choice(figures, [_read("A_s", 4, cores, senders), _read("B_s", 4, cores, cores, shared=False)])

    assert choice(8, 1) == set()
    assert choice(64, 8) == {"A_s"}
    assert choice(64, 64) == set()
    few, many = ([_read("A_s", 4, n, n // 8), _read("B_s", 4, n, n, shared=False)] for n in (8, 64))
    assert step_cycles(figures, few, {"A_s"}) > step_cycles(figures, few, set())
    assert step_cycles(figures, many, {"A_s"}) < step_cycles(figures, many, set())


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_a_block_the_compute_needs_later_is_multicast_on_few_cores(arch):
    """rmsnorm's weights on 2 cores: without multicast their read joins x's under one barrier and the
    compute waits for both; multicast, x is pushed first and the weights arrive while the compute squares
    and sums x. The same block needed at once (a broadcast's operand) is not multicast."""
    figures = ARCHS[arch]
    x = _read("x", 8, 2, 2, shared=False, times=1)
    assert multicast_choice(figures, [x, _read("w", 8, 2, 1, axis="xy", times=1, late=True)]) == {"w"}
    assert multicast_choice(figures, [x, _read("w", 8, 2, 1, axis="xy", times=1)]) == set()


def test_a_small_block_every_core_reads_is_bound_by_its_banks():
    """A 4 KB row of biases (two pages, two banks) read by 64 Wormhole cores at each step: each bank serves
    64 reads of a page, longer than the multicast; counted at the DRAM's whole rate it would not be. The
    stores' bytes count in the DRAM's floor."""
    figures = ARCHS["wormhole_b0"]
    reads = [_read("v_s", 4, 64, 1, axis="xy"), _read("A_s", 4, 64, 64, shared=False)]
    assert multicast_choice(figures, reads) == {"v_s"}
    bank = 64 * 2048 / (figures.dram_bytes_per_s / figures.clock_hz / figures.num_dram_banks)
    assert step_cycles(figures, reads, set()) == pytest.approx(bank)
    stores = reads + [_read("C", 64, 64, 64, shared=False, write=True)]
    assert step_cycles(figures, stores, {"v_s"}) == pytest.approx(
        (64 * 4096 + 4096 + 64 * 65536) / (figures.dram_bytes_per_s / figures.clock_hz))


# The decisions on kernels, each with the emulator's prediction (Wormhole, multicast="on" / "off", cycles)
# that the decision follows; test_auto_is_never_slower_than_on_and_off runs the first three.
DECISIONS = {
    # w (128 bfloat16: four one-row tiles, 8 KB) read after x: x is pushed before w's read (6903 / 7289)
    "rmsnorm 64x128 on 2 cores": (lambda: op_kernels.rmsnorm(64, 128, 32), {}, {"w"}),
    # v needed with A at once, four cores of one block each: the multicast's latency shows (3593 / 2534)
    "broadcast row 64x128 on 2x2": (lambda: op_kernels.broadcast("row", 64, 128, 32, 64), {}, set()),
    # 64 cores' reads exceed the DRAM's rate: A and B shared (23861 / 36583)
    "gemm 512^3 on 8x8": (lambda: op_kernels.gemm_bias_relu(512, 512, 512, 64, 64, 32), {}, {"A_s", "B_s", "bias_s"}),
    # eight cores, 4 KB blocks: every core's own reads are quicker than the handshakes (13227 / 9279)
    "gemm 256x128x256 on 2x4": (lambda: op_kernels.gemm_bias_relu(256, 128, 256, 64, 64, 32), {}, set()),
    # one row of 16 query blocks on 16 cores: K's 16 KB blocks, which Q K^T needs at once, from DRAM on every
    # core; V, needed after the softmax, multicast (K and V 281002, neither 279810, V 278642)
    "flash attention 1024x128 on 8x2": (lambda: op_kernels.flash_attention(1024, 128), {}, {"V_s"}),
    # 2 KB blocks on 64 cores: the handshake's round trip and the reservation's hops outlast the DRAM's
    # floor (19677 / 18357)
    "gemm 256x256x512 32^3 on 8x8": (lambda: op_kernels.gemm_bias_relu(256, 256, 512, 32, 32, 32), {}, set()),
}


@pytest.mark.parametrize("name", sorted(DECISIONS))
def test_auto_decisions(name):
    kernel, options, expected = DECISIONS[name]
    assert set(shared(kernel(), CompileOptions(**options))) == expected


@pytest.mark.parametrize("name", ["rmsnorm 64x128 on 2 cores", "broadcast row 64x128 on 2x2", "gemm 512^3 on 8x8"])
def test_auto_is_never_slower_than_on_and_off(name):
    """The emulator's predicted time of multicast="auto" is within 1% of the better of "on" and "off"."""
    kernel, options, _ = DECISIONS[name]
    cycles = {}
    for mode in ("on", "off", "auto"):
        artifacts = tilelang_tt.compile(kernel(), multicast=mode, **options)
        inputs = [torch.zeros(p.shape, dtype=torch.bfloat16) for p in artifacts.plan.inputs]
        artifacts.run(*inputs, timing_only=True)
        cycles[mode] = artifacts.last_counters["timing"]["cycles"]
    assert cycles["auto"] <= 1.01 * min(cycles["on"], cycles["off"]), cycles
    assert cycles["on"] != cycles["off"], cycles  # the decision matters
