"""The approximate forms' error bounds (tilelang_tt/ops/sfpu_errors.py) cover every approximate form."""

from tilelang_tt.ops.sfpu import APPROXIMATE
from tilelang_tt.ops.sfpu_errors import APPROX_ERRORS, APPROX_EXP


def test_every_approximate_form_has_its_bound():
    # erf's fit bounds both its forms (ERF_FIT); the APPROX forms sqrt, rsqrt and recip are no template's
    assert set(APPROXIMATE) - {"erf"} <= set(APPROX_ERRORS)
    assert {"sqrt", "rsqrt", "recip"} <= set(APPROX_ERRORS)


def test_the_approximate_exp_bound_is_exps():
    assert APPROX_EXP == APPROX_ERRORS["exp"][0] == APPROX_ERRORS["exp2"][0]
