"""The compile option math_approx_mode: ComputeConfig::math_approx_mode (tt-metal's APPROX, in main.cpp and the
plan) and the approximate forms of the ops that take theirs as a template argument (exp_tile<true>,
gelu_tile<true>, tanh_tile<true>, sigmoid_tile<.., true>, erf_tile<true>; exp2, which has none, as exp_tile<true>
after exp_tile_init<true, ln 2>); the emulator computes each approximate form as the numpy model written from its
0.81.1 source (tests/emulator/sfpu_models.py), rounded once to the bfloat16 output. TileLang's fast-math pass config
selects the same forms."""

from __future__ import annotations

import re

import numpy as np
import pytest
import tilelang
import torch

import tilelang_tt
from tests import op_kernels as K
from tests.emulator.sfpu_models import (model_erf, model_exp_fast, model_gelu_lut, model_recip_fast,
                                       model_sigmoid_lut, model_sqrt, model_tanh_lut)
from tilelang_tt.contract.formats import bfloat16_round

M, N = 32, 64

# op -> (the compute kernel's call of its approximate form, the model of that form, positive inputs)
APPROXIMATE = {
    "exp": (r"exp_tile<true>\(", model_exp_fast, False),
    "exp2": (r"exp_tile_init<true, 0x3f317218u>\(\);\s*for [^{]*\{\s*exp_tile<true>\(",
             lambda x: model_exp_fast(x, float(np.float32(np.log(2.0)))), False),
    "gelu": (r"gelu_tile<true>\(", model_gelu_lut, False),
    "tanh": (r"tanh_tile<true>\(", model_tanh_lut, False),
    "sigmoid": (r"sigmoid_tile<VectorMode::RC, true>\(", model_sigmoid_lut, False),
    "erf": (r"erf_tile<true>\(", lambda x: model_erf(x, approx=True), False),
    "sqrt": (r"sqrt_tile\(", lambda x: model_sqrt(x, approx=True, reciprocal=False), True),
    "rsqrt": (r"rsqrt_tile\(", lambda x: model_sqrt(x, approx=True, reciprocal=True), True),
    "reciprocal": (r"recip_tile\(", model_recip_fast, True),
}


def as_bfloat16(x: np.ndarray) -> np.ndarray:
    bits = bfloat16_round(np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64))
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


@pytest.mark.parametrize("op", sorted(APPROXIMATE))
def test_math_approx_mode_computes_the_approximate_forms(op):
    call, model, positive = APPROXIMATE[op]
    g = torch.Generator().manual_seed(5)
    x = torch.randn(M, N, generator=g) * 2
    x = (x.abs() + 0.25 if positive else x).to(torch.bfloat16)
    art = tilelang_tt.compile(K.unary(op, M, N, 32, 64), math_approx_mode=True)
    assert re.search(call, art.sources["compute.cpp"]), art.sources["compute.cpp"]
    assert ".math_approx_mode = true" in art.sources["main.cpp"]
    got = torch.as_tensor(art.run(x)).float().numpy()
    np.testing.assert_array_equal(got, as_bfloat16(model(x.float().numpy())))
    precise = torch.as_tensor(tilelang_tt.compile(K.unary(op, M, N, 32, 64)).run(x)).float().numpy()
    assert not np.array_equal(got, precise)  # the approximation shows through the bfloat16 rounding


def test_exp2_approximate_form_is_within_the_fast_exps_bound():
    """exp2's approximate form computes 2^x within the approximate exp's relative bound (tests/fuzz/oracle.py
    APPROX_ERRORS), and not as the precise exp2_tile does."""
    x = (torch.linspace(-20, 20, M * N).reshape(M, N)).to(torch.bfloat16)
    got = torch.as_tensor(tilelang_tt.compile(K.unary("exp2", M, N, 32, 64), math_approx_mode=True).run(x)).double()
    exact = torch.exp2(x.double())
    assert ((got / exact - 1).abs() <= 3.2e-2 + 2.0 ** -8).all()
    assert ((got / exact - 1).abs() > 2.0 ** -7).any()  # the approximation's error, above bfloat16's rounding


def test_tilelangs_fast_math_selects_the_approximate_forms():
    """pass_configs={"tl.enable_fast_math": True} compiles as math_approx_mode=True; an explicit
    tt.math_approx_mode wins."""
    func = K.unary("exp2", M, N, 32, 64)
    fast = tilelang.compile(func, target="tenstorrent", pass_configs={"tl.enable_fast_math": True}).artifacts
    assert fast.sources == tilelang_tt.compile(func, math_approx_mode=True).sources
    both = tilelang.compile(func, target="tenstorrent",
                            pass_configs={"tl.enable_fast_math": True, "tt.math_approx_mode": False}).artifacts
    assert both.sources == tilelang_tt.compile(func).sources
