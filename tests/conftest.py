"""Shared test hooks: the fuzz tests' case counts in pytest's terminal summary.

Under pytest-xdist (`make test` runs ``-n auto``) each worker counts its own cases and hands them to
the controller when it finishes (``workeroutput``), which sums them for the summary."""

from collections import Counter

import pytest

FUZZ_RECORD = pytest.StashKey[Counter]()
WORKER_KEY = "fuzz_record"


def _record(config) -> Counter:
    return config.stash.setdefault(FUZZ_RECORD, Counter())


@pytest.fixture(scope="session")
def fuzz_record(request) -> Counter:
    """(family, outcome) -> number of fuzz cases (tests/compiler/test_fuzz.py)."""
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
    terminalreporter.write_line(f"fuzz: {record.total()} cases ({'; '.join(parts)})")
