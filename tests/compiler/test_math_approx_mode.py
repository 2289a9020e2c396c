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
import tilelang.language as T
import torch

import tilelang_tt
from tests import op_kernels as K
from tests.emulator.sfpu_llk_models import model_recip
from tests.emulator.sfpu_models import (model_erf, model_exp_fast, model_gelu_lut, model_sigmoid_lut, model_sqrt,
                                       model_tanh_lut)
from tilelang_tt.contract.formats import bfloat16_round
from tilelang_tt.ops.sfpu_errors import APPROX_ERRORS

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
    "reciprocal": (r"recip_tile\(", lambda x: model_recip(x, "wormhole_b0", True, approximate=True), True),
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
    """exp2's approximate form computes 2^x within the approximate exp's relative bound (tilelang_tt.ops.sfpu_errors
    APPROX_ERRORS), and not as the precise exp2_tile does."""
    x = (torch.linspace(-20, 20, M * N).reshape(M, N)).to(torch.bfloat16)
    got = torch.as_tensor(tilelang_tt.compile(K.unary("exp2", M, N, 32, 64), math_approx_mode=True).run(x)).double()
    exact = torch.exp2(x.double())
    assert ((got / exact - 1).abs() <= APPROX_ERRORS["exp2"][0] + 2.0 ** -8).all()
    assert ((got / exact - 1).abs() > 2.0 ** -7).any()  # the approximation's error, above bfloat16's rounding


def test_tilelangs_fast_math_is_the_fast_math_option():
    """pass_configs={"tl.enable_fast_math": True} compiles as fast_math=True (which sets math_approx_mode); an
    explicit tt.fast_math wins."""
    func = K.unary("exp2", M, N, 32, 64)
    fast = tilelang.compile(func, target="tenstorrent", pass_configs={"tl.enable_fast_math": True}).artifacts
    assert fast.sources == tilelang_tt.compile(func, fast_math=True).sources
    assert fast.sources == tilelang_tt.compile(func, math_approx_mode=True).sources
    both = tilelang.compile(func, target="tenstorrent",
                            pass_configs={"tl.enable_fast_math": True, "tt.fast_math": False}).artifacts
    assert both.sources == tilelang_tt.compile(func).sources


def scaled_exps(M, N, c):
    """exp(a * c) and exp2(a * c - b * c) of two bfloat16 blocks into float32 ones."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), B: T.Tensor((M, N), "bfloat16"), C: T.Tensor((M, N), "float32"),
             D: T.Tensor((M, N), "float32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((M, N), "bfloat16")
            B_s = T.alloc_shared((M, N), "bfloat16")
            C_l = T.alloc_fragment((M, N), "float32")
            D_l = T.alloc_fragment((M, N), "float32")
            T.copy(A[0, 0], A_s)
            T.copy(B[0, 0], B_s)
            for i, j in T.Parallel(M, N):
                C_l[i, j] = T.exp(A_s[i, j] * c)
                D_l[i, j] = T.exp2(A_s[i, j] * c - B_s[i, j] * c)
            T.copy(C_l, C[0, 0])
            T.copy(D_l, D[0, 0])

    return main


def test_fast_math_folds_the_scale_into_the_approximate_exp():
    """Under fast math, exp(a * c) and exp2(a * c - b * c) are the approximate exp of a (of a - b) with c (c ln 2)
    the init's scale, no multiply: bit for bit the model of exp_init's folded constants; without it, the
    multiplies and the precise exps."""
    c = 0.3
    g = torch.Generator().manual_seed(7)
    a, b = [(torch.randn(M, N, generator=g) * 4).to(torch.bfloat16) for _ in range(2)]
    art = tilelang_tt.compile(scaled_exps(M, N, c), fast_math=True)
    src = art.sources["compute.cpp"]
    c32 = float(np.float32(c))
    bits = lambda v: f"{int(np.float32(v).view(np.uint32)):#x}u"  # noqa: E731
    assert f"exp_tile_init<true, {bits(c32)}>()" in src and f"exp_tile_init<true, {bits(c32 * np.log(2.0))}>()" in src
    assert "mul_unary_tile" not in src and "exp2_tile" not in src
    got_c, got_d = (torch.as_tensor(x).numpy() for x in art.run(a, b))
    x, y = a.float().numpy(), b.float().numpy()
    np.testing.assert_array_equal(got_c, model_exp_fast(x, c32))
    scale2 = float(np.float32(c32 * np.log(2.0)))
    np.testing.assert_array_equal(got_d, model_exp_fast((x - y).astype(np.float32), scale2))
    plain = tilelang_tt.compile(scaled_exps(M, N, c), math_approx_mode=True).sources["compute.cpp"]
    assert "mul_unary_tile" in plain and "exp_tile_init<true>()" in plain


def test_flash_attention_under_fast_math_is_within_the_approximate_exps_bound():
    """TileLang's flash attention (exp2 of s * scale - m * scale) under fast math: per score tile one FPU
    subtraction of the row maximum (the float32 scores read as TF32) and the approximate exp, within a few percent
    of torch's attention; without fast math the SFPU subtracts in float32."""
    art = tilelang_tt.compile(K.flash_attention(256, 64, heads=2), fast_math=True, math_fidelity="HiFi2")
    src = art.sources["compute.cpp"]
    assert "mul_unary_tile" not in src and "sub_tiles_bcast_cols(cb_acc_s, cb_m, " in src
    precise = tilelang_tt.compile(K.flash_attention(256, 64, heads=2), math_fidelity="HiFi2").sources["compute.cpp"]
    assert "sub_tiles_bcast_cols" not in precise
    g = torch.Generator().manual_seed(11)
    q, k, v = [torch.randn(1, 2, 256, 64, generator=g).to(torch.bfloat16) for _ in range(3)]
    got = torch.as_tensor(art.run(q, k, v)).float()
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float())
    assert (got - ref).abs().max() <= 0.1 * ref.abs().max()
