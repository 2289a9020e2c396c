"""Fuzz: compositions of the element-wise math ops the compiler lowers (tests/fuzz/cases.py, math_cases)."""

from tests.fuzz.cases import math_cases
from tests.fuzz.runner import run_family


def test_fuzz_math(fuzz_seed, kernel_dir, fuzz_record):
    run_family("math", math_cases(), 40, fuzz_seed, kernel_dir, fuzz_record)
