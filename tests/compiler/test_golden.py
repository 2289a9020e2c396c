"""Golden generated sources for the two examples and one representative per op family (reduction,
norm, GEMM epilogue, flash attention, SFPU unary, broadcast, type conversion): any change to
generated code shows up here.

Regenerate with ``TILELANG_TT_UPDATE_GOLDEN=1 make test`` after reviewing the difference.
"""

import importlib.util
from pathlib import Path

import pytest

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
        "flash_attention": lambda: K.flash_attention(256, 64),
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
