"""D2 ConfigureTensorAccessorTT alone: accessor slots bound per reader/writer; TIR unchanged."""

import tilelang  # noqa: F401
import tvm

from tests.kernels import gemm, lower_until, run_pass
from tilelang_tt.attrs import Attr, get
from tilelang_tt.passes.configure_tensor_accessor_tt import ConfigureTensorAccessorTT

PASS = "ConfigureTensorAccessorTT"


def _acc(kernel, offset):
    return {"memory": "DRAM", "layout": "interleaved", "page_size": 2048, "num_pages": 16, "tile_grid": [4, 4],
            "kernel": kernel, "cta_offset": offset, "compile_time_args": [2, 2048]}


def test_registered_under_spec_name():
    assert ConfigureTensorAccessorTT().info.name == PASS


def test_gemm_accessor_slots():
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    after = run_pass(before, PASS)
    for name in ("main_reader", "main_compute", "main_writer"):
        tvm.ir.assert_structural_equal(after[name].body, before[name].body)
    assert get(after["main_reader"], Attr.TENSOR_ACCESSOR) == {"A": _acc("reader", 0), "B": _acc("reader", 2)}
    assert get(after["main_writer"], Attr.TENSOR_ACCESSOR) == {"C": _acc("writer", 0)}
    assert get(after["main_compute"], Attr.TENSOR_ACCESSOR) == {}
