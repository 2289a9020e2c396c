"""Small kernels of TileLang's own language tests: variables, clamps, dynamic extents.

Modelled on tile-ai/tilelang ``testing/python/language/``: ``test_tilelang_language_alloc.py``
(``alloc_var_add``: a ``T.alloc_var`` set to 1 and added to a shared 1-D block;
``alloc_var_with_initializer``: ``T.alloc_var(dtype, init)`` stored over the copied block),
``test_tilelang_language_clamp.py`` (``clamp_within_bounds``: ``T.clamp`` of a shared 1-D block) and
``test_tilelang_language_parallel.py`` (``parallel_elementwise_static``: ``T.Parallel`` over a whole
global vector in one program; ``parallel_elementwise_dynamic``: a scalar ``valid_len: T.int32``
parameter and a ``T.Parallel`` over ``T.min(valid_len, max_len)``), ``test_tilelang_language_ternary.py``
(``tilelang_ternary``: a Python conditional expression on the global row inside ``T.Parallel``, reading and
writing the global tensors element by element), ``test_tilelang_language_if_range.py``
(``tilelang_if_range``: a chained comparison ``16 < row_idx < 96`` choosing between two element-wise
stores) and ``test_tilelang_language_reshape.py`` (``reshape_test_smem_1d_2_2d``: a shared vector filled
element by element from the global one, ``T.reshape`` to ``[N // M, M]`` and copied out). Written anew in
their idioms; bfloat16 for float16; 1024 elements in blocks of 128 (the tests' sizes), 256 and 512 for the
parallel ones, 128 x 128 in 32 x 32 blocks for the conditional ones."""

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn


@tilelang.jit(out_idx=[1])
def alloc_var_add(N, block_N, dtype):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), threads=block_N) as bx:
            A_shared = T.alloc_shared([block_N], dtype)
            tmp = T.alloc_var(dtype)
            tmp = 1  # noqa: F841
            T.copy(A[bx * block_N], A_shared)
            for i in T.Parallel(block_N):
                A_shared[i] = A_shared[i] + tmp
            T.copy(A_shared, B[bx * block_N])

    return main


@tilelang.jit(out_idx=[1])
def alloc_var_with_initializer(N, block_N, dtype, init_value):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), threads=block_N) as bx:
            tmp = T.alloc_var(dtype, init_value)
            T.copy(A[bx * block_N], B[bx * block_N])
            for i in T.Parallel(block_N):
                B[bx * block_N + i] = tmp

    return main


@tilelang.jit(out_idx=[1])
def clamp_within_bounds(N, block_N, dtype, min_val=None, max_val=None):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), threads=block_N) as bx:
            A_shared = T.alloc_shared([block_N], dtype)
            T.copy(A[bx * block_N], A_shared)
            for i in T.Parallel(block_N):
                A_shared[i] = T.clamp(A_shared[i], min_val=min_val, max_val=max_val)
            T.copy(A_shared, B[bx * block_N])

    return main


@tilelang.jit(out_idx=[1])
def parallel_elementwise_static(length=256, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((length,), dtype), B: T.Tensor((length,), dtype)):
        with T.Kernel(1, threads=length) as _:
            for i in T.Parallel(length):
                B[i] = A[i] + 1.0

    return main


@tilelang.jit(out_idx=[1])
def parallel_elementwise_dynamic(max_len=512, threads=256, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((max_len,), dtype), B: T.Tensor((max_len,), dtype), valid_len: T.int32):
        with T.Kernel(1, threads=threads) as _:
            for i in T.Parallel(max_len):
                B[i] = 0.0
            span = T.min(valid_len, max_len)
            for i in T.Parallel(span):
                B[i] = A[i] - 1.0

    return main


@tilelang.jit(out_idx=[1])
def tilelang_ternary(M, N, block_M, block_N, dtype="bfloat16"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                B[by * block_M + i, bx * block_N + j] = \
                    A[by * block_M + i, bx * block_N + j] if (by * block_M + i) < (M // 2) else 0

    return main


@tilelang.jit(out_idx=[1])
def tilelang_if_range(M, N, block_M, block_N, dtype="bfloat16"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                row_idx = by * block_M + i
                col_idx = bx * block_N + j
                if 16 < row_idx < 96:
                    B[row_idx, col_idx] = A[row_idx, col_idx] * 2.0
                else:
                    B[row_idx, col_idx] = A[row_idx, col_idx] * 0.5

    return main


@tilelang.jit(out_idx=-1)
def reshape_smem_1d_2_2d(N, M, dtype):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N // M, M), dtype)):
        with T.Kernel(1) as _:
            A_shared = T.alloc_shared((N,), dtype)
            for i in T.Parallel(N):
                A_shared[i] = A[i]
            A_smem_reshaped = T.reshape(A_shared, [N // M, M])
            T.copy(A_smem_reshaped, B)

    return main


def _if_range_reference(a):
    rows = torch.arange(a.shape[0])[:, None]
    return torch.where((rows > 16) & (rows < 96), a.float() * 2.0, a.float() * 0.5)


@tilelang.jit(out_idx=[1], pass_configs={tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True})
def tilelang_copy_mask_parallel(M, N, block_M, block_N, dtype=T.float16):
    """tile-ai/tilelang ``test_tilelang_language_mask_op.py`` (commit a35008a4), as written."""

    @T.prim_func
    def main(
        A: T.Tensor((M, N), dtype),
        B: T.Tensor((M, N), dtype),
    ):
        # Initialize Kernel Context
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_N), dtype)

            tx = T.get_thread_binding(0)

            if tx < 128:
                for i, k in T.Parallel(block_M, block_N):
                    A_shared[i, k] = A[by * block_M + i, bx * block_N + k]

            T.copy(A_shared, B[by * block_M, bx * block_N])

    return main


VALID_LEN = 200


def _valid_reference(a):
    out = torch.zeros_like(a)
    out[:VALID_LEN] = a[:VALID_LEN] - 1.0
    return out


TESTS = "tile-ai/tilelang testing/python/language/"
EXAMPLES = [
    Example("language/alloc_var_add", TESTS + "test_tilelang_language_alloc.py: alloc_var_add", alloc_var_add,
            dict(N=1024, block_N=128, dtype="bfloat16"), lambda: (randn(1024, seed=171),), lambda a: a.float() + 1),
    Example("language/alloc_var_with_initializer",
            TESTS + "test_tilelang_language_alloc.py: alloc_var_with_initializer", alloc_var_with_initializer,
            dict(N=256, block_N=64, dtype="int32", init_value=5),
            lambda: (torch.randint(-9, 9, (256,), generator=torch.Generator().manual_seed(172), dtype=torch.int32),),
            lambda a: torch.full_like(a, 5)),
    Example("language/clamp", TESTS + "test_tilelang_language_clamp.py: clamp_within_bounds", clamp_within_bounds,
            dict(N=1024, block_N=128, dtype="bfloat16", min_val=-0.5, max_val=0.5),
            lambda: (randn(1024, seed=173),), lambda a: a.float().clamp(-0.5, 0.5)),
    Example("language/parallel_static", TESTS + "test_tilelang_language_parallel.py: parallel_elementwise_static",
            parallel_elementwise_static, dict(length=256), lambda: (randn(256, seed=174, dtype=torch.float32),),
            lambda a: a + 1.0),
    Example("language/parallel_dynamic", TESTS + "test_tilelang_language_parallel.py: parallel_elementwise_dynamic",
            parallel_elementwise_dynamic, dict(max_len=512, threads=256),
            lambda: (randn(512, seed=175, dtype=torch.float32),), _valid_reference, scalars={"valid_len": VALID_LEN}),
    Example("language/ternary", TESTS + "test_tilelang_language_ternary.py: tilelang_ternary", tilelang_ternary,
            dict(M=128, N=128, block_M=32, block_N=32), lambda: (randn(128, 128, seed=241),),
            lambda a: torch.where(torch.arange(128)[:, None] < 64, a.float(), torch.zeros(()))),
    Example("language/if_range", TESTS + "test_tilelang_language_if_range.py: tilelang_if_range", tilelang_if_range,
            dict(M=128, N=128, block_M=32, block_N=32), lambda: (randn(128, 128, seed=242),), _if_range_reference),
    Example("language/reshape_smem_1d_2_2d", TESTS + "test_tilelang_language_reshape.py: reshape_test_smem_1d_2_2d",
            reshape_smem_1d_2_2d, dict(N=2048, M=64, dtype="bfloat16"), lambda: (randn(2048, seed=243),),
            lambda a: a.float().reshape(32, 64)),
    Example("language/copy_mask_parallel", TESTS + "test_tilelang_language_mask_op.py: tilelang_copy_mask_parallel "
            "(commit a35008a4)", tilelang_copy_mask_parallel, dict(M=128, N=128, block_M=64, block_N=64, dtype="bfloat16"),
            lambda: (randn(128, 128, seed=244),), lambda a: a.float()),
]
