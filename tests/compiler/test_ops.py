"""Issue 4's op breadth: each kernel runs on the emulator and matches torch.

Tolerances: outputs are bfloat16 unless stated (half an ulp: 2^-8 relative); SFPU transcendental
ops are compared at 2^-6 relative to the output range (the emulator evaluates them in fp32 and
rounds on pack, as an exact SFPU would; hardware approximations differ by more, not modelled).
"""

import pytest
import torch

import tilelang_tt
from tests import op_kernels as K

M, N = 64, 128


def bf16(*shape, seed, positive=False):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=g)
    return (x.abs() + 0.5 if positive else x).to(torch.bfloat16)


def run(kernel, *inputs, **options):
    artifacts = tilelang_tt.compile(kernel, **options)
    return torch.as_tensor(artifacts.run(*inputs)).float(), artifacts


def assert_close(out, ref, rel):
    scale = max(ref.abs().max().item(), 1.0)
    err = (out - ref).abs().max().item()
    assert err <= rel * scale, f"max |error| {err} > {rel} * {scale}"


UNARY_REF = {
    "exp": torch.exp, "exp2": torch.exp2, "log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
    "sigmoid": torch.sigmoid, "tanh": torch.tanh, "abs": torch.abs, "relu": torch.relu, "neg": torch.neg,
    "square": torch.square, "reciprocal": torch.reciprocal, "scale": lambda x: x * 0.25, "shift": lambda x: x + 1.5,
}
POSITIVE = {"log", "sqrt", "rsqrt", "reciprocal"}


@pytest.mark.parametrize("op", sorted(UNARY_REF))
def test_unary(op):
    x = bf16(M, N, seed=1, positive=op in POSITIVE)
    out, _ = run(K.unary(op, M, N, 32, 64), x)
    assert_close(out, UNARY_REF[op](x.float()), 2.0 ** -6)


@pytest.mark.parametrize("op,ref", [("maximum", torch.maximum), ("minimum", torch.minimum),
                                    ("div", torch.div)])
def test_binary_sfpu(op, ref):
    a, b = bf16(M, N, seed=2), bf16(M, N, seed=3, positive=op == "div")
    out, _ = run(K.binary(op, M, N, 32, 64), a, b)
    assert_close(out, ref(a.float(), b.float()), 2.0 ** -7)


def test_fused_chains_in_one_compute_kernel():
    a, b, c = (bf16(M, N, seed=s) for s in (4, 5, 6))
    out, artifacts = run(K.fma(M, N, 32, 64), a, b, c)
    assert_close(out, a.float() * b.float() + c.float(), 2.0 ** -7)
    # a*b+c stays in DST: no intermediate CB between the multiply and the add
    assert sorted(cb["name"] for cb in artifacts.plan["cbs"]) == ["A_s", "B_s", "C_s", "D_l"]
    out, _ = run(K.relu_add(M, N, 32, 64), a, b)
    assert_close(out, torch.relu(a.float() + b.float()), 2.0 ** -7)


@pytest.mark.parametrize("kind", ["row", "col", "scalar"])
def test_broadcast(kind):
    a = bf16(M, N, seed=7)
    if kind == "row":
        v = bf16(N, seed=8)
        out, _ = run(K.broadcast(kind, M, N, 32, 64), a, v)
        ref = a.float() * v.float()
    elif kind == "col":
        v = bf16(M, 1, seed=8)
        out, _ = run(K.broadcast(kind, M, N, 32, 64), a, v)
        ref = a.float() - v.float()
    else:
        out, _ = run(K.broadcast(kind, M, N, 32, 64), a)
        ref = a.float() * 3.0 - 0.5
    assert_close(out, ref, 2.0 ** -7)


def test_cast_bf16_to_fp32_is_exact():
    a = bf16(M, N, seed=9)
    out, _ = run(K.cast(M, N, 32, 64), a)
    assert torch.equal(out, a.float())


def test_fill():
    out, _ = run(K.fill(M, N, 32, 64, 2.5))
    assert torch.equal(out, torch.full((M, N), 2.5))


@pytest.mark.parametrize("kind,dim", [("sum", 1), ("max", 1), ("sum", 0), ("max", 0)])
def test_reduce(kind, dim):
    a = bf16(M, N, seed=10)
    out, _ = run(K.reduce(kind, dim, M, N, 32, 64), a)
    ref = a.float().sum(dim) if kind == "sum" else a.float().amax(dim)
    ref = ref.reshape(out.shape)
    assert_close(out, ref, 2.0 ** -12)  # fp32 output: only summation order differs


def test_reduction_carried_across_k_loop():
    a = bf16(M, 256, seed=11)
    out, _ = run(K.row_sum_over_k(M, 256, 32, 64), a)
    assert_close(out, a.float().sum(1, keepdim=True), 2.0 ** -12)


def test_softmax():
    x = bf16(M, N, seed=12)
    out, _ = run(K.softmax(M, N, 32), x)
    assert_close(out, torch.softmax(x.float(), dim=1), 2.0 ** -7)


def test_rmsnorm():
    x, w = bf16(M, N, seed=13), bf16(N, seed=14)
    out, _ = run(K.rmsnorm(M, N, 32), x, w)
    ref = x.float() * torch.rsqrt(x.float().pow(2).mean(1, keepdim=True) + 1e-6) * w.float()
    assert_close(out, ref, 2.0 ** -7)


def test_layernorm():
    x, g, b = bf16(M, N, seed=15), bf16(N, seed=16), bf16(N, seed=17)
    out, _ = run(K.layernorm(M, N, 32), x, g, b)
    ref = torch.nn.functional.layer_norm(x.float(), (N,), g.float(), b.float(), 1e-5)
    assert_close(out, ref, 2.0 ** -6)


def test_gemm_bias_relu():
    a, b, bias = bf16(64, 96, seed=18), bf16(96, 128, seed=19), bf16(128, seed=20)
    out, _ = run(K.gemm_bias_relu(64, 128, 96, 32, 64, 32), a, b, bias)
    assert_close(out, torch.relu(a.float() @ b.float() + bias.float()), 2.0 ** -7)


@pytest.mark.parametrize("seq_len,dim", [(256, 64), (512, 128), (1024, 64)])
def test_flash_attention(seq_len, dim):
    q, k, v = (bf16(seq_len, dim, seed=s) for s in (21, 22, 23))
    out, _ = run(K.flash_attention(seq_len, dim), q, k, v)
    ref = torch.softmax(q.float() @ k.float().T / dim ** 0.5, dim=1) @ v.float()
    assert_close(out, ref, 2.0 ** -6)


def test_dst_budget_processes_full_acquires():
    """An element-wise block larger than DST is processed in acquires of the full budget."""
    a, b = bf16(128, 256, seed=24), bf16(128, 256, seed=25)
    out, artifacts = run(K.relu_add(128, 256, 128, 256), a, b)
    assert_close(out, torch.relu(a.float() + b.float()), 2.0 ** -7)
    totals = artifacts.last_counters["total"]
    assert totals["dst_acquires"] == (128 * 256 // 1024) // 8  # bf16 half-sync budget: 8 tiles per acquire
