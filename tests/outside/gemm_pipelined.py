"""GEMMs in software-pipelined loops (``T.Pipelined`` with stages, orders and block masks), outside
TileLang's examples/.

Taken from tile-ai/tilelang at commit a35008a4: ``testing/python/language/test_tilelang_language_clear.py``
(``matmul``: ``T.clear(A_shared)`` right after A's tile is copied in, so the product is zero, in a
``T.Pipelined(..., num_stages=0)`` loop), ``testing/python/language/test_tilelang_language_pipeline.py``
(``matmul`` with an explicit pipeline ``order`` and ``stage`` per statement; ``blocksparse_matmul``: a
``bool`` block mask read into a ``T.alloc_local`` at each K step of a ``T.Pipelined(..., num_stages=...)``
loop, the step's copies and product under ``if block_mask[0]``) and
``testing/python/kernel/test_tilelang_kernel_gemm_with_stride.py`` (``matmul``: shared blocks twice as
wide as a tile, filled element by element at a column offset and multiplied as the slices
``A_shared[:, block_K:]`` and ``B_shared[0:block_K, 0:block_N]``); and from nathanjpaek/kb-pilot at commit
c4104e8e ``KernelBench/src/prompts/correct_tilelang/level2/2_28.py`` (``_make_linear_kernel``: ``X @ W^T``
in a two-stage pipeline, the bias added and the result stored element by element under a bounds
guard). The authors' code as written; float16 made bfloat16, the tests' functions that return a
``T.prim_func`` made ``@tilelang.jit`` (their callers' ``out_idx``), sizes 128 to 256 with the authors'
blocks where they fit (the tests' 128 x 128 x 32; 64 x 64 x 32 for the strided and linear ones)."""

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn

BF16 = "bfloat16"
NO_WS = {tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True}


@tilelang.jit(out_idx=[2])
def clear_matmul(M, N, K, block_M, block_N, block_K, dtype=T.float16, accum_dtype=T.float32):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((N, K), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        # Initialize Kernel Context
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_N, block_K), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(C_local)

            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=0):
                # Copy tile of A
                # This is a sugar syntax for parallelized copy
                T.copy(A[by * block_M, ko * block_K], A_shared)

                T.clear(A_shared)

                # Demonstrate parallelized copy from global to shared for B
                T.copy(B[bx * block_N, ko * block_K], B_shared)

                # Perform a tile-level GEMM on the shared buffers
                # Currently we dispatch to the cute/hip on Nvidia/AMD GPUs
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)

            # Copy result back to global memory
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


@tilelang.jit(out_idx=[2], pass_configs=NO_WS)
def order_stage_matmul(M, N, K, block_M, block_N, block_K, trans_A, trans_B, in_dtype, out_dtype, accum_dtype, threads,
                       order, stage):
    A_shape = (K, M) if trans_A else (M, K)
    B_shape = (N, K) if trans_B else (K, N)
    A_shared_shape = (block_K, block_M) if trans_A else (block_M, block_K)
    B_shared_shape = (block_N, block_K) if trans_B else (block_K, block_N)

    @T.prim_func
    def main(
        A: T.Tensor(A_shape, in_dtype),
        B: T.Tensor(B_shape, in_dtype),
        C: T.Tensor((M, N), out_dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared(A_shared_shape, in_dtype)
            B_shared = T.alloc_shared(B_shared_shape, in_dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), order=order, stage=stage):
                if trans_A:
                    T.copy(A[k * block_K, by * block_M], A_shared)
                else:
                    T.copy(A[by * block_M, k * block_K], A_shared)
                if trans_B:
                    T.copy(B[bx * block_N, k * block_K], B_shared)
                else:
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local, trans_A, trans_B)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


@tilelang.jit(out_idx=[-1], pass_configs=NO_WS)
def blocksparse_matmul(M, N, K, block_M, block_N, block_K, num_stages, dtype=T.float16, accum_dtype=T.float32):
    block_mask_shape = (M // block_M, N // block_N, K // block_K)

    @T.prim_func
    def block_sparse_matmul(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        BlockMask: T.Tensor(block_mask_shape, "bool"),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            block_mask = T.alloc_local((1,), "bool")
            C_shared = T.alloc_shared((block_M, block_N), dtype)

            T.clear(C_local)

            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                block_mask[0] = BlockMask[by, bx, k]
                if block_mask[0]:
                    T.copy(A[by * block_M, k * block_K], A_shared)
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                    T.gemm(A_shared, B_shared, C_local)

            T.copy(C_local, C_shared)
            T.copy(C_shared, C[by * block_M, bx * block_N])

    return block_sparse_matmul


@tilelang.jit(out_idx=[2], pass_configs=NO_WS)
def strided_matmul(M, N, K, block_M, block_N, block_K, dtype=T.float16, accum_dtype=T.float32):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        # Initialize Kernel Context
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K * 2), dtype, scope="shared")
            B_shared = T.alloc_shared((block_K, block_N * 2), dtype, scope="shared")
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            # Clear local accumulation
            T.clear(C_local)
            T.clear(B_shared)
            T.clear(A_shared)

            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=0):
                # Copy tile of A
                # T.copy(A[by * block_M, ko * block_K], A_shared)
                for i, k in T.Parallel(block_M, block_K):
                    A_shared[i, k + block_K] = A[by * block_M + i, ko * block_K + k]

                # Copy tile of B
                # T.copy(B[ko * block_K, bx * block_N], B_shared)
                for i, k in T.Parallel(block_K, block_N):
                    B_shared[i, k] = B[ko * block_K + i, bx * block_N + k]

                # Perform a tile-level GEMM on the shared buffers
                # Currently we dispatch to the cute/hip on Nvidia/AMD GPUs
                T.gemm(A_shared[:, block_K:], B_shared[0:block_K, 0:block_N], C_local)

            # Copy result back to global memory
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


@tilelang.jit(out_idx=-1)
def _make_linear_kernel(batch_size: int, in_features: int, out_features: int, block_M: int = 128, block_N: int = 128,
                        block_K: int = 32, dtype: str = "float16", accum_dtype: str = "float"):
    @T.prim_func
    def linear_kernel(
        X: T.Tensor((batch_size, in_features), dtype),
        W: T.Tensor((out_features, in_features), dtype),
        B: T.Tensor((out_features,), dtype),
        Out: T.Tensor((batch_size, out_features), dtype),
    ):
        with T.Kernel(
            T.ceildiv(out_features, block_N),
            T.ceildiv(batch_size, block_M),
            threads=128,
        ) as (bx, by):
            A_sh = T.alloc_shared((block_M, block_K), dtype)
            W_sh = T.alloc_shared((block_N, block_K), dtype)
            C_loc = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(C_loc)

            for ko in T.Pipelined(T.ceildiv(in_features, block_K), num_stages=2):
                T.copy(X[by * block_M, ko * block_K], A_sh)
                T.copy(W[bx * block_N, ko * block_K], W_sh)
                T.gemm(A_sh, W_sh, C_loc, transpose_B=True)

            for i, j in T.Parallel(block_M, block_N):
                gm = by * block_M + i
                gn = bx * block_N + j
                if (gm < batch_size) and (gn < out_features):
                    val = C_loc[i, j] + B[gn].astype(accum_dtype)
                    Out[gm, gn] = T.Cast(dtype, val)

    return linear_kernel


S = 256
MASK_SHAPE = (S // 128, S // 128, S // 32)
TESTS = "tile-ai/tilelang testing/python/"
GEMM = dict(M=S, N=S, K=S, block_M=128, block_N=128, block_K=32)


def _mask():
    return torch.rand(MASK_SHAPE, generator=torch.Generator().manual_seed(313)) > 0.5


def _blocksparse_reference(a, b, mask):
    c = torch.zeros(S, S)
    for i, j, k in torch.nonzero(mask).tolist():
        rows, cols, ks = slice(i * 128, (i + 1) * 128), slice(j * 128, (j + 1) * 128), slice(k * 32, (k + 1) * 32)
        c[rows, cols] += a.float()[rows, ks] @ b.float()[ks, cols]
    return c


EXAMPLES = [
    Example("gemm/clear_shared_in_pipeline", TESTS + "language/test_tilelang_language_clear.py: matmul (commit a35008a4)",
            clear_matmul, GEMM | dict(dtype=BF16), lambda: (randn(S, S, seed=311), randn(S, S, seed=312)),
            lambda a, b: torch.zeros(S, S)),
    Example("gemm/pipeline_order_stage",
            TESTS + "language/test_tilelang_language_pipeline.py: matmul (order [1, 2, 0], stage [0, 0, 2]; "
            "commit a35008a4)", order_stage_matmul,
            GEMM | dict(trans_A=False, trans_B=False, in_dtype=BF16, out_dtype=BF16, accum_dtype="float32",
                        threads=128, order=[1, 2, 0], stage=[0, 0, 2]),
            lambda: (randn(S, S, seed=314), randn(S, S, seed=315)), lambda a, b: a.float() @ b.float()),
    Example("gemm/blocksparse_pipelined",
            TESTS + "language/test_tilelang_language_pipeline.py: blocksparse_matmul (num_stages=2; commit a35008a4)",
            blocksparse_matmul, GEMM | dict(num_stages=2, dtype=BF16),
            lambda: (randn(S, S, seed=316), randn(S, S, seed=317), _mask()), _blocksparse_reference),
    Example("gemm/gemm_with_stride", TESTS + "kernel/test_tilelang_kernel_gemm_with_stride.py: matmul (commit a35008a4)",
            strided_matmul, dict(M=128, N=128, K=128, block_M=64, block_N=64, block_K=32, dtype=BF16),
            lambda: (randn(128, 128, seed=318), randn(128, 128, seed=319)), lambda a, b: a.float() @ b.float()),
    Example("gemm/linear_bias_kernelbench",
            "nathanjpaek/kb-pilot KernelBench/src/prompts/correct_tilelang/level2/2_28.py: _make_linear_kernel "
            "(commit c4104e8e)", _make_linear_kernel,
            dict(batch_size=128, in_features=128, out_features=128, block_M=64, block_N=64, dtype=BF16),
            lambda: (randn(128, 128, seed=320), randn(128, 128, seed=321), randn(128, seed=322)),
            lambda x, w, b: x.float() @ w.float().T + b.float()),
]
