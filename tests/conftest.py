"""Shared test hooks: the fuzz tests' seed and profile (tests/fuzz/runner.py) and their case counts in pytest's
terminal summary.

The seed is drawn once per run, by the controller under pytest-xdist (`make test` runs ``-n auto``),
which hands it to every worker (``workerinput``). Each worker counts its own cases and hands them
back when it finishes (``workeroutput``); the controller sums them for the summary.

The profile (``TILELANG_TT_FUZZ_PROFILE``, :data:`FUZZ_PROFILES`) sets how many cases each fuzz family draws: a
share of the count its test names (at least ``runner.MIN_CASES``). ``ci``, the default, keeps the suite within
a CI machine's time (a fuzz case is a new program: compiled, built with g++ and run, cold however warm the
cache); ``full`` draws every case. Each profile keeps every family, its generators unchanged and its seed fresh
every run, so what one run does not draw another does; ``full`` makes one run draw twice as many."""

import os
import secrets
from collections import Counter

import pytest

from tests.fuzz.runner import SEED_ENV, FuzzRun

FUZZ_RECORD = pytest.StashKey[Counter]()
FUZZ_SEED = pytest.StashKey[int]()
WORKER_KEY = "fuzz_record"
PROFILE_ENV = "TILELANG_TT_FUZZ_PROFILE"
# The share of each family's cases a run draws, by profile (measured on 2 cores, warm cache: the fuzz files took
# 57/38/36/32 s for eltwise/reduce/gemm/math in full; ci halves them).
FUZZ_PROFILES = {"ci": 0.5, "full": 1.0}
DEFAULT_PROFILE = "ci"


def pytest_configure(config):
    workerinput = getattr(config, "workerinput", None)  # set on xdist workers only
    if workerinput is not None:
        config.stash[FUZZ_SEED] = workerinput[SEED_ENV]
    else:
        config.stash[FUZZ_SEED] = int(os.environ.get(SEED_ENV) or secrets.randbelow(2**32))


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    node.workerinput[SEED_ENV] = node.config.stash[FUZZ_SEED]


def fuzz_profile() -> str:
    profile = os.environ.get(PROFILE_ENV) or DEFAULT_PROFILE
    if profile not in FUZZ_PROFILES:
        raise pytest.UsageError(f"{PROFILE_ENV}={profile!r}: expected one of {', '.join(FUZZ_PROFILES)}")
    return profile


@pytest.fixture(scope="session")
def fuzz(request) -> FuzzRun:
    """This run's fuzz seed, profile share and case counts."""
    return FuzzRun(request.config.stash[FUZZ_SEED], FUZZ_PROFILES[fuzz_profile()], _record(request.config))


def _record(config) -> Counter:
    return config.stash.setdefault(FUZZ_RECORD, Counter())


def pytest_sessionfinish(session):
    workeroutput = getattr(session.config, "workeroutput", None)  # set on xdist workers only
    if workeroutput is not None:
        workeroutput[WORKER_KEY] = [[family, outcome, n] for (family, outcome), n in _record(session.config).items()]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    for family, outcome, n in getattr(node, "workeroutput", {}).get(WORKER_KEY, []):
        _record(node.config)[(family, outcome)] += n


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    record = config.stash.get(FUZZ_RECORD, None)
    if not record:
        return
    families = sorted({family for family, _ in record})
    parts = []
    for family in families:
        outcomes = ", ".join(f"{n} {outcome}" for (f, outcome), n in sorted(record.items()) if f == family)
        parts.append(f"{family}: {outcomes}")
    seed = config.stash[FUZZ_SEED]
    terminalreporter.write_line(f"fuzz: seed {seed} ({SEED_ENV}={seed} replays it), profile {fuzz_profile()} "
                                f"({PROFILE_ENV}); {record.total()} cases "
                                f"({'; '.join(parts)})")
