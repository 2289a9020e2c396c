"""Fuzz: element-wise kernels of ``T.dynamic`` sizes (cases.py, eltwise_cases(dynamic=True)): the
grid and every core's share are computed at run time from the inputs' shapes."""

from tests.fuzz.cases import eltwise_cases
from tests.fuzz.runner import run_family


def test_fuzz_dynamic(fuzz, kernel_dir):
    run_family("dynamic", eltwise_cases(dynamic=True), 30, fuzz, kernel_dir)
