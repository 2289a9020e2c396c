"""D4 InsertComputeInitTT alone: hw startup + op init before the compute body."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import eltwise, gemm, lower_until, run_pass
from tests.passes.helpers import assert_body, cb_entry, ev, seq, tt, tt_attrs
from tilelang_tt.ir.attrs import Intrin
from tilelang_tt.passes.insert_compute_init_tt import InsertComputeInitTT

PASS = "InsertComputeInitTT"


def test_registered_under_spec_name():
    assert InsertComputeInitTT().info.name == PASS


def test_gemm_init():
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    after = run_pass(before, PASS)
    expected = seq(ev(Intrin.HW_STARTUP, 0, 1, 16, True), ev(Intrin.MATMUL_BLOCK_INIT, 0, 1, False, 2, 2, 1),
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


def test_hand_written_reduce_then_add_starts_from_the_reduce():
    """Hand-written TIR: the first op, a row sum, starts the engine from its source, the scaler CB
    (found by its kind in tt.tile_dfg) and its result; a reduce and an FPU add are two engine
    configurations, so no op init is hoisted."""
    attrs = tt_attrs({
        "tt.kernel_role": "compute",
        "tt.cb_desc": {"X_s": cb_entry(0), "Y_s": cb_entry(1), "one": cb_entry(2), "v_l": cb_entry(24),
                       "Z_l": cb_entry(16)},
        "tt.tile_dfg": {"one": {"producer": "reader", "consumers": ["compute"], "buffer": "", "kind": "scaler"}},
    })

    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main():
            T.func_attr(attrs)
            X_s = T.Buffer((32, 32), "bfloat16", scope="shared.dyn")
            Y_s = T.Buffer((32, 32), "bfloat16", scope="shared.dyn")
            v_l = T.Buffer((32,), "bfloat16", scope="local.fragment")
            Z_l = T.Buffer((32, 32), "bfloat16", scope="local.fragment")
            i = T.int32()
            j = T.int32()
            tt.tile.reduce("sum", X_s.data, v_l.data, 1, True)
            tt.tile.eltwise(Z_l.data, i, j, X_s[i, j] + Y_s[i, j])

    after = InsertComputeInitTT()(Before)
    assert_body(after["main"].body, seq(ev(Intrin.HW_STARTUP, 0, 2, 24, False), Before["main"].body))
