"""Row normalisations from operator libraries and KernelBench solutions, outside TileLang's examples/.

Modelled on tile-ai/TileOPs ``src/tileops/kernels/norm/rms_norm.py`` (``_rms_norm_kernel``) and
``norm/fused_add_norm.py`` (``_fused_add_rms_norm_kernel``, ``_fused_add_layer_norm_kernel``), and on
the KernelBench TileLang solutions of level 1 problems 36 (RMSNorm) and 40 (LayerNorm over (C, H, W) of a 4-D
tensor: the statistics given, a thread per element, the flat index split into four indices with
``T.int32``-annotated names, the weight and bias read at 3-D indices) in nathanjpaek/kb-pilot. Written anew
in their idioms: TileOPs' cached builder of (sizes, dtype) returning a ``@tilelang.jit`` function of
``(block_m, threads)`` with ``block_m = 1`` (its ``select_row_config``), a shared block staged into a
fragment, float32 squares and sums, the weight read from the global tensor inside ``T.Parallel``
(``weight[j]``), the result stored back through the input's fragment, and the fused kernels' second
output (the residual sum, stored while the normalisation goes on). bfloat16 for float16; 64 rows of
256 (TileOPs pads rows to 256 elements; these need no padding)."""

import functools

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn

ROWS, HIDDEN, EPS = 64, 256, 1e-6


@functools.lru_cache(maxsize=8)
def rms_norm_builder(M, N, eps, dtype):
    """TileOPs' RMS norm: y = x * rsqrt(mean(x^2) + eps) * weight, one program per ``block_m`` rows."""

    @tilelang.jit(out_idx=[2])
    def _func(block_m, threads):
        @T.prim_func
        def main(
            x: T.Tensor[(M, N), dtype],
            weight: T.Tensor[(N,), dtype],
            y: T.Tensor[(M, N), dtype],
        ):
            with T.Kernel(T.ceildiv(M, block_m), threads=threads) as pid_m:
                staged = T.alloc_shared((block_m, N), dtype)
                x_frag = T.alloc_fragment((block_m, N), dtype)
                squares = T.alloc_fragment((block_m, N), "float32")
                sum_sq = T.alloc_fragment((block_m,), "float32")
                inv_rms = T.alloc_fragment((block_m,), "float32")

                T.copy(x[pid_m * block_m, 0], staged)
                T.copy(staged, x_frag)
                for i, j in T.Parallel(block_m, N):
                    squares[i, j] = T.cast(x_frag[i, j], "float32") * T.cast(x_frag[i, j], "float32")
                T.reduce_sum(squares, sum_sq, dim=1)
                for i in T.Parallel(block_m):
                    inv_rms[i] = T.rsqrt(sum_sq[i] / float(N) + eps)
                # the weight comes straight from the global tensor; the result goes back into x_frag
                for i, j in T.Parallel(block_m, N):
                    x_frag[i, j] = T.cast(x_frag[i, j], "float32") * inv_rms[i] * T.cast(weight[j], "float32")
                T.copy(x_frag, staged)
                T.copy(staged, y[pid_m * block_m, 0])

        return main

    return _func


@functools.lru_cache(maxsize=8)
def fused_add_rms_norm_builder(M, N, eps, dtype):
    """TileOPs' fused add + RMS norm: s = x + residual is stored as ``residual_out`` while
    y = rms_norm(s) * weight goes on from the same fragment."""

    @tilelang.jit(out_idx=[3, 4])
    def _func(block_m, threads):
        @T.prim_func
        def main(
            x: T.Tensor[(M, N), dtype],
            residual: T.Tensor[(M, N), dtype],
            weight: T.Tensor[(N,), dtype],
            y: T.Tensor[(M, N), dtype],
            residual_out: T.Tensor[(M, N), dtype],
        ):
            with T.Kernel(T.ceildiv(M, block_m), threads=threads) as pid_m:
                x_smem = T.alloc_shared((block_m, N), dtype)
                r_smem = T.alloc_shared((block_m, N), dtype)
                x_frag = T.alloc_fragment((block_m, N), dtype)
                r_frag = T.alloc_fragment((block_m, N), dtype)
                squares = T.alloc_fragment((block_m, N), "float32")
                sum_sq = T.alloc_fragment((block_m,), "float32")
                inv_rms = T.alloc_fragment((block_m,), "float32")

                T.copy(x[pid_m * block_m, 0], x_smem)
                T.copy(x_smem, x_frag)
                T.copy(residual[pid_m * block_m, 0], r_smem)
                T.copy(r_smem, r_frag)
                # the sum overwrites x_frag, in the input dtype
                for i, j in T.Parallel(block_m, N):
                    x_frag[i, j] = T.cast(x_frag[i, j], "float32") + T.cast(r_frag[i, j], "float32")
                for i, j in T.Parallel(block_m, N):
                    squares[i, j] = T.cast(x_frag[i, j], "float32") * T.cast(x_frag[i, j], "float32")
                T.reduce_sum(squares, sum_sq, dim=1)
                for i in T.Parallel(block_m):
                    inv_rms[i] = T.rsqrt(sum_sq[i] / float(N) + eps)
                for i, j in T.Parallel(block_m, N):
                    r_frag[i, j] = T.cast(x_frag[i, j], "float32") * inv_rms[i] * T.cast(weight[j], "float32")
                T.copy(r_frag, x_smem)
                T.copy(x_smem, y[pid_m * block_m, 0])
                T.copy(x_frag, r_smem)
                T.copy(r_smem, residual_out[pid_m * block_m, 0])

        return main

    return _func


@functools.lru_cache(maxsize=8)
def fused_add_layer_norm_builder(M, N, eps, dtype):
    """TileOPs' fused add + layer norm: the sum is stored as ``residual_out``; the mean and the
    centred variance come from two row sums of one float32 fragment, reused in place."""
    pad_count = 0  # N is already a multiple of TileOPs' 256-element alignment

    @tilelang.jit(out_idx=[4, 5])
    def _func(block_m, threads):
        @T.prim_func
        def main(
            x: T.Tensor[(M, N), dtype],
            residual: T.Tensor[(M, N), dtype],
            weight: T.Tensor[(N,), dtype],
            bias: T.Tensor[(N,), dtype],
            y: T.Tensor[(M, N), dtype],
            residual_out: T.Tensor[(M, N), dtype],
        ):
            with T.Kernel(T.ceildiv(M, block_m), threads=threads) as pid_m:
                x_smem = T.alloc_shared((block_m, N), dtype)
                r_smem = T.alloc_shared((block_m, N), dtype)
                x_frag = T.alloc_fragment((block_m, N), dtype)
                r_frag = T.alloc_fragment((block_m, N), dtype)
                total = T.alloc_fragment((block_m, N), "float32")
                row_acc = T.alloc_fragment((block_m,), "float32")
                mean = T.alloc_fragment((block_m,), "float32")
                rstd = T.alloc_fragment((block_m,), "float32")

                T.copy(x[pid_m * block_m, 0], x_smem)
                T.copy(x_smem, x_frag)
                T.copy(residual[pid_m * block_m, 0], r_smem)
                T.copy(r_smem, r_frag)
                for i, j in T.Parallel(block_m, N):
                    total[i, j] = T.cast(x_frag[i, j], "float32") + T.cast(r_frag[i, j], "float32")
                for i, j in T.Parallel(block_m, N):
                    x_frag[i, j] = total[i, j]

                T.reduce_sum(total, row_acc, dim=1)
                for i in T.Parallel(block_m):
                    mean[i] = row_acc[i] / float(N)
                for i, j in T.Parallel(block_m, N):
                    total[i, j] = (total[i, j] - mean[i]) * (total[i, j] - mean[i])
                T.reduce_sum(total, row_acc, dim=1)
                for i in T.Parallel(block_m):
                    rstd[i] = T.rsqrt((row_acc[i] - float(pad_count) * mean[i] * mean[i]) / float(N) + eps)

                for i, j in T.Parallel(block_m, N):
                    r_frag[i, j] = (T.cast(x_frag[i, j], "float32") - mean[i]) * rstd[i] * \
                        T.cast(weight[j], "float32") + T.cast(bias[j], "float32")
                T.copy(r_frag, x_smem)
                T.copy(x_smem, y[pid_m * block_m, 0])
                T.copy(x_frag, r_smem)
                T.copy(r_smem, residual_out[pid_m * block_m, 0])

        return main

    return _func


@tilelang.jit(out_idx=-1)
def rms_norm_kernelbench(M, N, blk_m=64, eps: float = 1e-5, dtype: str = "bfloat16"):
    """KernelBench's RMSNorm (no weight): rows copied by slice, squares and their sum kept in the
    input dtype, the row scale computed in place in the sum's fragment."""

    @T.prim_func
    def main(
        A: T.Tensor((M, N), dtype),
        B: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(M, blk_m), threads=128) as bx:
            A_shared = T.alloc_shared((blk_m, N), dtype)
            A_local = T.alloc_fragment((blk_m, N), dtype)
            A_pow_local = T.alloc_fragment((blk_m, N), dtype)
            A_powsum = T.alloc_fragment((blk_m,), dtype)

            T.copy(A[bx * blk_m:(bx + 1) * blk_m, :], A_shared)
            T.copy(A_shared, A_local)
            for i, j in T.Parallel(blk_m, N):
                A_pow_local[i, j] = A_local[i, j] * A_local[i, j]
            T.reduce_sum(A_pow_local, A_powsum, dim=1)
            for i in T.Parallel(blk_m):
                A_powsum[i] = T.rsqrt(A_powsum[i] / N + eps)
            for i, j in T.Parallel(blk_m, N):
                A_local[i, j] *= A_powsum[i]
            T.copy(A_local, B[bx * blk_m:(bx + 1) * blk_m, :])

    return main


@tilelang.jit(out_idx=-1)
def layernorm_4d_kernelbench(N: int, C: int, H: int, W: int, block_size: int = 256, dtype: str = "bfloat16"):
    """KernelBench's LayerNorm apply step: ``(x - mean[n]) * invstd[n] * weight + bias`` per element."""
    numel = N * C * H * W

    @T.prim_func
    def kernel(
        X: T.Tensor((N, C, H, W), dtype),
        mean: T.Tensor((N,), dtype),
        invstd: T.Tensor((N,), dtype),
        weight: T.Tensor((C, H, W), dtype),
        bias: T.Tensor((C, H, W), dtype),
        Y: T.Tensor((N, C, H, W), dtype),
    ):
        with T.Kernel(T.ceildiv(numel, block_size), threads=block_size) as bx:
            tx = T.get_thread_binding(0)
            idx = bx * block_size + tx
            if idx < numel:
                w_idx: T.int32 = idx % W
                idx //= W
                h_idx: T.int32 = idx % H
                idx //= H
                c_idx: T.int32 = idx % C
                n_idx: T.int32 = idx // C
                x_val = X[n_idx, c_idx, h_idx, w_idx]
                y_val = (x_val - mean[n_idx]) * invstd[n_idx] * weight[c_idx, h_idx, w_idx] + bias[c_idx, h_idx, w_idx]
                Y[n_idx, c_idx, h_idx, w_idx] = y_val

    return kernel


LN4_SHAPE = (2, 4, 8, 32)


def _layernorm_4d_inputs():
    x = randn(*LN4_SHAPE, seed=16)
    flat = x.float().reshape(LN4_SHAPE[0], -1)
    mean = flat.mean(dim=1)
    invstd = torch.rsqrt(flat.var(dim=1, unbiased=False) + 1e-5)
    return (x, mean.to(torch.bfloat16), invstd.to(torch.bfloat16), randn(*LN4_SHAPE[1:], seed=17),
            randn(*LN4_SHAPE[1:], seed=18))


@tilelang.jit(out_idx=-1)
def _make_norm_res_kernel(batch_size: int, features: int, eps_val: float, dtype: str = "float16",
                          accum_dtype: str = "float"):
    """nathanjpaek/kb-pilot ``KernelBench/src/prompts/correct_tilelang/level2/2_28.py`` (commit c4104e8e), as
    written."""

    @T.prim_func
    def norm_res_kernel(
        Z: T.Tensor((batch_size, features), dtype),
        Y: T.Tensor((batch_size, features), dtype),
        Out: T.Tensor((batch_size, features), dtype),
    ):
        eps_const = T.Cast(accum_dtype, eps_val)
        with T.Kernel(batch_size, threads=1) as bx:
            mean = T.alloc_local((1,), accum_dtype)
            var = T.alloc_local((1,), accum_dtype)

            mean[0] = T.Cast(accum_dtype, 0)
            var[0] = T.Cast(accum_dtype, 0)

            for j in range(features):
                v = Z[bx, j].astype(accum_dtype)
                mean[0] += v
                var[0] += v * v

            inv_feat = T.Cast(accum_dtype, 1.0 / features)
            mean[0] = mean[0] * inv_feat
            var[0] = var[0] * inv_feat - mean[0] * mean[0]
            inv_std = T.rsqrt(var[0] + eps_const)

            for j in range(features):
                z_val = Z[bx, j].astype(accum_dtype)
                y_val = Y[bx, j].astype(accum_dtype)
                norm = (z_val - mean[0]) * inv_std
                res = (norm + y_val) * y_val
                Out[bx, j] = T.Cast(dtype, res)

    return norm_res_kernel


def _norm_res_reference(z, y):
    z, y = z.float(), y.float()
    norm = (z - z.mean(dim=1, keepdim=True)) * torch.rsqrt(z.var(dim=1, unbiased=False, keepdim=True) + 1e-5)
    return (norm + y) * y


def _layernorm_4d_reference(x, mean, invstd, w, b):
    return (x.float() - mean.float()[:, None, None, None]) * invstd.float()[:, None, None, None] * w.float() + b.float()


def _rms(s, w=None, eps=EPS):
    s = s.float()
    out = s * torch.rsqrt((s * s).mean(dim=1, keepdim=True) + eps)
    return out if w is None else out * w.float()


def _layer_norm(s, w, b):
    s = s.float()
    mean = s.mean(dim=1, keepdim=True)
    var = ((s - mean) ** 2).mean(dim=1, keepdim=True)
    return (s - mean) * torch.rsqrt(var + EPS) * w.float() + b.float()


def _residual_sum(x, r):
    """The sum as the kernel stores it: rounded to bfloat16 before it is normalised."""
    return (x.float() + r.float()).to(torch.bfloat16)


def _two_rows():
    return randn(ROWS, HIDDEN, seed=11), randn(ROWS, HIDDEN, seed=12)


EXAMPLES = [
    Example("norm/rms_norm", "tile-ai/TileOPs src/tileops/kernels/norm/rms_norm.py: _rms_norm_kernel",
            rms_norm_builder(ROWS, HIDDEN, EPS, "bfloat16"), dict(block_m=1, threads=128),
            lambda: (randn(ROWS, HIDDEN, seed=11), randn(HIDDEN, seed=13)), _rms),
    Example("norm/fused_add_rms_norm",
            "tile-ai/TileOPs src/tileops/kernels/norm/fused_add_norm.py: _fused_add_rms_norm_kernel",
            fused_add_rms_norm_builder(ROWS, HIDDEN, EPS, "bfloat16"), dict(block_m=1, threads=128),
            lambda: (*_two_rows(), randn(HIDDEN, seed=13)),
            lambda x, r, w: (_rms(_residual_sum(x, r), w), _residual_sum(x, r))),
    Example("norm/fused_add_layer_norm",
            "tile-ai/TileOPs src/tileops/kernels/norm/fused_add_norm.py: _fused_add_layer_norm_kernel",
            fused_add_layer_norm_builder(ROWS, HIDDEN, EPS, "bfloat16"), dict(block_m=1, threads=128),
            lambda: (*_two_rows(), randn(HIDDEN, seed=13), randn(HIDDEN, seed=14)),
            lambda x, r, w, b: (_layer_norm(_residual_sum(x, r), w, b), _residual_sum(x, r))),
    Example("norm/rms_norm_kernelbench",
            "nathanjpaek/kb-pilot KernelBench/src/prompts/correct_tilelang/level1/1_36.py: rms_norm_kernel",
            rms_norm_kernelbench, dict(M=128, N=64, blk_m=64),
            lambda: (randn(128, 64, seed=15),), lambda a: _rms(a, eps=1e-5)),
    Example("norm/layernorm_4d_kernelbench",
            "nathanjpaek/kb-pilot KernelBench/src/prompts/correct_tilelang/level1/1_40.py: build_layernorm_kernel",
            layernorm_4d_kernelbench, dict(N=LN4_SHAPE[0], C=LN4_SHAPE[1], H=LN4_SHAPE[2], W=LN4_SHAPE[3]),
            _layernorm_4d_inputs, _layernorm_4d_reference),
    Example("norm/norm_res_kernelbench",
            "nathanjpaek/kb-pilot KernelBench/src/prompts/correct_tilelang/level2/2_28.py: _make_norm_res_kernel "
            "(commit c4104e8e)", _make_norm_res_kernel, dict(batch_size=64, features=128, eps_val=1e-5, dtype="bfloat16"),
            lambda: (randn(64, 128, seed=16), randn(64, 128, seed=17)), _norm_res_reference),
]
