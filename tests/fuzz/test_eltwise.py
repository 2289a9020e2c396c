"""Fuzz: element-wise expression trees (tests/fuzz/cases.py, eltwise_cases)."""

from tests.fuzz.cases import eltwise_cases
from tests.fuzz.runner import run_family


def test_fuzz_eltwise(fuzz, kernel_dir):
    run_family("eltwise", eltwise_cases(), 80, fuzz, kernel_dir)
