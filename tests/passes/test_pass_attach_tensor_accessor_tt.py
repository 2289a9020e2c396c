"""A3 AttachTensorAccessorTT alone: TIR unchanged, abstract tt.tensor_accessor per global buffer."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import gemm, lower_until, run_pass
from tests.passes.helpers import tt_attrs
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.ir.tensors import AccessorDesc
from tilelang_tt.layout import BufferLayout
from tilelang_tt.options import CompileOptions
from tilelang_tt.passes.attach_tensor_accessor_tt import AttachTensorAccessorTT

PASS = "AttachTensorAccessorTT"


def _acc(name, pages, grid, memory="DRAM", layout="interleaved", shard_tiles=(0, 0), banks=0):
    return AccessorDesc(name, memory, layout, page_size=2048, num_pages=pages, tile_grid=grid, shard_tiles=shard_tiles,
                        num_banks=banks)


def test_registered_under_spec_name():
    assert AttachTensorAccessorTT().info.name == PASS


def test_gemm_accessors():
    before = lower_until(gemm(256, 64, 128, 64, 64, 32), PASS)
    after = run_pass(before, PASS)
    tvm.ir.assert_structural_equal(after["main"].body, before["main"].body)
    assert Attr.TENSOR_ACCESSOR.read(after["main"]) == {
        "A": _acc("A", 32, (8, 4)),
        "B": _acc("B", 8, (4, 2)),
        "C": _acc("C", 16, (8, 2)),
    }


def test_sharded_accessor_carries_the_shard_geometry():
    layouts = {"A": BufferLayout(memory="L1", layout="height_sharded", shard_grid=(4, 2)),
               "C": BufferLayout(memory="L1", layout="block_sharded", shard_grid=(2, 4))}
    opts = CompileOptions(layouts=layouts)
    after = run_pass(lower_until(gemm(256, 64, 128, 64, 64, 32), PASS, opts), PASS, opts)
    accessors = Attr.TENSOR_ACCESSOR.read(after["main"])
    # A 256x128 over 8 cores: 32-row shards of whole rows; C 256x64 over 4 rows x 2 columns of 64x32
    assert accessors["A"] == _acc("A", 32, (8, 4), "L1", "height_sharded", (1, 4), 8)
    assert accessors["C"] == _acc("C", 16, (8, 2), "L1", "block_sharded", (2, 1), 8)
    assert accessors["B"] == _acc("B", 8, (4, 2))


A_DRAM = {"memory": "DRAM", "layout": "interleaved", "dtype": "bfloat16", "shape": [64, 96], "tile_shape": [32, 32],
          "data_format": "Float16_b", "page_size": 2048}
C_L1 = {"memory": "L1", "layout": "block_sharded", "dtype": "float32", "shape": [64, 96], "tile_shape": [32, 32],
        "data_format": "Float32", "page_size": 4096, "shard_grid": [3, 2], "shard_shape": [32, 32]}


def test_hand_written_accessors_from_the_layouts():
    """Hand-written TIR: one accessor per tt.layout_desc entry; C's 32x32 shards on 3x2 cores are
    1x1 pages on 6 banks."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64, 96), "bfloat16"), C: T.Buffer((64, 96), "float32")):
            T.func_attr(tt_attrs({"tt.layout_desc": {"A": A_DRAM, "C": C_L1}}))
            T.evaluate(0)

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((64, 96), "bfloat16"), C: T.Buffer((64, 96), "float32")):
            T.func_attr(tt_attrs({"tt.layout_desc": {"A": A_DRAM, "C": C_L1}, "tt.tensor_accessor": {
                "A": {"memory": "DRAM", "layout": "interleaved", "page_size": 2048, "num_pages": 6, "tile_grid": [2, 3],
                      "shard_tiles": [0, 0], "num_banks": 0, "kernel": "", "cta_offset": -1, "compile_time_args": [],
                      "crta_offset": -1, "num_common_runtime_args": 0},
                "C": {"memory": "L1", "layout": "block_sharded", "page_size": 4096, "num_pages": 6, "tile_grid": [2, 3],
                      "shard_tiles": [1, 1], "num_banks": 6, "kernel": "", "cta_offset": -1, "compile_time_args": [],
                      "crta_offset": -1, "num_common_runtime_args": 0}}}))
            T.evaluate(0)

    tvm.ir.assert_structural_equal(AttachTensorAccessorTT()(Before), Expected)
