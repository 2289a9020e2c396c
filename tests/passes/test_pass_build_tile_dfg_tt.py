"""C3 BuildTileDFGTT alone: TIR unchanged, tt.tile_dfg and CB ids/roles in tt.cb_desc."""

import tilelang  # noqa: F401
import tvm

from tests.kernels import gemm, lower_until, run_pass
from tilelang_tt.attrs import Attr, get
from tilelang_tt.passes.build_tile_dfg_tt import BuildTileDFGTT

PASS = "BuildTileDFGTT"


def test_registered_under_spec_name():
    assert BuildTileDFGTT().info.name == PASS


def test_gemm_dfg_and_cb_ids():
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    after = run_pass(before, PASS)
    tvm.ir.assert_structural_equal(after["main"].body, before["main"].body)
    assert get(after["main"], Attr.TILE_DFG) == {
        "A_s": {"producer": "reader", "consumer": "compute", "buffer": "A"},
        "B_s": {"producer": "reader", "consumer": "compute", "buffer": "B"},
        "C_l": {"producer": "compute", "consumer": "writer", "buffer": "C"},
    }
    assert get(after["main"], Attr.CB_DESC) == {
        "A_s": {"index": 0, "page_size": 2048, "num_pages": 4, "data_format": "Float16_b", "block_pages": 2,
                "block_tiles": [2, 1], "producer": "reader", "consumer": "compute", "buffer": "A"},
        "B_s": {"index": 1, "page_size": 2048, "num_pages": 4, "data_format": "Float16_b", "block_pages": 2,
                "block_tiles": [1, 2], "producer": "reader", "consumer": "compute", "buffer": "B"},
        # packed into C's format: the fp32 accumulator never lives in L1
        "C_l": {"index": 16, "page_size": 2048, "num_pages": 8, "data_format": "Float16_b", "block_pages": 4,
                "block_tiles": [2, 2], "producer": "compute", "consumer": "writer", "buffer": "C"},
    }
