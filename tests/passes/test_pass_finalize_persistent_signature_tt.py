"""E1 FinalizePersistentSignatureTT alone: tt.runtime_args per kernel; TIR unchanged."""

import tilelang  # noqa: F401
import tvm

from tests.kernels import gemm, lower_until, run_pass
from tilelang_tt.attrs import Attr, get
from tilelang_tt.passes.finalize_persistent_signature_tt import (
    FinalizePersistentSignatureTT,
)

PASS = "FinalizePersistentSignatureTT"
TAIL = [{"name": "start_id", "kind": "start_id"}, {"name": "count", "kind": "count"}]


def test_registered_under_spec_name():
    assert FinalizePersistentSignatureTT().info.name == PASS


def test_gemm_runtime_args():
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    after = run_pass(before, PASS)
    for name in ("main_reader", "main_compute", "main_writer"):
        tvm.ir.assert_structural_equal(after[name].body, before[name].body)
    assert get(after["main_reader"], Attr.RUNTIME_ARGS) == [
        {"name": "A_addr", "kind": "buffer_address", "buffer": "A"},
        {"name": "B_addr", "kind": "buffer_address", "buffer": "B"}, *TAIL]
    assert get(after["main_writer"], Attr.RUNTIME_ARGS) == [
        {"name": "C_addr", "kind": "buffer_address", "buffer": "C"}, *TAIL]
    assert get(after["main_compute"], Attr.RUNTIME_ARGS) == TAIL
