"""B1 LayoutAwareWorkPartitionTT alone: TIR unchanged, block grid and contiguous work partition."""

import tilelang  # noqa: F401
import tvm

from tests.kernels import gemm, lower_until, run_pass
from tests.passes.helpers import attrs_without
from tilelang_tt.attrs import Attr
from tilelang_tt.options import CompileOptions
from tilelang_tt.passes.layout_aware_work_partition_tt import LayoutAwareWorkPartitionTT

PASS = "LayoutAwareWorkPartitionTT"
KEYS = (Attr.ARCH, Attr.BLOCK_GRID, Attr.GRID_TILES, Attr.BLOCK_TILES, Attr.CORE_GRID, Attr.CORE_RANGES,
        Attr.PARTITION_MODE, Attr.WORK_PARTITION)


def _new_attrs(before, after):
    new = attrs_without(after["main"])
    old = attrs_without(before["main"])
    return {k: v for k, v in new.items() if k not in old}


def test_registered_under_spec_name():
    assert LayoutAwareWorkPartitionTT().info.name == PASS


def test_default_grid_one_block_per_core():
    before = lower_until(gemm(256, 128, 64, 64, 64, 32), PASS)
    after = run_pass(before, PASS)
    tvm.ir.assert_structural_equal(after["main"].body, before["main"].body)
    assert _new_attrs(before, after) == {
        "tt.arch": "wormhole_b0",
        "tt.block_grid": [4, 2],
        "tt.grid_tiles": [8, 4],
        "tt.block_tiles": [2, 2],
        "tt.core_grid": [8, 1],
        "tt.core_ranges": [[[0, 0], [7, 0]]],
        "tt.partition_mode": "global",
        "tt.work_partition": [[i, 0, i, 1] for i in range(8)],
    }


def test_user_grid_contiguous_split():
    opts = CompileOptions(grid=(3, 2))
    before = lower_until(gemm(256, 128, 64, 64, 64, 32), PASS, opts)
    after = run_pass(before, PASS, opts)
    tvm.ir.assert_structural_equal(after["main"].body, before["main"].body)
    new = _new_attrs(before, after)
    assert new["tt.core_grid"] == [3, 2]
    assert new["tt.core_ranges"] == [[[0, 0], [2, 1]]]
    assert new["tt.work_partition"] == [[0, 0, 0, 2], [1, 0, 2, 2], [2, 0, 4, 1],
                                        [0, 1, 5, 1], [1, 1, 6, 1], [2, 1, 7, 1]]
