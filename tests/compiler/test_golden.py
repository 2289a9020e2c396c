"""Golden generated sources for the two examples and one representative per op family (reduction,
norm, GEMM epilogue, flash attention, SFPU unary, broadcast, type conversion, row-major tensors,
dynamic sizes, split-K with T.atomic_add, a float scalar parameter):
any change to generated code shows up here.

Regenerate with ``TILELANG_TT_UPDATE_GOLDEN=1 make test`` after reviewing the difference.

Every golden program also runs: the op-family programs as stored here (the golden files loaded as a
program) on the emulator against torch, the two examples' programs against the examples' own
``reference``.
"""

import importlib.util
from pathlib import Path

import pytest
import tilelang.language as T
import torch

from tests.compiler.test_mesh_reduce import FABRIC  # whether the emulator runs a sum across chips
from tests.compiler import test_float_scalars as float_scalars
from tests.compiler.test_ops import assert_close, bf16
from tests.kernels import split_k_gemm
from tilelang_tt import BufferLayout
from tilelang_tt.artifacts import Artifacts
from tilelang_tt.env import UPDATE_GOLDEN

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"


def example(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def example_artifacts(name: str):
    module = example(name)
    return module.build()


def op_artifacts(name: str):
    from tests import op_kernels as K

    kernels = {
        "softmax": lambda: K.softmax(64, 128, 32),
        "gemm_bias_relu": lambda: K.gemm_bias_relu(64, 128, 96, 32, 64, 32),
        "flash_attention": lambda: K.flash_attention(256, 64, heads=2, causal=True),
        "unary_exp": lambda: K.unary("exp", 64, 128, 32, 64),
        "broadcast_row": lambda: K.broadcast("row", 64, 128, 32, 64),
        "rmsnorm": lambda: K.rmsnorm(64, 128, 32),
        "cast_fp32_bf16": lambda: K.cast(64, 128, 32, 64, src="float32", dst="bfloat16"),
        "rmsnorm_rows": lambda: K.rmsnorm(80, 128, 32),
        "gemm_bias_relu_dynamic": lambda: K.gemm_bias_relu(T.dynamic("m"), T.dynamic("n"), T.dynamic("k"), 32, 64, 32),
        "gemm_split_k": lambda: split_k_gemm(64, 64, 128, 32, 32, 32, 2),
        "gemm_split_k_mesh": lambda: split_k_gemm(64, 64, 256, 32, 32, 32, 4),
        "gemm_float_scale": float_scalars.scaled_gemm,
    }
    import tilelang_tt

    return tilelang_tt.compile(kernels[name](), **OPTIONS.get(name, {}))


# rmsnorm with its input and output in rows (reader rows -> tilize, untilize -> writer rows), 80 rows:
# the last block's rows past the end read as zeros and are not written
OPTIONS = {"rmsnorm_rows": {"layouts": {"X": BufferLayout(layout="row_major"), "Y": BufferLayout(layout="row_major")}},
           "gemm_split_k": {"grid": (3, 1)},  # 8 blocks on 3 cores: turns within a core and across cores
           # the K slices split over two chips, their partial sums all-reduced over the fabric
           "gemm_split_k_mesh": {"mesh": (1, 2), "mesh_reduce": "all_reduce"}}


CASES = {"eltwise_add": example_artifacts, "gemm": example_artifacts, "softmax": op_artifacts,
         "gemm_bias_relu": op_artifacts, "flash_attention": op_artifacts, "unary_exp": op_artifacts,
         "broadcast_row": op_artifacts, "rmsnorm": op_artifacts, "cast_fp32_bf16": op_artifacts,
         "rmsnorm_rows": op_artifacts, "gemm_bias_relu_dynamic": op_artifacts, "gemm_split_k": op_artifacts,
         "gemm_split_k_mesh": op_artifacts, "gemm_float_scale": op_artifacts}


@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_sources_match_golden(name):
    artifacts = CASES[name](name)
    directory = GOLDEN / name
    if UPDATE_GOLDEN.get():
        directory.mkdir(parents=True, exist_ok=True)
        for file, text in artifacts.sources.items():
            (directory / file).write_text(text)
    for file, text in artifacts.sources.items():
        expected = (directory / file).read_text()
        assert text == expected, f"{name}/{file} differs from the golden file"


@pytest.mark.parametrize("name,shapes", [("eltwise_add", [(256, 512), (256, 512)]),
                                         ("gemm", [(512, 512), (512, 512)])])
def test_example_programs_match_their_reference(name, shapes):
    module = example(name)
    g = torch.Generator().manual_seed(7)
    inputs = [torch.randn(*shape, generator=g).to(torch.bfloat16) for shape in shapes]
    out = module.build().run(*inputs).float()
    ref = module.reference(*inputs)
    if name == "eltwise_add":
        assert torch.equal(out, ref.to(torch.bfloat16).float())  # one RNE rounding of the exact sum
    else:  # one bf16 rounding on pack plus fp32 accumulation in another order than torch's
        a, b = (x.float() for x in inputs)
        assert ((out - ref).abs() <= ref.abs() * 2.0 ** -8 + 512 * 2.0 ** -24 * (a.abs() @ b.abs())).all()


def _causal_attention(q, k, v):
    scores = q.float() @ k.float().transpose(-1, -2) / q.shape[-1] ** 0.5
    future = torch.ones(scores.shape[-1], scores.shape[-1]).triu(1).bool()
    return torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1) @ v.float()


# golden op program -> (its inputs, torch's result, relative tolerance: see tests/compiler/test_ops.py)
OP_RUNS = {
    "softmax": (lambda: [bf16(64, 128, seed=41)], lambda x: torch.softmax(x.float(), dim=1), 2.0 ** -7),
    "gemm_bias_relu": (lambda: [bf16(64, 96, seed=42), bf16(96, 128, seed=43), bf16(128, seed=44)],
                       lambda a, b, bias: torch.relu(a.float() @ b.float() + bias.float()), 2.0 ** -7),
    "flash_attention": (lambda: [bf16(1, 2, 256, 64, seed=s) for s in (45, 46, 47)], _causal_attention, 2.0 ** -6),
    "unary_exp": (lambda: [bf16(64, 128, seed=48)], lambda x: torch.exp(x.float()), 2.0 ** -6),
    "broadcast_row": (lambda: [bf16(64, 128, seed=49), bf16(128, seed=50)], lambda a, v: a.float() * v.float(),
                      2.0 ** -7),
    "rmsnorm": (lambda: [bf16(64, 128, seed=51), bf16(128, seed=52)],
                lambda x, w: x.float() * torch.rsqrt(x.float().pow(2).mean(1, keepdim=True) + 1e-6) * w.float(),
                2.0 ** -7),
    "cast_fp32_bf16": (lambda: [torch.randn(64, 128, generator=torch.Generator().manual_seed(53))],
                       lambda a: a.to(torch.bfloat16).float(), 0.0),  # round to nearest even, as torch does
    "rmsnorm_rows": (lambda: [bf16(80, 128, seed=54), bf16(128, seed=55)],
                     lambda x, w: x.float() * torch.rsqrt(x.float().pow(2).mean(1, keepdim=True) + 1e-6) * w.float(),
                     2.0 ** -7),
    # sizes known at run time only (T.dynamic m, n, k); the stored program runs on sizes it never saw
    "gemm_bias_relu_dynamic": (lambda: [bf16(70, 40, seed=56), bf16(40, 100, seed=57), bf16(100, seed=58)],
                               lambda a, b, bias: torch.relu(a.float() @ b.float() + bias.float()), 2.0 ** -7),
    # T.atomic_add of two K halves into C, which holds a value to start from: C + A B
    "gemm_split_k": (lambda: [bf16(64, 128, seed=59), bf16(128, 64, seed=60), bf16(64, 64, seed=61).float()],
                     lambda a, b, c: c + a.float() @ b.float(), 2.0 ** -10),
    # four K slices, two per chip of a (1, 2) mesh, the chips' partial sums all-reduced over the fabric
    "gemm_split_k_mesh": (lambda: [bf16(64, 256, seed=62), bf16(256, 64, seed=63), bf16(64, 64, seed=64).float()],
                          lambda a, b, c: c + a.float() @ b.float(), 2.0 ** -10),
    # (A @ B) * scale, the scale a float32 parameter: a runtime argument holding its bits (main.cpp's strtof)
    "gemm_float_scale": (lambda: [bf16(64, 64, seed=65), bf16(64, 64, seed=66), -0.3],
                         lambda a, b, scale: (a.float() @ b.float()) * scale, 2.0 ** -12),
}


def test_every_golden_program_runs():
    """Each golden directory is an op program run by the test below or an example's program, run by
    test_example_programs_match_their_reference."""
    examples = {name for name, build in CASES.items() if build is example_artifacts}
    assert examples == {"eltwise_add", "gemm"}  # the examples' test's parameters
    assert set(OP_RUNS) == set(CASES) - examples
    assert sorted(p.name for p in GOLDEN.iterdir()) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(OP_RUNS))
def test_golden_op_programs_match_torch(name):
    """The stored program itself (tests/golden/<name>/), not a fresh compile, runs on the emulator."""
    if name == "gemm_split_k_mesh" and not FABRIC:
        pytest.skip("the emulator has no fabric device API (edm_fabric_worker_adapters.hpp) yet")
    make_inputs, reference, rel = OP_RUNS[name]
    inputs = make_inputs()
    out = torch.as_tensor(Artifacts.load(GOLDEN / name).run(*inputs)).float()
    assert_close(out, reference(*inputs), rel)
