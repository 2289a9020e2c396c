"""ttnn 0.81.1's multicast matmuls on the emulator, their kernels unmodified from the wheel, with their
factories' arguments, against torch: the 2-D one (MatmulMultiCoreReuseMcast2DProgramFactory: its four
readers/writers and bmm_large_block_zm_fused_bias_activation.cpp; tests/emulator/host_programs.Mcast2DMatmul)
and the 1-D one multicasting in0 (MatmulMultiCoreReuseMcast1DProgramFactory, interleaved tensors:
host_programs.Mcast1DMatmul)."""

from __future__ import annotations

import pytest

from tilelang_tt.env import ttnn_kernels_root

from .host_programs import Mcast1DMatmul, Mcast2DMatmul, run_mcast, ttnn_subblock
from .test_ttnn_kernels import bf16, from_tiles, matmul_close


@pytest.fixture(scope="module")
def wheel_kernels():
    if not (ttnn_kernels_root() / "ttnn/operations").is_dir():
        raise FileNotFoundError(f"{ttnn_kernels_root()} is missing; run `make headers` to fetch the ttnn 0.81.1 wheel")


def test_mcast_2d_matmul_matches_torch(wheel_kernels):
    # 4 x 2 cores (in0 multicast to 3, in1 to 1), 4 K blocks (partials spilled and reloaded); the factory
    # splits the receivers (num_cores_c > 2, num_cores_r > 1): core (3, 1)'s run on the other NOCs
    # (in0_split_noc, in1_split_noc).
    grid, kt, block_w = (4, 2), 8, 2
    pm, pn = 2, 2
    mt, nt = pm * grid[1], pn * grid[0]
    sh, sw = ttnn_subblock(pm, pn, pn)
    mm = Mcast2DMatmul(mt, kt, nt, pm, pn, block_w, sh, sw)
    assert mm.grid == grid
    a, b = bf16((32 * mt, 32 * kt), seed=31), bf16((32 * kt, 32 * nt), seed=32)
    res = run_mcast(mm, a, b)
    matmul_close(from_tiles(res.outputs["C"].tobytes(), 32 * mt, 32 * nt), a, b)
    totals = res.counters["total"]
    # A's rows read once (by the left column) and B's columns once (by the top row); the rest multicast.
    assert totals["dram_bytes_read"] == 2048 * (mt * kt + kt * nt)
    assert totals["tile_ops"]["matmul_block"] > 0


def test_mcast_1d_matmul_matches_torch(wheel_kernels):
    # 4 cores on a grid 2 wide (a 2 x 2 box): core (0, 0) reads A's block row and multicasts it to the 3
    # others, each reads its own 2 columns of B; 2 K blocks.
    mm = Mcast1DMatmul(2, 4, 8, 2, 2, 2, *ttnn_subblock(2, 2, 2), columns=2)
    assert mm.cores() == [(0, 0), (1, 0), (0, 1), (1, 1)]
    a, b = bf16((64, 128), seed=35), bf16((128, 256), seed=36)
    res = run_mcast(mm, a, b)
    matmul_close(from_tiles(res.outputs["C"].tobytes(), 64, 256), a, b)
    assert res.counters["total"]["dram_bytes_read"] == 2048 * (2 * 4 + 4 * 8)  # A once, B once


@pytest.mark.parametrize("n, in_format, block, subblock", [
    (1024, "Float16_b", (4, 4), (2, 4)),   # the whole 4 x 4 share; 2 x 4 as its width is the share's
    (2048, "Float16_b", (8, 8), (1, 4)),
    (4096, "Float16_b", (8, 16), (1, 4)),  # 16 x 16 CBs overflow ttnn's L1 estimate; 8 x 16 is the largest fit
    (4096, "Bfp8_b", (16, 16), (1, 4)),    # half-size input tiles: the whole share fits
])
def test_out_of_box_blocks_are_ttnns_choice(n, in_format, block, subblock):
    mm = Mcast2DMatmul.out_of_box(n // 32, n // 32, n // 32, (8, 8), in_format)
    assert (mm.per_core_m, mm.per_core_n, mm.in0_block_w) == (n // 256, n // 256, 4)
    assert (mm.block_h, mm.block_w) == block
    assert (mm.out_subblock_h, mm.out_subblock_w) == subblock


def test_silicon_times_are_the_reports_utilization_as_time():
    from benchmarks.vendor import silicon_us

    # N150 out of box, 4096^3 BF16 HiFi2: 59.49% device-based utilization of 4096^3 / 32^3 * 32 / 64 cycles at 1 GHz
    assert silicon_us(4096, "bfloat16", "HiFi2") == round(4096**3 / 32**3 * 32 / 64 / 0.5949 / 1e3, 1)
    # hand-tuned 2048^3 BFP8 LoFi: 59.82%, 16 cycles per tile product
    assert silicon_us(2048, "bfloat8_b", "LoFi") == round(2048**3 / 32**3 * 16 / 64 / 0.5982 / 1e3, 1)
    assert silicon_us(1024, "bfloat16", "HiFi4") is None  # not published


def test_packer_l1_accumulation_adds_each_k_blocks_partials_in_l1(wheel_kernels):
    """ttnn's default compute config for a bfloat16 output accumulates in L1 (default_l1_acc), which the
    factory turns into PACKER_L1_ACC past two K blocks: the compute kernel packs each K block's partials
    onto the ones L1 holds instead of unpacking them back (copy_tile) for the next block. The product
    still matches torch; the reloads go."""
    grid, kt = (2, 2), 8
    mm = Mcast2DMatmul.out_of_box(4, kt, 4, grid)
    assert mm.packer_l1_acc and not mm.packer_l1_acc_en and kt // mm.in0_block_w == 2  # two K blocks: not enabled
    mm = Mcast2DMatmul(4, kt, 4, 2, 2, 2, *ttnn_subblock(2, 2, 2), packer_l1_acc=True)
    assert mm.packer_l1_acc_en  # four K blocks
    a, b = bf16((128, 32 * kt), seed=37), bf16((32 * kt, 128), seed=38)
    res = run_mcast(mm, a, b)
    matmul_close(from_tiles(res.outputs["C"].tobytes(), 128, 128), a, b)
    off = run_mcast(Mcast2DMatmul(4, kt, 4, 2, 2, 2, *ttnn_subblock(2, 2, 2)), a, b)
    ops, ops_off = res.counters["total"]["tile_ops"], off.counters["total"]["tile_ops"]
    assert ops.get("copy_tile", 0) < ops_off["copy_tile"]


def test_the_tuned_configs_are_the_benchmarks():
    """test_benchmark.py's (in0_block_w_div, num_out_blocks_h, num_out_blocks_w) of 4096^3 (1, 2, 2) and of
    3072 x 3072 x 4096 (2, 1, 1) on 8 x 8 cores: in0_block_w = Kt / 8 / div, the output block per_core /
    num_out_blocks, the sub-block get_subblock_sizes' first (h, w) choice dividing it, L1 accumulation."""
    mm = Mcast2DMatmul.tuned(128, 128, 128, (8, 8), 1, 2, 2)
    assert (mm.per_core_m, mm.per_core_n, mm.in0_block_w, mm.block_h, mm.block_w) == (16, 16, 16, 8, 8)
    assert (mm.out_subblock_h, mm.out_subblock_w) == (4, 2) and mm.packer_l1_acc_en
    mm = Mcast2DMatmul.tuned(96, 96, 128, (8, 8), 2, 1, 1)
    assert (mm.per_core_m, mm.per_core_n, mm.in0_block_w, mm.block_h, mm.block_w) == (12, 16, 6, 12, 16)
    assert (mm.out_subblock_h, mm.out_subblock_w) == (4, 2)
