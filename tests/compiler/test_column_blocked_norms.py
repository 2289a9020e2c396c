"""Softmax and layer norm over rows too long for a block (tests/op_kernels.py ``online_softmax``,
``layernorm_blocked``): sweeps over column blocks, the online softmax's running max and sum rescaled as the max
grows, the layer norm's sum and sum of squares; compiled as written, run against torch."""

import pytest
import torch

import tilelang_tt
from tests import op_kernels as K
from tests.compiler.test_ops import bf16
from tilelang_tt.ops.sfpu_errors import APPROX_EXP


@pytest.mark.parametrize("rising", [False, True], ids=["random", "max-in-the-last-block"])
@pytest.mark.parametrize("fast_math", [False, True], ids=["exact", "fast-math"])
def test_online_softmax_against_torch(rising, fast_math):
    """With ``rising`` each row's values grow along it, so every column block raises the running max and the
    running sum is rescaled at every step."""
    x = bf16(64, 512, seed=11) * 2
    if rising:
        x = (x.float() + torch.linspace(0, 12, 512)).bfloat16()
    y = torch.as_tensor(tilelang_tt.compile(K.online_softmax(64, 512, 32, 128), fast_math=fast_math).run(x)).double()
    ref = torch.softmax(x.double(), dim=1)
    # float32 statistics, bfloat16 output: 2^-6 relative where above 2^-10 (benchmarks/vendor.py softmax_close);
    # fast math sets math_approx_mode: the approximate exp's relative error in each value and in the running sum
    # that divides it
    relative = 2.0**-6 + (2 * APPROX_EXP if fast_math else 0.0)
    assert ((y - ref).abs() <= torch.clamp(ref.abs() * relative, min=2.0**-10)).all()


def test_layernorm_blocked_against_torch():
    x, g, b = bf16(64, 512, seed=12), bf16(512, seed=13), bf16(512, seed=14)
    x = (x.float() * 2 + 1).bfloat16()
    y = torch.as_tensor(tilelang_tt.compile(K.layernorm_blocked(64, 512, 32, 128)).run(x, g, b)).double()
    xd = x.double()
    ref = torch.nn.functional.layer_norm(xd, (512,), g.double(), b.double(), 1e-5)
    x_hat = (xd - xd.mean(1, keepdim=True)) / (xd.var(1, unbiased=False, keepdim=True) + 1e-5).sqrt()
    # relative to the terms summed (benchmarks/vendor.py layernorm_close): E[x^2] - mean^2 in float32 loses
    # about 2^-20 of E[x^2] (5 here), the bfloat16 output 2^-9
    scale = torch.clamp((x_hat * g.double()).abs() + b.double().abs(), min=1.0)
    assert ((y - ref).abs() <= 2.0**-7 * scale).all()
