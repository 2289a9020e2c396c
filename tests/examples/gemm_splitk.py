"""Split-K matrix products, modelled on tile-ai/tilelang's examples/gemm_splitk:
example_tilelang_gemm_splitk.py and example_tilelang_gemm_splitk_vectorize_atomicadd.py (both name
their kernel ``matmul``).

Written anew for this catalogue in those examples' idioms, not copied: an eager ``@tilelang.jit``
kernel whose output C is a parameter (the caller passes zeros), a grid of (column block, row block,
K slice), a ``T.Pipelined`` loop without stages over the program's slice of K, and the partial
block added into C with ``T.atomic_add``: element by element in a ``T.Parallel`` loop in the first,
as a whole block in the second. bfloat16 inputs, float32 accumulator and C; 256 x 256 x 256 with
128 x 128 x 32 blocks in 4 K slices."""

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn


@tilelang.jit
def split_k_matmul(A, B, C, block_M, block_N, block_K, split_k, dtype=T.bfloat16, accum_dtype=T.float32,
                   out_dtype=T.float32):
    """Partial products added into C one element at a time."""
    M, N, K = T.const("M, N, K")
    slice_len = K // split_k

    A: T.Tensor((M, K), dtype)
    B: T.Tensor((K, N), dtype)
    C: T.Tensor((M, N), out_dtype)

    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), split_k, threads=128) as (bx, by, bz):
        a_blk = T.alloc_shared((block_M, block_K), dtype)
        b_blk = T.alloc_shared((block_K, block_N), dtype)
        part = T.alloc_fragment((block_M, block_N), accum_dtype)

        T.clear(part)
        for kk in T.Pipelined(T.ceildiv(slice_len, block_K), num_stages=0):
            T.copy(A[by * block_M, bz * slice_len + kk * block_K], a_blk)
            T.copy(B[bz * slice_len + kk * block_K, bx * block_N], b_blk)
            T.gemm(a_blk, b_blk, part)

        for r, c in T.Parallel(block_M, block_N):
            T.atomic_add(C[by * block_M + r, bx * block_N + c], part[r, c])


@tilelang.jit
def split_k_matmul_block_atomic(A, B, C, block_M, block_N, block_K, split_k, dtype=T.bfloat16,
                                accum_dtype=T.float32, out_dtype=T.float32):
    """Partial products added into C as one block (a vectorisable T.atomic_add)."""
    M, N, K = T.const("M, N, K")
    slice_len = K // split_k

    A: T.Tensor((M, K), dtype)
    B: T.Tensor((K, N), dtype)
    C: T.Tensor((M, N), out_dtype)

    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), split_k, threads=128) as (bx, by, bz):
        a_blk = T.alloc_shared((block_M, block_K), dtype)
        b_blk = T.alloc_shared((block_K, block_N), dtype)
        part = T.alloc_fragment((block_M, block_N), accum_dtype)

        T.clear(part)
        for kk in T.Pipelined(T.ceildiv(slice_len, block_K), num_stages=0):
            T.copy(A[by * block_M, bz * slice_len + kk * block_K], a_blk)
            T.copy(B[bz * slice_len + kk * block_K, bx * block_N], b_blk)
            T.gemm(a_blk, b_blk, part)

        T.atomic_add(C[by * block_M, bx * block_N], part)


SIDE = 256


def _operands():
    return randn(SIDE, SIDE, seed=1), randn(SIDE, SIDE, seed=2), torch.zeros(SIDE, SIDE)


def _accumulated(a, b, c0):
    """C after the kernel: its initial value plus A B (float32)."""
    return c0 + torch.einsum("mk,kn->mn", a.float(), b.float())


SIZES = dict(M=SIDE, N=SIDE, K=SIDE, block_M=128, block_N=128, block_K=32, split_k=4)

EXAMPLES = [
    Example("gemm_splitk/matmul", "gemm_splitk/example_tilelang_gemm_splitk.py: matmul", split_k_matmul, SIZES,
            _operands, _accumulated, checked=("C",)),
    Example("gemm_splitk/matmul_vectorize_atomicadd",
            "gemm_splitk/example_tilelang_gemm_splitk_vectorize_atomicadd.py: matmul", split_k_matmul_block_atomic,
            SIZES, _operands, _accumulated, checked=("C",)),
]
