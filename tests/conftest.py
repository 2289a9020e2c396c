"""Shared test hooks: the fuzz tests' seed (tests/fuzz/runner.py) and their case counts in pytest's
terminal summary.

The seed is drawn once per run, by the controller under pytest-xdist (`make test` runs ``-n auto``),
which hands it to every worker (``workerinput``). Each worker counts its own cases and hands them
back when it finishes (``workeroutput``); the controller sums them for the summary."""

import os
import secrets
from collections import Counter

import pytest

from tests.fuzz.runner import SEED_ENV

FUZZ_RECORD = pytest.StashKey[Counter]()
FUZZ_SEED = pytest.StashKey[int]()
WORKER_KEY = "fuzz_record"


def pytest_configure(config):
    workerinput = getattr(config, "workerinput", None)  # set on xdist workers only
    if workerinput is not None:
        config.stash[FUZZ_SEED] = workerinput[SEED_ENV]
    else:
        config.stash[FUZZ_SEED] = int(os.environ.get(SEED_ENV) or secrets.randbelow(2**32))


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    node.workerinput[SEED_ENV] = node.config.stash[FUZZ_SEED]


@pytest.fixture(scope="session")
def fuzz_seed(request) -> int:
    """This run's fuzz seed."""
    return request.config.stash[FUZZ_SEED]


def _record(config) -> Counter:
    return config.stash.setdefault(FUZZ_RECORD, Counter())


@pytest.fixture(scope="session")
def fuzz_record(request) -> Counter:
    """(family, outcome) -> number of fuzz cases (tests/fuzz/)."""
    return _record(request.config)


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
    terminalreporter.write_line(f"fuzz: seed {seed} ({SEED_ENV}={seed} replays it); {record.total()} cases "
                                f"({'; '.join(parts)})")
