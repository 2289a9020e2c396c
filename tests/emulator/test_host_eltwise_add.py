"""Eltwise add end to end: hand-written plan and tt-metal style kernels, generated main.cpp."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.emulator.eltwise_add import make_plan, program_sources
from tilelang_tt.emulator import run


def _bfloat16(values: np.ndarray) -> np.ndarray:
    return torch.from_numpy(values).to(torch.bfloat16).to(torch.float32).numpy()


@pytest.mark.parametrize("rows, cols, cores", [(64, 96, 2), (96, 64, 4)])
def test_eltwise_add_matches_numpy(rows, cols, cores):
    rng = np.random.default_rng(rows * cols + cores)
    a = _bfloat16(rng.standard_normal((rows, cols)).astype(np.float32))
    b = _bfloat16(rng.standard_normal((rows, cols)).astype(np.float32))
    plan = make_plan(rows=rows, cols=cols, cores=cores)
    result = run(program_sources(plan), plan, {"A": a, "B": b})
    np.testing.assert_allclose(result.outputs["C"], _bfloat16(a + b), rtol=1e-2, atol=1e-2)
    tiles = (rows // 32) * (cols // 32)
    assert result.counters["total"]["dram_bytes_read"] == 2 * tiles * 2048
    assert result.counters["total"]["dram_bytes_written"] == tiles * 2048


def test_runs_are_deterministic():
    a = np.linspace(-4, 4, 64 * 96, dtype=np.float32).reshape(64, 96)
    plan = make_plan()
    first = run(program_sources(plan), plan, {"A": a, "B": a[::-1].copy()})
    second = run(program_sources(plan), plan, {"A": a, "B": a[::-1].copy()})
    np.testing.assert_array_equal(first.outputs["C"], second.outputs["C"])
    assert first.counters == second.counters  # every counter, CB stalls too (counted in logical time)
