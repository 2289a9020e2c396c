"""Small kernels of TileLang's own language tests: variables, clamps, dynamic extents.

Modelled on tile-ai/tilelang ``testing/python/language/``: ``test_tilelang_language_alloc.py``
(``alloc_var_add``: a ``T.alloc_var`` set to 1 and added to a shared 1-D block;
``alloc_var_with_initializer``: ``T.alloc_var(dtype, init)`` stored over the copied block),
``test_tilelang_language_clamp.py`` (``clamp_within_bounds``: ``T.clamp`` of a shared 1-D block) and
``test_tilelang_language_parallel.py`` (``parallel_elementwise_static``: ``T.Parallel`` over a whole
global vector in one program; ``parallel_elementwise_dynamic``: a scalar ``valid_len: T.int32``
parameter and a ``T.Parallel`` over ``T.min(valid_len, max_len)``). Written anew in their idioms;
bfloat16 for float16; 1024 elements in blocks of 128 (the tests' sizes), 256 and 512 for the
parallel ones."""

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
]
