"""Sums and extrema into global tensors with ``T.atomic_*``, outside TileLang's examples/.

Taken from tile-ai/tilelang ``testing/python/language/test_tilelang_language_atomic.py`` at commit
a35008a4 (``atomic_different_memory_orders_program``: ``T.atomic_add``, ``T.atomic_max`` and ``T.atomic_min``
of each element of ``A`` into three tensors under a bounds guard, each with its ``memory_order``;
``atomic_addx2_program``: ``T.atomic_addx2`` of element pairs, a ``T.Parallel`` over half the columns) and
from the KernelBench TileLang solutions of nathanjpaek/kb-pilot at commit c4104e8e
(``KernelBench/src/prompts/correct_tilelang/level1/1_37.py``, ``build_sumsq_kernel``: one thread per
element, its square in a ``T.alloc_local`` added into the one-element sum ``S[0]`` with ``T.atomic_add``;
``level1/1_94.py``, ``mse_sum_kernel``: one program of 256 threads, a ``T.Parallel`` over every element
of the flat index accumulating the squared difference into a one-element fragment, ``T.atomic_add`` of it
into ``Out[0]``). The authors' code as written; float16 made bfloat16 and the sizes made small (64 x 64 in
32 x 32 blocks; 4096 elements)."""

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn


@tilelang.jit
def atomic_different_memory_orders_program(M, N, block_M, block_N, dtype=T.float32):
    @T.prim_func
    def atomic_different_orders(
        A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype), D: T.Tensor((M, N), dtype)
    ):
        with T.Kernel(T.ceildiv(M, block_M), T.ceildiv(N, block_N), threads=32) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                idx_i = bx * block_M + i
                idx_j = by * block_N + j
                if idx_i < M and idx_j < N:
                    val = A[idx_i, idx_j]
                    T.atomic_add(B[idx_i, idx_j], val, memory_order="release")
                    T.atomic_max(C[idx_i, idx_j], val, memory_order="relaxed")
                    T.atomic_min(D[idx_i, idx_j], val, memory_order="relaxed")

    return atomic_different_orders


@tilelang.jit
def atomic_addx2_program(M, N, block_M, block_N, dtype=T.float16):
    @T.prim_func
    def atomic_addx2(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), T.ceildiv(N, block_N), threads=32) as (bx, by):
            for i, j in T.Parallel(block_M, block_N // 2):
                idx_i = bx * block_M + i
                idx_j = by * block_N + j * 2
                T.atomic_addx2(B[idx_i, idx_j], A[idx_i, idx_j])

    return atomic_addx2


@tilelang.jit()
def build_sumsq_kernel(numel: int, block_size: int = 256, dtype: str = "float32", accum_dtype: str = "float32"):
    @T.prim_func
    def kernel(
        X: T.Tensor((numel,), dtype),
        S: T.Tensor((1,), accum_dtype),   # running sum of squares
    ):
        with T.Kernel(T.ceildiv(numel, block_size), threads=block_size) as bx:
            tx = T.get_thread_binding(0)
            idx = bx * block_size + tx

            partial = T.alloc_local((1,), accum_dtype)
            partial[0] = T.Cast(accum_dtype, 0)

            if idx < numel:
                v = T.Cast(accum_dtype, X[idx])
                partial[0] = v * v

            T.atomic_add(S[0], partial[0])

    return kernel


@tilelang.jit()
def mse_sum_kernel(M, N, threads=256, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(
        Pred: T.Tensor((M, N), dtype),
        Target: T.Tensor((M, N), dtype),
        Out: T.Tensor((1,), accum_dtype),
    ):
        with T.Kernel(1, threads=threads):
            # Allocate thread-local accumulator
            local_sum = T.alloc_fragment((1,), accum_dtype)
            T.clear(local_sum)

            # Calculate total number of elements
            numel = M * N

            # Each thread processes multiple elements
            for idx in T.Parallel(numel):
                row = idx // N
                col = idx % N

                # Load values and cast to accumulation dtype
                pred_val = T.Cast(accum_dtype, Pred[row, col])
                target_val = T.Cast(accum_dtype, Target[row, col])

                # Compute squared difference
                diff = pred_val - target_val
                local_sum[0] = local_sum[0] + (diff * diff)

            # Atomically add local sum to global output
            T.atomic_add(Out[0], local_sum[0])

    return main


SIZE, BLOCK, NUMEL = 64, 32, 4096
TESTS = "tile-ai/tilelang testing/python/language/test_tilelang_language_atomic.py: "
KB = "nathanjpaek/kb-pilot KernelBench/src/prompts/correct_tilelang/level1/"


def _orders_inputs():
    a = randn(SIZE, SIZE, seed=301, dtype=torch.float32)
    return a, torch.zeros(SIZE, SIZE), torch.zeros(SIZE, SIZE), torch.full((SIZE, SIZE), float("inf"))


def _orders_reference(a, b, c, d):
    return b + a, torch.maximum(c, a), torch.minimum(d, a)


EXAMPLES = [
    Example("atomic/memory_orders", TESTS + "atomic_different_memory_orders_program (commit a35008a4)",
            atomic_different_memory_orders_program, dict(M=SIZE, N=SIZE, block_M=BLOCK, block_N=BLOCK),
            _orders_inputs, _orders_reference, checked=("B", "C", "D")),
    Example("atomic/addx2", TESTS + "atomic_addx2_program (commit a35008a4)", atomic_addx2_program,
            dict(M=SIZE, N=SIZE, block_M=BLOCK, block_N=BLOCK, dtype="bfloat16"),
            lambda: (randn(SIZE, SIZE, seed=302), torch.zeros(SIZE, SIZE, dtype=torch.bfloat16)),
            lambda a, b: b.float() + a.float(), checked=("B",)),
    Example("atomic/sumsq_kernelbench", KB + "1_37.py: build_sumsq_kernel (commit c4104e8e)", build_sumsq_kernel,
            dict(numel=NUMEL), lambda: (randn(NUMEL, seed=303, dtype=torch.float32), torch.zeros(1)),
            lambda x, s: s + (x * x).sum(), checked=("S",)),
    Example("atomic/mse_sum_kernelbench", KB + "1_94.py: mse_sum_kernel (commit c4104e8e)", mse_sum_kernel,
            dict(M=SIZE, N=SIZE, dtype="bfloat16"),
            lambda: (randn(SIZE, SIZE, seed=304), randn(SIZE, SIZE, seed=305), torch.zeros(1)),
            lambda p, t, out: out + ((p.float() - t.float()) ** 2).sum(), checked=("Out",)),
]
