"""F VerifyTTIR alone: no structural change on a valid module; rejects a broken one."""

import pytest
import tilelang  # noqa: F401
import tvm

from tests.kernels import gemm, lower_until, run_pass
from tilelang_tt.attrs import Attr, get, with_attrs
from tilelang_tt.errors import TTCompileError
from tilelang_tt.passes.verify_tt_ir import VerifyTTIR

PASS = "VerifyTTIR"


def test_registered_under_spec_name():
    assert VerifyTTIR().info.name == PASS


def test_valid_gemm_unchanged():
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    after = run_pass(before, PASS)
    tvm.ir.assert_structural_equal(after, before)


def test_duplicate_cb_ids_rejected():
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    reader = before["main_reader"]
    cbs = get(reader, Attr.CB_DESC)
    cbs["B_s"]["index"] = cbs["A_s"]["index"]
    before["main_reader"] = with_attrs(reader, {Attr.CB_DESC: cbs})
    with pytest.raises((TTCompileError, RuntimeError), match="CBs `A_s` and `B_s` share id 0"):
        run_pass(before, PASS)
