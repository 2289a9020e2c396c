"""Every generated program runs on the emulator and matches torch (bf16 tolerances stated)."""

import pytest
import torch

import tilelang_tt
from tests.kernels import eltwise, eltwise_direct, gemm

OPS = {"add": torch.add, "sub": torch.sub, "mul": torch.mul}


def bf16(*shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(torch.bfloat16)


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("M,N,bm,bn,grid", [(32, 32, 32, 32, None), (256, 512, 64, 128, None),
                                              (64, 96, 32, 32, (1, 1)), (128, 256, 32, 64, (2, 4)),
                                              (96, 160, 32, 32, (3, 1)), (512, 1024, 64, 128, (8, 8))])
def test_eltwise(op, M, N, bm, bn, grid):
    a, b = bf16(M, N, seed=1), bf16(M, N, seed=2)
    artifacts = tilelang_tt.compile(eltwise(op, M, N, bm, bn), grid=grid)
    c = artifacts.run(a, b)
    # one bf16 rounding of the exact result: the emulator computes in fp32 and packs RNE
    expected = OPS[op](a.float(), b.float()).to(torch.bfloat16)
    assert c.dtype == torch.bfloat16 and c.shape == (M, N)
    assert torch.equal(c, expected)
    totals = artifacts.last_counters["total"]
    assert totals["dram_bytes_read"] == 2 * M * N * 2 and totals["dram_bytes_written"] == M * N * 2


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("M,N,bm,bn,grid", [(64, 96, 32, 32, None), (256, 512, 64, 128, (2, 4)),
                                              (100, 200, 64, 64, None)])
def test_eltwise_indexing_global_tensors_directly(op, M, N, bm, bn, grid):
    """TileLang's elementwise example form: C[y, x] = A[y, x] + B[y, x] in a T.Parallel nest, no
    blocks; the tensors' tiles are read once and written once (whole tiles: partial ones padded)."""
    a, b = bf16(M, N, seed=9), bf16(M, N, seed=10)
    artifacts = tilelang_tt.compile(eltwise_direct(op, M, N, bm, bn), grid=grid)
    assert torch.equal(artifacts.run(a, b), OPS[op](a.float(), b.float()).to(torch.bfloat16))
    tiles = -(-M // 32) * -(-N // 32)
    totals = artifacts.last_counters["total"]
    assert (totals["dram_bytes_read"], totals["dram_bytes_written"]) == (2 * tiles * 2048, tiles * 2048)


@pytest.mark.parametrize("M,N,K,bm,bn,bk,stages,grid", [
    (32, 32, 32, 32, 32, 32, 2, None),
    (64, 96, 160, 32, 32, 32, 2, (1, 1)),
    (256, 128, 96, 64, 64, 32, 3, (2, 4)),
    (128, 256, 64, 128, 64, 32, 2, None),   # 8 output tiles per block > DST budget: sub-blocked
    (512, 512, 512, 64, 64, 64, 2, (8, 8)),
    (512, 1024, 384, 64, 128, 64, 2, (8, 8)),  # non-square K, two blocks per core
])
def test_gemm(M, N, K, bm, bn, bk, stages, grid):
    a, b = bf16(M, K, seed=3), bf16(K, N, seed=4)
    # gemm_reuse="dst": every output tile accumulates over the whole K loop in DST
    artifacts = tilelang_tt.compile(gemm(M, N, K, bm, bn, bk, stages=stages), grid=grid, gemm_reuse="dst")
    c = artifacts.run(a, b)
    ref = a.float() @ b.float()
    # One bf16 rounding on pack (half an ulp: 2^-8 relative) plus fp32 accumulation in DST, whose
    # summation order differs from torch's: K * 2^-24 * sum|a||b| bounds that part.
    tol = ref.abs() * 2.0 ** -8 + K * 2.0 ** -24 * (a.float().abs() @ b.float().abs())
    assert ((c.float() - ref).abs() <= tol).all()
    totals = artifacts.last_counters["total"]
    assert totals["tile_ops"]["pack_tile"] == (M // 32) * (N // 32)  # one pack per output tile
    assert totals["tile_ops"]["matmul_block"] == (M // 32) * (N // 32) * (K // 32)


def test_gemm_in_the_form_of_tilelang_examples():
    """T.use_swizzle and the result staged through shared memory, as TileLang's own GEMM examples write it."""
    M, N, K = 128, 96, 160
    a, b = bf16(M, K, seed=7), bf16(K, N, seed=8)
    artifacts = tilelang_tt.compile(gemm(M, N, K, 64, 32, 32, stages=3, staged=True), grid=(2, 2))
    c = artifacts.run(a, b)
    ref = a.float() @ b.float()
    tol = ref.abs() * 2.0 ** -8 + K * 2.0 ** -24 * (a.float().abs() @ b.float().abs())
    assert ((c.float() - ref).abs() <= tol).all()
    # the staging copy is an L1 hand-off: the output is written once
    assert artifacts.last_counters["total"]["dram_bytes_written"] == M * N * 2


@pytest.mark.parametrize("M,N,K,bm,bn,bk,grid", [(256, 512, 256, 128, 128, 64, (2, 2)),
                                                 (128, 256, 96, 128, 64, 32, None)])
def test_gemm_block_reuse_reads_operands_once_per_k_step(M, N, K, bm, bn, bk, grid):
    """Blocks beyond one DST acquire keep partial sums in L1: each A and B block is read once per K
    step for the whole block (not once per DST sub-block), with the same result."""
    a, b = bf16(M, K, seed=5), bf16(K, N, seed=6)
    # block reuse alone: multicast, which reads less still, has its own multi-core tests
    artifacts = tilelang_tt.compile(gemm(M, N, K, bm, bn, bk), grid=grid, multicast="off")
    c = artifacts.run(a, b)
    ref = a.float() @ b.float()
    tol = ref.abs() * 2.0 ** -8 + K * 2.0 ** -24 * (a.float().abs() @ b.float().abs())
    assert ((c.float() - ref).abs() <= tol).all()
    blocks_m, blocks_n = M // bm, N // bn
    a_bytes, b_bytes = M * K * 2, K * N * 2
    # A is read once per column of blocks, B once per row of blocks: block-level reuse exactly
    assert artifacts.last_counters["total"]["dram_bytes_read"] == a_bytes * blocks_n + b_bytes * blocks_m
