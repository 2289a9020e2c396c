"""Fuzz: programs drawn from the grammar of the idioms users write (tests/fuzz/idioms.py), less the forms it
records as gaps (idioms.GAPS). Each compiles and matches torch within the oracle's bound, or is refused with a
message docs/what-compiles.md lists ("Refused forms"); no crash, no wrong number, and at least 80% run
(tests/fuzz/runner.py run_family). Fresh cases every run (the run's fuzz seed); ``tools/fuzz_idioms.py``
measures the whole grammar by idiom."""

from tests.fuzz.idioms import idiom_cases
from tests.fuzz.runner import run_family


def test_fuzz_idioms(fuzz, kernel_dir):
    run_family("idioms", idiom_cases(gaps=False), 12, fuzz, kernel_dir)
