"""Shared test hooks: the fuzz tests' case counts in pytest's terminal summary."""

from collections import Counter

import pytest

FUZZ_RECORD = pytest.StashKey[Counter]()


@pytest.fixture(scope="session")
def fuzz_record(request) -> Counter:
    """(family, outcome) -> number of fuzz cases (tests/compiler/test_fuzz.py)."""
    return request.config.stash.setdefault(FUZZ_RECORD, Counter())


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
