"""ttnn 0.81.1's 2-D multicast matmul (MatmulMultiCoreReuseMcast2DProgramFactory: its four readers/writers
and bmm_large_block_zm_fused_bias_activation.cpp, unmodified from the wheel) on the emulator, with the
factory's arguments (tests/emulator/host_programs.Mcast2DMatmul), against torch."""

from __future__ import annotations

import pytest

from tilelang_tt.env import ttnn_kernels_root

from .host_programs import Mcast2DMatmul, run_mcast_2d, ttnn_subblock
from .test_ttnn_kernels import bf16, from_tiles, matmul_close


@pytest.fixture(scope="module")
def wheel_kernels():
    if not (ttnn_kernels_root() / "ttnn/operations").is_dir():
        raise FileNotFoundError(f"{ttnn_kernels_root()} is missing; run `make headers` to fetch the ttnn 0.81.1 wheel")


@pytest.mark.parametrize("grid, kt, block_w", [
    ((2, 2), 8, 2),   # 2 x 2 cores, 4 K blocks: partials spilled and reloaded
    # 4 x 2 cores (in0 multicast to 3, in1 to 1), one K block; the factory splits the receivers
    # (num_cores_c > 2, num_cores_r > 1): core (3, 1)'s run on the other NOCs (in0_split_noc, in1_split_noc)
    ((4, 2), 4, 4),
])
def test_mcast_2d_matmul_matches_torch(wheel_kernels, grid, kt, block_w):
    pm, pn = 2, 2
    mt, nt = pm * grid[1], pn * grid[0]
    sh, sw = ttnn_subblock(pm, pn, pn)
    mm = Mcast2DMatmul(mt, kt, nt, pm, pn, block_w, sh, sw)
    assert mm.grid == grid
    a, b = bf16((32 * mt, 32 * kt), seed=31), bf16((32 * kt, 32 * nt), seed=32)
    res = run_mcast_2d(mm, a, b)
    matmul_close(from_tiles(res.outputs["C"].tobytes(), 32 * mt, 32 * nt), a, b)
    totals = res.counters["total"]
    # A's rows read once (by the left column) and B's columns once (by the top row); the rest multicast.
    assert totals["dram_bytes_read"] == 2048 * (mt * kt + kt * nt)
    assert totals["tile_ops"]["matmul_block"] > 0

