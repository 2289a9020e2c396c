"""Fuzz: row and column reductions of blocks and across pipelined loops, and scans of blocks
(cases.py, reduce_cases and scan_cases: about one case in four a scan)."""

from hypothesis import strategies as st

from tests.fuzz.cases import reduce_cases, scan_cases
from tests.fuzz.runner import run_family


def test_fuzz_reduce(fuzz, kernel_dir):
    run_family("reduce", st.one_of(reduce_cases(), reduce_cases(), reduce_cases(), scan_cases()), 50,
               fuzz, kernel_dir)
