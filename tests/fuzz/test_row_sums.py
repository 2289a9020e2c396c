"""Fuzz: row sums of a float32 block the element-wise op just before computes, read again after
(cases.py, reduce_cases(row_sums=True)): the op packs the row partials (Reduce.fuse_row_sums)."""

from tests.fuzz.cases import reduce_cases
from tests.fuzz.runner import run_family


def test_fuzz_row_sums(fuzz, kernel_dir):
    run_family("row_sums", reduce_cases(row_sums=True), 20, fuzz, kernel_dir)
