"""TileLang's autotuner at scale on target "tenstorrent" (tilelang_tt/tuning.py): results cached on disk by
kernel, configs, arch and compiler version and reloaded as a TenstorrentKernel; a damaged or stale entry is
recomputed and overwritten; parallel compilation picks what sequential compilation picks; a dropped config
carries its reason; a Tenstorrent reference is timed on the same model."""

from __future__ import annotations

import json

import pytest
import tilelang
import torch
from tilelang.autotuner import AutoTuner

from tests.kernels import gemm
from tilelang_tt import backend, tuning
from tilelang_tt.backend import TenstorrentKernel

M = N = K = 128
# the first runs on one core (slow), LoFi is the fastest and fails the default check (rtol = atol = 1e-2), a sub-block
# of 3 x 3 tiles is refused by the compiler (it divides no block); the winner is the 32 x 32 x 64 one
CONFIGS = [
    {"bm": 64, "bn": 64, "bk": 32, "pass_configs": {"tt.grid": (1, 1)}},
    {"bm": 64, "bn": 64, "bk": 32, "pass_configs": {"tt.math_fidelity": "LoFi"}},
    {"bm": 32, "bn": 32, "bk": 64, "stages": 3},
    {"bm": 64, "bn": 64, "bk": 32, "pass_configs": {"tt.gemm_subblock": (3, 3)}},
]
WINNER = CONFIGS[2]
REFERENCE = gemm(M, N, K, 32, 32, 32)  # a Tenstorrent reference: compiled by the tuner, timed on the model


def tuned(configs=CONFIGS, ref_prog=REFERENCE):
    """A fresh ``@tilelang.autotune`` function (TileLang keeps its results per decorated function)."""

    @tilelang.autotune(configs=configs, ref_prog=ref_prog)
    @tilelang.jit(target="tenstorrent", out_idx=[-1])
    def matmul(M, N, K, bm=32, bn=32, bk=32, stages=2):
        return gemm(M, N, K, bm, bn, bk, stages)

    return matmul


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """TileLang's cache (where the tuner's entries go) and working directory (autotuner.log) in a temporary one."""
    path = tmp_path_factory.mktemp("tilelang-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TILELANG_CACHE_DIR", str(path))
        patch.chdir(path)
        yield path


@pytest.fixture(scope="module")
def best(cache):
    return tuned()(M, N, K)


def entries() -> list:
    return sorted(tuning.cache_dir().iterdir()) if tuning.cache_dir().exists() else []


def no_compiling(monkeypatch):
    """Make any compilation by the Tenstorrent pipeline fail the test (a result must come from the cache)."""
    def refuse(*args, **kwargs):
        raise AssertionError("compiled, where the cached result was expected")
    monkeypatch.setattr(backend, "compile_prim_func", refuse)


def test_the_fastest_config_passing_its_check_wins(best):
    assert isinstance(best, TenstorrentKernel) and best.config == WINNER
    assert best.latency == best.get_profiler().do_bench()


def test_dropped_configs_carry_their_reasons(best):
    reasons = {json.dumps(f.config, sort_keys=True): (f.stage, f.reason) for f in best.tuning_failures}
    stage, reason = reasons[json.dumps(CONFIGS[3], sort_keys=True)]
    assert stage == "compile" and "error[LowerTTTileIntrinsics]" in reason and "tests/kernels.py" in reason
    stage, reason = reasons[json.dumps(CONFIGS[1], sort_keys=True)]  # LoFi: timed fastest, then checked
    assert stage == "check" and "mismatch" in reason


def test_when_every_config_fails_the_error_gives_each_reason(cache):
    with pytest.raises(RuntimeError, match=r"(?s)no configuration passed its check.*'tt.math_fidelity': 'LoFi'.*"
                                           r"\(check\): Too many mismatched elements"):
        tuned(CONFIGS[1:2])(M, N, K)


def test_a_tenstorrent_reference_is_timed_on_the_model(best):
    reference = tilelang.compile(REFERENCE, target="tenstorrent", out_idx=[-1])
    assert best.ref_latency == reference.get_profiler().do_bench() > 0
    assert best.get_profiler().do_bench(reference) == best.ref_latency  # the profiler times it too


def test_the_result_is_reloaded_from_disk_as_a_tenstorrent_kernel(best, monkeypatch):
    assert len(entries()) == 1
    no_compiling(monkeypatch)
    again = tuned()(M, N, K)
    assert isinstance(again, TenstorrentKernel) and again is not best
    assert (again.config, again.latency, again.ref_latency) == (WINNER, best.latency, best.ref_latency)
    assert again.get_kernel_source(kernel_only=False) == best.get_kernel_source(kernel_only=False)
    assert again.tuning_failures == best.tuning_failures
    a, b = torch.randn(M, K).to(torch.bfloat16), torch.randn(K, N).to(torch.bfloat16)
    torch.testing.assert_close(again(a, b), best(a, b), rtol=0, atol=0)


def key(configs=CONFIGS, m=M, target="tenstorrent", ref_prog=REFERENCE) -> str | None:
    tuner = AutoTuner.from_kernel(lambda bm=32, bn=32, bk=32, stages=2: gemm(m, N, K, bm, bn, bk, stages), configs)
    tuner.set_compile_args(out_idx=[-1], target=target).set_profile_args(ref_prog=ref_prog)
    material = tuning._material(tuner)
    return None if material is None else tuning.cache_key(material)


def test_the_key_follows_kernel_configs_arch_and_compiler(monkeypatch):
    first = key()
    assert key() == first
    assert key(m=256) != first  # the kernel's TIR (its shapes)
    assert key(configs=CONFIGS[:3]) != first
    assert key(target="tenstorrent/blackhole") != first
    assert key(ref_prog=gemm(M, N, K, 64, 64, 32)) != first
    monkeypatch.setattr(tuning, "compiler_version", lambda: "0.1.0+another")
    assert key() != first
    def scaled(s):  # one code, the value it captures part of the reference
        return lambda a, b: a @ b * s

    assert key(ref_prog=scaled(2.0)) == key(ref_prog=scaled(2.0)) != key(ref_prog=scaled(3.0))
    ones, other = torch.ones(64, 64), torch.ones(64, 64)
    other[32, 32] = 2  # a tensor's repr elides its middle: its elements are part of it
    assert key(ref_prog=scaled(ones)) == key(ref_prog=scaled(ones.clone())) != key(ref_prog=scaled(other))
    # a reference with no identity across processes (not code, a kernel or a PrimFunc): nothing is cached
    assert key(ref_prog=type("Reference", (), {"__call__": lambda self, a, b: a @ b})()) is None


def test_compiler_version_hashes_the_package_sources():
    version = tuning.compiler_version()
    assert version.startswith("0.1.0+") and len(version.split("+")[1]) == 16


@pytest.mark.parametrize("damage", ["module file", "result", "stale key"])
def test_a_damaged_or_stale_entry_is_discarded(best, damage):
    (entry,) = entries()
    saved = {path.name: path.read_bytes() for path in entry.iterdir()}
    record = json.loads(saved[tuning.ENTRY_RESULT])
    try:
        if damage == "module file":
            kernel_file = entry / tuning.ENTRY_KERNEL
            kernel_file.write_text(kernel_file.read_text().replace("cb_wait_front", "cb_wait_frnt", 1))
        elif damage == "result":
            (entry / tuning.ENTRY_RESULT).write_text(saved[tuning.ENTRY_RESULT].decode()[:40])
        else:
            stale = dict(record, key=dict(record["key"], compiler="0.0.9+stale"))
            (entry / tuning.ENTRY_RESULT).write_text(json.dumps(stale))
        assert tuning.load_result(entry, record["key"], best.target, CONFIGS) is None
        assert not entry.exists()
    finally:
        entry.mkdir(exist_ok=True)
        for name, data in saved.items():
            (entry / name).write_bytes(data)


def test_a_damaged_entry_is_recomputed_and_overwritten(best):
    (entry,) = entries()
    (entry / tuning.ENTRY_KERNEL).write_text("not a module")
    again = tuned()(M, N, K)
    assert again.config == WINNER and again.latency == best.latency
    assert entries() == [entry]
    assert tuning.read_module_file(entry / tuning.ENTRY_KERNEL)  # whole again


def test_parallel_compilation_picks_what_sequential_compilation_picks(best, monkeypatch):
    monkeypatch.setenv("TILELANG_AUTO_TUNING_DISABLE_CACHE", "1")
    configs = CONFIGS[:3]
    monkeypatch.setenv("TILELANG_AUTO_TUNING_CPU_COUNTS", "1")
    sequential = tuned(configs)(M, N, K)
    monkeypatch.delenv("TILELANG_AUTO_TUNING_CPU_COUNTS")
    tuner = tuned(configs).get_tunner()
    assert tuner._resolve_num_compile_workers() >= 2  # a worker per CPU (this machine has two)
    parallel = tuned(configs)(M, N, K)
    assert (parallel.config, parallel.latency) == (sequential.config, sequential.latency) == (WINNER, best.latency)
    assert parallel.get_kernel_source(kernel_only=False) == sequential.get_kernel_source(kernel_only=False)


def test_each_candidate_is_timed_as_a_full_run_predicts(best):
    """Candidates are timed by the emulator's plan host, with no main.cpp built; the full run of each program
    (the outputs read back) predicts the same time, the winner's the tuned latency."""
    a, b = torch.randn(M, K).to(torch.bfloat16), torch.randn(K, N).to(torch.bfloat16)
    for config in CONFIGS[:3]:
        params = {key: value for key, value in config.items() if key != "pass_configs"}
        kernel = tilelang.compile(gemm(M, N, K, **params), target="tenstorrent", out_idx=[-1],
                                  pass_configs=config.get("pass_configs"))
        timed = kernel.get_profiler().do_bench(input_tensors=[a, b])
        kernel(a, b)
        assert timed == kernel.artifacts.last_counters["timing"]["seconds"] * 1e3
        if config == WINNER:
            assert timed == best.latency
