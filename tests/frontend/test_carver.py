"""Block choices on Tenstorrent (tilelang_tt/carver.py): TileLang's carver with a Tenstorrent architecture gives
hints in whole tiles within L1, and the default GEMM search space is non-empty and compiles for several shapes."""

from __future__ import annotations

import pytest
from tilelang.carver.template import MatmulTemplate

import tilelang_tt
from tests.kernels import gemm
from tilelang_tt import carver
from tilelang_tt.contract.arch import ARCHS


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_the_device_carries_the_arch_figures(arch):
    device, a = carver.TenstorrentDevice(arch), ARCHS[arch]
    assert device.smem_cap == a.l1_bytes and device.compute_max_core == a.grid[0] * a.grid[1]
    assert device.reg_cap == a.dst_tiles * 2048 and device.transaction_size == [2048, 2048]
    assert device.bandwidth == [round(a.noc_bytes_per_cycle * a.clock_hz / 1e6),
                                round(a.dram_bytes_per_cycle * a.clock_hz / 1e6)]


@pytest.mark.parametrize("arch", sorted(ARCHS))
@pytest.mark.parametrize("shape", [(512, 512, 512), (128, 1536, 512), (4096, 4096, 4096)])
def test_gemm_hints_are_whole_tiles_within_l1(arch, shape):
    hints = MatmulTemplate(M=shape[0], N=shape[1], K=shape[2], in_dtype="bfloat16", out_dtype="bfloat16",
                           accum_dtype="float32").with_arch(carver.TenstorrentDevice(arch)).recommend_hints(topk=10)
    assert hints  # the carver's roller policy runs on the Tenstorrent device
    blocks = carver.gemm_blocks(hints, *shape, arch=arch)
    assert blocks
    for block in blocks:
        assert block.bm % 32 == block.bn % 32 == block.bk % 32 == 0
        assert carver.gemm_l1_bytes(block) <= ARCHS[arch].l1_bytes


def test_a_block_over_l1_is_dropped():
    hint = type("Hint", (), {"block": [1024, 1024], "rstep": [256]})()
    assert carver.gemm_l1_bytes(carver.GemmBlock(1024, 1024, 256)) > ARCHS["wormhole_b0"].l1_bytes
    assert carver.gemm_blocks([hint], 4096, 4096, 4096) == []


def test_eltwise_hints_are_whole_tiles_within_l1():
    blocks = carver.eltwise_blocks((2048, 2048))
    assert blocks and all(r % 32 == c % 32 == 0 and 2 * 3 * r * c * 2 <= ARCHS["wormhole_b0"].l1_bytes
                          for r, c in blocks)


@pytest.mark.parametrize("shape", [(512, 512, 512), (128, 1536, 512), (256, 128, 1024)])
def test_the_default_search_space_compiles(shape):
    configs = carver.gemm_configs(*shape, limit=6)
    assert len(configs) == 6 and len({tuple(c.values()) for c in configs}) == 6
    for config in configs[:3]:
        tilelang_tt.compile(gemm(*shape, **config))  # a TTCompileError fails the test
    assert all(shape[0] % c["bm"] == shape[1] % c["bn"] == shape[2] % c["bk"] == 0 for c in configs)


def test_the_search_space_ranks_blocks_that_fill_the_grid_first():
    """512^3 on 8 x 8 cores: 64 x 64 blocks are one per core; 256 x 256 leaves 60 cores idle."""
    configs = carver.gemm_configs(512, 512, 512, keys=("block_M", "block_N", "block_K"))
    assert configs[0] == {"block_M": 64, "block_N": 64, "block_K": 128}
    ranked = [(c["block_M"], c["block_N"]) for c in configs]
    assert (256, 256) not in ranked[:4]
