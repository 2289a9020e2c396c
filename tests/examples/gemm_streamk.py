"""Stream-K matrix product, modelled on tile-ai/tilelang's
examples/gemm_streamk/example_tilelang_gemm_streamk.py (tl_matmul_streamk).

Written anew for this catalogue in that example's idioms, not copied. Like the example, the kernel
reads its schedule from module-level values: a fixed number of programs (the GPU's SM count there)
first share the K iterations of the first output tiles evenly, each walking its range of iterations
with a ``while`` loop over ``T.alloc_fragment(..., "local")`` counters; a program stores a tile it
computed whole with ``T.copy`` and adds a part of a tile with ``T.atomic_add``; then the remaining
tiles are handed out whole, one per program per round. B is given transposed (n x k), C is a float32
parameter the caller zeroes. bfloat16 inputs; m, n, k = 64, 256, 128 on 4 programs keep the
example's shape of work (4 shared tiles, then one round of whole tiles); its call's blocks:
16 x 128 x 32, 2 stages, 64 threads."""

import tilelang
from tilelang import language as T
import torch

from tests.examples.harness import Example, randn

m, n, k = 64, 256, 128
PROGRAMS = 4  # the example's total_sm
BM, BN, BK = 16, 128, 32

K_STEPS = tilelang.cdiv(k, BK)  # K iterations per output tile
TILES = tilelang.cdiv(m, BM) * tilelang.cdiv(n, BN)


def _shared_tile_count(tiles: int, programs: int) -> int:
    """Tiles whose K iterations the programs share: the remainder of an even split, plus one round
    more when whole rounds would still be left after them."""
    shared = tiles % programs
    return shared + programs if tiles - shared > programs else shared


SHARED_TILES = _shared_tile_count(TILES, PROGRAMS)
ITERS_EACH, ITERS_LEFT = divmod(SHARED_TILES * K_STEPS, PROGRAMS)  # first-phase iterations per program
WHOLE_ROUNDS = max((TILES - SHARED_TILES) // PROGRAMS, 1)


@tilelang.jit
def stream_k_matmul(
    A,
    B,
    C,
    streamk_tiles,
    block_M,
    block_N,
    block_K,
    trans_A,
    trans_B,
    dtypeAB,
    dtypeC,
    accum_dtype,
    num_stages,
    threads,
):
    assert not trans_A
    M, N, K = T.const("M, N, K")
    a_shape, a_blk_shape = ((K, M), (block_K, block_M)) if trans_A else ((M, K), (block_M, block_K))
    b_shape, b_blk_shape = ((N, K), (block_N, block_K)) if trans_B else ((K, N), (block_K, block_N))

    A: T.Tensor(a_shape, dtypeAB)
    B: T.Tensor(b_shape, dtypeAB)
    C: T.Tensor((M, N), dtypeC)

    with T.Kernel(PROGRAMS, threads=threads) as pid:
        a_blk = T.alloc_shared(a_blk_shape, dtypeAB)
        b_blk = T.alloc_shared(b_blk_shape, dtypeAB)
        a_blk_whole = T.alloc_shared(a_blk_shape, dtypeAB)
        b_blk_whole = T.alloc_shared(b_blk_shape, dtypeAB)
        acc = T.alloc_fragment((block_M, block_N), accum_dtype)

        # phase 1: this program's run of K iterations over the shared tiles
        it = T.alloc_fragment((1,), T.int32, "local")
        stop = T.alloc_fragment((1,), T.int32, "local")
        it[0] = pid * ITERS_EACH + T.min(pid, ITERS_LEFT)
        run_end = (pid + 1) * ITERS_EACH + T.min(pid + 1, ITERS_LEFT)
        while it[0] < run_end:
            # up to the end of the current tile or of the run
            stop[0] = T.min(it[0] + (K_STEPS - (it[0] % K_STEPS)), run_end)
            tile = it[0] // K_STEPS
            offset = it[0] % K_STEPS
            tm = tile // T.ceildiv(N, block_N)
            tn = tile % T.ceildiv(N, block_N)

            T.clear(acc)
            for kk in T.Pipelined(stop[0] - it[0], num_stages=num_stages):
                T.copy(A[tm * block_M, (kk + (it[0] % K_STEPS)) * block_K], a_blk)
                T.copy(B[tn * block_N, (kk + (it[0] % K_STEPS)) * block_K], b_blk)
                T.gemm(a_blk, b_blk, acc, transpose_B=trans_B)

            if offset == 0 and (stop[0] % K_STEPS == 0):  # the whole tile was ours
                T.copy(acc, C[tm * block_M, tn * block_N])
            else:
                for r, c in T.Parallel(block_M, block_N):
                    T.atomic_add(C[tm * block_M + r, tn * block_N + c], acc[r, c])
            it[0] = stop[0]

        # phase 2: whole tiles, round-robin
        if WHOLE_ROUNDS > 0:
            for rnd in T.serial(WHOLE_ROUNDS):
                tile = pid + streamk_tiles + rnd * PROGRAMS
                tm = tile // T.ceildiv(N, block_N)
                tn = tile % T.ceildiv(N, block_N)
                T.clear(acc)
                for kk in T.Pipelined(T.ceildiv(K, block_K), num_stages=1):
                    T.copy(A[tm * block_M, kk * block_K], a_blk_whole)
                    T.copy(B[tn * block_N, kk * block_K], b_blk_whole)
                    T.gemm(a_blk_whole, b_blk_whole, acc, transpose_B=trans_B)
                T.copy(acc, C[tm * block_M, tn * block_N])


def _operands():
    return randn(m, k, seed=1), randn(n, k, seed=2), torch.zeros(m, n)


def _accumulated(a, b, c0):
    """C0 + A B^T in float32 (B is stored n x k)."""
    return c0 + torch.einsum("mk,nk->mn", a.float(), b.float())


EXAMPLES = [
    Example("gemm_streamk/tl_matmul_streamk", "gemm_streamk/example_tilelang_gemm_streamk.py: tl_matmul_streamk",
            stream_k_matmul,
            dict(M=m, N=n, K=k, streamk_tiles=SHARED_TILES, block_M=BM, block_N=BN, block_K=BK, trans_A=False,
                 trans_B=True, dtypeAB=T.bfloat16, dtypeC=T.float32, accum_dtype=T.float32, num_stages=2,
                 threads=64),
            _operands, _accumulated, checked=("C",)),
]
