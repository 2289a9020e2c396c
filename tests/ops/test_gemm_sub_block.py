"""The GEMM output sub-block (tilelang_tt.ops.gemm.sub_block): the largest that tiles the block,
fits the DST budget of the accumulation mode and packs in row-major block order; the lowering
chooses it once and every matmul_block of the kernel, its init and its packs use it."""

from __future__ import annotations

import pytest

from tests.kernels import gemm, lower_until, run_pass
from tilelang_tt.attrs import Intrin
from tilelang_tt.contract.arch import ARCHS
from tilelang_tt.ops.gemm import sub_block
from tilelang_tt.passes.common import evaluate_calls, stmt_intrin

BF16, FP32 = (ARCHS["wormhole_b0"].dst_budget(fp32) for fp32 in (False, True))  # 8 and 4 tiles
# tt-metal's matmul_program_config.cpp, largest area first
SUBBLOCK_HW_CHOICES = [(4, 2), (2, 4), (8, 1), (1, 8), (7, 1), (1, 7), (3, 2), (2, 3), (6, 1), (1, 6), (5, 1), (1, 5),
                       (2, 2), (4, 1), (1, 4), (3, 1), (1, 3), (2, 1), (1, 2), (1, 1)]


def test_budgets_are_half_of_dst_and_half_again_for_fp32():
    assert (BF16, FP32) == (8, 4)


@pytest.mark.parametrize("bmt,bnt,bf16,fp32", [
    (2, 2, (2, 2), (2, 2)),  # the whole block fits either way
    (4, 4, (2, 4), (1, 4)),  # two full rows in bf16, one in fp32
    (4, 6, (1, 6), (1, 3)),  # a full row of 6 fits bf16 only; fp32 takes half a row
    (8, 8, (1, 8), (1, 4)),
    (6, 1, (6, 1), (3, 1)),  # one tile column: rows of one tile
    (3, 5, (1, 5), (1, 1)),  # no divisor of 5 fits 4 tiles but 1
    (1, 16, (1, 8), (1, 4)),
])
def test_sub_block_of_bf16_and_fp32_accumulation(bmt, bnt, bf16, fp32):
    assert sub_block(bmt, bnt, BF16) == bf16
    assert sub_block(bmt, bnt, FP32) == fp32


@pytest.mark.parametrize("budget", [BF16, FP32])
def test_sub_block_is_ttnn_s_choice_for_sub_blocks_packed_in_order(budget):
    """ttnn's get_subblock_sizes (the first choice that divides the block and fits DST), under its
    constraint for sub-blocks packed one after another (out_subblock_w == per_core_N or
    out_subblock_h == 1), in either reading of the table's pairs."""
    for bmt in range(1, 13):
        for bnt in range(1, 13):
            for choices in (SUBBLOCK_HW_CHOICES, [(w, h) for h, w in SUBBLOCK_HW_CHOICES]):
                ttnn = next((h, w) for h, w in choices if h * w <= budget and bmt % h == 0 and bnt % w == 0
                            and (w == bnt or h == 1))
                assert sub_block(bmt, bnt, budget) == ttnn, (bmt, bnt)


@pytest.mark.parametrize("accum_dtype,sub", [("bfloat16", (2, 4)), ("float32", (1, 4))])
def test_the_kernel_s_matmul_blocks_init_and_packs_use_the_one_sub_block(accum_dtype, sub):
    """A 128x128 C block (4x4 tiles) over K blocks of 2 tiles: the hoisted matmul_block_init and
    every matmul_block name (ct_dim, rt_dim, kt_dim) = (sn, sm, 2) of the sub-block chosen for the
    accumulation mode, and every DST acquire packs sm * sn tiles."""
    mod = lower_until(gemm(128, 128, 64, 128, 128, 64, accum_dtype=accum_dtype), "InsertDSTManagementTT")
    calls = evaluate_calls(run_pass(mod, "InsertDSTManagementTT")["main_compute"].body)
    sm, sn = sub
    dims = [[int(x) for x in c.value.args[3:]] for c in calls if stmt_intrin(c) == Intrin.MATMUL_BLOCK_INIT]
    assert dims == [[sn, sm, 2]]
    blocks = [[int(x) for x in c.value.args[6:]] for c in calls if stmt_intrin(c) == Intrin.MATMUL_BLOCK]
    assert blocks and all(b == [sn, sm, 2] for b in blocks)
    assert Intrin.MATMUL_TILES not in {stmt_intrin(c) for c in calls}
    packed = {int(c.value.args[1]) for c in calls if stmt_intrin(c) == Intrin.CB_RESERVE_BACK}
    assert packed == {sm * sn}
