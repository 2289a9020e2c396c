"""A3 AttachTensorAccessorTT alone: TIR unchanged, abstract tt.tensor_accessor per global buffer."""

import tilelang  # noqa: F401
import tvm

from tests.kernels import gemm, lower_until, run_pass
from tilelang_tt.attrs import Attr, get
from tilelang_tt.layout import BufferLayout
from tilelang_tt.options import CompileOptions
from tilelang_tt.passes.attach_tensor_accessor_tt import AttachTensorAccessorTT

PASS = "AttachTensorAccessorTT"


def _acc(pages, grid, memory="DRAM", layout="interleaved", shard_tiles=(0, 0), banks=0):
    return {"memory": memory, "layout": layout, "page_size": 2048, "num_pages": pages,
            "tile_grid": list(grid), "shard_tiles": list(shard_tiles), "num_banks": banks, "kernel": "",
            "cta_offset": -1, "compile_time_args": [], "crta_offset": -1, "num_common_runtime_args": 0}


def test_registered_under_spec_name():
    assert AttachTensorAccessorTT().info.name == PASS


def test_gemm_accessors():
    before = lower_until(gemm(256, 64, 128, 64, 64, 32), PASS)
    after = run_pass(before, PASS)
    tvm.ir.assert_structural_equal(after["main"].body, before["main"].body)
    assert get(after["main"], Attr.TENSOR_ACCESSOR) == {
        "A": _acc(32, (8, 4)),
        "B": _acc(8, (4, 2)),
        "C": _acc(16, (8, 2)),
    }


def test_sharded_accessor_carries_the_shard_geometry():
    layouts = {"A": BufferLayout(memory="L1", layout="height_sharded", shard_grid=(4, 2)),
               "C": BufferLayout(memory="L1", layout="block_sharded", shard_grid=(2, 4))}
    opts = CompileOptions(layouts=layouts)
    after = run_pass(lower_until(gemm(256, 64, 128, 64, 64, 32), PASS, opts), PASS, opts)
    accessors = get(after["main"], Attr.TENSOR_ACCESSOR)
    # A 256x128 over 8 cores: 32-row shards of whole rows; C 256x64 over 4 rows x 2 columns of 64x32
    assert accessors["A"] == _acc(32, (8, 4), "L1", "height_sharded", (1, 4), 8)
    assert accessors["C"] == _acc(16, (8, 2), "L1", "block_sharded", (2, 1), 8)
    assert accessors["B"] == _acc(8, (4, 2))
