"""Fuzz: the layout forms: row-major tensors (read as rows and tilized, untilized and written as
rows) and sub-tile blocks of 1..16 rows (TileLang's norm examples' ``blk_m``)."""

from tests.fuzz.cases import eltwise_cases, reduce_cases
from tests.fuzz.runner import run_family


def test_fuzz_row_major(fuzz, kernel_dir):
    run_family("row_major", eltwise_cases(row_major=True), 30, fuzz, kernel_dir)


def test_fuzz_row_blocks(fuzz, kernel_dir):
    run_family("row_blocks", reduce_cases(sub_tile=True), 30, fuzz, kernel_dir)
