"""Fuzz: int32/uint32 element-wise arithmetic, exact modulo 2^32 (cases.py, integer_cases)."""

from tests.fuzz.cases import integer_cases
from tests.fuzz.runner import run_family


def test_fuzz_integer(fuzz, kernel_dir):
    run_family("integer", integer_cases(), 20, fuzz, kernel_dir)
