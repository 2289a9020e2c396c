"""HoistRowValuesTT end to end: flash attention's ``m[i] * scale`` computed once per K/V step gives the output of
the program that computes it in every DST acquire, bit for bit, and matches torch."""

from __future__ import annotations

import pytest
import torch

import tilelang_tt
from tests import op_kernels as K
from tilelang_tt.ir.common import prim_func_pass
from tilelang_tt.passes import pipeline


def _inputs(seq_len, dim):
    g = torch.Generator().manual_seed(41)
    return tuple(torch.randn(1, 1, seq_len, dim, generator=g).to(torch.bfloat16) for _ in range(3))


@pytest.mark.parametrize("approx", [False, True], ids=["precise", "math_approx_mode"])
def test_flash_attention_with_the_row_maximum_scaled_once_is_bit_identical(monkeypatch, approx):
    seq_len, dim = 512, 64
    q, k, v = _inputs(seq_len, dim)
    kernel = K.flash_attention(seq_len, dim, bn=256)
    hoisted = tilelang_tt.compile(kernel, math_approx_mode=approx)
    compute = hoisted.sources["compute.cpp"]
    assert "cb_m_row" in compute
    # the exp pass's acquires broadcast m_row and multiply no broadcast m (one acquire per 2 of the 8 tiles a row)
    exp_pass = compute.split("cb_reserve_back(cb_acc_s_rowsum")[1].split("cb_push_back(cb_acc_s_rowsum")[0]
    assert "unary_bcast<BroadcastType::COL>(cb_m_row" in exp_pass and "mul_unary_tile(0," not in exp_pass
    out = torch.as_tensor(hoisted.run(q, k, v)).float()

    monkeypatch.setattr(pipeline, "HoistRowValuesTT",
                        lambda **_: prim_func_pass(lambda func, mod, ctx: func, "HoistRowValuesTT"))
    per_acquire = tilelang_tt.compile(kernel, math_approx_mode=approx)
    assert "cb_m_row" not in per_acquire.sources["compute.cpp"]
    assert torch.equal(out, torch.as_tensor(per_acquire.run(q, k, v)).float())

    ref = torch.softmax(q.float() @ k.float().transpose(-1, -2) / dim ** 0.5, dim=-1) @ v.float()
    assert (out - ref).abs().max().item() <= 2.0 ** -6 * max(ref.abs().max().item(), 1.0)
