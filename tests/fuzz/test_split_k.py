"""Fuzz: split-K GEMMs adding their K slices into C with ``T.atomic_add`` (cases.py, split_k_cases):
the result is C's initial value plus A @ B, and each slice writes C's pages once."""

from tests.fuzz.cases import split_k_cases
from tests.fuzz.runner import run_family


def test_fuzz_split_k(fuzz, kernel_dir):
    run_family("split_k", split_k_cases(), 20, fuzz, kernel_dir)
