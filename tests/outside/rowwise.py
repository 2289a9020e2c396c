"""Row-wise norms and reductions that handle ragged rows inside the kernel, outside TileLang's examples/.

Modelled on tile-ai/TileOPs: ``src/tileops/kernels/norm/layer_norm.py`` (``_layer_norm_kernel``: a row
length ``N`` not a multiple of TileOPs' 256-element alignment is read element by element into a shared
block padded to 256 columns, ``T.if_then_else(T.And(row < M, j < N), x[row, j], 0)``, the fp32 fragment
rewritten in place with the centred squares, the padding's contribution subtracted from the variance, and
the output stored element by element under ``if T.And(row < M, j < N)``), ``norm/group_norm.py``
(``_group_norm_kernel``, aligned path: the ``(N * G, D)`` view of the input, the weight and bias read at
the channel ``(row % G) * (C / G) + col // spatial`` of each element, the row statistics in a
``@T.macro``), ``reduction/vector_norm.py`` (``_vector_norm_kernel``: ``T.serial`` over the block's rows
around ``T.Parallel`` over the row, loads cast to float32 straight from the global tensor with the row
tail guarded, the l2 norm's ``T.sqrt`` in place in the sum's fragment and the inf norm's ``T.abs`` and
``T.reduce_max``) and ``reduction/logsumexp.py`` (``_logsumexp_kernel_single``: the padded columns read
as ``-inf``, ``T.fill(row_max, -T.infinity)`` then ``T.reduce_max(..., clear=False)``, ``T.exp`` in place,
the result fragment allocated after the reductions). Written anew in their idioms; bfloat16 for float16;
rows of 200 elements (padded to 256) and of 256, 1 to 8 rows a block (TileOPs' ``select_row_configs``)."""

import functools

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn

ALIGNMENT = 256
EPS = 1e-5


def align_up(n, alignment=ALIGNMENT):
    return (n + alignment - 1) // alignment * alignment


@functools.lru_cache(maxsize=8)
def layer_norm_builder(M, N, eps, dtype):
    """TileOPs' LayerNorm; here ``N`` needs padding, so the element-wise paths are taken."""
    n_padded = align_up(N)
    needs_pad = n_padded != N
    pad_count = n_padded - N

    @tilelang.jit(out_idx=[3])
    def _func(block_m, threads):
        @T.prim_func
        def main(
            x: T.Tensor[(M, N), dtype],
            weight: T.Tensor[(N,), dtype],
            bias: T.Tensor[(N,), dtype],
            y: T.Tensor[(M, N), dtype],
        ):
            with T.Kernel(T.ceildiv(M, block_m), threads=threads) as pid_m:
                shared_buf = T.alloc_shared((block_m, n_padded), dtype)
                x_local = T.alloc_fragment((block_m, n_padded), dtype)
                x_f32 = T.alloc_fragment((block_m, n_padded), "float32")
                acc = T.alloc_fragment((block_m,), "float32")
                mean_val = T.alloc_fragment((block_m,), "float32")
                rstd = T.alloc_fragment((block_m,), "float32")

                if needs_pad:
                    for i, j in T.Parallel(block_m, n_padded):
                        shared_buf[i, j] = T.if_then_else(T.And(pid_m * block_m + i < M, j < N),
                                                          x[pid_m * block_m + i, j], T.cast(0.0, dtype))
                        x_f32[i, j] = T.cast(shared_buf[i, j], "float32")
                else:
                    T.copy(x[pid_m * block_m, 0], shared_buf)
                    T.copy(shared_buf, x_local)
                    for i, j in T.Parallel(block_m, n_padded):
                        x_f32[i, j] = T.cast(x_local[i, j], "float32")

                T.reduce_sum(x_f32, acc, dim=1)
                for i in T.Parallel(block_m):
                    mean_val[i] = acc[i] / float(N)
                # x_f32 rewritten in place with the centred squares; the padding adds mean^2 each
                for i, j in T.Parallel(block_m, n_padded):
                    x_f32[i, j] = (x_f32[i, j] - mean_val[i]) * (x_f32[i, j] - mean_val[i])
                T.reduce_sum(x_f32, acc, dim=1)
                for i in T.Parallel(block_m):
                    rstd[i] = T.rsqrt((acc[i] - float(pad_count) * mean_val[i] * mean_val[i]) / float(N) + eps)

                if needs_pad:
                    for i, j in T.Parallel(block_m, n_padded):
                        if T.And(pid_m * block_m + i < M, j < N):
                            y[pid_m * block_m + i, j] = (T.cast(shared_buf[i, j], "float32") - mean_val[i]) * \
                                rstd[i] * T.cast(weight[j], "float32") + T.cast(bias[j], "float32")
                else:
                    for i, j in T.Parallel(block_m, n_padded):
                        x_local[i, j] = (T.cast(x_local[i, j], "float32") - mean_val[i]) * rstd[i] * \
                            T.cast(weight[j], "float32") + T.cast(bias[j], "float32")
                    T.copy(x_local, shared_buf)
                    T.copy(shared_buf, y[pid_m * block_m, 0])

        return main

    return _func


def _channel_of(row, col, num_groups, channels_per_group, spatial_size):
    """The channel of element (row, col) of the (N * G, D) view: group ``row % G``, local channel
    ``col // spatial_size``."""
    return (row % num_groups) * channels_per_group + col // spatial_size


def _make_row_reduce(block_m, D, d_padded, eps):
    pad_count = d_padded - D

    @T.macro
    def row_reduce(x_f32, acc, mean_val, rstd):
        T.reduce_sum(x_f32, acc, dim=1)
        for i in T.Parallel(block_m):
            mean_val[i] = acc[i] / float(D)
        for i, j in T.Parallel(block_m, d_padded):
            x_f32[i, j] = (x_f32[i, j] - mean_val[i]) * (x_f32[i, j] - mean_val[i])
        T.reduce_sum(x_f32, acc, dim=1)
        for i in T.Parallel(block_m):
            rstd[i] = T.rsqrt((acc[i] - float(pad_count) * mean_val[i] * mean_val[i]) / float(D) + eps)

    return row_reduce


@functools.lru_cache(maxsize=8)
def group_norm_builder(M, D, eps, dtype, num_groups, channels_per_group):
    """TileOPs' GroupNorm over the (N * G, D) view, its aligned path: a per-channel affine."""
    d_padded = align_up(D)
    spatial_size = D // channels_per_group
    C = num_groups * channels_per_group

    @tilelang.jit(out_idx=[3])
    def _func(block_m, threads):
        row_reduce = _make_row_reduce(block_m, D, d_padded, eps)

        @T.prim_func
        def main(
            x: T.Tensor[(M, D), dtype],
            weight: T.Tensor[(C,), dtype],
            bias: T.Tensor[(C,), dtype],
            y: T.Tensor[(M, D), dtype],
        ):
            with T.Kernel(T.ceildiv(M, block_m), threads=threads) as pid_m:
                shared_buf = T.alloc_shared((block_m, d_padded), dtype)
                x_local = T.alloc_fragment((block_m, d_padded), dtype)
                x_f32 = T.alloc_fragment((block_m, d_padded), "float32")
                acc = T.alloc_fragment((block_m,), "float32")
                mean_val = T.alloc_fragment((block_m,), "float32")
                rstd = T.alloc_fragment((block_m,), "float32")

                T.copy(x[pid_m * block_m, 0], shared_buf)
                T.copy(shared_buf, x_local)
                for i, j in T.Parallel(block_m, d_padded):
                    x_f32[i, j] = T.cast(x_local[i, j], "float32")

                row_reduce(x_f32, acc, mean_val, rstd)

                for i, j in T.Parallel(block_m, d_padded):
                    c = _channel_of(pid_m * block_m + i, j, num_groups, channels_per_group, spatial_size)
                    x_local[i, j] = (T.cast(x_local[i, j], "float32") - mean_val[i]) * rstd[i] * \
                        T.cast(weight[c], "float32") + T.cast(bias[c], "float32")
                T.copy(x_local, shared_buf)
                T.copy(shared_buf, y[pid_m * block_m, 0])

        return main

    return _func


@functools.lru_cache(maxsize=8)
def vector_norm_builder(M, N, op_kind, dtype):
    """TileOPs' l1 / l2 / inf vector norm along the last dimension."""
    n_padded = align_up(N)
    needs_pad = n_padded != N

    @tilelang.jit(out_idx=[1])
    def _func(block_m, threads):
        @T.prim_func
        def main(
            x: T.Tensor[(M, N), dtype],
            out: T.Tensor[(M,), dtype],
        ):
            with T.Kernel(T.ceildiv(M, block_m), threads=threads) as pid_m:
                x_f32 = T.alloc_fragment((block_m, n_padded), "float32")
                transformed = T.alloc_fragment((block_m, n_padded), "float32")
                acc = T.alloc_fragment((block_m,), "float32")
                out_local = T.alloc_fragment((block_m,), dtype)

                if needs_pad:
                    for i in T.serial(block_m):
                        for j in T.Parallel(n_padded):
                            x_f32[i, j] = T.if_then_else(T.And(pid_m * block_m + i < M, j < N),
                                                         T.cast(x[pid_m * block_m + i, j], "float32"),
                                                         T.cast(0.0, "float32"))
                elif M % block_m != 0:
                    for i in T.serial(block_m):
                        for j in T.Parallel(n_padded):
                            x_f32[i, j] = T.if_then_else(pid_m * block_m + i < M,
                                                         T.cast(x[pid_m * block_m + i, j], "float32"),
                                                         T.cast(0.0, "float32"))
                else:
                    for i in T.serial(block_m):
                        for j in T.Parallel(n_padded):
                            x_f32[i, j] = T.cast(x[pid_m * block_m + i, j], "float32")

                if op_kind == "l1":
                    for i in T.serial(block_m):
                        for j in T.Parallel(n_padded):
                            transformed[i, j] = T.abs(x_f32[i, j])
                    T.reduce_sum(transformed, acc, dim=1)
                elif op_kind == "l2":
                    for i in T.serial(block_m):
                        for j in T.Parallel(n_padded):
                            val = x_f32[i, j]
                            transformed[i, j] = val * val
                    T.reduce_sum(transformed, acc, dim=1)
                    for i in T.Parallel(block_m):
                        acc[i] = T.sqrt(acc[i])
                else:
                    for i in T.serial(block_m):
                        for j in T.Parallel(n_padded):
                            transformed[i, j] = T.abs(x_f32[i, j])
                    T.reduce_max(transformed, acc, dim=1)

                for i in T.Parallel(block_m):
                    out_local[i] = T.cast(acc[i], dtype)
                T.copy(out_local, out[pid_m * block_m])

        return main

    return _func


@functools.lru_cache(maxsize=8)
def logsumexp_builder(M, N, dtype):
    """TileOPs' single-tile logsumexp: ``max + log(sum(exp(x - max)))`` per row."""
    n_padded = align_up(N)
    needs_pad = n_padded != N
    neg_inf = float("-inf")

    @tilelang.jit(out_idx=[1])
    def _func(block_m, threads):
        @T.prim_func
        def main(
            x: T.Tensor[(M, N), dtype],
            y: T.Tensor[(M,), dtype],
        ):
            with T.Kernel(T.ceildiv(M, block_m), threads=threads) as pid_m:
                shared_buf = T.alloc_shared((block_m, n_padded), dtype)
                x_local = T.alloc_fragment((block_m, n_padded), dtype)
                x_f32 = T.alloc_fragment((block_m, n_padded), "float32")
                row_max = T.alloc_fragment((block_m,), "float32")
                row_sum = T.alloc_fragment((block_m,), "float32")

                if needs_pad:
                    for i in T.serial(block_m):
                        for j in T.Parallel(n_padded):
                            x_f32[i, j] = T.if_then_else(T.And(pid_m * block_m + i < M, j < N),
                                                         T.cast(x[pid_m * block_m + i, j], "float32"),
                                                         T.cast(neg_inf, "float32"))
                else:
                    T.copy(x[pid_m * block_m, 0], shared_buf)
                    T.copy(shared_buf, x_local)
                    for i in T.serial(block_m):
                        for j in T.Parallel(n_padded):
                            x_f32[i, j] = T.cast(x_local[i, j], "float32")

                T.fill(row_max, -T.infinity("float32"))
                T.reduce_max(x_f32, row_max, dim=1, clear=False)
                for i in T.serial(block_m):
                    for j in T.Parallel(n_padded):
                        x_f32[i, j] = T.exp(x_f32[i, j] - row_max[i])
                T.reduce_sum(x_f32, row_sum, dim=1)

                out_local = T.alloc_fragment((block_m,), dtype)
                for i in T.Parallel(block_m):
                    out_local[i] = row_max[i] + T.log(row_sum[i])
                T.copy(out_local, y[pid_m * block_m])

        return main

    return _func


def _layer_norm(x, w, b):
    x = x.float()
    mean = x.mean(dim=1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=1, keepdim=True)
    return (x - mean) * torch.rsqrt(var + EPS) * w.float() + b.float()


GN_BATCH, GN_GROUPS, GN_CPG, GN_SPATIAL = 4, 4, 4, 64  # x of (4, 16, 64): rows of (16 / 4) * 64 = 256


def _group_norm(x, w, b):
    whole = x.float().reshape(GN_BATCH, GN_GROUPS * GN_CPG, GN_SPATIAL)
    out = torch.nn.functional.group_norm(whole, GN_GROUPS, w.float(), b.float(), EPS)
    return out.reshape(GN_BATCH * GN_GROUPS, GN_CPG * GN_SPATIAL)


TILEOPS = "tile-ai/TileOPs src/tileops/kernels/"
ROW_CONFIG = dict(block_m=1, threads=128)

EXAMPLES = [
    Example("rowwise/layer_norm_unaligned", TILEOPS + "norm/layer_norm.py: _layer_norm_kernel (N not aligned)",
            layer_norm_builder(32, 200, EPS, "bfloat16"), ROW_CONFIG,
            lambda: (randn(32, 200, seed=221), randn(200, seed=222), randn(200, seed=223)), _layer_norm),
    Example("rowwise/group_norm", TILEOPS + "norm/group_norm.py: _group_norm_kernel (aligned)",
            group_norm_builder(GN_BATCH * GN_GROUPS, GN_CPG * GN_SPATIAL, EPS, "bfloat16", GN_GROUPS, GN_CPG),
            dict(block_m=4, threads=128),
            lambda: (randn(GN_BATCH * GN_GROUPS, GN_CPG * GN_SPATIAL, seed=224), randn(GN_GROUPS * GN_CPG, seed=225),
                     randn(GN_GROUPS * GN_CPG, seed=226)), _group_norm),
    Example("rowwise/vector_norm_l2", TILEOPS + "reduction/vector_norm.py: _vector_norm_kernel (l2, row tail)",
            vector_norm_builder(50, 256, "l2", "bfloat16"), dict(block_m=4, threads=128),
            lambda: (randn(50, 256, seed=227),), lambda x: x.float().norm(dim=1)),
    Example("rowwise/vector_norm_inf", TILEOPS + "reduction/vector_norm.py: _vector_norm_kernel (inf, N not aligned)",
            vector_norm_builder(32, 200, "inf", "bfloat16"), dict(block_m=8, threads=128),
            lambda: (randn(32, 200, seed=228),), lambda x: x.float().abs().amax(dim=1)),
    Example("rowwise/logsumexp", TILEOPS + "reduction/logsumexp.py: _logsumexp_kernel_single",
            logsumexp_builder(64, 256, "bfloat16"), ROW_CONFIG, lambda: (randn(64, 256, seed=229),),
            lambda x: torch.logsumexp(x.float(), dim=1)),
]
