"""Issue 4's op breadth: each kernel runs on the emulator and matches torch.

Tolerances: outputs are bfloat16 unless stated (half an ulp: 2^-8 relative); SFPU transcendental
ops (GELU and erf too) are compared at 2^-6 relative to the output range (the emulator evaluates
them in fp32 and rounds on pack, as an exact SFPU would; hardware approximations differ by more,
not modelled).
"""

import re

import pytest
import torch

import tilelang_tt
from tests import kernels
from tests import op_kernels as K
from tilelang_tt.contract.kernels import ComputeConfig

M, N = 64, 128


def bf16(*shape, seed, positive=False):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=g)
    return (x.abs() + 0.5 if positive else x).to(torch.bfloat16)


def run(kernel, *inputs, **options):
    artifacts = tilelang_tt.compile(kernel, **options)
    return torch.as_tensor(artifacts.run(*inputs)).float(), artifacts


def run_all(kernel, *inputs, **options):
    """:func:`run` for a kernel with several outputs: (the outputs as float tensors, artifacts)."""
    artifacts = tilelang_tt.compile(kernel, **options)
    return tuple(torch.as_tensor(o).float() for o in artifacts.run(*inputs)), artifacts


def assert_close(out, ref, rel):
    scale = max(ref.abs().max().item(), 1.0)
    err = (out - ref).abs().max().item()
    assert err <= rel * scale, f"max |error| {err} > {rel} * {scale}"


UNARY_REF = {
    "exp": torch.exp, "exp2": torch.exp2, "log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
    "sigmoid": torch.sigmoid, "tanh": torch.tanh, "abs": torch.abs, "relu": torch.relu, "neg": torch.neg,
    "square": torch.square, "reciprocal": torch.reciprocal, "scale": lambda x: x * 0.25, "shift": lambda x: x + 1.5,
    "erf": torch.erf, "gelu": torch.nn.functional.gelu, "gelu_div": torch.nn.functional.gelu,
    "gelu_tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
    "log1p": torch.log1p, "log2": torch.log2, "log10": torch.log10, "sin": torch.sin, "cos": torch.cos,
    "tan": torch.tan, "pow_const": lambda x: torch.pow(x, 2.0), "pow_frac": lambda x: torch.pow(x, 0.75),
    "fmod_const": lambda x: torch.fmod(x, 0.75),
    "exp10": lambda x: torch.pow(10.0, x), "sinh": torch.sinh, "cosh": torch.cosh,
    "hypot": lambda x: torch.hypot(x, x * 0.5), "clamp": lambda x: x.clamp(-0.5, 0.75),
    "silu": torch.nn.functional.silu, "silu_exp": torch.nn.functional.silu, "mish": torch.nn.functional.mish,
}
POSITIVE = {"log", "sqrt", "rsqrt", "reciprocal", "log1p", "log2", "log10", "pow_frac"}
# Rounding to integers: exact (the results are small integers, exact in bfloat16); T.round and
# T.nearbyint are round_tile: half to even, as torch.round (and TVM's LLVM lowering of round).
ROUNDING_REF = {"floor": torch.floor, "ceil": torch.ceil, "trunc": torch.trunc, "round": torch.round,
                "nearbyint": torch.round}


@pytest.mark.parametrize("op", sorted(UNARY_REF))
def test_unary(op):
    x = bf16(M, N, seed=1, positive=op in POSITIVE)
    out, _ = run(K.unary(op, M, N, 32, 64), x)
    assert_close(out, UNARY_REF[op](x.float()), 2.0 ** -6)


@pytest.mark.parametrize("op", sorted(ROUNDING_REF))
def test_rounding(op):
    """Every quarter in [-4, 4) (the halves are the ties), and random values: exact."""
    quarters = (torch.arange(M * N) % 32 - 16).float() / 4
    x = torch.where(torch.arange(M * N) % 2 == 0, quarters, bf16(M * N, seed=29).float() * 3).reshape(M, N)
    x = x.to(torch.bfloat16)
    out, _ = run(K.unary(op, M, N, 32, 64), x)
    assert torch.equal(out, ROUNDING_REF[op](x.float()))


@pytest.mark.parametrize("op", ["gelu", "gelu_div"])
def test_exact_gelu_is_one_sfpu_op(op):
    """0.5 * x * (1 + erf(x / sqrt(2))), however its products associate, is one precise gelu_tile."""
    compute = tilelang_tt.compile(K.unary(op, M, N, 32, 64)).sources["compute.cpp"]
    assert "gelu_tile_init<false>();" in compute and re.search(r"gelu_tile<false>\(t(_\d+)?\);", compute)
    assert "erf_tile" not in compute and "mul_unary_tile" not in compute


@pytest.mark.parametrize("op,ref", [("maximum", torch.maximum), ("minimum", torch.minimum),
                                    ("div", torch.div), ("fmod", torch.fmod)])
def test_binary_sfpu(op, ref):
    a, b = bf16(M, N, seed=2), bf16(M, N, seed=3, positive=op in ("div", "fmod"))
    out, _ = run(K.binary(op, M, N, 32, 64), a, b)
    assert_close(out, ref(a.float(), b.float()), 2.0 ** -7)


def test_pow_of_two_blocks():
    """T.pow(a, b) of a non-constant exponent: power_binary_tile (TVM's pow takes float32 only); fp32
    output, so the bound is the fp32 rounding of the emulator's pow (a few ulps)."""
    a, b = bf16(M, N, seed=2, positive=True).float(), bf16(M, N, seed=3).float()
    out, artifacts = run(K.binary("pow", M, N, 32, 64, dtype="float32"), a, b)
    assert "power_binary_tile(" in artifacts.sources["compute.cpp"]
    ref = torch.pow(a.double(), b.double())
    assert ((out.double() - ref).abs() <= 2.0 ** -20 * ref.abs()).all()


def test_fused_chains_in_one_compute_kernel():
    a, b, c = (bf16(M, N, seed=s) for s in (4, 5, 6))
    out, artifacts = run(K.fma(M, N, 32, 64), a, b, c)
    assert_close(out, a.float() * b.float() + c.float(), 2.0 ** -7)
    # a*b+c stays in DST: no intermediate CB between the multiply and the add
    assert sorted(cb.name for cb in artifacts.plan.cbs) == ["A_s", "B_s", "C_s", "D_l"]
    out, _ = run(K.relu_add(M, N, 32, 64), a, b)
    assert_close(out, torch.relu(a.float() + b.float()), 2.0 ** -7)


@pytest.mark.parametrize("kind,value,call", [
    ("row", None, "mul_tiles_bcast_rows(cb_A_s, cb_v_s"),  # A[i, j] * v[j]: one broadcasting FPU op
    ("row", lambda a, v: v + a, "add_tiles_bcast_rows(cb_A_s, cb_v_s"),  # v + A = A + v
    ("col", None, "sub_tiles_bcast_cols(cb_A_s, cb_v_s"),  # A[i, j] - v[i]
    ("col", K.SFPU_BROADCAST["v - a"], "sub_binary_tile("),  # the FPU spreads its second operand only
    ("row", K.SFPU_BROADCAST["(a + 1) * v"], "mul_binary_tile("),  # an operand computed in DST
    ("scalar", None, "mul_unary_tile(")])
def test_broadcast(kind, value, call):
    a = bf16(M, N, seed=7)
    if kind == "scalar":
        out, artifacts = run(K.broadcast(kind, M, N, 32, 64), a)
        ref = a.float() * 3.0 - 0.5
    else:
        v = bf16(N, seed=8) if kind == "row" else bf16(M, 1, seed=8)
        out, artifacts = run(K.broadcast(kind, M, N, 32, 64, value=value), a, v)
        ref = (value or {"row": lambda a, v: a * v, "col": lambda a, v: a - v}[kind])(a.float(), v.float())
    assert_close(out, ref, 2.0 ** -7)
    assert call in artifacts.get_source("compute")


def test_dead_store_in_a_loop():
    """The first value of C_l is never read: compute still waits for it before popping it."""
    a = torch.randn(64, 192, generator=torch.Generator().manual_seed(30))
    out, _ = run(K.overwritten_in_loop(64, 192, 32, 64), a)
    assert torch.equal(out, a + 1.0)  # fp32 throughout: the one rounding torch does too


def test_integer_compute_other_than_int32_is_a_compile_error():
    """DST computes on floats and on int32 (tests/compiler/test_integer.py): uint32 blocks are refused."""
    with pytest.raises(tilelang_tt.TTCompileError, match=r"unsupported compute on `C_l` \(uint32\)") as info:
        tilelang_tt.compile(K.binary("maximum", M, N, 32, 64, dtype="uint32"))
    assert info.value.pass_name == "LowerTTTileIntrinsics" and info.value.location is not None


def test_cast_bf16_to_fp32_is_exact():
    a = bf16(M, N, seed=9)
    out, _ = run(K.cast(M, N, 32, 64), a)
    assert torch.equal(out, a.float())


def test_cast_fp32_to_bf16_rounds_to_nearest_even():
    a = torch.randn(M, N, generator=torch.Generator().manual_seed(26))
    artifacts = tilelang_tt.compile(K.cast(M, N, 32, 64, src="float32", dst="bfloat16"))
    out = artifacts.run(a)
    assert out.dtype == torch.bfloat16 and torch.equal(out, a.to(torch.bfloat16))  # torch rounds RNE too


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


@pytest.mark.parametrize("kind,dim", [("sum", 1), ("max", 1), ("sum", 0), ("max", 0)])
def test_reduction_carried_across_k_loop(kind, dim):
    """Row and column sums and maxima accumulated over a pipelined loop (clear=False)."""
    a = bf16(128, 256, seed=11)
    out, _ = run(K.reduce_over_k(kind, dim, 128, 256, 32, 64), a)
    if kind == "max":
        assert torch.equal(out, a.float().amax(dim, keepdim=True))  # exact: max of bf16 values
    else:
        assert_close(out, a.float().sum(dim, keepdim=True), 2.0 ** -12)  # fp32: summation order only


def test_exp_minus_row_max():
    x = bf16(M, N, seed=27)
    out, _ = run(K.exp_minus_row_max(M, N, 32), x)
    assert_close(out, torch.exp(x.float() - x.float().amax(1, keepdim=True)), 2.0 ** -7)  # values in (0, 1]


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


@pytest.mark.parametrize("M,N,Kd,grid", [(64, 64, 64, None), (96, 128, 160, (2, 2)), (70, 40, 50, (2, 1))])
def test_gemm_transpose_a(M, N, Kd, grid):
    """C = A^T B: compute transposes each A block's tiles (transpose_tile) before the gemm; the reader
    moves exactly the bytes of the straight form C = A B with A stored (M, K)."""
    a, b = bf16(Kd, M, seed=64), bf16(Kd, N, seed=65)
    options = {"grid": grid} if grid else {}
    out, artifacts = run(K.gemm_transpose_a(M, N, Kd, 32, 32, 32), a, b, **options)
    assert_close(out, a.float().T @ b.float(), 2.0 ** -7)
    assert "transpose_tile(" in artifacts.get_source("compute")
    _, straight = run(kernels.gemm(M, N, Kd, 32, 32, 32), a.T.contiguous(), b, **options)
    read = [x.last_counters["total"]["dram_bytes_read"] for x in (artifacts, straight)]
    assert read[0] == read[1]


def test_a_block_read_transposed_in_t_parallel():
    for m, n in [(64, 64), (64, 96)]:
        g = torch.Generator().manual_seed(m + n)
        a = torch.randn(n, m, generator=g)
        out, artifacts = run(K.transposed_read(m, n), a)
        assert torch.equal(out, a.T * 2 + 1)
        assert "transpose_init(" in artifacts.get_source("compute")


@pytest.mark.parametrize("src,dst", [("float32", "bfloat16"), ("bfloat16", "bfloat16")])
def test_copy_between_global_tensors_goes_through_blocks(src, dst):
    g = torch.Generator().manual_seed(66)
    a = torch.randn(2, 96, 64, generator=g).to(getattr(torch, src))
    out, artifacts = run(kernels.global_copy(96, 64, 32, src, dst), a, grid=(2, 2))
    assert torch.equal(out, a.to(getattr(torch, dst)).float())  # one RNE rounding when it casts
    assert ("copy_tile(" in artifacts.get_source("compute")) == (src != dst)


@pytest.mark.parametrize("dtype,grid", [("bfloat16", None), ("float32", (2, 2))])
def test_selection_between_block_values_on_the_indices(dtype, grid):
    """T.if_then_else(index condition, A * 2, B - 1): the reader generates the mask, compute selects
    with where_tile<DataFormat of DST>; exact but for the one rounding of each branch in bfloat16."""
    g = torch.Generator().manual_seed(67)
    a, b = (torch.randn(64, 96, generator=g).to(getattr(torch, dtype)) for _ in range(2))
    out, artifacts = run(K.select_by_index(64, 96, 32, 32, dtype), a, b, **({"grid": grid} if grid else {}))
    rows, cols = torch.arange(64)[:, None], torch.arange(96)[None, :]
    expected = torch.where(rows >= cols, a.float() * 2, (b.float() - 1).to(getattr(torch, dtype)).float())
    assert torch.equal(out, expected)
    fmt = "Float32" if artifacts.plan.kernel("compute").config.fp32_dest_acc_en else "Float16_b"
    assert f"where_tile<DataFormat::{fmt}>(" in artifacts.get_source("compute")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_selections_and_values_of_comparisons_of_blocks(dtype):
    """Compute makes the masks: unary_eq_tile(x, bits of -inf), (a - b) > 0 with gtz_tile, and
    unary_gt_tile for 0.5 < a; where_tile selects. Exact, but for the roundings of b + 1 and of the sum
    in bfloat16."""
    g = torch.Generator().manual_seed(68)
    a, b = (torch.randn(64, 64, generator=g).to(getattr(torch, dtype)) for _ in range(2))
    a[0, :5] = -float("inf")
    (c, d), artifacts = run_all(K.select_on_values(64, 64, dtype), a, b)
    plus_one = (b.float() + 1).to(getattr(torch, dtype)).float()
    assert torch.equal(c, torch.where(a == -float("inf"), 0.0, a.float() * 2))
    chosen = torch.where(a > b, a.float(), plus_one) + (a.float() > 0.5).float()
    assert torch.equal(d, chosen.to(getattr(torch, dtype)).float())  # the sum rounded once more in bfloat16
    compute = artifacts.get_source("compute")
    assert "unary_eq_tile(" in compute and "gtz_tile(" in compute and "unary_gt_tile(" in compute


def test_a_comparison_of_a_selection_on_values():
    """(A > B ? A : B) > 0.5: the selection inside the comparison becomes a mask and where_tile as anywhere else."""
    g = torch.Generator().manual_seed(70)
    a, b = torch.randn(64, 64, generator=g), torch.randn(64, 64, generator=g)
    out, artifacts = run(K.binary("max_above_half", 64, 64, 32, 32, dtype="float32"), a, b)
    assert torch.equal(out, (torch.maximum(a, b) > 0.5).float())
    assert "where_tile" in artifacts.get_source("compute")


def test_a_cast_to_bfloat16_inside_a_float32_value_rounds():
    """float32(bfloat16(A * B)) + B: the product is rounded to bfloat16 where the value casts it, as TIR
    does (typecast_tile in the 32-bit DST), not carried at float32; the stored value's own cast is the
    packer's."""
    g = torch.Generator().manual_seed(71)
    a, b = torch.randn(64, 64, generator=g), torch.randn(64, 64, generator=g)
    out, artifacts = run(K.binary("rounded_product", 64, 64, 32, 32, dtype="float32"), a, b)
    assert torch.equal(out, (a * b).bfloat16().float() + b)
    assert not torch.equal(out, a * b + b)
    assert artifacts.get_source("compute").count("typecast_tile<") == 1


@pytest.mark.parametrize("op", sorted(K.COMPARISONS))
@pytest.mark.parametrize("with_block", [False, True])
def test_comparisons(op, with_block):
    """A <op> 0.25 (unary_<op>_tile) and A <op> B ((A - B), <op>z_tile) as values: exactly 1.0 or 0.0;
    ties included (B holds A's values in its first rows, A holds 0.25 in its first column)."""
    g = torch.Generator().manual_seed(69)
    a, b = torch.randn(64, 128, generator=g), torch.randn(64, 128, generator=g)
    a[:, 0] = 0.25
    b[:8] = a[:8]
    out, _ = run(K.compare(op, 64, 128, 32, 64, with_block), *((a, b) if with_block else (a,)))
    assert torch.equal(out, K.COMPARISONS[op](a, b if with_block else torch.tensor(0.25)).float())


def test_gemm_with_clear_accum_starts_afresh_in_every_key_block():
    """DeepSeek MLA's scores: T.gemm(.., clear_accum=True) then a second gemm into the same block,
    per key block; the sum over the blocks shows a clear that happened once would be wrong."""
    q, qp, k, kp = bf16(64, 64, seed=60), bf16(64, 32, seed=61), bf16(96, 64, seed=62), bf16(96, 32, seed=63)
    out, artifacts = run(K.gemm_clear_accum(64, 96, 64, 32), q, qp, k, kp)
    scores = q.float() @ k.float().T + qp.float() @ kp.float().T  # (64, 96): three key blocks of 32
    assert_close(out, scores.reshape(64, 3, 32).sum(1), 2.0 ** -10)
    compute = artifacts.get_source("compute")
    assert compute.count("tile_regs_acquire") >= 2  # the scores start in a fresh DST every key block


@pytest.mark.parametrize("kind", ["rescale", "scaled_a"])
def test_gemm_with_compute_between_k_steps(kind):
    """A K loop that rescales the accumulator, or computes the gemm's A block, between steps: the
    accumulator cannot stay in DST across the loop, so every gemm reloads it (was: the other
    compute silently dropped)."""
    a, b = bf16(64, 128, seed=31), bf16(128, 96, seed=32)
    out, _ = run(K.gemm_with_loop_compute(kind, 64, 96, 128, 32, 32, 32), a, b)
    ref = torch.zeros(64, 96, dtype=torch.float64)
    for k in range(4):
        step = a.double()[:, 32 * k:32 * k + 32] @ b.double()[32 * k:32 * k + 32]
        ref = ref * 0.5 + step if kind == "rescale" else ref + 2 * step
    # fp32 accumulation in DST and fp32 output: K * 2^-24 of the magnitudes summed (scaled by <= 2)
    bound = 128 * 2.0 ** -24 * 2 * (a.double().abs() @ b.double().abs())
    assert ((out.double() - ref).abs() <= bound).all()


@pytest.mark.parametrize("kind", ["two_gemms", "plain"])
def test_partial_sums_beyond_dst(kind):
    """A 128x128 fp32 C block (16 tiles: sub-blocks) over 4 K steps. One gemm into C per step: the
    packer accumulates the partial sums in C's CB (pack_reconfig_l1_acc) over the middle steps, and the
    last step reloads them once (copy_tile) and packs the result into the writer's CB; two gemms
    (C = 2 A B): the partial sums round-trip through DST (copy_tile)."""
    a, b = bf16(128, 128, seed=33), bf16(128, 128, seed=34)
    func = (K.gemm_with_loop_compute("two_gemms", 128, 128, 128, 128, 128, 32) if kind == "two_gemms" else
            kernels.gemm(128, 128, 128, 128, 128, 32))
    out, artifacts = run(func, a, b)
    factor = 2 if kind == "two_gemms" else 1
    assert_close(out.float(), factor * (a.float() @ b.float()), 2.0 ** -8)
    compute = artifacts.get_source("compute")
    if kind == "plain":
        k_step = compute.split("pack_reconfig_l1_acc((0 < k) && (k < 3));")[1].split("pack_reconfig_l1_acc(0);")[0]
        reload = k_step.split("if (k == 3) {")[1].split("}")[0]
        assert "matmul_block(" in k_step and compute.count("copy_tile(") == 1 and "copy_tile(" in reload
    else:
        assert "pack_reconfig_l1_acc" not in compute and "copy_tile" in compute


@pytest.mark.parametrize("batch,heads,seq_len,dim", [(1, 1, 256, 64), (1, 1, 1024, 64), (1, 1, 256, 128),
                                                     (1, 1, 512, 128), (1, 1, 1024, 128), (2, 3, 128, 64)])
def test_flash_attention(batch, heads, seq_len, dim):
    """Multi-head attention with a (seq blocks, heads, batch) grid: the batch dimension of the grid
    is folded into its rows, every (batch, head) reads its own matrices."""
    q, k, v = (bf16(batch, heads, seq_len, dim, seed=s) for s in (21, 22, 23))
    # one row of query blocks over two core rows: K/V multicast to all (multicast="auto" shares only V there,
    # tests/passes/test_pass_choose_multicast_tt.py)
    one_row = batch * heads == 1 and seq_len // 64 > 8
    out, artifacts = run(K.flash_attention(seq_len, dim, batch=batch, heads=heads), q, k, v,
                         **({"multicast": "on"} if one_row else {}))
    ref = torch.softmax(q.float() @ k.float().transpose(-1, -2) / dim ** 0.5, dim=-1) @ v.float()
    assert_close(out, ref, 2.0 ** -6)
    assert artifacts.plan.block_grid == (batch * heads, seq_len // 64)
    if one_row:
        assert {(d.cb, d.axis) for d in artifacts.plan.multicast} == {("K_s", "xy"), ("V_s", "xy")}
        assert artifacts.last_counters["total"]["dram_bytes_read"] == 3 * q.numel() * 2  # Q, K, V once each


def test_causal_flash_attention_balances_the_cores():
    """2 heads of 8 query blocks (32 rows) on 2x2 cores: query block bx walks bx + 1 K/V blocks, so
    auto deals the blocks in zigzag (each core: two light and two heavy); the result is right, and the
    busiest core's math is well below what consecutive blocks would give it."""
    heads, seq_len, dim = 2, 256, 64
    q, k, v = (bf16(1, heads, seq_len, dim, seed=s) for s in (34, 35, 36))
    kernel = K.flash_attention(seq_len, dim, heads=heads, bm=32, bn=32, causal=True)
    out, artifacts = run(kernel, q, k, v, grid=(2, 2))
    scores = q.float() @ k.float().transpose(-1, -2) / dim ** 0.5
    future = torch.ones(seq_len, seq_len).triu(1).bool()
    ref = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1) @ v.float()
    assert_close(out, ref, 2.0 ** -6)
    assert artifacts.plan.work_policy.policy == "zigzag"

    def busiest_math(counters):
        return max(core["math"]["busy"] for core in counters["timing"]["cores"])

    zigzag = busiest_math(artifacts.last_counters)
    _, contiguous = run(kernel, q, k, v, grid=(2, 2), partition="contiguous")
    assert zigzag < 0.8 * busiest_math(contiguous.last_counters)


@pytest.mark.parametrize("heads,seq_len,dim", [(2, 128, 64), (1, 256, 128)])
def test_causal_flash_attention(heads, seq_len, dim):
    """TileLang's causal form: the scores of each K/V block start from the mask
    T.if_then_else(bx * bm + i >= k * bn + j, 0, -inf), which the reader generates, and the K/V
    loop of query block bx stops after block bx."""
    q, k, v = (bf16(1, heads, seq_len, dim, seed=s) for s in (31, 32, 33))
    out, artifacts = run(K.flash_attention(seq_len, dim, heads=heads, causal=True), q, k, v)
    scores = q.float() @ k.float().transpose(-1, -2) / dim ** 0.5
    future = torch.ones(seq_len, seq_len).triu(1).bool()
    ref = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1) @ v.float()
    assert_close(out, ref, 2.0 ** -6)
    (generated,) = [cb for cb in artifacts.plan.cbs if cb.name == "acc_s_gen"]
    assert (generated.producer, generated.data_format) == ("reader", "Float32")
    # Q once; K and V blocks 0..bx for query block bx (64-row blocks): a triangle, read by the core itself
    blocks = seq_len // 64
    block_bytes = 64 * dim * 2
    assert artifacts.plan.multicast == ()
    assert artifacts.last_counters["total"]["dram_bytes_read"] == heads * (
        seq_len * dim * 2 + 2 * block_bytes * blocks * (blocks + 1) // 2)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_values_of_the_indices(dtype):
    """A mask over global indices and a ramp over the block's own, both generated by the reader
    (bfloat16 rounded to nearest even): -inf exactly where masked, the rest to one rounding."""
    M, N, bm = 64, 96, 32
    a = bf16(M, N, seed=34).to(getattr(torch, dtype))
    out, _ = run(K.shifted_causal(M, N, bm, dtype), a)
    rows, cols = torch.arange(M)[:, None], torch.arange(N)[None, :]
    ref = a.double() + torch.where(rows >= cols, 0.0, float("-inf")) + (cols - rows % bm).double() * 0.5
    assert torch.equal(torch.isinf(out), torch.isinf(ref)) and (out[torch.isinf(out)] < 0).all()
    finite = torch.isfinite(ref)
    rel = 2.0 ** -7 if dtype == "bfloat16" else 2.0 ** -20  # two bf16 roundings (ramp, result), or fp32
    assert ((out.double() - ref)[finite].abs() <= rel * ref[finite].abs() + 1e-6).all()


def test_block_read_then_updated_in_place():
    """X_s[i, j] *= s[i] on the block the reader filled: the update writes a block of its own
    (X_s_v, handed to the writer), the reader's CB is never written by compute; no CB is left
    without a consumer."""
    x = bf16(64, 256, seed=35).float()
    out, artifacts = run(K.rmsnorm_split(64, 256, 32, 64), x)
    # the row sums of squares run on the FPU (reduce_tile), which reads the float32 block from SrcA truncated
    # to TF32 (tt-isa-documentation UNPACR_Regular.md: DatumBits >> 13): 2^-10 relative in the sum, 2^-11
    # after rsqrt
    assert_close(out, x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6), 2.0 ** -10)
    roles = {cb.name: (cb.producer, cb.consumer, cb.buffer) for cb in artifacts.plan.cbs}
    assert roles["X_s"] == ("reader", "compute", "X") and all(consumer for _, consumer, _ in roles.values())
    # the update packs straight into the writer's hand-off CB: X_s_v needs no CB of its own
    assert roles["X_s_v_out"] == ("compute", "writer", "Y") and "X_s_v" not in roles


def test_dst_budget_processes_full_acquires():
    """An element-wise block larger than DST is processed in acquires of the full budget."""
    a, b = bf16(128, 256, seed=24), bf16(128, 256, seed=25)
    out, artifacts = run(K.relu_add(128, 256, 128, 256), a, b)
    assert_close(out, torch.relu(a.float() + b.float()), 2.0 ** -7)
    totals = artifacts.last_counters["total"]
    assert totals["dst_acquires"] == (128 * 256 // 1024) // 8  # bf16 half-sync budget: 8 tiles per acquire
    assert compute_config(artifacts).fp32_dest_acc_en is False


def compute_config(artifacts) -> ComputeConfig:
    return artifacts.plan.kernel("compute").config


def test_fp32_blocks_use_the_fp32_dst_budget():
    """Float32 blocks enable fp32 DST accumulation, which halves DST: 4 registers per acquire. a + b of
    float32 blocks runs on the SFPU (the FPU would read TF32), a and b copied to DST whole
    (UnpackToDestFp32): two registers a tile, two tiles per acquire."""
    a, b = (torch.randn(64, 256, generator=torch.Generator().manual_seed(s)) for s in (28, 29))
    out, artifacts = run(K.relu_add(64, 256, 64, 256, dtype="float32"), a, b)
    assert torch.equal(out, torch.relu(a + b))  # fp32 throughout: one fp32 rounding, as torch
    assert compute_config(artifacts).fp32_dest_acc_en is True
    assert artifacts.last_counters["total"]["dst_acquires"] == (64 * 256 // 1024) // 2


def test_deep_operand_first_fits_the_dst_budget():
    """Registers are allocated deeper operand first: a right-nested chain needs 2 of the 4 fp32 DST
    tiles per output tile, so a 4-tile block takes 2 acquires (left to right it needed 6: refused)."""
    a, b = (torch.randn(64, 128, generator=torch.Generator().manual_seed(s)) for s in (33, 34))
    out, artifacts = run(K.right_nested(64, 128, 32, 128), a, b)
    ref = a - (b - (a - (b - (a - torch.exp(b)))))
    assert_close(out, ref, 2.0 ** -20)  # fp32 DST and output: a few fp32 roundings
    assert artifacts.last_counters["total"]["dst_acquires"] == (64 * 128 // 1024) // 2


def test_fp32_accumulator_enables_fp32_dest_acc():
    artifacts = tilelang_tt.compile(K.gemm_bias_relu(64, 128, 96, 32, 64, 32))  # bf16 operands, fp32 C_l
    assert compute_config(artifacts).fp32_dest_acc_en is True



def test_a_block_whose_every_use_folds_away_is_not_read():
    """0.0 * A folds away (TVM's parser): the copy into A's block is dead and goes with its CB; only B is read."""
    g = torch.Generator().manual_seed(90)
    a, b = (torch.randn(64, 96, generator=g).to(torch.bfloat16) for _ in range(2))
    out, artifacts = run(K.binary("dead_a", 64, 96, 32, 32), a, b, grid=(2, 2))
    assert torch.equal(out, b.float())
    assert "A_s" not in {cb.name for cb in artifacts.plan.cbs}
    assert artifacts.last_counters["total"]["dram_bytes_read"] == b.numel() * 2


def test_a_dead_multicast_block_leaves_the_others_numbered():
    """The bias row's block, multicast along the core columns, is never used (0.0 * bias): its multicast goes and
    A's and B's keep semaphores 0 to 3 (Plan.from_json checks they are numbered in order)."""
    g = torch.Generator().manual_seed(91)
    a, b, bias = (torch.randn(*shape, generator=g).to(torch.bfloat16) for shape in ((64, 64), (64, 64), (64,)))
    out, artifacts = run(K.gemm_bias_relu(64, 64, 64, 32, 32, 32, epilogue=lambda acc, bias: acc + 0.0 * bias),
                         a, b, bias, grid=(2, 2), partition="block", multicast="on")
    assert_close(out, (a.float() @ b.float()).bfloat16().float(), 2.0 ** -7)
    assert sorted(m.cb for m in artifacts.plan.multicast) == ["A_s", "B_s"]
    assert sorted(s.id for s in artifacts.plan.semaphores) == [0, 1, 2, 3]


def test_a_dead_gemm_accumulator_is_not_computed():
    """0.0 * (A @ B) + bias: the accumulator, its clear and its gemms go, and so do A's and B's reads."""
    g = torch.Generator().manual_seed(92)
    a, b, bias = (torch.randn(*shape, generator=g).to(torch.bfloat16) for shape in ((64, 64), (64, 64), (64,)))
    out, artifacts = run(K.gemm_bias_relu(64, 64, 64, 32, 32, 32, epilogue=lambda acc, bias: 0.0 * acc + bias,
                                          separate=True), a, b, bias)
    assert torch.equal(out, bias.float().expand(64, 64))
    assert {cb.name for cb in artifacts.plan.cbs} == {"bias_s", "D_l"}
    assert "matmul" not in artifacts.get_source("compute")


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("kind,clear,scaled", [("max", True, False), ("sum", True, True), ("max", False, False),
                                               ("sum", False, False)])
def test_a_reduction_along_an_extent_of_one_is_each_element(kind, dim, clear, scaled):
    """T.reduce_* of a [32, 1] block along dim 1 or a [1, 32] one along dim 0: each result is its one element
    (combined with the old value without clear), through a shared block (TileLang's reduce copies it into a
    fragment) or of a fragment a T.Parallel over the block's shape computed."""
    shape = (32, 1) if dim == 1 else (1, 32)
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(93))
    out, artifacts = run(K.reduce_unit(kind, dim, 32, clear, scaled), x)
    value = 2 * x if scaled else x
    if not clear:
        value = torch.maximum(value, torch.tensor(0.25)) if kind == "max" else value + 0.25
    assert torch.equal(out, value)
    assert "reduce_tile" not in artifacts.get_source("compute")
