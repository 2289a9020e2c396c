"""Reductions, outside TileLang's examples/.

Modelled on tile-ai/tilelang ``testing/python/language/test_tilelang_language_reduce.py`` (``test_reduce``'s
kernel: one program copies the whole ``(M, N)`` tensor into a fragment or a shared block and reduces it
along its rows with ``T.reduce_min``, ``T.reduce_abssum`` or ``T.reduce_absmax``, then copies the ``(M,)``
result out) and on the KernelBench TileLang solutions in nathanjpaek/kb-pilot of level 1 problem 97
(cosine similarity:
per-row dot product and norms accumulated with ``+=`` inside a ``T.Parallel`` over a block, a guarded
per-row store) and problem 49 (max over the leading axis of a 3-D tensor: one thread per output element,
``T.get_thread_binding``, a ``T.alloc_local`` running maximum over a serial loop). Written anew in their
idioms; float32 as the tests (bfloat16 for KernelBench's float16); 64 x 64 (the tests: 128 x 128)."""

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn


def _reduce_op(op, src, dst, dim):
    if op == "min":
        T.reduce_min(src, dst, dim=dim)
    elif op == "abssum":
        T.reduce_abssum(src, dst, dim=dim)
    elif op == "absmax":
        T.reduce_absmax(src, dst, dim=dim)


@tilelang.jit(out_idx=-1)
def reduce_kernel(M, N, dtype, op, src_scope, dst_scope, threads):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(1, threads=threads):
            src = T.alloc_fragment((M, N), dtype) if src_scope == "fragment" else T.alloc_shared((M, N), dtype)
            dst = T.alloc_fragment((M,), dtype) if dst_scope == "fragment" else T.alloc_shared((M,), dtype)
            T.copy(A, src, disable_tma=src_scope == "shared")
            _reduce_op(op, src, dst, dim=1)
            T.copy(dst, B)

    return main


@tilelang.jit(out_idx=-1)
def cosine_similarity_kernel(B: int, F: int, block_M: int = 128, block_K: int = 64, in_dtype: str = "bfloat16",
                             accum_dtype: str = "float"):
    @T.prim_func
    def kernel(P: T.Tensor((B, F), in_dtype), Tgt: T.Tensor((B, F), in_dtype), Out: T.Tensor((B,), "float32")):
        with T.Kernel(T.ceildiv(B, block_M), threads=256) as bx:
            P_shared = T.alloc_shared((block_M, block_K), in_dtype)
            T_shared = T.alloc_shared((block_M, block_K), in_dtype)
            dot_loc = T.alloc_fragment((block_M,), accum_dtype)
            norm_p_loc = T.alloc_fragment((block_M,), accum_dtype)
            norm_t_loc = T.alloc_fragment((block_M,), accum_dtype)
            T.clear(dot_loc)
            T.clear(norm_p_loc)
            T.clear(norm_t_loc)
            for ko in T.Pipelined(T.ceildiv(F, block_K), num_stages=2):
                T.copy(P[bx * block_M, ko * block_K], P_shared)
                T.copy(Tgt[bx * block_M, ko * block_K], T_shared)
                for i, j in T.Parallel(block_M, block_K):
                    val_p = T.Cast(accum_dtype, P_shared[i, j])
                    val_t = T.Cast(accum_dtype, T_shared[i, j])
                    dot_loc[i] += val_p * val_t
                    norm_p_loc[i] += val_p * val_p
                    norm_t_loc[i] += val_t * val_t
            eps = T.Cast(accum_dtype, 1e-8)
            for i in T.Parallel(block_M):
                r = bx * block_M + i
                if r < B:
                    Out[r] = T.Cast("float32", dot_loc[i] * T.rsqrt(norm_p_loc[i] * norm_t_loc[i] + eps))

    return kernel


@tilelang.jit(out_idx=-1)
def max_over_leading_axis(B, D1, D2, block_size=256, dtype="bfloat16"):
    @T.prim_func
    def kernel(X: T.Tensor((B, D1, D2), dtype), Y: T.Tensor((D1, D2), dtype)):
        total = D1 * D2
        with T.Kernel(T.ceildiv(total, block_size), threads=block_size) as bx:
            tx = T.get_thread_binding(0)
            idx = bx * block_size + tx
            if idx < total:
                d1 = idx // D2
                d2 = idx % D2
                m = T.alloc_local((1,), dtype)
                m[0] = X[0, d1, d2]
                for b in range(1, B):
                    m[0] = T.max(m[0], X[b, d1, d2])
                Y[d1, d2] = m[0]

    return kernel


SIZE = 64
TESTS = "tile-ai/tilelang testing/python/language/test_tilelang_language_reduce.py: test_reduce "
KB = "nathanjpaek/kb-pilot KernelBench/src/prompts/correct_tilelang/level1/"


def _square():
    return (randn(SIZE, SIZE, seed=181, dtype=torch.float32),)


EXAMPLES = [
    Example("reduce/reduce_min", TESTS + "(min, fragment)", reduce_kernel,
            dict(M=SIZE, N=SIZE, dtype="float32", op="min", src_scope="fragment", dst_scope="fragment", threads=32),
            _square, lambda a: a.min(dim=1).values),
    Example("reduce/reduce_abssum", TESTS + "(abssum, fragment)", reduce_kernel,
            dict(M=SIZE, N=SIZE, dtype="float32", op="abssum", src_scope="fragment", dst_scope="fragment",
                 threads=32), _square, lambda a: a.abs().sum(dim=1)),
    Example("reduce/reduce_absmax_shared", TESTS + "(absmax, shared)", reduce_kernel,
            dict(M=SIZE, N=SIZE, dtype="float32", op="absmax", src_scope="shared", dst_scope="shared", threads=32),
            _square, lambda a: a.abs().max(dim=1).values),
    Example("reduce/cosine_similarity", KB + "1_97.py: cosine_similarity_kernel", cosine_similarity_kernel,
            dict(B=128, F=256), lambda: (randn(128, 256, seed=182), randn(128, 256, seed=183)),
            lambda p, t: torch.nn.functional.cosine_similarity(p.float(), t.float(), dim=1)),
    Example("reduce/max_over_leading_axis", KB + "1_49.py: kernel (dim 0)", max_over_leading_axis,
            dict(B=4, D1=64, D2=64), lambda: (randn(4, 64, 64, seed=184),), lambda x: x.float().amax(dim=0)),
]
