"""Prefix sums and products, outside TileLang's examples/.

Modelled on tile-ai/tilelang ``testing/python/language/test_tilelang_language_scan.py``
(``cumsum_smem_test``: ``T.cumsum`` of a shared block along a dimension; ``cumsum_fragment_test``: of a
fragment, reversed), on tile-ai/TileOPs ``src/tileops/kernels/reduction/cumulative.py``
(``_cumulative_kernel``: a per-row running accumulator over column tiles, ``for i in T.Parallel(block_m):
for j in T.Serial(block_n)``, shared tiles padded by 8 columns against bank conflicts, element-wise
guarded loads and stores in ``T.If`` / ``T.Then``), ``linear_attention/gated_deltanet/prefill/utils.py``
(``_build_prepare_chunk_offsets_kernel``: chunk counts per sequence from ``cu_seqlens[:-1]`` and
``cu_seqlens[1:]``, their ``T.cumsum``, stored after a leading zero; a ``T.dynamic`` length) and
``mamba/da_cumsum.py`` (``_da_cumsum_fwd_kernel``: softplus and clamp of ``dt``, ``dt * A[h]``, a
``T.cumsum`` along the chunk in shared memory, a 3-D grid over (batch, chunk, head tile) writing 4-D
outputs), and on the KernelBench TileLang solutions of level 1 problems 89 (cumsum: a fragment
accumulator per row, ``T.serial`` over columns, guarded element stores) and 90 (cumprod: one single-thread
program per row with a ``T.alloc_local`` running product) and 93 (masked cumsum: the same single-thread program,
``T.if_then_else(Mask[by, i], X[by, i], 0)`` added to the running sum, a ``bool`` mask) in
nathanjpaek/kb-pilot. Written anew in their
idioms; bfloat16 for float16, float32 where the authors scan in float32; 64 to 128 rows of 64 to 256."""

import functools

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn


@tilelang.jit(out_idx=-1)
def cumsum_smem(M, N, block_M, block_N, dim=0, reverse=False, dtype="float32"):
    @T.prim_func
    def cumsum(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_N), dtype)
            T.copy(A[by * block_M, bx * block_N], A_shared)
            T.cumsum(src=A_shared, dim=dim, reverse=reverse)
            T.copy(A_shared, B[by * block_M, bx * block_N])

    return cumsum


@tilelang.jit(out_idx=-1)
def cumsum_fragment(M, N, block_M, block_N, dim=0, reverse=False, dtype="float32"):
    @T.prim_func
    def cumsum(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_N), dtype)
            A_fragment = T.alloc_fragment((block_M, block_N), dtype)
            T.copy(A[by * block_M, bx * block_N], A_shared)
            T.copy(A_shared, A_fragment)
            T.cumsum(src=A_fragment, dim=dim, reverse=reverse)
            T.copy(A_fragment, B[by * block_M, bx * block_N])

    return cumsum


SMEM_PAD = 8


@functools.lru_cache(maxsize=8)
def cumulative_builder(M, N, dtype):
    """TileOPs' tiled inclusive cumsum (N a multiple of block_n: no masked tail tile)."""

    @tilelang.jit(out_idx=[1])
    def _func(block_m, block_n, threads):
        n_tiles = N // block_n

        @T.prim_func
        def main(x: T.Tensor[(M, N), dtype], y: T.Tensor[(M, N), dtype]):
            with T.Kernel(T.ceildiv(M, block_m), threads=threads) as pid_m:
                shared_in = T.alloc_shared((block_m, block_n + SMEM_PAD), dtype)
                shared_out = T.alloc_shared((block_m, block_n + SMEM_PAD), dtype)
                tile_f32 = T.alloc_fragment((block_m, block_n), "float32")
                out_f32 = T.alloc_fragment((block_m, block_n), "float32")
                acc = T.alloc_fragment((block_m,), "float32")

                for i in T.Parallel(block_m):
                    acc[i] = T.float32(0)
                for tile_idx in T.Serial(n_tiles):
                    for i, j in T.Parallel(block_m, block_n):
                        with T.If(pid_m * block_m + i < M), T.Then():
                            shared_in[i, j] = x[pid_m * block_m + i, tile_idx * block_n + j]
                    for i, j in T.Parallel(block_m, block_n):
                        tile_f32[i, j] = T.cast(shared_in[i, j], "float32")
                    for i in T.Parallel(block_m):
                        for j in T.Serial(block_n):
                            acc[i] = acc[i] + tile_f32[i, j]
                            out_f32[i, j] = acc[i]
                    for i, j in T.Parallel(block_m, block_n):
                        shared_out[i, j] = T.cast(out_f32[i, j], dtype)
                    for i, j in T.Parallel(block_m, block_n):
                        with T.If(pid_m * block_m + i < M), T.Then():
                            y[pid_m * block_m + i, tile_idx * block_n + j] = shared_out[i, j]

        return main

    return _func


@tilelang.jit(out_idx=-1)
def cumsum_kernelbench(M, N, block_M=128, dtype="bfloat16", accum_dtype="float"):
    @T.prim_func
    def cumsum_kernel(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=block_M) as bx:
            acc = T.alloc_fragment((block_M,), accum_dtype)
            T.clear(acc)
            for j in T.serial(N):
                for i in T.Parallel(block_M):
                    row = bx * block_M + i
                    if row < M:
                        acc[i] += T.Cast(accum_dtype, X[row, j])
                        Y[row, j] = T.Cast(dtype, acc[i])

    return cumsum_kernel


@tilelang.jit(out_idx=-1)
def cumprod_kernelbench(B, N, dtype="float32", accum_dtype="float32"):
    @T.prim_func
    def cumprod_kernel(X: T.Tensor((B, N), dtype), Y: T.Tensor((B, N), dtype)):
        with T.Kernel(B, threads=1) as bx:
            running = T.alloc_local((1,), accum_dtype)
            running[0] = T.Cast(accum_dtype, 1)
            for j in T.serial(N):
                running[0] *= T.Cast(accum_dtype, X[bx, j])
                Y[bx, j] = T.Cast(dtype, running[0])

    return cumprod_kernel


@tilelang.jit(out_idx=-1)
def masked_cumsum_kernelbench(M, N, in_dtype="bfloat16"):
    @T.prim_func
    def main(X: T.Tensor((M, N), in_dtype), Mask: T.Tensor((M, N), "bool"), Out: T.Tensor((M, N), in_dtype)):
        with T.Kernel(M, threads=1) as by:
            acc = T.alloc_local((1,), in_dtype)
            acc[0] = 0
            for i in range(N):
                add_val = T.if_then_else(Mask[by, i], X[by, i], 0)
                acc[0] += add_val
                Out[by, i] = acc[0]

    return main


def _masked_cumsum_reference(x, mask):
    """The exact running sum, rounded once: the compiler sums the row as a float32 T.cumsum (ScalarRowsToBlocksTT)
    where the GPU rounds the bfloat16 accumulator after each addition (0.96% of the largest sum off here)."""
    return torch.where(mask, x.float(), torch.zeros(())).cumsum(1)


@tilelang.jit()
def prepare_chunk_offsets(chunk_size, block_size, dtype):
    batch_size_plus_1 = T.dynamic("batch_size_plus_1")
    num_threads = min(max(block_size, 32), 128)

    @T.prim_func
    def prepare_chunk_offsets_kernel(cu_seqlens: T.Tensor([batch_size_plus_1], dtype=dtype),
                                     chunk_offsets: T.Tensor([batch_size_plus_1], dtype=dtype)):
        with T.Kernel(1, threads=num_threads) as (bb,):
            seqlen_start = T.alloc_fragment((block_size), dtype=dtype)
            seqlen_end = T.alloc_fragment((block_size), dtype=dtype)
            chunks = T.alloc_fragment((block_size), dtype=dtype)
            T.copy(cu_seqlens[:batch_size_plus_1 - 1], seqlen_start)
            T.copy(cu_seqlens[1:], seqlen_end)
            for i in T.Parallel(block_size):
                chunks[i] = seqlen_end[i] - seqlen_start[i]
                chunks[i] = (chunks[i] + chunk_size - 1) // chunk_size
            T.cumsum(src=chunks, dim=0)
            chunk_offsets[0] = 0
            T.copy(chunks, chunk_offsets[1:])

    return prepare_chunk_offsets_kernel


@functools.lru_cache(maxsize=8)
def da_cumsum_builder(batch, num_chunks, chunk_len, n_heads, seq_len, dtype, dt_min=0.0, dt_max=float("inf")):
    B, C, Q, H, S = batch, num_chunks, chunk_len, n_heads, seq_len

    @tilelang.jit(out_idx=[-2, -1])
    def kernel_func(block_h: int, threads: int):
        @T.prim_func
        def main(
            dt: T.Tensor((B, S, H), "float"),
            A: T.Tensor((H,), "float"),
            dt_bias: T.Tensor((H,), "float"),
            dt_out: T.Tensor((B, H, C, Q), dtype),
            dA_cumsum: T.Tensor((B, H, C, Q), "float"),
        ):
            with T.Kernel(B, C, T.ceildiv(H, block_h), threads=threads) as (bb, bc, bh_tile):
                dt_shared = T.alloc_shared((block_h, Q), "float")
                dA_shared = T.alloc_shared((block_h, Q), "float")
                for i, j in T.Parallel(block_h, Q):
                    bh = bh_tile * block_h + i
                    seq_idx = bc * Q + j
                    in_b = T.And(bh < H, seq_idx < S)
                    safe_bh = T.min(bh, H - 1)
                    safe_seq = T.min(seq_idx, S - 1)
                    val = T.if_then_else(in_b, dt[bb, safe_seq, safe_bh], T.float32(0.0))
                    val = val + T.if_then_else(bh < H, dt_bias[safe_bh], T.float32(0.0))
                    val = T.if_then_else(val <= T.float32(20.0), T.log(T.float32(1.0) + T.exp(val)), val)
                    val = T.min(T.max(val, T.float32(dt_min)), T.float32(dt_max))
                    val = T.if_then_else(in_b, val, T.float32(0.0))
                    a_val = T.if_then_else(bh < H, A[safe_bh], T.float32(0.0))
                    dt_shared[i, j] = val
                    dA_shared[i, j] = val * a_val
                T.sync_threads()
                T.cumsum(dA_shared, dim=1)
                T.sync_threads()
                for i, j in T.Parallel(block_h, Q):
                    with T.If(bh_tile * block_h + i < H), T.Then():
                        dt_out[bb, bh_tile * block_h + i, bc, j] = T.cast(dt_shared[i, j], dtype)
                        dA_cumsum[bb, bh_tile * block_h + i, bc, j] = dA_shared[i, j]

        return main

    return kernel_func


def _blockwise_cumsum(a, block_m, block_n, dim, reverse):
    out = torch.empty_like(a)
    for r in range(0, a.shape[0], block_m):
        for c in range(0, a.shape[1], block_n):
            block = a[r:r + block_m, c:c + block_n]
            block = block.flip(dim).cumsum(dim).flip(dim) if reverse else block.cumsum(dim)
            out[r:r + block_m, c:c + block_n] = block
    return out


def _f32(*shape, seed):
    return randn(*shape, seed=seed, dtype=torch.float32)


def _offsets_inputs():
    lengths = torch.tensor([70, 5, 128, 33, 64, 1, 90, 40, 17, 64, 3, 100, 64, 31, 8, 64])
    cu_seqlens = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)]).to(torch.int32)
    return cu_seqlens, torch.zeros_like(cu_seqlens)  # the caller allocates chunk_offsets


def _offsets_reference(cu, _offsets):
    chunks = (cu[1:] - cu[:-1] + 63) // 64
    return torch.cat([torch.zeros(1, dtype=torch.int32), chunks.cumsum(0).to(torch.int32)])


DA_B, DA_S, DA_H, DA_Q = 2, 128, 8, 64


def _da_inputs():
    g = torch.Generator().manual_seed(141)
    return _f32(DA_B, DA_S, DA_H, seed=142), -torch.rand(DA_H, generator=g), torch.rand(DA_H, generator=g) - 0.5


def _da_reference(dt, a, bias):
    val = torch.nn.functional.softplus(dt + bias).clamp(min=0.0)  # (B, S, H)
    val = val.reshape(DA_B, DA_S // DA_Q, DA_Q, DA_H).permute(0, 3, 1, 2)  # (B, H, C, Q)
    return val.to(torch.bfloat16), (val * a[None, :, None, None]).cumsum(-1)


TESTS = "tile-ai/tilelang testing/python/language/test_tilelang_language_scan.py: "
KB = "nathanjpaek/kb-pilot KernelBench/src/prompts/correct_tilelang/level1/"
EXAMPLES = [
    Example("scan/cumsum_smem", TESTS + "cumsum_smem_test", cumsum_smem,
            dict(M=128, N=128, block_M=64, block_N=64, dim=1), lambda: (_f32(128, 128, seed=151),),
            lambda a: _blockwise_cumsum(a, 64, 64, 1, False)),
    Example("scan/cumsum_fragment_reverse", TESTS + "cumsum_fragment_test (reverse)", cumsum_fragment,
            dict(M=128, N=128, block_M=64, block_N=64, dim=0, reverse=True), lambda: (_f32(128, 128, seed=152),),
            lambda a: _blockwise_cumsum(a, 64, 64, 0, True)),
    Example("scan/cumulative_tiled", "tile-ai/TileOPs src/tileops/kernels/reduction/cumulative.py: _cumulative_kernel",
            cumulative_builder(64, 256, "bfloat16"), dict(block_m=32, block_n=128, threads=128),
            lambda: (randn(64, 256, seed=153),), lambda x: x.float().cumsum(1)),
    Example("scan/cumsum_kernelbench", KB + "1_89.py: build_cumsum_kernel", cumsum_kernelbench,
            dict(M=128, N=64), lambda: (randn(128, 64, seed=154),), lambda x: x.float().cumsum(1)),
    Example("scan/cumprod_kernelbench", KB + "1_90.py: cumprod kernel", cumprod_kernelbench,
            dict(B=32, N=64), lambda: (torch.rand(32, 64, generator=torch.Generator().manual_seed(155)) + 0.5,),
            lambda x: x.cumprod(1)),
    Example("scan/prepare_chunk_offsets", "tile-ai/TileOPs src/tileops/kernels/linear_attention/gated_deltanet/"
            "prefill/utils.py: _build_prepare_chunk_offsets_kernel", prepare_chunk_offsets,
            dict(chunk_size=64, block_size=16, dtype="int32"), _offsets_inputs, _offsets_reference,
            checked=("chunk_offsets",)),
    Example("scan/da_cumsum", "tile-ai/TileOPs src/tileops/kernels/mamba/da_cumsum.py: _da_cumsum_fwd_kernel",
            da_cumsum_builder(DA_B, DA_S // DA_Q, DA_Q, DA_H, DA_S, "bfloat16"), dict(block_h=8, threads=128),
            _da_inputs, _da_reference),
    Example("scan/masked_cumsum_kernelbench", KB + "1_93.py: masked_cumsum", masked_cumsum_kernelbench,
            dict(M=32, N=64), lambda: (randn(32, 64, seed=156),
                                       torch.rand(32, 64, generator=torch.Generator().manual_seed(157)) < 0.5),
            _masked_cumsum_reference),
]
