"""Golden generated sources for the two examples: any change to generated code shows up here.

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


@pytest.mark.parametrize("name", ["eltwise_add", "gemm"])
def test_generated_sources_match_golden(name):
    artifacts = example_artifacts(name)
    directory = GOLDEN / name
    if UPDATE_GOLDEN.get():
        directory.mkdir(parents=True, exist_ok=True)
        for file, text in artifacts.sources.items():
            (directory / file).write_text(text)
    for file, text in artifacts.sources.items():
        expected = (directory / file).read_text()
        assert text == expected, f"{name}/{file} differs from the golden file"
