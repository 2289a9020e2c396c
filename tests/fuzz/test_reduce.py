"""Fuzz: row and column reductions of blocks and across pipelined loops (cases.py, reduce_cases)."""

from tests.fuzz.cases import reduce_cases
from tests.fuzz.runner import run_family


def test_fuzz_reduce(fuzz_seed, kernel_dir, fuzz_record):
    run_family("reduce", reduce_cases(), 50, fuzz_seed, kernel_dir, fuzz_record)
