"""Matrix-vector products, outside TileLang's examples/.

Modelled on the KernelBench TileLang solution of level 1 problem 4 in nathanjpaek/kb-pilot
(``splitk_gemv_vectorized``: a 2-D thread block, ``T.get_thread_binding`` rows and K slices, per-thread
``T.alloc_local`` registers filled by a guarded ``T.vectorized`` loop, a shared accumulator summed with
``T.atomic_add`` between ``T.tvm_storage_sync`` barriers), on tile-ai/tilelang
``testing/python/kernel/test_tilelang_kernel_gemv_simt.py`` (``gemv_simt``: BitBLAS' outer-reduction
schedule, ``tvm_thread_allreduce`` under a ``comm_reducer`` attribute) and on tile-ai/TileOPs
``src/tileops/kernels/gemm/w4a16_decode.py`` (``_gemm_w4a16_decode_kernel``: 4-bit weights two to a
uint8, unpacked with ``% 16`` and ``// 16``, dequantised with per-group scales and zero points read at
computed indices, partial products kept per thread slot and summed once with ``T.reduce_sum``).
Written anew in their idioms; bfloat16 activations; N = 64 to 256 rows, K = 256 to 512."""

import functools

import tilelang
import tilelang.language as T
import torch
from tvm import DataType

from tests.examples.harness import Example, randn


@tilelang.jit(out_idx=-1)
def splitk_gemv_vectorized(M: int, K: int, BLOCK_M: int = 64, REDUCE_THREADS: int = 8, dtype: str = "bfloat16",
                           accum_dtype: str = "float"):
    """C = A @ B for B of shape (K, 1): thread (tm, tk) owns row tm of the block and one K slice."""
    TILE_K = 128 // DataType(dtype).bits
    BLOCK_K = REDUCE_THREADS * TILE_K

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, 1), dtype), C: T.Tensor((M, 1), dtype)):
        with T.Kernel(T.ceildiv(M, BLOCK_M), threads=(BLOCK_M, REDUCE_THREADS)) as bm:
            tm = T.get_thread_binding(0)
            tk = T.get_thread_binding(1)
            C_shared = T.alloc_shared((BLOCK_M,), accum_dtype)
            A_local = T.alloc_local((TILE_K,), dtype)
            B_local = T.alloc_local((TILE_K,), dtype)
            C_accum = T.alloc_local((1,), accum_dtype)

            if tk == 0:
                C_shared[tm] = T.Cast(accum_dtype, 0)
            T.tvm_storage_sync("shared")
            T.clear(C_accum)
            for bk in T.serial(T.ceildiv(K, BLOCK_K)):
                for k in T.vectorized(TILE_K):
                    a_idx = bk * BLOCK_K + tk * TILE_K + k
                    m_idx = bm * BLOCK_M + tm
                    if (a_idx < K) and (m_idx < M):
                        A_local[k] = A[m_idx, a_idx]
                        B_local[k] = B[a_idx, 0]
                    else:
                        A_local[k] = 0.0
                        B_local[k] = 0.0
                for k in T.serial(TILE_K):
                    C_accum[0] += A_local[k].astype(accum_dtype) * B_local[k].astype(accum_dtype)
            T.atomic_add(C_shared[tm], C_accum[0])
            T.tvm_storage_sync("shared")
            if (tk == 0) and (bm * BLOCK_M + tm < M):
                C[bm * BLOCK_M + tm, 0] = T.Cast(dtype, C_shared[tm])

    return main


@tilelang.jit(out_idx=[3])
def gemv_simt(M, N, K, in_dtype="bfloat16", out_dtype="bfloat16", accum_dtype="float32", n_partition=4,
              reduce_thread=32):
    """C = A @ B^T + bias with B (N, K): ``reduce_thread`` lanes split K, ``n_partition`` rows per
    program, the lanes' partial sums combined by ``tvm_thread_allreduce``."""
    micro_size_k = 128 // DataType(in_dtype).bits
    block_K = reduce_thread * micro_size_k

    @T.prim_func
    def main(A: T.Tensor((M, K), in_dtype), B: T.Tensor((N, K), in_dtype), Bias: T.Tensor((N,), out_dtype),
             C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, n_partition), M, threads=(reduce_thread, n_partition)) as (bx, by):
            A_local = T.alloc_local((micro_size_k,), in_dtype)
            B_local = T.alloc_local((micro_size_k,), in_dtype)
            accum_res = T.alloc_local((1,), accum_dtype)
            reduced_accum_res = T.alloc_local((1,), accum_dtype)
            kr = T.get_thread_binding(0)
            ni = T.get_thread_binding(1)

            T.clear(accum_res)
            for ko in T.serial(T.ceildiv(K, block_K)):
                for v in T.vectorized(micro_size_k):
                    A_local[v] = A[by, ko * block_K + kr * micro_size_k + v]
                for v in T.vectorized(micro_size_k):
                    B_local[v] = B[bx * n_partition + ni, ko * block_K + kr * micro_size_k + v]
                for ki in T.serial(micro_size_k):
                    accum_res[0] += A_local[ki].astype(accum_dtype) * B_local[ki].astype(accum_dtype)
            with T.attr(T.comm_reducer(lambda x, y: x + y, [T.cast(0, accum_dtype)]), "reduce_scope",
                        T.reinterpret(T.uint64(0), dtype="handle")):
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), accum_res[0], True, reduced_accum_res[0], kr,
                                                  dtype="handle"))
            if kr == 0:
                C[by, bx * n_partition + ni] = reduced_accum_res[0] + Bias[bx * n_partition + ni]

    return main


GROUP_SIZE, BYTES_PER_SLOT = 128, 4


@functools.lru_cache(maxsize=8)
def w4a16_decode_builder(n, k, dtype):
    @tilelang.jit(out_idx=[-1])
    def build(block_n: int = 32, block_k: int = 512, threads: int = 128, num_stages: int = 4):
        packed_k = block_k // 2
        tile_groups = block_k // GROUP_SIZE

        @T.prim_func
        def main(
            activation: T.Tensor((1, k), dtype),
            packed_weight: T.Tensor((n, k // 2), "uint8"),
            weight_scale: T.Tensor((n, k // GROUP_SIZE), "float32"),
            weight_zero: T.Tensor((n, k // GROUP_SIZE), "uint8"),
            output: T.Tensor((1, n), dtype),
        ):
            with T.Kernel(T.ceildiv(n, block_n), threads=threads) as bx:
                activation_shared = T.alloc_shared((1, block_k), dtype)
                packed_shared = T.alloc_shared((block_n, packed_k), "uint8")
                scale_shared = T.alloc_shared((block_n, tile_groups), "float32")
                zero_shared = T.alloc_shared((block_n, tile_groups), "uint8")
                products = T.alloc_fragment((block_n, packed_k // BYTES_PER_SLOT), "float")
                partial = T.alloc_fragment((block_n,), "float")
                n_start = bx * block_n

                T.clear(products)
                for kk in T.Pipelined(k // block_k, num_stages=num_stages):
                    for j in T.Parallel(block_k):
                        activation_shared[0, j] = activation[0, kk * block_k + j]
                    T.copy(packed_weight[n_start:n_start + block_n, kk * packed_k:(kk + 1) * packed_k], packed_shared)
                    T.copy(weight_scale[n_start:n_start + block_n, kk * tile_groups:(kk + 1) * tile_groups],
                           scale_shared)
                    T.copy(weight_zero[n_start:n_start + block_n, kk * tile_groups:(kk + 1) * tile_groups],
                           zero_shared)
                    for i, j in T.Parallel(block_n, packed_k // BYTES_PER_SLOT):
                        for v in T.serial(BYTES_PER_SLOT):
                            byte_k = j * BYTES_PER_SLOT + v
                            byte = T.cast(packed_shared[i, byte_k], "int32")
                            scale = scale_shared[i, byte_k // (GROUP_SIZE // 2)]
                            zero = T.cast(zero_shared[i, byte_k // (GROUP_SIZE // 2)], "float")
                            low = T.cast((T.cast(byte % 16, "float") - zero) * scale, dtype)
                            high = T.cast((T.cast(byte // 16, "float") - zero) * scale, dtype)
                            products[i, j] += T.cast(activation_shared[0, byte_k * 2], "float") * T.cast(low, "float") \
                                + T.cast(activation_shared[0, byte_k * 2 + 1], "float") * T.cast(high, "float")
                T.reduce_sum(products, partial, dim=1)
                for i in T.Parallel(block_n):
                    if n_start + i < n:
                        output[0, n_start + i] = T.cast(partial[i], dtype)

        return main

    return build


W4_N, W4_K = 64, 512


def _w4_inputs():
    g = torch.Generator().manual_seed(73)
    packed = torch.randint(0, 256, (W4_N, W4_K // 2), generator=g, dtype=torch.uint8)
    scale = torch.rand(W4_N, W4_K // GROUP_SIZE, generator=g) * 0.1
    zero = torch.randint(0, 16, (W4_N, W4_K // GROUP_SIZE), generator=g, dtype=torch.uint8)
    return randn(1, W4_K, seed=74), packed, scale, zero


def _w4_reference(activation, packed, scale, zero):
    nibbles = torch.stack([packed % 16, packed // 16], dim=-1).reshape(W4_N, W4_K).float()
    group_scale = scale.repeat_interleave(GROUP_SIZE, dim=1)
    group_zero = zero.float().repeat_interleave(GROUP_SIZE, dim=1)
    weight = ((nibbles - group_zero) * group_scale).to(torch.bfloat16).float()
    return activation.float() @ weight.T


EXAMPLES = [
    Example("gemv/splitk_gemv_vectorized",
            "nathanjpaek/kb-pilot KernelBench/src/prompts/correct_tilelang/level1/1_4.py: splitk_gemv_vectorized",
            splitk_gemv_vectorized, dict(M=256, K=256), lambda: (randn(256, 256, seed=71), randn(256, 1, seed=72)),
            lambda a, b: a.float() @ b.float()),
    Example("gemv/gemv_simt", "tile-ai/tilelang testing/python/kernel/test_tilelang_kernel_gemv_simt.py: gemv_simt",
            gemv_simt, dict(M=1, N=256, K=512),
            lambda: (randn(1, 512, seed=75), randn(256, 512, seed=76), randn(256, seed=77)),
            lambda a, b, bias: a.float() @ b.float().T + bias.float()),
    Example("gemv/w4a16_decode", "tile-ai/TileOPs src/tileops/kernels/gemm/w4a16_decode.py: _gemm_w4a16_decode_kernel",
            w4a16_decode_builder(W4_N, W4_K, "bfloat16"), dict(block_n=32, block_k=256, threads=128, num_stages=2),
            _w4_inputs, _w4_reference),
]
