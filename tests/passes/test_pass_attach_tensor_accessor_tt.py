"""A3 AttachTensorAccessorTT alone: TIR unchanged, abstract tt.tensor_accessor per global buffer."""

import tilelang  # noqa: F401
import tvm

from tests.kernels import gemm, lower_until, run_pass
from tilelang_tt.attrs import Attr, get
from tilelang_tt.passes.attach_tensor_accessor_tt import AttachTensorAccessorTT

PASS = "AttachTensorAccessorTT"


def _acc(pages, grid):
    return {"memory": "DRAM", "layout": "interleaved", "page_size": 2048, "num_pages": pages,
            "tile_grid": list(grid), "kernel": "", "cta_offset": -1, "compile_time_args": []}


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
