"""Fuzz: GEMM K loops with accumulator starts, steps between K steps and epilogues (cases.py,
gemm_cases)."""

from tests.fuzz.cases import gemm_cases
from tests.fuzz.runner import run_family


def test_fuzz_gemm(fuzz, kernel_dir):
    run_family("gemm", gemm_cases(), 45, fuzz, kernel_dir)


def test_fuzz_bfp8(fuzz, kernel_dir):
    run_family("bfp8", gemm_cases(block_float=True), 20, fuzz, kernel_dir)
