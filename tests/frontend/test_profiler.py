"""TileLang's profiler and autotuner on target "tenstorrent": do_bench is the timing model's
predicted latency in milliseconds (with a note when a GEMM reads over 1.5x the minimum from DRAM),
assert_allclose checks against torch, and tilelang.autotune picks the config of least predicted latency,
skipping configs that fail to compile."""

from __future__ import annotations

import pytest
import tilelang
import torch
from tilelang.autotuner import AutoTuner

from tests.kernels import gemm
from tilelang_tt.errors import TTCompileError

M = N = K = 128
TARGET = "tenstorrent"
# Block sizes, stages, grid and math fidelity. The first config runs on one core, so the least
# predicted latency is another's; the last fails to compile (a K step of 48 starts slices of A inside a tile).
CONFIGS = [
    {"bm": 64, "bn": 64, "bk": 32, "pass_configs": {"tt.grid": (1, 1)}},
    {"bm": 64, "bn": 64, "bk": 32, "pass_configs": {"tt.math_fidelity": "LoFi"}},
    {"bm": 32, "bn": 32, "bk": 64, "stages": 3},
    {"bm": 64, "bn": 64, "bk": 32, "pass_configs": {"tt.gemm_subblock": (3, 3)}},  # refused: divides no block
]


def reference(a, b):
    return (a.float() @ b.float()).to(torch.bfloat16)


def compile_config(bm, bn, bk, stages=2, pass_configs=None):
    return tilelang.compile(gemm(M, N, K, bm, bn, bk, stages), target=TARGET, out_idx=[-1], pass_configs=pass_configs)


@pytest.fixture(scope="module")
def kernel():
    return compile_config(64, 64, 32)


def test_do_bench_is_the_predicted_latency_in_ms(kernel):
    profiler = kernel.get_profiler(tensor_supply_type=tilelang.TensorSupplyType.Randn)
    latency = profiler.do_bench()
    assert latency == kernel.artifacts.last_counters["timing"]["seconds"] * 1e3 > 0
    # deterministic; TileLang's repetition and aggregation arguments change nothing
    assert profiler.do_bench(warmup=1, rep=1, n_repeat=3, backend="wall", return_mode="min") == latency
    assert profiler.do_bench(quantiles=[0.5, 0.9]) == [latency, latency]


def test_do_bench_refuses_a_python_callable(kernel):
    with pytest.raises(ValueError, match=r"do_bench\(func=reference\).*no predicted Tenstorrent time"):
        kernel.get_profiler().do_bench(reference)


@pytest.mark.parametrize("bm, multicast, note", [(32, "off", True), (128, "off", False)])
def test_do_bench_notes_a_gemm_reading_over_one_and_a_half_times_the_minimum(caplog, bm, multicast, note):
    """32 x 32 blocks on 4 x 4 cores without multicast: each of the 16 blocks reads its own A rows and B
    columns, 4x the inputs' bytes; one 128 x 128 block reads them once."""
    kernel = tilelang.compile(gemm(M, N, K, bm, bm, 32), target=TARGET, out_idx=[-1],
                              pass_configs={"tt.grid": (4, 4), "tt.multicast": multicast})
    with caplog.at_level("WARNING", logger="tilelang_tt.profiler"):
        kernel.get_profiler().do_bench()
    notes = [r.getMessage() for r in caplog.records if r.name == "tilelang_tt.profiler"]
    assert notes == ([f"kernel `main` reads 4.0x its inputs' bytes from DRAM (more than 1.5x the minimum: "
                      "each block of the GEMM reads its A rows and B columns again): larger output blocks (bm, bn), "
                      "multicast of A and B across the core grid (compile option multicast='on' on a grid that "
                      "divides the block grid) or fewer cores reading the same panels read less; "
                      "tilelang_tt.carver.gemm_configs(M, N, K) gives block sizes to tune over"] if note else [])


def test_assert_allclose_checks_the_outputs_against_the_reference(kernel):
    profiler = kernel.get_profiler()
    a, b = (torch.empty(M, K).uniform_(-1, 1).to(torch.bfloat16) for _ in range(2))
    profiler.assert_allclose(reference, input_tensors=[a, b])
    with pytest.raises(AssertionError, match="Too many mismatched elements"):
        profiler.assert_allclose(lambda a, b: reference(a, b.T), input_tensors=[a, b])


@pytest.fixture(scope="module")
def least():
    """The index in CONFIGS of the least predicted latency, measured config by config, and it."""
    with pytest.raises(TTCompileError):
        compile_config(**CONFIGS[-1])
    latencies = [compile_config(**config).get_profiler().do_bench() for config in CONFIGS[:-1]]
    index = latencies.index(min(latencies))
    assert index != 0 and latencies.count(min(latencies)) == 1  # a tuner taking the first config would fail
    return index, latencies[index]


@pytest.fixture
def tuning_dirs(monkeypatch, tmp_path):
    """TileLang's cache directory (where the autotuner would save results) and working directory
    (where it writes autotuner.log) in tmp_path."""
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    monkeypatch.chdir(tmp_path)


def test_autotune_picks_the_config_of_least_predicted_latency(least, tuning_dirs):
    @tilelang.autotune(configs=CONFIGS, ref_prog=reference)
    @tilelang.jit(target=TARGET, out_idx=[-1])
    def tuned(M, N, K, bm=32, bn=32, bk=32, stages=2):
        return gemm(M, N, K, bm, bn, bk, stages)

    best = tuned(M, N, K)
    index, latency = least
    assert best.config == CONFIGS[index] and best.latency == latency
    assert best.ref_latency is None  # a torch reference has no predicted time
    assert best.get_kernel_source() == compile_config(**CONFIGS[index]).get_kernel_source()
    # cached on disk (tests/frontend/test_tuning.py)
    assert len(list((AutoTuner._get_cache_dir() / "tenstorrent").iterdir())) == 1


def test_autotuner_with_its_own_compile_arguments(least, tuning_dirs):
    def program(bm=32, bn=32, bk=32, stages=2):
        return gemm(M, N, K, bm, bn, bk, stages)

    tuner = AutoTuner.from_kernel(program, CONFIGS).set_compile_args(out_idx=[-1], target=TARGET)
    result = tuner.set_profile_args(ref_prog=reference).run(warmup=1, rep=1)
    assert (result.config, result.latency, result.ref_latency) == (CONFIGS[least[0]], least[1], None)
    assert result.kernel.config == result.config
