"""The GEMM output sub-block (tilelang_tt.ops.gemm.sub_block): the largest that tiles the block,
fits the DST budget of the accumulation mode and packs in row-major block order, or the one the
``gemm_subblock`` option gives (checked as ttnn checks out_subblock_h/w); the lowering chooses it
once and every matmul_block of the kernel, its init and its packs use it."""

from __future__ import annotations

import pytest

import torch

import tilelang_tt
from tests.compiler.test_ops import bf16
from tests.kernels import gemm, lower_until, run_pass
from tilelang_tt.errors import TTCompileError
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.contract.arch import ARCHS
from tilelang_tt.ops.gemm import sub_block
from tilelang_tt.ir.common import evaluate_calls, stmt_intrin

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
    accumulation mode, and every DST acquire pushes sm * sn tiles (bfloat16 partials accumulate in the
    writer's CB, reserved whole once, its sub-blocks pushed as they are done)."""
    mod = lower_until(gemm(128, 128, 64, 128, 128, 64, accum_dtype=accum_dtype), "InsertDSTManagementTT")
    calls = evaluate_calls(run_pass(mod, "InsertDSTManagementTT")["main_compute"].body)
    sm, sn = sub
    dims = [[int(x) for x in c.value.args[3:]] for c in calls if stmt_intrin(c) == Intrin.MATMUL_BLOCK_INIT]
    assert dims == [[sn, sm, 2]]
    blocks = [[int(x) for x in c.value.args[6:]] for c in calls if stmt_intrin(c) == Intrin.MATMUL_BLOCK]
    assert blocks and all(b == [sn, sm, 2] for b in blocks)
    assert Intrin.MATMUL_TILES not in {stmt_intrin(c) for c in calls}
    pushed = {int(c.value.args[1]) for c in calls if stmt_intrin(c) == Intrin.CB_PUSH_BACK}
    assert pushed == {sm * sn}


@pytest.mark.parametrize("sub", [(1, 1), (1, 2), (1, 4)])
def test_the_given_sub_block_runs_against_torch(sub):
    """gemm_subblock=(rows, cols): every matmul_block and its init take it, and the product is the same."""
    a, b = bf16(128, 64, seed=5), bf16(64, 128, seed=6)
    art = tilelang_tt.compile(gemm(128, 128, 64, 128, 128, 32), gemm_subblock=sub)
    assert f"matmul_block_init(cb_A_s, cb_B_s, 0, {sub[1]}, {sub[0]}, 1)" in art.sources["compute.cpp"]
    out = torch.as_tensor(art.run(a, b)).float()
    assert (out - (a.float() @ b.float())).abs().max().item() <= 2.0 ** -6 * (a.float() @ b.float()).abs().max()


@pytest.mark.parametrize("sub,problem,hint", [
    ((1, 3), "it does not divide the block", "use one of (1, 1), (1, 2), (1, 4), (2, 4), or leave"),
    ((4, 4), "it holds more than the 8 DST tiles one acquire has", "(2, 4)"),
    ((2, 1), "it is neither one row of tiles nor the block's full width", "(1, 4)"),
])
def test_a_given_sub_block_the_block_does_not_take_is_an_error_at_the_gemm(sub, problem, hint):
    """A 4x4-tile bfloat16 block (8 DST tiles): what ttnn refuses in a program config, at the user's line."""
    with pytest.raises(TTCompileError) as info:
        tilelang_tt.compile(gemm(128, 128, 64, 128, 128, 32, accum_dtype="bfloat16"), gemm_subblock=sub)
    text = str(info.value)
    assert f"gemm_subblock={sub} for the 4x4-tile block of `C_l`: {problem}" in text and hint in text
    assert "kernels.py" in text and "T.gemm" in text
