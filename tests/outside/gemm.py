"""GEMM variants, outside TileLang's examples/.

Modelled on DeepSeek-V3.2-Exp ``inference/kernel.py`` (``fp8_gemm_kernel``: 32-row blocks, the A and
B scales read at computed indices inside the K loop, ``C_local`` promoted into ``C_local_accum`` and
cleared every K step); on sgl-project/sglang ``python/sglang/srt/layers/tilelang_gemm_wrapper/core/
kernels/`` (``base.py``, ``swap_ab.py`` and ``split_k.py``: the same blockwise-scaled GEMM with a
``tvm.te.var`` or ``T.dynamic`` token count, the scales staged in a shared vector, the swapped form
accumulating ``C_local_accum[j, i]`` so that its 16-row output blocks are stored transposed, and the
split-K form's two ``T.Kernel`` launches in one ``T.prim_func`` through ``T.macro`` — partial products
into a ``(split_k, M, N)`` workspace, then a combine); on tile-ai/tilelang
``testing/python/kernel/test_tilelang_kernel_gemm.py`` (``matmul`` with both operands transposed) and
``testing/python/jit/test_tilelang_jit_gemm_cython.py`` (``matmul_int_variable``: a scalar
``offset: T.int32`` parameter added to the result); and on tile-ai/TileOPs
``src/tileops/kernels/gemm/bmm.py`` (``_bmm_kernel``: a batched GEMM over ``grid.z`` with swizzled
shared layouts and a guarded element-wise store of the staged result) and on tile-ai/tilelang
``testing/python/kernel/test_tilelang_kernel_gemm_batched.py`` (``matmul_batched``: 3-D shared blocks holding
every batch's tile, a serial loop over the batch inside the program, ``T.gemm`` of the slices
``A_shared[b, :, :]``). Written anew in their idioms;
bfloat16 for float16 and for the float8 operands (the scales keep their float32 per-128 groups);
sizes of 64 to 512 with the authors' block shapes (sglang's tuned swap-AB config: 64 x 16 x 128)."""

import functools

import tilelang
import tilelang.language as T
import torch
from tilelang import tvm

from tests.examples.harness import Example, randn

PASS_CONFIGS = {tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True,
                tilelang.PassConfigKey.TL_DISABLE_TMA_LOWER: True}
GROUP = 128
BF16, FP32 = "bfloat16", "float32"


@tilelang.jit(pass_configs=PASS_CONFIGS)
def fp8_gemm_kernel(N, K, out_dtype=BF16, accum_dtype="float32"):
    M = T.symbolic("M")
    block_M, block_N, block_K = 32, 128, 128

    @T.prim_func
    def fp8_gemm_kernel_(
        A: T.Tensor[(M, K), BF16],
        B: T.Tensor[(N, K), BF16],
        C: T.Tensor[(M, N), out_dtype],
        scales_a: T.Tensor[(M, T.ceildiv(K, GROUP)), FP32],
        scales_b: T.Tensor[(T.ceildiv(N, GROUP), T.ceildiv(K, GROUP)), FP32],
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), BF16)
            B_shared = T.alloc_shared((block_N, block_K), BF16)
            C_shared = T.alloc_shared((block_M, block_N), out_dtype)
            Scale_C_shared = T.alloc_shared((block_M), "float32")
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_local_accum = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.use_swizzle(panel_size=10)
            T.clear(C_local)
            T.clear(C_local_accum)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=4):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[bx * block_N, k * block_K], B_shared)
                Scale_B = scales_b[bx * block_N // GROUP, k]
                for i in T.Parallel(block_M):
                    Scale_C_shared[i] = scales_a[by * block_M + i, k] * Scale_B
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
                for i, j in T.Parallel(block_M, block_N):
                    C_local_accum[i, j] += C_local[i, j] * Scale_C_shared[i]
                T.clear(C_local)
            T.copy(C_local_accum, C_shared)
            T.copy(C_shared, C[by * block_M, bx * block_N])

    return fp8_gemm_kernel_


@tilelang.jit
def blockwise_base(M, N, K, block_M=None, block_N=None, block_K=None, num_stages=None, threads=None,
                   out_dtype=BF16, accum_dtype="float32", c_scale_local=False, a_scale_shm=False):
    """sglang's base kernel: per-token-group A scales, per-block B scales, M a ``tvm.te.var``."""
    M = tvm.te.var("m")
    c_scale_alloc = T.alloc_fragment if c_scale_local else T.alloc_shared

    @T.prim_func
    def tilelang_fp8_blockwise(
        A: T.Tensor((M, K), BF16),
        B: T.Tensor((N, K), BF16),
        C: T.Tensor((M, N), out_dtype),
        a_scale: T.Tensor((M, T.ceildiv(K, GROUP)), "float32"),
        b_scale: T.Tensor((T.ceildiv(N, GROUP), T.ceildiv(K, GROUP)), "float32"),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), BF16)
            B_shared = T.alloc_shared((block_N, block_K), BF16)
            C_shared = T.alloc_shared((block_M, block_N), out_dtype)
            C_scale = c_scale_alloc((block_M,), "float32")
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_local_accum = T.alloc_fragment((block_M, block_N), accum_dtype)
            if a_scale_shm:
                A_scale_shared = T.alloc_shared((block_M,), "float32")

            T.clear(C_local)
            T.clear(C_local_accum)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[bx * block_N, k * block_K], B_shared)
                if a_scale_shm:
                    for i in T.Parallel(block_M):
                        A_scale_shared[i] = a_scale[by * block_M + i, k]
                    B_scale = b_scale[bx * block_N // GROUP, k]
                    for i in T.Parallel(block_M):
                        C_scale[i] = A_scale_shared[i] * B_scale
                else:
                    B_scale = b_scale[bx * block_N // GROUP, k]
                    for i in T.Parallel(block_M):
                        C_scale[i] = a_scale[by * block_M + i, k] * B_scale
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
                for i, j in T.Parallel(block_M, block_N):
                    C_local_accum[i, j] += C_local[i, j] * C_scale[i]
                T.clear(C_local)
            T.copy(C_local_accum, C_shared)
            T.copy(C_shared, C[by * block_M, bx * block_N])

    return tilelang_fp8_blockwise


@tilelang.jit
def blockwise_swap_ab(M, N, K, block_M=None, block_N=None, block_K=None, num_stages=None, threads=None,
                      out_dtype=BF16, accum_dtype="float32", c_scale_local=False, b_scale_shm=False):
    """sglang's swap-AB kernel: C (N, M) = (A B^T)^T, A the weight with per-block scales, B the
    ``n`` tokens with per-token-group scales; the accumulator is indexed transposed."""
    N = tvm.te.var("n")
    c_scale_alloc = T.alloc_fragment if c_scale_local else T.alloc_shared

    @T.prim_func
    def tilelang_fp8_blockwise(
        A: T.Tensor((M, K), BF16),
        B: T.Tensor((N, K), BF16),
        C: T.Tensor((N, M), out_dtype),
        a_scale: T.Tensor((T.ceildiv(M, GROUP), T.ceildiv(K, GROUP)), "float32"),
        b_scale: T.Tensor((N, T.ceildiv(K, GROUP)), "float32"),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), BF16)
            B_shared = T.alloc_shared((block_N, block_K), BF16)
            C_shared = T.alloc_shared((block_N, block_M), out_dtype)
            C_scale = c_scale_alloc((block_N,), "float32")
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_local_accum = T.alloc_fragment((block_N, block_M), accum_dtype)
            if b_scale_shm:
                B_scale_shared = T.alloc_shared((block_N,), "float32")

            T.clear(C_local)
            T.clear(C_local_accum)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[bx * block_N, k * block_K], B_shared)
                if b_scale_shm:
                    for i in T.Parallel(block_N):
                        B_scale_shared[i] = b_scale[bx * block_N + i, k]
                    A_scale = a_scale[by * block_M // GROUP, k]
                    for i in T.Parallel(block_N):
                        C_scale[i] = B_scale_shared[i] * A_scale
                else:
                    A_scale = a_scale[by * block_M // GROUP, k]
                    for i in T.Parallel(block_N):
                        C_scale[i] = b_scale[bx * block_N + i, k] * A_scale
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
                for i, j in T.Parallel(block_M, block_N):
                    C_local_accum[j, i] += C_local[i, j] * C_scale[j]
                T.clear(C_local)
            T.copy(C_local_accum, C_shared)
            T.copy(C_shared, C[bx * block_N, by * block_M])

    return tilelang_fp8_blockwise


@tilelang.jit
def blockwise_split_k(M, N, K, block_M=None, block_N=None, block_K=None, num_stages=None, threads=None,
                      split_k=1, out_dtype=BF16, accum_dtype="float32"):
    """sglang's split-K kernel: two launches in one prim_func, the split products through C_partial."""
    M = T.dynamic("m")
    K_per_split = K // split_k

    @T.macro
    def split_gemm(
        A: T.Tensor((M, K), BF16),
        B: T.Tensor((N, K), BF16),
        C_partial: T.Tensor((split_k, M, N), accum_dtype),
        a_scale: T.Tensor((M, T.ceildiv(K, GROUP)), FP32),
        b_scale: T.Tensor((T.ceildiv(N, GROUP), T.ceildiv(K, GROUP)), FP32),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), split_k, threads=threads) as (bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_K), BF16)
            B_shared = T.alloc_shared((block_N, block_K), BF16)
            C_shared = T.alloc_shared((block_M, block_N), accum_dtype)
            C_scale = T.alloc_shared((block_M,), "float32")
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_local_accum = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            T.clear(C_local_accum)
            for ko in T.Pipelined(T.ceildiv(K_per_split, block_K), num_stages=num_stages):
                k_offset = bz * K_per_split + ko * block_K
                scale_k = bz * (K_per_split // GROUP) + ko
                T.copy(A[by * block_M, k_offset], A_shared)
                T.copy(B[bx * block_N, k_offset], B_shared)
                B_scale = b_scale[bx * block_N // GROUP, scale_k]
                for i in T.Parallel(block_M):
                    C_scale[i] = a_scale[by * block_M + i, scale_k] * B_scale
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
                for i, j in T.Parallel(block_M, block_N):
                    C_local_accum[i, j] += C_local[i, j] * C_scale[i]
                T.clear(C_local)
            T.copy(C_local_accum, C_shared)
            T.copy(C_shared, C_partial[bz, by * block_M, bx * block_N])

    @T.macro
    def combine(C_partial: T.Tensor((split_k, M, N), accum_dtype), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_partial_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_shared = T.alloc_shared((block_M, block_N), out_dtype)
            T.clear(C_local)
            for s in range(split_k):
                T.copy(C_partial[s, by * block_M, bx * block_N], C_partial_local)
                for i, j in T.Parallel(block_M, block_N):
                    C_local[i, j] += C_partial_local[i, j]
            T.copy(C_local, C_shared)
            T.copy(C_shared, C[by * block_M, bx * block_N])

    @T.prim_func
    def tilelang_fp8_blockwise_splitk(
        A: T.Tensor((M, K), BF16),
        B: T.Tensor((N, K), BF16),
        C_partial: T.Tensor((split_k, M, N), accum_dtype),
        C: T.Tensor((M, N), out_dtype),
        a_scale: T.Tensor((M, T.ceildiv(K, GROUP)), FP32),
        b_scale: T.Tensor((T.ceildiv(N, GROUP), T.ceildiv(K, GROUP)), FP32),
    ):
        split_gemm(A, B, C_partial, a_scale, b_scale)
        combine(C_partial, C)

    return tilelang_fp8_blockwise_splitk


@tilelang.jit(out_idx=[2])
def matmul_trans_ab(M, N, K, block_M, block_N, block_K, trans_A, trans_B, in_dtype, out_dtype, accum_dtype,
                    num_stages, threads):
    A_shape = (K, M) if trans_A else (M, K)
    B_shape = (N, K) if trans_B else (K, N)
    A_shared_shape = (block_K, block_M) if trans_A else (block_M, block_K)
    B_shared_shape = (block_N, block_K) if trans_B else (block_K, block_N)

    @T.prim_func
    def main(A: T.Tensor(A_shape, in_dtype), B: T.Tensor(B_shape, in_dtype), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared(A_shared_shape, in_dtype)
            B_shared = T.alloc_shared(B_shared_shape, in_dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
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


@tilelang.jit(out_idx=2)
def matmul_int_variable(M, N, K, block_M, block_N, block_K, in_dtype, out_dtype, accum_dtype, num_stages, threads):
    @T.prim_func
    def main(A: T.Tensor((M, K), in_dtype), B: T.Tensor((K, N), in_dtype), C: T.Tensor((M, N), out_dtype),
             offset: T.int32):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), in_dtype)
            B_shared = T.alloc_shared((block_K, block_N), in_dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] = C_local[i, j] + offset
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


@functools.lru_cache(maxsize=8)
def bmm_builder(batch, m, n, k, dtype):
    @tilelang.jit(out_idx=[-1], pass_configs={"tl.disable_warp_specialized": True})
    def _bmm_func(block_m: int = 128, block_n: int = 128, block_k: int = 64, num_stages: int = 3,
                  threads: int = 128):
        @T.prim_func
        def _bmm_main(a: T.Tensor((batch, m, k), dtype), b: T.Tensor((batch, k, n), dtype),
                      c: T.Tensor((batch, m, n), dtype)):
            with T.Kernel(T.ceildiv(n, block_n), T.ceildiv(m, block_m), batch, threads=threads) as (bx, by, bz):
                a_smem = T.alloc_shared((block_m, block_k), dtype)
                b_smem = T.alloc_shared((block_k, block_n), dtype)
                c_smem = T.alloc_shared((block_m, block_n), dtype)
                c_local = T.alloc_fragment((block_m, block_n), "float")
                T.annotate_layout({
                    a_smem: tilelang.layout.make_swizzled_layout(a_smem),
                    b_smem: tilelang.layout.make_swizzled_layout(b_smem),
                    c_smem: tilelang.layout.make_swizzled_layout(c_smem),
                })
                T.use_swizzle(10, enable=True)
                T.clear(c_local)
                m_start = by * block_m
                n_start = bx * block_n
                for ki in T.Pipelined(T.ceildiv(k, block_k), num_stages=num_stages):
                    k_start = ki * block_k
                    T.copy(a[bz, m_start:m_start + block_m, k_start:k_start + block_k], a_smem)
                    T.copy(b[bz, k_start:k_start + block_k, n_start:n_start + block_n], b_smem)
                    T.gemm(a_smem, b_smem, c_local, policy=T.GemmWarpPolicy.FullRow)
                T.copy(c_local, c_smem)
                for i, j in T.Parallel(block_m, block_n):
                    if m_start + i < m and n_start + j < n:
                        c[bz, m_start + i, n_start + j] = c_smem[i, j]

        return _bmm_main

    return _bmm_func


@tilelang.jit(out_idx=[2])
def matmul_batched(batch, M, N, K, block_M, block_N, block_K, trans_A, trans_B, in_dtype, out_dtype, accum_dtype,
                   num_stages, threads):
    A_shape = (batch, K, M) if trans_A else (batch, M, K)
    B_shape = (batch, N, K) if trans_B else (batch, K, N)
    A_shared_shape = (batch, block_K, block_M) if trans_A else (batch, block_M, block_K)
    B_shared_shape = (batch, block_N, block_K) if trans_B else (batch, block_K, block_N)

    @T.prim_func
    def main(A: T.Tensor(A_shape, in_dtype), B: T.Tensor(B_shape, in_dtype), C: T.Tensor((batch, M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared(A_shared_shape, in_dtype)
            B_shared = T.alloc_shared(B_shared_shape, in_dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            for b in T.serial(batch):
                T.clear(C_local)
                for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                    if trans_A:
                        T.copy(A[b, k * block_K, by * block_M], A_shared[b, :, :])
                    else:
                        T.copy(A[b, by * block_M, k * block_K], A_shared[b, :, :])
                    if trans_B:
                        T.copy(B[b, bx * block_N, k * block_K], B_shared[b, :, :])
                    else:
                        T.copy(B[b, k * block_K, bx * block_N], B_shared[b, :, :])
                    T.gemm(A_shared[b, :, :], B_shared[b, :, :], C_local, trans_A, trans_B)
                T.copy(C_local, C[b, by * block_M, bx * block_N])

    return main


def _scales(rows, cols, seed):
    return torch.rand(rows, cols, generator=torch.Generator().manual_seed(seed)) + 0.5


def _blockwise(a, b, a_scale_full, b_scale_full):
    """sum over K groups g of (A_g B_g^T) * a_scale[:, g] * b_scale[:, g], scales expanded per row."""
    out = torch.zeros(a.shape[0], b.shape[0])
    for g in range(a.shape[1] // GROUP):
        cols = slice(g * GROUP, (g + 1) * GROUP)
        out += (a[:, cols].float() @ b[:, cols].float().T) * a_scale_full[:, g:g + 1] * b_scale_full[:, g][None, :]
    return out


M_, N_, K_ = 64, 256, 256


def _per_token_per_block_inputs(m, n, k, seed):
    """A (m, k) with per-token-group scales, B (n, k) with per-block scales."""
    return (randn(m, k, seed=seed), randn(n, k, seed=seed + 1), _scales(m, k // GROUP, seed + 2),
            _scales(n // GROUP, k // GROUP, seed + 3))


def _fp8_gemm_inputs():
    a, b, sa, sb = _per_token_per_block_inputs(M_, N_, K_, 81)
    return a, b, torch.zeros(M_, N_, dtype=torch.bfloat16), sa, sb


def _fp8_gemm_reference(a, b, _c, sa, sb):
    return _blockwise(a, b, sa, sb.repeat_interleave(GROUP, dim=0))


def _base_inputs():
    a, b, sa, sb = _per_token_per_block_inputs(M_, 128, K_, 85)
    return a, b, torch.zeros(M_, 128, dtype=torch.bfloat16), sa, sb


SWAP_M, SWAP_N = 128, 32


def _swap_inputs():
    a = randn(SWAP_M, K_, seed=91)
    b = randn(SWAP_N, K_, seed=92)
    return (a, b, torch.zeros(SWAP_N, SWAP_M, dtype=torch.bfloat16), _scales(SWAP_M // GROUP, K_ // GROUP, 93),
            _scales(SWAP_N, K_ // GROUP, 94))


def _swap_reference(a, b, _c, sa, sb):
    return _blockwise(a, b, sa.repeat_interleave(GROUP, dim=0), sb).T


SPLIT_K_, SPLITS = 512, 2


def _split_inputs():
    a, b, sa, sb = _per_token_per_block_inputs(M_, 128, SPLIT_K_, 95)
    return a, b, torch.zeros(SPLITS, M_, 128), torch.zeros(M_, 128, dtype=torch.bfloat16), sa, sb


def _split_reference(a, b, _partial, _c, sa, sb):
    return _blockwise(a, b, sa, sb.repeat_interleave(GROUP, dim=0))


SGLANG = "sgl-project/sglang python/sglang/srt/layers/tilelang_gemm_wrapper/core/kernels/"
EXAMPLES = [
    Example("gemm/fp8_gemm", "deepseek-ai/DeepSeek-V3.2-Exp inference/kernel.py: fp8_gemm_kernel", fp8_gemm_kernel,
            dict(N=N_, K=K_), _fp8_gemm_inputs, _fp8_gemm_reference, checked=("C",)),
    Example("gemm/blockwise_base", SGLANG + "base.py: kernel_factory", blockwise_base,
            dict(M=M_, N=128, K=K_, block_M=32, block_N=64, block_K=128, num_stages=2, threads=128,
                 c_scale_local=True, a_scale_shm=True), _base_inputs, _fp8_gemm_reference, checked=("C",)),
    Example("gemm/blockwise_swap_ab", SGLANG + "swap_ab.py: kernel_factory", blockwise_swap_ab,
            dict(M=SWAP_M, N=SWAP_N, K=K_, block_M=64, block_N=16, block_K=128, num_stages=2, threads=128,
                 c_scale_local=True, b_scale_shm=True), _swap_inputs, _swap_reference, checked=("C",)),
    Example("gemm/blockwise_split_k", SGLANG + "split_k.py: kernel_factory", blockwise_split_k,
            dict(M=M_, N=128, K=SPLIT_K_, block_M=32, block_N=64, block_K=128, num_stages=2, threads=128,
                 split_k=SPLITS), _split_inputs, _split_reference, checked=("C",)),
    Example("gemm/matmul_trans_ab", "tile-ai/tilelang testing/python/kernel/test_tilelang_kernel_gemm.py: matmul",
            matmul_trans_ab, dict(M=128, N=128, K=128, block_M=64, block_N=64, block_K=32, trans_A=True, trans_B=True,
                                  in_dtype=BF16, out_dtype=BF16, accum_dtype="float32", num_stages=2, threads=128),
            lambda: (randn(128, 128, seed=96), randn(128, 128, seed=97)), lambda a, b: a.float().T @ b.float().T),
    Example("gemm/matmul_int_variable",
            "tile-ai/tilelang testing/python/jit/test_tilelang_jit_gemm_cython.py: matmul_int_variable",
            matmul_int_variable, dict(M=128, N=128, K=128, block_M=64, block_N=64, block_K=32, in_dtype=BF16,
                                      out_dtype="float32", accum_dtype="float32", num_stages=2, threads=128),
            lambda: (randn(128, 128, seed=98), randn(128, 128, seed=99)), lambda a, b: a.float() @ b.float() - 3,
            scalars={"offset": -3}),
    Example("gemm/bmm", "tile-ai/TileOPs src/tileops/kernels/gemm/bmm.py: _bmm_kernel", bmm_builder(2, 64, 64, 128, BF16),
            dict(block_m=64, block_n=64, block_k=32, num_stages=2, threads=128),
            lambda: (randn(2, 64, 128, seed=100), randn(2, 128, 64, seed=101)), lambda a, b: a.float() @ b.float()),
    Example("gemm/matmul_batched",
            "tile-ai/tilelang testing/python/kernel/test_tilelang_kernel_gemm_batched.py: matmul_batched",
            matmul_batched, dict(batch=2, M=64, N=64, K=128, block_M=32, block_N=32, block_K=32, trans_A=False,
                                 trans_B=True, in_dtype=BF16, out_dtype=BF16, accum_dtype="float32", num_stages=2,
                                 threads=128),
            lambda: (randn(2, 64, 128, seed=102), randn(2, 64, 128, seed=103)),
            lambda a, b: a.float() @ b.float().transpose(1, 2)),
]
