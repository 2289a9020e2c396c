"""The bits of float values (issue 29 item 6): DeepSeek's ``fast_round_scale`` makes a power-of-two scale from
a float's exponent bits (``T.reinterpret`` to an integer, shifts and masks, and back). Element-wise values do
not lower a float's bits: refused at the statement (tilelang_tt/ops/eltwise.py), with the rewrite
``T.exp2(T.ceil(T.log2(x)))``, which runs here and gives DeepSeek's scales for scales of 2^-10 to 2^9, powers of two
included; at some smaller powers of two (2^-15, 2^-13) the SFPU's rounding (of log2, of the division) gives the next
power up, which the hint says."""

import inspect
import sys

import tilelang  # noqa: F401
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_negative import assert_diagnostic, compile_error

THIS = inspect.getsourcefile(sys.modules[__name__])
SOURCE = inspect.getsource(sys.modules[__name__])


def exponent_ceil(x):
    """DeepSeek-V3.2-Exp ``inference/kernel.py`` ``fast_log2_ceil``: ceil(log2 x) from the exponent and mantissa."""
    bits = T.reinterpret("uint32", x)
    exponent = (bits >> 23) & 0xFF
    mantissa = bits & ((1 << 23) - 1)
    return T.Cast("int32", exponent - 127 + T.if_then_else(mantissa != 0, 1, 0))


def power_of_two(e):
    return T.reinterpret("float32", (e + 127) << 23)


def row_scales(m, n, rewritten):
    """S[i] = 2 ** ceil(log2(amax_i / 448)) per row of X, from the bits or (``rewritten``) from T.log2."""

    @T.prim_func
    def main(X: T.Tensor((m, n), "float32"), S: T.Tensor((m,), "float32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            x = T.alloc_shared((m, n), "float32")
            amax = T.alloc_fragment((m,), "float32")
            s = T.alloc_fragment((m,), "float32")
            T.copy(X, x)
            T.reduce_absmax(x, amax, dim=1)
            for i in T.Parallel(m):
                if rewritten:
                    s[i] = T.exp2(T.ceil(T.log2(T.max(amax[i], 1e-4) / 448.0)))
                else:
                    s[i] = power_of_two(exponent_ceil(T.max(amax[i], 1e-4) / 448.0))  # LINE: float_bits
            T.copy(s, S)

    return main


def test_a_scale_from_the_exponent_bits_is_refused_at_its_statement():
    err = compile_error(row_scales(32, 64, rewritten=False))
    assert_diagnostic(err, "LowerTTTileIntrinsics", "computes on the bits of a float value (T.reinterpret, shifts, "
                      "bit masks)", "float_bits", THIS, SOURCE)
    assert err.message.startswith("`T.reinterpret(\"float32\", T.shift_left(")
    assert "T.exp2(T.ceil(T.log2(x)))" in err.hint


def test_the_rewrite_gives_the_powers_of_two_exactly():
    g = torch.Generator().manual_seed(21)
    x = torch.randn(64, 96, generator=g) * torch.logspace(-3, 3, 64)[:, None]
    x[:20, 0] = torch.tensor([448.0 * 2.0 ** k for k in range(-10, 10)])  # row maxima whose scale is a power of two
    x[:20, 1:] = x[:20, 1:].clamp(-1e-6, 1e-6)
    out = torch.as_tensor(tilelang_tt.compile(row_scales(64, 96, rewritten=True)).run(x))
    amax = x.abs().amax(dim=1).clamp(min=1e-4).float() / 448.0
    assert torch.equal(out, torch.exp2(torch.ceil(torch.log2(amax))))
