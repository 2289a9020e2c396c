"""Multi-core programs on the emulator: every work-partition policy, uneven grids, GEMM block
reuse and multicast, sharded layouts (local_shard and sharded inputs); each result against torch
and the traffic against what the partition promises."""

import pytest
import tilelang.language as T
import torch

import tilelang_tt
from tests.kernels import eltwise, gemm
from tilelang_tt import BufferLayout
from tilelang_tt.contract.vocabulary import Policy, WorkPolicy

TILE_BYTES = 2048  # a bf16 32x32 tile


def bf16(*shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(torch.bfloat16)


def check_gemm(a, b, c):
    ref = a.float() @ b.float()
    # one bf16 rounding on pack plus fp32 accumulation in another order than torch's
    tol = ref.abs() * 2.0 ** -8 + a.shape[1] * 2.0 ** -24 * (a.float().abs() @ b.float().abs())
    assert ((c.float() - ref).abs() <= tol).all()


@pytest.mark.parametrize("policy,grid", [("contiguous", (3, 2)), ("row_major", (5, 1)), ("block", (2, 3)),
                                         ("block", (4, 4))])
def test_eltwise_policies_on_uneven_grids(policy, grid):
    """5x6 blocks over grids that do not divide them: every output tile written once."""
    M, N = 160, 192
    a, b = bf16(M, N, seed=1), bf16(M, N, seed=2)
    artifacts = tilelang_tt.compile(eltwise("sub", M, N, 32, 32), grid=grid, partition=policy)
    assert artifacts.plan.work_policy.policy == policy
    assert torch.equal(artifacts.run(a, b), (a.float() - b.float()).to(torch.bfloat16))
    totals = artifacts.last_counters["total"]
    assert (totals["dram_bytes_read"], totals["dram_bytes_written"]) == (2 * M * N * 2, M * N * 2)


def gemm_named_origin(M, N, K, bm, bn, bk):
    """GEMM whose block origin is named first (row = by * bm): the slices depend on by and bx
    through those names."""

    @T.prim_func
    def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"), C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            row = by * bm
            col = bx * bn
            A_s = T.alloc_shared((bm, bk), "bfloat16")
            B_s = T.alloc_shared((bk, bn), "bfloat16")
            C_l = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[row, k * bk], A_s)
                T.copy(B[k * bk, col], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[row, col])

    return main


def test_multicast_sees_dependences_through_named_values():
    """A's panel follows by through `row`, B's follows bx through `col`: shared along core rows and
    columns respectively (taken for shared by the whole grid, every core computed the same block)."""
    a, b = bf16(128, 64, seed=11), bf16(64, 128, seed=12)
    artifacts = tilelang_tt.compile(gemm_named_origin(128, 128, 64, 32, 32, 32), grid=(4, 4), multicast="on")
    assert {m.cb: m.axis for m in artifacts.plan.multicast} == {"A_s": "x", "B_s": "y"}
    check_gemm(a, b, artifacts.run(a, b))


@pytest.mark.parametrize("M,N,K,bm,bn,bk,grid", [
    (256, 256, 128, 64, 64, 32, (4, 4)),    # one block per core
    (512, 512, 512, 64, 64, 64, (8, 8)),    # the full Wormhole grid
    (256, 384, 160, 64, 64, 32, (3, 2)),    # 2x2 blocks per core, non-square, K of 5 steps
    (128, 512, 96, 128, 128, 32, (4, 1)),   # a single core row: A shared along it, B not shared
])
def test_gemm_multicast_reads_each_panel_once_per_core_group(M, N, K, bm, bn, bk, grid):
    a, b = bf16(M, K, seed=3), bf16(K, N, seed=4)
    plain = tilelang_tt.compile(gemm(M, N, K, bm, bn, bk), grid=grid, multicast="off")
    shared = tilelang_tt.compile(gemm(M, N, K, bm, bn, bk), grid=grid, multicast="on")
    c_plain, c_shared = plain.run(a, b), shared.run(a, b)
    check_gemm(a, b, c_shared)
    assert torch.equal(c_plain, c_shared)  # the same sums in the same order
    by, bx = M // bm, N // bn
    gx, gy = grid
    kt = K // 32
    # without multicast every core reads its A and B panels for each of its blocks (block reuse)
    assert plain.last_counters["total"]["dram_bytes_read"] == by * bx * kt * (bm // 32 + bn // 32) * TILE_BYTES
    # with it each core row reads A once per block column step, each core column B once per row step
    a_reads = by * (bx // gx) * kt * (bm // 32) if gx > 1 else by * bx * kt * (bm // 32)
    b_reads = bx * (by // gy) * kt * (bn // 32) if gy > 1 else by * bx * kt * (bn // 32)
    assert shared.last_counters["total"]["dram_bytes_read"] == (a_reads + b_reads) * TILE_BYTES
    axes = {m.cb: m.axis for m in shared.plan.multicast}
    assert axes == ({"A_s": "x", "B_s": "y"} if gy > 1 else {"A_s": "x"})


def test_auto_multicast_reaches_the_minimum_on_8x8():
    M = N = K = 512
    a, b = bf16(M, K, seed=5), bf16(K, N, seed=6)
    artifacts = tilelang_tt.compile(gemm(M, N, K, 64, 64, 64))
    assert artifacts.plan.core_grid == (8, 8) and len(artifacts.plan.semaphores) == 4
    check_gemm(a, b, artifacts.run(a, b))
    assert artifacts.last_counters["total"]["dram_bytes_read"] == 2 * (M * K + K * N)


def test_blackhole_grid():
    a, b = bf16(320, 416, seed=7), bf16(416, 416, seed=8)
    artifacts = tilelang_tt.compile(gemm(320, 416, 416, 32, 32, 32), arch="blackhole")
    assert artifacts.plan.core_grid == (13, 10)
    check_gemm(a, b, artifacts.run(a, b))


HEIGHT = BufferLayout(memory="L1", layout="height_sharded", shard_grid=(4, 2))


def test_local_shard_reads_only_its_own_l1():
    """A, B and C height-sharded alike over 8 cores: each core adds its own shards, no DRAM and no
    remote L1 traffic at all."""
    M, N = 256, 128
    a, b = bf16(M, N, seed=9), bf16(M, N, seed=10)
    artifacts = tilelang_tt.compile(eltwise("add", M, N, 32, 64), layouts={"A": HEIGHT, "B": HEIGHT, "C": HEIGHT})
    plan = artifacts.plan
    assert plan.partition_mode == "local_shard" and plan.core_grid == (4, 2)
    assert [w.shard for w in plan.work_partition] == [(i, 0) for i in range(8)]
    assert torch.equal(artifacts.run(a, b), (a.float() + b.float()).to(torch.bfloat16))
    totals = artifacts.last_counters["total"]
    assert totals["dram_bytes_read"] == totals["dram_bytes_written"] == 0
    assert totals["l1_bytes_read_remote"] == totals["l1_bytes_written_remote"] == 0


@pytest.mark.parametrize("layout", [
    BufferLayout(memory="L1", layout="width_sharded", shard_grid=(4, 1)),
    BufferLayout(memory="L1", layout="block_sharded", shard_grid=(2, 4)),
    BufferLayout(memory="DRAM", layout="height_sharded", shard_grid=(4, 1)),
])
def test_sharded_input_under_the_global_partition(layout):
    """A sharded A read by cores that do not hold it: the TensorAccessor finds each page's core or
    bank; the result is the same as with interleaved DRAM."""
    M, N, K = 256, 128, 128
    a, b = bf16(M, K, seed=11), bf16(K, N, seed=12)
    artifacts = tilelang_tt.compile(gemm(M, N, K, 64, 64, 32), layouts={"A": layout}, multicast="on")
    check_gemm(a, b, artifacts.run(a, b))
    totals = artifacts.last_counters["total"]
    # 4x2 blocks on 2x4 cores, A shared by core rows, B by core columns (4 K steps of 2 tiles each)
    a_tiles, b_tiles = 4 * 4 * 2, 2 * 4 * 2
    if layout.memory == "L1":  # A's pages come from the L1 of the cores holding its shards
        assert totals["dram_bytes_read"] == b_tiles * TILE_BYTES
        assert 0 < totals["l1_bytes_read_remote"] <= a_tiles * TILE_BYTES
    else:
        assert totals["dram_bytes_read"] == (a_tiles + b_tiles) * TILE_BYTES
    assert artifacts.plan.buffers[0].layout == layout.layout


def test_local_shard_gemm_with_sharded_output():
    """C block-sharded over 2x2 cores, each shard 2x2 blocks: each core computes its shard."""
    M = N = 256
    K = 96
    a, b = bf16(M, K, seed=13), bf16(K, N, seed=14)
    c_layout = BufferLayout(memory="L1", layout="block_sharded", shard_grid=(2, 2))
    artifacts = tilelang_tt.compile(gemm(M, N, K, 64, 64, 32), layouts={"C": c_layout})
    assert artifacts.plan.work_policy == WorkPolicy(Policy.LOCAL_SHARD, 1, (2, 2))
    check_gemm(a, b, artifacts.run(a, b))
    assert artifacts.last_counters["total"]["dram_bytes_written"] == 0


def _heads_copy(B, H, both):
    """One block per (batch, head) pair of a (B, H, 32, 64) tensor, the T.Kernel index split as
    b = bh // H, h = bh % H (TileLang's linear-attention examples); ``both=False`` forgets b."""
    @T.prim_func
    def main(X: T.Tensor((B, H, 32, 64), "bfloat16"), Y: T.Tensor((B, H, 32, 64), "bfloat16")):
        with T.Kernel(B * H, threads=128) as bh:
            b = bh // H
            h = bh % H
            s = T.alloc_shared((32, 64), "bfloat16")
            T.copy(X[b, h, 0:32, 0:64], s)
            T.copy(s, Y[b if both else 0, h, 0:32, 0:64])

    return main


def test_a_grid_index_split_into_batch_and_head_writes_disjoint_blocks():
    """bh // H and bh % H are two digits of bh: together they give each block its own slice."""
    x = torch.randn(2, 3, 32, 64).to(torch.bfloat16)
    assert torch.equal(torch.as_tensor(tilelang_tt.compile(_heads_copy(2, 3, True), grid=(3, 2)).run(x)), x)
    # the T.Kernel index is TIR's `bx`; its digit bx // 3 (the batch) does not move Y's slice
    with pytest.raises(tilelang_tt.TTCompileError, match=r"the 2 blocks along `bx // 3` write overlapping regions of `Y`"):
        tilelang_tt.compile(_heads_copy(2, 3, False))
