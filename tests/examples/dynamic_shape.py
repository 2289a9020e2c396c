"""A matrix product whose sizes are only known at run time, modelled on tile-ai/tilelang's
examples/dynamic_shape/example_dynamic.py (matmul_dynamic_mnk).

Written anew for this catalogue in that example's idioms, not copied: an eager ``@tilelang.jit``
kernel with ``T.dynamic`` extents m, n and k, optional transposed operands (chosen in Python: the
shapes, the copies and ``T.gemm``'s transpose flags follow them) and a pipelined K loop into a
float32 fragment. Called as the example's main calls it, with bfloat16 for float16: 128 x 128 x 32
blocks, no transposes, 3 stages, 128 threads; the tensors are 256 x 256 x 256 (its 16384^3). The
trans_B and trans_A variants (the example's other GEMM forms) run on sizes that are multiples of
neither the blocks nor the tiles: 200 x 90 x 72."""

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn


@tilelang.jit
def matmul_any_size(
    A,
    B,
    block_M,
    block_N,
    block_K,
    trans_A,
    trans_B,
    in_dtype,
    out_dtype,
    accum_dtype,
    num_stages,
    threads,
):
    M, N, K = T.dynamic("m"), T.dynamic("n"), T.dynamic("k")

    a_shape, a_blk_shape = ((K, M), (block_K, block_M)) if trans_A else ((M, K), (block_M, block_K))
    b_shape, b_blk_shape = ((N, K), (block_N, block_K)) if trans_B else ((K, N), (block_K, block_N))

    A: T.Tensor(a_shape, in_dtype)
    B: T.Tensor(b_shape, in_dtype)
    C = T.empty((M, N), out_dtype)

    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        a_blk = T.alloc_shared(a_blk_shape, in_dtype)
        b_blk = T.alloc_shared(b_blk_shape, in_dtype)
        acc = T.alloc_fragment((block_M, block_N), accum_dtype)
        T.clear(acc)
        for kk in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            if trans_A:
                T.copy(A[kk * block_K, by * block_M], a_blk)
            else:
                T.copy(A[by * block_M, kk * block_K], a_blk)
            if trans_B:
                T.copy(B[bx * block_N, kk * block_K], b_blk)
            else:
                T.copy(B[kk * block_K, bx * block_N], b_blk)
            T.gemm(a_blk, b_blk, acc, trans_A, trans_B)
        T.copy(acc, C[by * block_M, bx * block_N])

    return C


EXAMPLES = [
    Example("dynamic_shape/matmul_dynamic_mnk", "dynamic_shape/example_dynamic.py: matmul_dynamic_mnk",
            matmul_any_size,
            dict(block_M=128, block_N=128, block_K=32, trans_A=False, trans_B=False, in_dtype="bfloat16",
                 out_dtype="bfloat16", accum_dtype="float32", num_stages=3, threads=128),
            lambda: (randn(256, 256, seed=1), randn(256, 256, seed=2)),
            lambda a, b: torch.einsum("mk,kn->mn", a.float(), b.float())),
    Example("dynamic_shape/matmul_dynamic_mnk trans_B", "dynamic_shape/example_dynamic.py: matmul_dynamic_mnk",
            matmul_any_size,
            dict(block_M=64, block_N=64, block_K=32, trans_A=False, trans_B=True, in_dtype="bfloat16",
                 out_dtype="bfloat16", accum_dtype="float32", num_stages=3, threads=128),
            lambda: (randn(200, 72, seed=3), randn(90, 72, seed=4)),
            lambda a, b: torch.einsum("mk,nk->mn", a.float(), b.float())),
    Example("dynamic_shape/matmul_dynamic_mnk trans_A", "dynamic_shape/example_dynamic.py: matmul_dynamic_mnk",
            matmul_any_size,
            dict(block_M=64, block_N=64, block_K=32, trans_A=True, trans_B=False, in_dtype="bfloat16",
                 out_dtype="bfloat16", accum_dtype="float32", num_stages=3, threads=128),
            lambda: (randn(72, 200, seed=5), randn(72, 90, seed=6)),
            lambda a, b: torch.einsum("km,kn->mn", a.float(), b.float())),
]
