"""Tiled C = A B, modelled on tile-ai/tilelang's examples/gemm: example_gemm.py (matmul) and
example_gemm_persistent.py (matmul_non_persistent and matmul_persistent).

Written anew for this catalogue in those examples' idioms, not copied: eager ``@tilelang.jit``
kernels (``T.const`` sizes, ``T.empty`` output), a ``T.Pipelined`` loop over K that stages A and B
blocks in shared memory and accumulates with ``T.gemm`` into a float32 fragment, the example's grid
orders, ``T.use_swizzle`` and, for the persistent form, a fixed number of programs walking the
output blocks with ``T.Persistent``. bfloat16 inputs; 256 x 256 x 256 with 128 x 128 x 32 blocks,
and 256 x 512 x 256 with 128 x 256 x 64 blocks for the persistent pair. The persistent example asks
the GPU driver for its SM count: here that is the constant PROGRAMS."""

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn

PROGRAMS = 8  # the example's driver.get_num_sms()


@tilelang.jit
def blocked_matmul(A, B, block_M, block_N, block_K, dtype=T.bfloat16, accum_dtype=T.float32):
    """matmul: programs laid out (column block, row block)."""
    M, N, K = T.const("M, N, K")

    A: T.Tensor((M, K), dtype)
    B: T.Tensor((K, N), dtype)
    C = T.empty((M, N), dtype)

    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        a_blk = T.alloc_shared((block_M, block_K), dtype)
        b_blk = T.alloc_shared((block_K, block_N), dtype)
        acc = T.alloc_fragment((block_M, block_N), accum_dtype)

        T.clear(acc)
        for kk in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
            T.copy(A[by * block_M, kk * block_K], a_blk)
            T.copy(B[kk * block_K, bx * block_N], b_blk)
            T.gemm(a_blk, b_blk, acc)
        T.copy(acc, C[by * block_M, bx * block_N])

    return C


@tilelang.jit
def blocked_matmul_rows_first(A, B, block_M, block_N, block_K, threads, num_stages, dtype=T.bfloat16,
                              accum_dtype=T.float32):
    """matmul_non_persistent: programs laid out (row block, column block), swizzled, the result
    staged through shared memory on its way out."""
    M, N, K = T.const("M, N, K")

    A: T.Tensor((M, K), dtype)
    B: T.Tensor((K, N), dtype)
    C = T.empty((M, N), dtype)

    with T.Kernel(T.ceildiv(M, block_M), T.ceildiv(N, block_N), threads=threads) as (bx, by):
        a_blk = T.alloc_shared((block_M, block_K), dtype)
        b_blk = T.alloc_shared((block_K, block_N), dtype)
        acc = T.alloc_fragment((block_M, block_N), accum_dtype)
        c_blk = T.alloc_shared((block_M, block_N), dtype)

        T.use_swizzle(10)

        T.clear(acc)
        for kk in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[bx * block_M, kk * block_K], a_blk)
            T.copy(B[kk * block_K, by * block_N], b_blk)
            T.gemm(a_blk, b_blk, acc)
        T.copy(acc, c_blk)
        T.copy(c_blk, C[bx * block_M, by * block_N])

    return C


@tilelang.jit
def persistent_matmul(A, B, block_M, block_N, block_K, threads, num_stages, dtype=T.bfloat16, accum_dtype=T.float32,
                      use_persistent_primitive=True):
    """matmul_persistent: PROGRAMS programs, each taking every PROGRAMS-th output block; with
    ``use_persistent_primitive`` through T.Persistent, otherwise in waves of hand-computed block
    coordinates (groups of 8 row blocks)."""
    M, N, K = T.const("M, N, K")

    A: T.Tensor((M, K), dtype)
    B: T.Tensor((K, N), dtype)
    C = T.empty((M, N), dtype)

    programs = PROGRAMS
    row_blocks = T.ceildiv(M, block_M)
    col_blocks = T.ceildiv(N, block_N)
    wave_count = T.ceildiv(row_blocks * col_blocks, programs)
    group = 8

    with T.Kernel(programs, threads=threads) as (pid):
        a_blk = T.alloc_shared((block_M, block_K), dtype)
        b_blk = T.alloc_shared((block_K, block_N), dtype)
        acc = T.alloc_fragment((block_M, block_N), accum_dtype)
        c_blk = T.alloc_shared((block_M, block_N), dtype)

        if use_persistent_primitive:
            for bx, by in T.Persistent([T.ceildiv(M, block_M), T.ceildiv(N, block_N)], programs, pid):
                T.clear(acc)
                for kk in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                    T.copy(A[bx * block_M, kk * block_K], a_blk)
                    T.copy(B[kk * block_K, by * block_N], b_blk)
                    T.gemm(a_blk, b_blk, acc)
                T.copy(acc, c_blk)
                T.copy(c_blk, C[bx * block_M, by * block_N])
        else:
            for wave in T.serial(wave_count):
                block = programs * wave + pid
                bx = (block // group) % row_blocks
                by = (block % group) + (block // group) // row_blocks * group
                if bx * block_M < M and by * block_N < N:
                    T.clear(acc)
                    for kk in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                        T.copy(A[bx * block_M, kk * block_K], a_blk)
                        T.copy(B[kk * block_K, by * block_N], b_blk)
                        T.gemm(a_blk, b_blk, acc)
                    T.copy(acc, c_blk)
                    T.copy(c_blk, C[bx * block_M, by * block_N])

    return C


def product(a, b):
    """sum_k a[m, k] b[k, n] in float32."""
    return torch.einsum("mk,kn->mn", a.float(), b.float())


def _operands(M, N, K):
    return lambda: (randn(M, K, seed=1), randn(K, N, seed=2))


PERSISTENT = dict(M=256, N=512, K=256, block_M=128, block_N=256, block_K=64, threads=256, num_stages=3)

EXAMPLES = [
    Example("gemm/matmul", "gemm/example_gemm.py: matmul", blocked_matmul,
            dict(M=256, N=256, K=256, block_M=128, block_N=128, block_K=32), _operands(256, 256, 256), product),
    Example("gemm/matmul_non_persistent", "gemm/example_gemm_persistent.py: matmul_non_persistent",
            blocked_matmul_rows_first, PERSISTENT, _operands(256, 512, 256), product),
    Example("gemm/matmul_persistent", "gemm/example_gemm_persistent.py: matmul_persistent", persistent_matmul,
            PERSISTENT, _operands(256, 512, 256), product),
]
