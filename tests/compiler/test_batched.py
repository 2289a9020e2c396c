"""Tensors with leading (batch) dimensions: a slice is read from its own matrix of the tensor's
matrix view (leading dimensions folded into rows, each matrix padded to whole tiles), and a third
grid dimension is folded into the block grid's rows. Every program runs on the emulator against
torch."""

import pytest
import torch

import tilelang_tt
from tests.kernels import batched_add, bmm


def bf16(*shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(torch.bfloat16)


@pytest.mark.parametrize("grid", [None, (1, 1), (2, 3)])
def test_batch_index_from_the_grid_selects_the_matrix(grid):
    batch, M, N = 3, 64, 96
    a, b = bf16(batch, M, N, seed=1), bf16(batch, M, N, seed=2)
    artifacts = tilelang_tt.compile(batched_add(batch, M, N, 32), grid=grid)
    assert torch.equal(artifacts.run(a, b), (a.float() + b.float()).to(torch.bfloat16))
    totals = artifacts.last_counters["total"]
    # every block is its own: nothing is shared, nothing multicast, every tile read once
    assert artifacts.plan.multicast == ()
    assert (totals["dram_bytes_read"], totals["dram_bytes_written"]) == (2 * a.numel() * 2, a.numel() * 2)


@pytest.mark.parametrize("batch,M,N,K,bm,bn,bk,grid", [
    (3, 64, 96, 128, 32, 32, 64, None),
    (2, 128, 128, 64, 64, 64, 32, (2, 4)),   # block rows (bz, by) split over core rows: A multicast along x
    (4, 64, 64, 96, 32, 64, 32, (1, 8)),
    (5, 96, 64, 64, 32, 32, 32, (3, 2)),     # uneven: 15 block rows over 2 core rows
    (3, 40, 50, 70, 32, 32, 32, None),       # every matrix padded to whole tiles on its own
    (2, 100, 64, 45, 64, 32, 32, (2, 2)),
])
def test_batched_gemm_with_a_third_grid_dimension(batch, M, N, K, bm, bn, bk, grid):
    a, b = bf16(batch, M, K, seed=3), bf16(batch, K, N, seed=4)
    artifacts = tilelang_tt.compile(bmm(batch, M, N, K, bm, bn, bk), grid=grid)
    c = artifacts.run(a, b)
    ref = torch.bmm(a.float(), b.float())
    tol = ref.abs() * 2.0 ** -8 + K * 2.0 ** -24 * torch.bmm(a.float().abs(), b.float().abs())
    assert ((c.float() - ref).abs() <= tol).all()
    plan = artifacts.plan
    assert plan.block_grid == (batch * -(-M // bm), -(-N // bn))
    # B depends on the batch, part of the block row: only A may be shared, along a core row
    assert all(cb == "A_s" and axis == "x" for cb, axis in
               ((m.cb, m.axis) for m in plan.multicast)), plan.multicast
