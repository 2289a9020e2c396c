"""examples/llama_layer.py at small sizes: seven kernels of one IRModule built with tvm.build for
both architectures, each stage and the whole layer within bfloat16's error of float32 torch, a
predicted time per kernel, and the exported module loaded back computing the same layer."""

import importlib.util
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
# the example builds with tvm.build, as the user did (TVM suggests tvm.compile, which gives the same programs)
pytestmark = pytest.mark.filterwarnings("ignore:build is deprecated:DeprecationWarning")
SMALL = ["--seq", "64", "--hidden", "128", "--heads", "2", "--mlp", "192"]


def llama_layer():
    spec = importlib.util.spec_from_file_location("example_llama_layer", ROOT / "examples" / "llama_layer.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def example():
    return llama_layer()


def test_the_layer_runs_and_matches_float32_torch(example, tmp_path, capsys):
    errors, end_to_end = example.main(SMALL + ["--out", str(tmp_path / "layer")])
    assert set(errors) == {stage for stage, _, _ in example.STAGES}
    # bfloat16 tensors (8 bits of mantissa: 2^-8 = 3.9e-3 relative rounding) with float32 accumulation
    assert max(errors.values()) < 8e-3, errors
    assert end_to_end < 1e-2, end_to_end
    printed = capsys.readouterr().out
    assert (tmp_path / "layer.tenstorrent").is_file()
    assert "loaded back, the same layer output" in printed
    layer_row = next(line for line in printed.splitlines() if line.startswith("layer "))
    wormhole_us, blackhole_us = (float(v) for v in layer_row.split()[-2:])
    assert 0 < blackhole_us < wormhole_us  # Blackhole: more cores, higher clock


def test_the_module_holds_seven_prim_funcs(example):
    mod = example.layer_module(example.LayerSizes(seq=64, hidden=128, heads=2, mlp=192))
    assert sorted(gv.name_hint for gv in mod.get_global_vars()) == sorted(
        {kernel for _, kernel, _ in example.STAGES})
    assert len(mod.get_global_vars()) == 7


def test_the_reference_is_a_llama_layer(example):
    """The float32 reference chained stage by stage equals the layer written in one piece (rotate
    half, causal softmax attention, SwiGLU), so the example checks the kernels against a real layer."""
    sz = example.LayerSizes(seq=32, hidden=128, heads=2, mlp=96)
    w = {name: t.float() for name, t in example.make_weights(sz).items()}
    x = torch.randn(sz.seq, sz.hidden)
    ref = example.torch_stages(sz)
    values = {**w, "x": x}
    for stage, _, inputs in example.STAGES:
        values[stage] = ref[stage](*(values[name] for name in inputs))

    def norm(t, weight):
        return t / (t.pow(2).mean(-1, keepdim=True) + example.EPS).sqrt() * weight

    # the fused projection's columns per head: [q_0 k_0 v_0 | q_1 k_1 v_1 | ...]
    q, k, v = (norm(x, w["w_attn"]) @ w["w_qkv"]).view(sz.seq, sz.heads, 3, sz.head_dim).unbind(2)
    q, k, v = (t.transpose(0, 1) for t in (q, k, v))
    pos = torch.arange(sz.seq)[:, None] * sz.rope_base ** (-torch.arange(0, sz.head_dim, 2) / sz.head_dim)
    cos, sin = torch.cat([pos.cos()] * 2, -1), torch.cat([pos.sin()] * 2, -1)

    def rotate_half(t):
        return torch.cat([-t[..., sz.head_dim // 2:], t[..., : sz.head_dim // 2]], -1)

    q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
    attn = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    h = x + attn.transpose(0, 1).reshape(sz.seq, sz.hidden) @ w["w_o"]
    n = norm(h, w["w_mlp"])
    out = h + (torch.nn.functional.silu(n @ w["w_gate"]) * (n @ w["w_up"])) @ w["w_down"]
    # the tables the kernels read are bfloat16: the reference uses them, so compare loosely
    torch.testing.assert_close(values["down_proj"], out, rtol=0, atol=3e-2 * out.abs().max().item())
