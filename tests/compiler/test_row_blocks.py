"""Blocks of fewer than 32 rows, as TileLang's norm and softmax examples write them (``blk_m = 1`` by
default): the compiler groups 32 / blk_m independent blocks into one block of 32 rows
(CoarsenRowBlocksTT). Each kernel below is the example's, float16 -> bfloat16 and smaller sizes;
run on the emulator on shapes that are and are not multiples of 32, single- and multi-core, and
matched against torch. Tolerances: bfloat16 outputs to 2^-7 of their range (one rounding of the
result and of the rsqrt/exp inputs), float32 outputs to 2^-20."""

import pytest
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_negative import assert_diagnostic, compile_error
from tests.compiler import bad_kernels


def rms_norm(M, N, blk_m, dtype="bfloat16"):
    """examples/norm/rms_norm.py, rms_norm (accumulators "float" as in the example)."""
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, blk_m), threads=128) as bx:
            A_shared = T.alloc_shared((blk_m, N), dtype)
            A_pow_local = T.alloc_fragment((blk_m, N), "float")
            A_local = T.alloc_fragment((blk_m, N), "float")
            A_powsum = T.alloc_fragment((blk_m,), "float")

            T.copy(A[bx * blk_m:(bx + 1) * blk_m, :], A_shared)
            T.copy(A_shared, A_local)
            for i, j in T.Parallel(blk_m, N):
                A_pow_local[i, j] = A_local[i, j] * A_local[i, j]
            T.reduce_sum(A_pow_local, A_powsum, dim=1)
            for i in T.Parallel(blk_m):
                A_powsum[i] = T.rsqrt(A_powsum[i] / N) + 1e-12
            for i, j in T.Parallel(blk_m, N):
                A_local[i, j] *= A_powsum[i]
            T.copy(A_local, B[bx * blk_m:(bx + 1) * blk_m, :])

    return main


def rms_norm_splitk(M, N, blk_m, blk_k):
    """examples/norm/rms_norm.py, rms_norm_splitk (float32 throughout, as in the example)."""
    dtype = "float"

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, blk_m), threads=128) as bx:
            A_shared = T.alloc_shared((blk_m, blk_k), dtype)
            A_local = T.alloc_fragment((blk_m, blk_k), dtype)
            A_powsum = T.alloc_fragment((blk_m,), dtype)

            num_k_step = T.ceildiv(N, blk_k)
            T.clear(A_local)
            for k in range(num_k_step):
                T.copy(A[bx * blk_m, k * blk_k], A_shared)
                for i, j in T.Parallel(blk_m, blk_k):
                    A_local[i, j] += A_shared[i, j] * A_shared[i, j]
            T.reduce_sum(A_local, A_powsum, dim=1)
            for i in T.Parallel(blk_m):
                A_powsum[i] = T.rsqrt(A_powsum[i] / N) + 1e-12

            for k in range(num_k_step):
                # reverse, better cache hit rate
                T.copy(A[bx * blk_m, (num_k_step - 1 - k) * blk_k], A_shared)
                for i, j in T.Parallel(blk_m, blk_k):
                    A_shared[i, j] *= A_powsum[i]
                T.copy(A_shared, B[bx * blk_m, (num_k_step - 1 - k) * blk_k])

    return main


def online_softmax(M, N, BLOCK_M=1, BLOCK_N=128, dtype="bfloat16"):
    """examples/online_softmax/online_softmax.py (its lazy ``@tilelang.jit`` signature written out as
    a prim_func with the same body)."""
    accum_dtype = "float32"
    scale = 1.44269504  # log2(e)

    @T.prim_func
    def main(X: T.Tensor([M, N], dtype), Y: T.Tensor([M, N], dtype)):
        with T.Kernel(T.ceildiv(M, BLOCK_M), threads=128) as (i_m):
            x = T.alloc_fragment([BLOCK_M, BLOCK_N], dtype)
            y = T.alloc_fragment([BLOCK_M, BLOCK_N], dtype)
            lse = T.alloc_fragment([BLOCK_M], accum_dtype)
            max_x = T.alloc_fragment([BLOCK_M], dtype)
            exp_x = T.alloc_fragment([BLOCK_M, BLOCK_N], accum_dtype)
            sum_exp_x = T.alloc_fragment([BLOCK_M], accum_dtype)
            T.fill(lse, -T.infinity(accum_dtype))

            for i_n in T.Pipelined(T.ceildiv(N, BLOCK_N)):
                T.copy(X[i_m * BLOCK_M, i_n * BLOCK_N], x)
                T.reduce_max(x, max_x, dim=1, clear=True)
                for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                    exp_x[i, j] = T.exp2(x[i, j] * scale - max_x[i] * scale)
                T.reduce_sum(exp_x, sum_exp_x, dim=1, clear=True)
                for i in T.Parallel(BLOCK_M):
                    lse[i] = max_x[i] * scale + T.log2(T.exp2(lse[i] - max_x[i] * scale) + sum_exp_x[i])

            for i_n in T.Pipelined(T.ceildiv(N, BLOCK_N)):
                T.copy(X[i_m * BLOCK_M, i_n * BLOCK_N], x)
                for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                    y[i, j] = T.exp2(x[i, j] * scale - lse[i])
                T.copy(y, Y[i_m * BLOCK_M, i_n * BLOCK_N])

    return main


def data(*shape, seed, dtype=torch.bfloat16):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def assert_close(out, ref, rel):
    out = torch.as_tensor(out).float()
    scale = max(ref.abs().max().item(), 1.0)
    err = (out - ref).abs().max().item()
    assert err <= rel * scale, f"max |error| {err} > {rel} * {scale}"


def rms_ref(x):
    x = x.float()
    return x * (torch.rsqrt(x.pow(2).mean(-1, keepdim=True)) + 1e-12)


@pytest.mark.parametrize("M, blk_m", [(64, 1), (80, 1), (96, 2), (64, 8), (70, 16)])
def test_rms_norm(M, blk_m):
    x = data(M, 128, seed=M + blk_m)
    artifacts = tilelang_tt.compile(rms_norm(M, 128, blk_m))
    assert artifacts.plan["block_tiles"][0] == 1  # blocks of one tile row: 32 // blk_m blocks each
    assert_close(artifacts.run(x), rms_ref(x), 2.0 ** -7)


def test_rms_norm_one_row_blocks_move_the_same_tiles_as_32_row_blocks():
    """Grouping costs no traffic: blk_m = 1 reads and writes the tiles blk_m = 32 does."""
    one, tile = (tilelang_tt.compile(rms_norm(64, 128, bm)) for bm in (1, 32))
    assert one.plan["buffers"] == tile.plan["buffers"]
    assert one.plan["cbs"] == tile.plan["cbs"] and one.plan["work_partition"] == tile.plan["work_partition"]


@pytest.mark.parametrize("grid", [(2, 1), (1, 3)])
def test_rms_norm_multicore(grid):
    x = data(160, 64, seed=5)
    artifacts = tilelang_tt.compile(rms_norm(160, 64, 1), grid=grid)
    assert len(artifacts.plan["work_partition"]) > 1
    assert_close(artifacts.run(x), rms_ref(x), 2.0 ** -7)


@pytest.mark.parametrize("blk_m", [1, 4])
def test_rms_norm_splitk(blk_m):
    x = data(64, 256, seed=7, dtype=torch.float32)
    assert_close(tilelang_tt.compile(rms_norm_splitk(64, 256, blk_m, 64)).run(x), rms_ref(x), 2.0 ** -20)


@pytest.mark.parametrize("M", [64, 40])
def test_online_softmax_one_row_blocks(M):
    x = data(M, 256, seed=11)
    assert_close(tilelang_tt.compile(online_softmax(M, 256)).run(x), x.float().softmax(1), 2.0 ** -7)


def test_block_index_in_a_loop_bound_is_refused_at_its_line():
    err = compile_error(bad_kernels.one_row_triangle())
    assert_diagnostic(err, "CoarsenRowBlocksTT", "the loop bound depends on the block index `bx`", "one_row_triangle")
    assert "blk_m = 32" in err.hint
