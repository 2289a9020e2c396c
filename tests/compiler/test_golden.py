"""Golden generated sources for the two examples and one representative per op family (reduction,
norm, GEMM epilogue, flash attention, SFPU unary, broadcast, type conversion): any change to
generated code shows up here.

Regenerate with ``TILELANG_TT_UPDATE_GOLDEN=1 make test`` after reviewing the difference.

The op-family programs are the very kernels tests/compiler/test_ops.py runs on the emulator; the two
examples' programs run here, against the examples' own ``reference``.
"""

import importlib.util
from pathlib import Path

import pytest
import torch

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
    }
    import tilelang_tt

    return tilelang_tt.compile(kernels[name]())


CASES = {"eltwise_add": example_artifacts, "gemm": example_artifacts, "softmax": op_artifacts,
         "gemm_bias_relu": op_artifacts, "flash_attention": op_artifacts, "unary_exp": op_artifacts,
         "broadcast_row": op_artifacts, "rmsnorm": op_artifacts, "cast_fp32_bf16": op_artifacts}


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
