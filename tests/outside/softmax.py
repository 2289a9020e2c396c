"""Softmax variants, outside TileLang's examples/.

Modelled on tile-ai/TileOPs ``src/tileops/kernels/reduction/softmax.py`` (``_softmax_kernel_single``:
softmax and log-softmax of rows that fit on chip; ``_softmax_kernel_tiled``: an online max and
rescaled sum over column tiles, then a second sweep, the last tile loaded through ``T.If`` /
``T.Then`` / ``T.Else`` with ``-inf`` past the end) and on the KernelBench TileLang solution of level 1
problem 23 in nathanjpaek/kb-pilot (one program per row, one thread, three serial sweeps with
``T.alloc_local`` scalars, the unnormalised exponentials parked in the output). Written anew in their
idioms: TileOPs' ``for i in T.serial(block_m): for j in T.Parallel(N)`` nests, ``T.fill`` then
``T.reduce_max(.., clear=False)``, ``block_m = 4`` for whole rows and 1 when tiled (its planner's
defaults). bfloat16 for float16 (KernelBench's solution is float32 and stays so); 64 rows of 256
(tiled: 384 columns in tiles of 256, so the last tile is partial)."""

import functools

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn

ROWS, COLS = 64, 256


@functools.lru_cache(maxsize=8)
def softmax_single_builder(M, N, op_kind, dtype):
    """Whole rows on chip: max, exp(x - max), sum, then x / sum (softmax) or x - max - log(sum)."""

    @tilelang.jit(out_idx=[1])
    def _func(block_m, threads):
        @T.prim_func
        def main(x: T.Tensor[(M, N), dtype], y: T.Tensor[(M, N), dtype]):
            with T.Kernel(T.ceildiv(M, block_m), threads=threads) as pid_m:
                shared_buf = T.alloc_shared((block_m, N), dtype)
                x_local = T.alloc_fragment((block_m, N), dtype)
                x_f32 = T.alloc_fragment((block_m, N), "float32")
                row_max = T.alloc_fragment((block_m,), "float32")
                row_sum = T.alloc_fragment((block_m,), "float32")

                T.copy(x[pid_m * block_m, 0], shared_buf)
                T.copy(shared_buf, x_local)
                for i in T.serial(block_m):
                    for j in T.Parallel(N):
                        x_f32[i, j] = T.cast(x_local[i, j], "float32")

                T.fill(row_max, -T.infinity("float32"))
                T.reduce_max(x_f32, row_max, dim=1, clear=False)
                out_f32 = T.alloc_fragment((block_m, N), "float32")
                if op_kind == "softmax":
                    # the exponentials overwrite x_f32
                    for i in T.serial(block_m):
                        for j in T.Parallel(N):
                            x_f32[i, j] = T.exp(x_f32[i, j] - row_max[i])
                    T.reduce_sum(x_f32, row_sum, dim=1)
                    for i in T.serial(block_m):
                        for j in T.Parallel(N):
                            out_f32[i, j] = x_f32[i, j] / row_sum[i]
                else:
                    # x_f32 keeps x for (x - max) - log(sum)
                    exp_f32 = T.alloc_fragment((block_m, N), "float32")
                    for i in T.serial(block_m):
                        for j in T.Parallel(N):
                            exp_f32[i, j] = T.exp(x_f32[i, j] - row_max[i])
                    T.reduce_sum(exp_f32, row_sum, dim=1)
                    log_sum = T.alloc_fragment((block_m,), "float32")
                    for i in T.Parallel(block_m):
                        log_sum[i] = T.log(row_sum[i])
                    for i in T.serial(block_m):
                        for j in T.Parallel(N):
                            out_f32[i, j] = x_f32[i, j] - row_max[i] - log_sum[i]

                for i in T.serial(block_m):
                    for j in T.Parallel(N):
                        x_local[i, j] = out_f32[i, j]
                T.copy(x_local, shared_buf)
                T.copy(shared_buf, y[pid_m * block_m, 0])

        return main

    return _func


@functools.lru_cache(maxsize=8)
def softmax_tiled_builder(M, N, dtype, tile_n):
    """Online softmax over column tiles: pass 1 keeps a running max and a rescaled running sum,
    pass 2 (its own buffers, as TileOPs allocates them) writes exp(x - max) / sum tile by tile."""
    num_tiles = (N + tile_n - 1) // tile_n
    total_cols = num_tiles * tile_n
    neg_inf = float("-inf")

    @tilelang.jit(out_idx=[1])
    def _func(block_m, threads):
        @T.prim_func
        def main(x: T.Tensor[(M, N), dtype], y: T.Tensor[(M, total_cols), dtype]):
            with T.Kernel(T.ceildiv(M, block_m), threads=threads) as pid_m:
                shared_buf = T.alloc_shared((block_m, tile_n), dtype)
                tile_local = T.alloc_fragment((block_m, tile_n), dtype)
                tile_f32 = T.alloc_fragment((block_m, tile_n), "float32")
                row_max = T.alloc_fragment((block_m,), "float32")
                row_sum = T.alloc_fragment((block_m,), "float32")
                prev_max = T.alloc_fragment((block_m,), "float32")
                tile_max = T.alloc_fragment((block_m,), "float32")
                tile_sum = T.alloc_fragment((block_m,), "float32")

                T.fill(row_max, -T.infinity("float32"))
                T.fill(row_sum, 0.0)
                for t in T.Serial(num_tiles):
                    with T.If(t < num_tiles - 1):
                        with T.Then():
                            T.copy(x[pid_m * block_m, t * tile_n], shared_buf)
                            T.copy(shared_buf, tile_local)
                            for i in T.serial(block_m):
                                for j in T.Parallel(tile_n):
                                    tile_f32[i, j] = T.cast(tile_local[i, j], "float32")
                        with T.Else():
                            for i in T.serial(block_m):
                                for j in T.Parallel(tile_n):
                                    tile_f32[i, j] = T.if_then_else(
                                        T.And(pid_m * block_m + i < M, t * tile_n + j < N),
                                        T.cast(x[pid_m * block_m + i, t * tile_n + j], "float32"),
                                        T.cast(neg_inf, "float32"))
                    T.fill(tile_max, -T.infinity("float32"))
                    T.reduce_max(tile_f32, tile_max, dim=1, clear=False)
                    for i in T.Parallel(block_m):
                        prev_max[i] = row_max[i]
                        row_max[i] = T.max(row_max[i], tile_max[i])
                    for i in T.serial(block_m):
                        for j in T.Parallel(tile_n):
                            tile_f32[i, j] = T.exp(tile_f32[i, j] - row_max[i])
                    T.reduce_sum(tile_f32, tile_sum, dim=1)
                    for i in T.Parallel(block_m):
                        row_sum[i] = row_sum[i] * T.exp(prev_max[i] - row_max[i]) + tile_sum[i]

                inv_sum = T.alloc_fragment((block_m,), "float32")
                for i in T.Parallel(block_m):
                    inv_sum[i] = 1.0 / row_sum[i]

                p2_shared = T.alloc_shared((block_m, tile_n), dtype)
                p2_local = T.alloc_fragment((block_m, tile_n), dtype)
                p2_f32 = T.alloc_fragment((block_m, tile_n), "float32")
                for t in T.Serial(num_tiles):
                    with T.If(t < num_tiles - 1):
                        with T.Then():
                            T.copy(x[pid_m * block_m, t * tile_n], p2_shared)
                            T.copy(p2_shared, p2_local)
                            for i in T.serial(block_m):
                                for j in T.Parallel(tile_n):
                                    p2_f32[i, j] = T.exp(T.cast(p2_local[i, j], "float32") - row_max[i]) * inv_sum[i]
                        with T.Else():
                            for i in T.serial(block_m):
                                for j in T.Parallel(tile_n):
                                    p2_f32[i, j] = T.if_then_else(
                                        T.And(pid_m * block_m + i < M, t * tile_n + j < N),
                                        T.exp(T.cast(x[pid_m * block_m + i, t * tile_n + j], "float32")
                                              - row_max[i]) * inv_sum[i],
                                        0.0)
                    for i in T.serial(block_m):
                        for j in T.Parallel(tile_n):
                            p2_local[i, j] = p2_f32[i, j]
                    T.copy(p2_local, p2_shared)
                    T.copy(p2_shared, y[pid_m * block_m, t * tile_n])

        return main

    return _func


@tilelang.jit(out_idx=-1)
def softmax_kernelbench(B: int, N: int, dtype: str = "float32"):
    """KernelBench 23: one single-thread program per row, three serial sweeps over the row."""

    @T.prim_func
    def softmax_kernel(X: T.Tensor((B, N), dtype), Y: T.Tensor((B, N), dtype)):
        with T.Kernel(B, 1, threads=1) as (bx, _):
            max_val = T.alloc_local((1,), dtype)
            sum_val = T.alloc_local((1,), dtype)
            max_val[0] = X[bx, 0]
            for j in range(1, N):
                max_val[0] = T.max(max_val[0], X[bx, j])
            sum_val[0] = 0.0
            for j in range(N):
                e = T.exp(X[bx, j] - max_val[0])
                Y[bx, j] = e
                sum_val[0] += e
            inv_sum = 1.0 / sum_val[0]
            for j in range(N):
                Y[bx, j] = Y[bx, j] * inv_sum

    return softmax_kernel


TILED_COLS, TILE_N = 384, 256


def _tiled_reference(x):
    out = torch.zeros(x.shape[0], 2 * TILE_N)
    out[:, :TILED_COLS] = torch.softmax(x.float(), dim=1)
    return out


SOURCE = "tile-ai/TileOPs src/tileops/kernels/reduction/softmax.py: "
EXAMPLES = [
    Example("softmax/softmax", SOURCE + "_softmax_kernel_single (softmax)",
            softmax_single_builder(ROWS, COLS, "softmax", "bfloat16"), dict(block_m=4, threads=128),
            lambda: (randn(ROWS, COLS, seed=51),), lambda x: torch.softmax(x.float(), dim=1)),
    Example("softmax/log_softmax", SOURCE + "_softmax_kernel_single (log_softmax)",
            softmax_single_builder(ROWS, COLS, "log_softmax", "bfloat16"), dict(block_m=4, threads=128),
            lambda: (randn(ROWS, COLS, seed=52),), lambda x: torch.log_softmax(x.float(), dim=1)),
    Example("softmax/softmax_tiled", SOURCE + "_softmax_kernel_tiled (softmax)",
            softmax_tiled_builder(ROWS, TILED_COLS, "bfloat16", TILE_N), dict(block_m=1, threads=128),
            lambda: (randn(ROWS, TILED_COLS, seed=53),), _tiled_reference),
    Example("softmax/softmax_kernelbench",
            "nathanjpaek/kb-pilot KernelBench/src/prompts/correct_tilelang/level1/1_23.py: ModelNew._softmax_kernel",
            softmax_kernelbench, dict(B=32, N=256), lambda: (randn(32, 256, seed=54, dtype=torch.float32),),
            lambda x: torch.softmax(x, dim=1)),
]
