"""Copies, transposes and sums across a leading axis, from TileLang's own unit tests.

Modelled on tile-ai/tilelang ``testing/python/language/``: ``test_tilelang_language_transpose.py``
(``tilelang_transpose``: ``T.transpose`` of a shared block between slice copies),
``test_tilelang_language_copy.py`` (``tilelang_copy``: a global slice copied straight to a global
slice across dtypes; ``tilelang_copy_with_stride``: a ``T.StridedTensor`` read element-wise;
``tilelang_copy_buffer_load_with_parallel``: ``T.copy`` of single elements inside ``T.Parallel``) and
``test_tilelang_language_atomic.py`` (``atomic_add_program``: a 3-D grid whose third axis walks the
``K`` matrices of a ``(K, M, N)`` tensor, each program adding its block into ``B`` element by element
with ``T.atomic_add``). Written anew in their idioms; bfloat16 for float16; 128 x 128 tensors in 64 x 64
blocks (the tests: 1024 in 128), K = 4."""

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn

BF16 = "bfloat16"


@tilelang.jit(out_idx=[1])
def tilelang_transpose(M, N, block_M, block_N, dtype=BF16):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((N, M), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            tile = T.alloc_shared((block_M, block_N), dtype)
            tile_T = T.alloc_shared((block_N, block_M), dtype)
            T.copy(A[by * block_M:(by + 1) * block_M, bx * block_N:(bx + 1) * block_N], tile)
            T.transpose(tile, tile_T)
            T.copy(tile_T, B[bx * block_N:(bx + 1) * block_N, by * block_M:(by + 1) * block_M])

    return main


@tilelang.jit(out_idx=[1])
def tilelang_copy(M, N, block_M, block_N, src_dtype=BF16, dst_dtype=BF16):
    @T.prim_func
    def main(A: T.Tensor((M, N), src_dtype), B: T.Tensor((M, N), dst_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            T.copy(A[by * block_M:(by + 1) * block_M, bx * block_N:(bx + 1) * block_N],
                   B[by * block_M:(by + 1) * block_M, bx * block_N:(bx + 1) * block_N])

    return main


@tilelang.jit(out_idx=[1])
def tilelang_copy_with_stride(M, N, NN, block_M, block_N, dtype=BF16):
    @T.prim_func
    def main(A: T.StridedTensor((M, N), (NN, 1), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                B[by * block_M + i, bx * block_N + j] = A[by * block_M + i, bx * block_N + j]

    return main


@tilelang.jit(out_idx=[1])
def tilelang_copy_buffer_load_with_parallel(M, N, block_M, block_N, dtype=BF16):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                T.copy(A[by * block_M + i, bx * block_N + j], B[by * block_M + i, bx * block_N + j])

    return main


@tilelang.jit
def atomic_add_program(K, M, N, block_M, block_N, dtype="float32"):
    @T.prim_func
    def atomic_add(A: T.Tensor((K, M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), T.ceildiv(N, block_N), K, threads=32) as (bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_N), dtype)
            T.copy(A[bz, bx * block_M:(bx + 1) * block_M, by * block_N:(by + 1) * block_N], A_shared)
            for i, j in T.Parallel(block_M, block_N):
                T.atomic_add(B[bx * block_M + i, by * block_N + j], A_shared[i, j])

    return atomic_add


SIZE, BLOCK = 128, 64
TESTS = "tile-ai/tilelang testing/python/language/"


def _square():
    return (randn(SIZE, SIZE, seed=161),)


EXAMPLES = [
    Example("layout/transpose", TESTS + "test_tilelang_language_transpose.py: tilelang_transpose", tilelang_transpose,
            dict(M=SIZE, N=SIZE, block_M=BLOCK, block_N=BLOCK), _square, lambda a: a.float().T),
    Example("layout/copy_cross_dtype", TESTS + "test_tilelang_language_copy.py: tilelang_copy (cross dtype)",
            tilelang_copy, dict(M=SIZE, N=SIZE, block_M=BLOCK, block_N=BLOCK, dst_dtype="float32"), _square,
            lambda a: a.float()),
    Example("layout/copy_with_stride", TESTS + "test_tilelang_language_copy.py: tilelang_copy_with_stride",
            tilelang_copy_with_stride, dict(M=SIZE, N=SIZE, NN=2 * SIZE, block_M=BLOCK, block_N=BLOCK), _square,
            lambda a: a.float()),
    Example("layout/copy_elements_in_parallel",
            TESTS + "test_tilelang_language_copy.py: tilelang_copy_buffer_load_with_parallel",
            tilelang_copy_buffer_load_with_parallel, dict(M=SIZE, N=SIZE, block_M=BLOCK, block_N=BLOCK), _square,
            lambda a: a.float()),
    Example("layout/atomic_add_over_k", TESTS + "test_tilelang_language_atomic.py: atomic_add_program",
            atomic_add_program, dict(K=4, M=SIZE, N=SIZE, block_M=BLOCK, block_N=BLOCK),
            lambda: (randn(4, SIZE, SIZE, seed=162, dtype=torch.float32), torch.zeros(SIZE, SIZE)),
            lambda a, b: b + a.sum(dim=0), checked=("B",)),
]
