"""Blocks of fewer than 32 rows, as TileLang's norm and softmax examples write them (``blk_m = 1`` by
default): the compiler groups 32 / blk_m independent blocks into one block of 32 rows
(CoarsenRowBlocksTT); blocks whose rows cannot be grouped stay as they are (padded to whole tiles
where they are not vectors: tests/compiler/test_any_shape.py). The kernels are the catalogue's (tests/examples: TileLang's rms_norm,
rms_norm_splitk and online softmax written in their idioms, float32 as the norms are, bfloat16 for
the softmax's float16), run on the emulator on shapes that are and are not multiples of 32,
single- and multi-core, and matched against torch. Tolerances: float32 outputs to 2^-10 of their
range (the row sums of squares run on the FPU, reduce_tile, which reads the float32 block from its source
registers truncated to TF32: 2^-10 relative in the sum, half that after rsqrt; tt-isa-documentation
UNPACR_Regular.md), bfloat16 outputs to 2^-7."""

import pytest
import tilelang.language as T
import torch

import tilelang_tt
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


def one_row_triangle(M=64, N=64):
    """Row bx of a lower-triangular band, one row per block (blk_m = 1): the block's loop runs to its
    own row, so 32 consecutive rows cannot share one loop; the blocks stay one-row blocks."""
    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), B: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(M, threads=128) as bx:
            A_s = T.alloc_shared((1, 32), "bfloat16")
            for k in T.serial(T.ceildiv(bx + 1, 32)):
                T.copy(A[bx, k * 32], A_s)
                T.copy(A_s, B[bx, k * 32])

    return main


def test_blocks_whose_rows_cannot_be_grouped_stay_as_they_are():
    """The block index in a loop bound: no 32-row grouping; each block moves its own row."""
    a = data(64, 64, seed=3, dtype=torch.bfloat16)
    b = tilelang_tt.compile(one_row_triangle()).run(a)
    ref = torch.zeros_like(a)
    ref[:32, :32], ref[32:] = a[:32, :32], a[32:]
    assert torch.equal(b, ref)


def square_blocks_times_w(bn: int, N: int):
    """C = A @ W per (bn, bn) column block of a (bn, N) tensor: bx picks the blocks' columns."""
    @T.prim_func
    def main(A: T.Tensor((bn, N), "float32"), W: T.Tensor((bn, bn), "float32"), C: T.Tensor((bn, N), "float32")):
        with T.Kernel(N // bn, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((bn, bn), "float32")
            W_s = T.alloc_shared((bn, bn), "float32")
            G = T.alloc_fragment((bn, bn), "float32")
            T.copy(A[by * bn, bx * bn], A_s)
            T.copy(W[0, 0], W_s)
            T.clear(G)
            T.gemm(A_s, W_s, G)
            T.copy(G, C[by * bn, bx * bn])

    return main


def test_column_blocks_of_as_many_columns_as_rows_are_not_grouped_as_rows():
    """16 x 16 blocks side by side in a tile: once grouped as if bx picked rows, the second block's products
    came out 0 (found by tests/fuzz/idioms.py); each block's slice starts at its own column."""
    a, w = data(16, 32, seed=5), data(16, 16, seed=6)
    out = tilelang_tt.compile(square_blocks_times_w(16, 32)).run(a, w)
    assert_close(out, torch.cat([a[:, :16] @ w, a[:, 16:] @ w], 1), 2.0 ** -8)  # float32 as TF32 in the FPU


def gemm_of_a_computed_block(heads: int, cols: int):
    """C[b, h, by * 16 + i, bx * n + j] = (F @ W)[i, j] with F a 16-row block the kernel computes from a
    constant, not from the rows ``by`` picks: its rows are the same for every block (the idiom fuzz's rank-4
    cases), so the 16-row blocks are not grouped but padded."""
    n = 64

    @T.prim_func
    def main(A: T.Tensor((1, heads, 32, cols), "float32"), W: T.Tensor((n, n), "float32"),
             C: T.Tensor((1, heads, 32, cols), "bfloat16")):
        with T.Kernel(cols // n, 2, heads, threads=128) as (bx, by, bz):
            A_s = T.alloc_shared((16, n), "float32")
            T.copy(A[0, bz, by * 16, bx * n], A_s)
            F = T.alloc_fragment((16, n), "float32")
            for i in T.serial(16):
                for j in T.Parallel(n):
                    F[i, j] = 1.5
            W_s = T.alloc_shared((n, n), "float32")
            T.copy(W[0, 0], W_s)
            G = T.alloc_fragment((16, n), "float32")
            T.clear(G)
            T.gemm(F, W_s, G)
            for i, j in T.Parallel(16, n):
                C[0, bz, by * 16 + i, bx * n + j] = G[i, j]

    return main


@pytest.mark.parametrize("heads,cols", [(2, 64), (2, 128)])
def test_a_block_computed_from_no_row_of_the_block_index_is_padded(heads, cols):
    program = tilelang_tt.compile(gemm_of_a_computed_block(heads, cols))
    a, w = data(1, heads, 32, cols, seed=heads), data(64, 64, seed=cols)
    rows = (torch.full((16, 64), 1.5) @ w).repeat(2, cols // 64)
    assert_close(program.run(a, w), rows.expand(1, heads, 32, cols), 2.0 ** -7)
