"""Blocks of fewer than 32 rows, as TileLang's norm and softmax examples write them (``blk_m = 1`` by
default): the compiler groups 32 / blk_m independent blocks into one block of 32 rows
(CoarsenRowBlocksTT). The kernels are the catalogue's (tests/examples: TileLang's rms_norm,
rms_norm_splitk and online softmax written in their idioms, float32 as the norms are, bfloat16 for
the softmax's float16), run on the emulator on shapes that are and are not multiples of 32,
single- and multi-core, and matched against torch. Tolerances: float32 outputs to 2^-10 of their
range (the row sums of squares run on the FPU, reduce_tile, which reads the float32 block from its source
registers truncated to TF32: 2^-10 relative in the sum, half that after rsqrt; tt-isa-documentation
UNPACR_Regular.md), bfloat16 outputs to 2^-7."""

import pytest
import torch

import tilelang_tt
from tests.compiler import bad_kernels
from tests.compiler.test_negative import assert_diagnostic, compile_error
from tests.examples.norm import rms_norm_chunked, rms_norm_rows, rms_reference
from tests.examples.online_softmax import M as SOFTMAX_M
from tests.examples.online_softmax import N as SOFTMAX_N
from tests.examples.online_softmax import softmax_reference, two_pass_softmax

RMS_REL = 2.0 ** -10  # the float32 norms (see the module docstring)


def data(*shape, seed, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def assert_close(out, ref, rel):
    out = torch.as_tensor(out).float()
    scale = max(ref.abs().max().item(), 1.0)
    err = (out - ref).abs().max().item()
    assert err <= rel * scale, f"max |error| {err} > {rel} * {scale}"


@pytest.mark.parametrize("M, blk_m", [(64, 1), (80, 1), (96, 2), (64, 8), (70, 16)])
def test_rms_norm(M, blk_m):
    x = data(M, 128, seed=M + blk_m)
    artifacts = tilelang_tt.compile(rms_norm_rows.get_tir(M=M, N=128, blk_m=blk_m))
    assert artifacts.plan.block_tiles[0] == 1  # blocks of one tile row: 32 // blk_m blocks each
    assert_close(artifacts.run(x), rms_reference(x), RMS_REL)


def test_rms_norm_one_row_blocks_move_the_same_tiles_as_32_row_blocks():
    """Grouping costs no traffic: blk_m = 1 reads and writes the tiles blk_m = 32 does."""
    one, tile = (tilelang_tt.compile(rms_norm_rows.get_tir(M=64, N=128, blk_m=bm)) for bm in (1, 32))
    assert one.plan.buffers == tile.plan.buffers
    assert one.plan.cbs == tile.plan.cbs and one.plan.work_partition == tile.plan.work_partition


@pytest.mark.parametrize("grid", [(2, 1), (1, 3)])
def test_rms_norm_multicore(grid):
    x = data(160, 64, seed=5)
    artifacts = tilelang_tt.compile(rms_norm_rows.get_tir(M=160, N=64, blk_m=1), grid=grid)
    assert len(artifacts.plan.work_partition) > 1
    assert_close(artifacts.run(x), rms_reference(x), RMS_REL)


@pytest.mark.parametrize("blk_m", [1, 4])
def test_rms_norm_splitk(blk_m):
    x = data(64, 256, seed=7)
    artifacts = tilelang_tt.compile(rms_norm_chunked.get_tir(M=64, N=256, blk_m=blk_m, blk_k=64))
    assert_close(artifacts.run(x), rms_reference(x), RMS_REL)


def test_online_softmax_one_row_blocks():
    x = data(SOFTMAX_M, SOFTMAX_N, seed=11, dtype=torch.bfloat16)
    artifacts = tilelang_tt.compile(two_pass_softmax.get_tir(BLOCK_M=1, BLOCK_N=128))
    assert_close(artifacts.run(x), softmax_reference(x), 2.0 ** -7)


def test_block_index_in_a_loop_bound_is_refused_at_its_line():
    err = compile_error(bad_kernels.one_row_triangle())
    assert_diagnostic(err, "CoarsenRowBlocksTT", "the loop bound depends on the block index `bx`", "one_row_triangle")
    assert "blk_m = 32" in err.hint
