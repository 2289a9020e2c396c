"""TileLang and TVM entry points with target="tenstorrent": lower, compile (JIT), tvm.build."""

from __future__ import annotations

import numpy as np
import pytest
import tilelang
import tilelang_tt
import torch
import tvm
from tilelang.engine.param import CompiledArtifact

from tests.kernels import eltwise
from tilelang_tt.artifacts import Artifacts
from tilelang_tt.backend import TenstorrentKernel, artifacts_of, bundle, unbundle
from tilelang_tt.errors import TTCompileError

M, N = 64, 96


@pytest.fixture(scope="module")
def add():
    return eltwise("add", M, N, 32, 32)


@pytest.fixture(scope="module")
def reference(add):
    return tilelang_tt.compile(add)


def test_lower_routes_to_the_tt_pipeline(add, reference):
    compiled = tilelang.lower(add, target="tenstorrent")
    assert isinstance(compiled, CompiledArtifact)
    assert "tilelang-tt: main/compute.cpp" in compiled.kernel_source
    artifacts = artifacts_of(compiled)
    assert artifacts.sources == reference.sources
    assert artifacts.plan == reference.plan


def test_lower_for_blackhole(add):
    assert artifacts_of(tilelang.lower(add, target="tenstorrent/blackhole")).plan.arch.name == "blackhole"


def test_tvm_build_default_pipeline(add, reference):
    with pytest.warns(DeprecationWarning):
        module = tvm.build(add, target="tenstorrent")
    assert artifacts_of(module).sources == reference.sources


def test_tirx_build_named_pipeline(add, reference):
    module = tvm.tirx.build(add, target="tenstorrent", pipeline="tenstorrent")
    assert artifacts_of(module).sources == reference.sources


def test_tvm_build_for_other_targets_is_unchanged():
    a = tvm.tirx.decl_buffer((4,), "float32", name="A")
    i = tvm.tirx.Var("i", "int32")
    body = tvm.tirx.For(i, 0, 4, tvm.tirx.ForKind.SERIAL, tvm.tirx.BufferStore(a, tvm.tirx.FloatImm("float32", 1.0), [i]))
    func = tvm.tirx.PrimFunc([a.data], body, buffer_map={a.data: a}).with_attr("global_symbol", "fill")
    module = tvm.tirx.build(func, target="c")
    assert "fill" in module.inspect_source()


def test_bundle_round_trips(reference):
    text = bundle({"main": reference, "other": reference})
    back = unbundle(text)
    assert back["main"].sources == reference.sources and back["other"].plan == reference.plan
    with pytest.raises(ValueError, match="kernel=<name>"):
        artifacts_of(text)
    assert artifacts_of(text, kernel="other").sources == reference.sources


def _fake_run(calls):
    """Stands in for the emulator: C = A + B, returned like Artifacts.run returns outputs."""

    def run(self, *tensors, device):
        calls.append((len(tensors), device))
        a, b = (t.float() for t in tensors[:2])
        return (a + b).to(tensors[0].dtype)

    return run


def test_compile_returns_a_callable_kernel(add, monkeypatch):
    kernel = tilelang.compile(add, out_idx=[-1], target="tenstorrent")
    assert isinstance(kernel, TenstorrentKernel)
    assert "add_tiles" in kernel.get_kernel_source()
    calls = []
    monkeypatch.setattr(Artifacts, "run", _fake_run(calls))
    a = torch.ones(M, N, dtype=torch.bfloat16)
    b = torch.full((M, N), 2.0, dtype=torch.bfloat16)
    c = kernel(a, b)
    assert calls == [(3, "emulator")]
    assert c.shape == (M, N) and c.dtype == torch.bfloat16 and torch.all(c == 3)

    out = torch.zeros(M, N, dtype=torch.bfloat16)
    assert kernel(a, b, out) is out  # every parameter passed: the output is written in place
    assert torch.all(out == 3)
    kernel(a, b, device="tt")
    assert calls[-1] == (3, "tt")  # the device reaches Artifacts.run
    with pytest.raises(TypeError, match=r"takes 3 tensors \(A, B, C\), or 2 without the outputs out_idx=\[2\]"):
        kernel(a)


def test_compile_rejects_bad_out_idx(add):
    with pytest.raises(TTCompileError, match="out_idx"):
        tilelang.compile(add, out_idx=[5], target="tenstorrent")


def test_jit_decorator_runs_on_the_emulator():
    @tilelang.jit(out_idx=[-1], target="tenstorrent")
    def add_kernel(M, N):
        return eltwise("add", M, N, 32, 32)

    a = torch.randn(M, N, dtype=torch.bfloat16)
    b = torch.randn(M, N, dtype=torch.bfloat16)
    c = add_kernel(M, N)(a, b)
    np.testing.assert_allclose(c.float().numpy(), (a.float() + b.float()).numpy(), atol=0.07)
