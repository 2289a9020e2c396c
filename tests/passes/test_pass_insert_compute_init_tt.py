"""D4 InsertComputeInitTT alone: hw startup + op init before the compute body."""

import tilelang  # noqa: F401
import tvm

from tests.kernels import eltwise, gemm, lower_until, run_pass
from tests.passes.helpers import assert_body, ev, seq
from tilelang_tt.attrs import Intrin
from tilelang_tt.passes.insert_compute_init_tt import InsertComputeInitTT

PASS = "InsertComputeInitTT"


def test_registered_under_spec_name():
    assert InsertComputeInitTT().info.name == PASS


def test_gemm_init():
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    after = run_pass(before, PASS)
    expected = seq(ev(Intrin.HW_STARTUP, 0, 1, 16, True), ev(Intrin.MATMUL_INIT, 0, 1, False),
                   before["main_compute"].body)
    assert_body(after["main_compute"].body, expected)
    for name in ("main_reader", "main_writer"):
        tvm.ir.assert_structural_equal(after[name], before[name])


def test_eltwise_init():
    before = lower_until(eltwise("add", 64, 128, 32, 64), PASS)
    after = run_pass(before, PASS)
    expected = seq(ev(Intrin.HW_STARTUP, 0, 1, 16, False), ev(Intrin.BINARY_INIT, "add", 0, 1),
                   before["main_compute"].body)
    assert_body(after["main_compute"].body, expected)
