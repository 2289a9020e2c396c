"""The error bounds of the SFPU's approximate forms, the one statement of them every check imports.

The approximate forms math_approx_mode selects (:data:`tilelang_tt.ops.sfpu.APPROXIMATE`: ``exp_tile<true>``,
exp2's ``exp_tile<true>`` with ``exp_tile_init<true, ln 2>``, ``gelu_tile<true>``, ``tanh_tile<true>``,
``sigmoid_tile<.., true>``; ``APPROX``: ``sqrt_tile``, ``rsqrt_tile``, ``recip_tile``), each op's maximum error
against exact math as (relative, absolute): the table of docs/numerics.md ("SFPU approximations"), rounded up to
two digits where that table rounded its measured maximum down (measured again on the numpy models of
tests/emulator/sfpu_models.py, which the emulator matches bit for bit, over dense grids of float32 operands: exp
3.122e-2 relative on [-80, 80], gelu 2.341e-2 absolute, recip 1.021e-4 relative, sqrt and rsqrt 8.801e-4 relative;
tanh 1.884e-2 and sigmoid 0.1192 absolute, within the table's 1.9e-2 and 1.2e-1). gelu, tanh and sigmoid hold their
bounds on all of [-1e4, 1e4] (beyond the table's [-8, 8]: their tables' last segments give x or 0 (gelu, past
|x| = 3), +-1 (tanh, past 3) and 1 or 0 (sigmoid, past 2), whose distance from the functions only shrinks from there
on); exp's below -80 is absolute: the model's result there is at most 1.853e-35 and exp(-80) = 1.80e-35, so both lie
in [0, 1.9e-35]; exp2's form (the fast exp with the init scale ln 2) is 3.122e-2 relative on [-115.4, 115.4] and at
most 1.872e-35 below it (2^-115.4 = 1.82e-35). ``c / x`` is recip_tile times c (ops/eltwise.py: a constant
numerator), 1 / x's relative error. erf_tile<true> is within 3.2e-3 absolute of erf (near |x| = 2) in both forms
(the bfloat16 ``ERF_LUT`` of tt-metal 0.81.1 ckernel_sfpu_erf.h: the compiled kernels define no INP_FLOAT32):
:data:`ERF_FIT`.
"""

from __future__ import annotations

APPROX_ERRORS: dict[str, tuple[float, float]] = {
    "exp": (3.2e-2, 1.9e-35),
    "exp2": (3.2e-2, 1.9e-35),
    "recip": (1.1e-4, 0.0),
    "sqrt": (8.9e-4, 0.0),
    "rsqrt": (8.9e-4, 0.0),
    "gelu": (0.0, 2.4e-2),
    "tanh": (0.0, 1.9e-2),
    "sigmoid": (0.0, 1.2e-1),
}

# erf_tile's rational fit, either form, whatever DST's format: its absolute error bound
ERF_FIT = 3.3e-3

# the relative error of the approximate exp, exp(x) and exp2(x) alike
APPROX_EXP = APPROX_ERRORS["exp"][0]
