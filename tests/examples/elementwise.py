"""Element-wise sum of two matrices, modelled on tile-ai/tilelang's
examples/elementwise/example_elementwise_add.py (elementwise_add).

Written anew for this catalogue in that example's idioms, not copied: an eager ``@tilelang.jit``
kernel over a (column block, row block) grid that copies both operand blocks to shared memory, adds
them in a ``T.Parallel`` loop into a fragment and writes the result through shared memory. Called as
the example's main calls it: float32 in and out, 32 x 32 blocks, 128 threads; 128 x 128 here (its
1024 x 1024)."""

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn


@tilelang.jit
def add_blocks(A, B, block_M, block_N, in_dtype, out_dtype, threads):
    M, N = T.const("M, N")

    A: T.Tensor((M, N), in_dtype)
    B: T.Tensor((M, N), in_dtype)
    C = T.empty((M, N), out_dtype)

    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        lhs = T.alloc_shared((block_M, block_N), in_dtype)
        rhs = T.alloc_shared((block_M, block_N), in_dtype)
        total = T.alloc_fragment((block_M, block_N), out_dtype)
        staged = T.alloc_shared((block_M, block_N), out_dtype)

        T.copy(A[by * block_M, bx * block_N], lhs)
        T.copy(B[by * block_M, bx * block_N], rhs)
        for r, c in T.Parallel(block_M, block_N):
            total[r, c] = lhs[r, c] + rhs[r, c]
        T.copy(total, staged)
        T.copy(staged, C[by * block_M, bx * block_N])

    return C


SIDE = 128

EXAMPLES = [
    Example("elementwise/elementwise_add", "elementwise/example_elementwise_add.py: elementwise_add", add_blocks,
            dict(M=SIDE, N=SIDE, block_M=32, block_N=32, threads=128, in_dtype=T.float32, out_dtype=T.float32),
            lambda: tuple(randn(SIDE, SIDE, seed=s, dtype=torch.float32) for s in (1, 2)), torch.add),
]
