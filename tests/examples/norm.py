"""Row normalisations, modelled on tile-ai/tilelang's examples/norm: rms_norm.py (its kernels
rms_norm and rms_norm_splitk) and layernorm.py (_layernorm_fwd and _layernorm_bwd).

The kernels are written anew for this catalogue in the idioms of those examples, not copied: the
same jit forms (eager ``T.const`` sizes with ``T.empty`` outputs for RMS, a factory returning a
``@T.prim_func`` for the layer norms), one program per ``blk_m`` rows, and the same copies,
reductions, element loops and ``T.atomic_add`` calls. RMS works in float32 (``T.float``) as the
example does; the layer norms read bfloat16 and keep float32 statistics. The examples' ``blk_m`` is
kept; the tensors are 64 x 256."""

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn

RMS_EPS = 1e-12


@tilelang.jit(pass_configs={"tl.disable_tma_lower": True})
def rms_norm_chunked(X, blk_m, blk_k):
    """RMS norm over column chunks of ``blk_k``: one sweep accumulates the squares, a second sweep,
    from the last chunk back to the first, rescales each chunk and stores it."""
    M, N = T.const("M, N")
    f32 = T.float

    X: T.Tensor((M, N), f32)
    Y = T.empty((M, N), f32)

    with T.Kernel(T.ceildiv(M, blk_m), threads=128) as bx:
        tile = T.alloc_shared((blk_m, blk_k), f32)
        squares = T.alloc_fragment((blk_m, blk_k), f32)
        inv_rms = T.alloc_fragment((blk_m,), f32)

        n_chunks = T.ceildiv(N, blk_k)
        T.clear(squares)
        for c in T.Serial(n_chunks):
            T.copy(X[bx * blk_m, c * blk_k], tile)
            for r, col in T.Parallel(blk_m, blk_k):
                squares[r, col] += tile[r, col] * tile[r, col]
        T.reduce_sum(squares, inv_rms, dim=1)
        for r in T.Parallel(blk_m):
            inv_rms[r] = T.rsqrt(inv_rms[r] / N + RMS_EPS)

        # second sweep, last chunk first
        for c in T.Serial(n_chunks):
            T.copy(X[bx * blk_m, (n_chunks - 1 - c) * blk_k], tile)
            for r, col in T.Parallel(blk_m, blk_k):
                tile[r, col] *= inv_rms[r]
            T.copy(tile, Y[bx * blk_m, (n_chunks - 1 - c) * blk_k])

    return Y


@tilelang.jit(pass_configs={"tl.disable_tma_lower": True})
def rms_norm_rows(X, blk_m):
    """RMS norm with whole rows on chip: square, sum along the row, scale by 1 / rms."""
    M, N = T.const("M, N")
    f32 = T.float

    X: T.Tensor((M, N), f32)
    Y = T.empty((M, N), f32)

    with T.Kernel(T.ceildiv(M, blk_m), threads=128) as bx:
        rows = T.alloc_fragment((blk_m, N), f32)
        squared = T.alloc_fragment((blk_m, N), f32)
        inv_rms = T.alloc_fragment((blk_m,), f32)

        T.copy(X[bx * blk_m : (bx + 1) * blk_m, :], rows)
        for r, col in T.Parallel(blk_m, N):
            squared[r, col] = rows[r, col] * rows[r, col]
        T.reduce_sum(squared, inv_rms, dim=1)
        for r in T.Parallel(blk_m):
            inv_rms[r] = T.rsqrt(inv_rms[r] / N + RMS_EPS)
        for r, col in T.Parallel(blk_m, N):
            rows[r, col] *= inv_rms[r]
        T.copy(rows, Y[bx * blk_m : (bx + 1) * blk_m, :])

    return Y


def rms_reference(x):
    """x / sqrt(mean(x^2) + eps), row by row."""
    mean_square = (x * x).sum(dim=1, keepdim=True) / x.shape[1]
    return x / torch.sqrt(mean_square + RMS_EPS)


@tilelang.jit(out_idx=[-3, -2, -1])
def layer_norm_forward(N, D, eps=1e-5, blk_m=1, threads=256, in_dtype="bfloat16", out_dtype="bfloat16"):
    """y = (x - mean) * rstd * gamma + beta per row, also storing each row's mean and rstd."""
    stat = "float"

    @T.prim_func
    def main(
        X: T.Tensor((N, D), in_dtype),
        gamma: T.Tensor((D,), in_dtype),
        beta: T.Tensor((D,), in_dtype),
        Y: T.Tensor((N, D), out_dtype),
        Mean: T.Tensor((N,), stat),
        Rstd: T.Tensor((N,), stat),
    ):
        with T.Kernel(T.ceildiv(N, blk_m), threads=threads) as bx:
            x_in = T.alloc_shared((blk_m, D), in_dtype)
            w_in = T.alloc_shared((D,), in_dtype)
            b_in = T.alloc_shared((D,), in_dtype)
            xf = T.alloc_fragment((blk_m, D), stat)
            xf2 = T.alloc_fragment((blk_m, D), stat)
            total = T.alloc_fragment((blk_m,), stat)
            total_sq = T.alloc_fragment((blk_m,), stat)
            mu = T.alloc_fragment((blk_m,), stat)
            inv_sigma = T.alloc_fragment((blk_m,), stat)

            T.copy(X[bx * blk_m, 0], x_in)
            T.copy(gamma, w_in)
            T.copy(beta, b_in)

            for r, c in T.Parallel(blk_m, D):
                xf[r, c] = T.Cast(stat, x_in[r, c])
            for r, c in T.Parallel(blk_m, D):
                xf2[r, c] = xf[r, c] * xf[r, c]
            T.reduce_sum(xf, total, dim=1)
            T.reduce_sum(xf2, total_sq, dim=1)

            # var = E[x^2] - E[x]^2
            one_over_d = T.float32(1.0) / T.Cast(stat, D)
            for r in T.Parallel(blk_m):
                mu[r] = total[r] * one_over_d
                inv_sigma[r] = T.rsqrt(total_sq[r] * one_over_d - mu[r] * mu[r] + T.Cast(stat, eps))
                Mean[bx * blk_m + r] = mu[r]
                Rstd[bx * blk_m + r] = inv_sigma[r]

            # the result goes back through the input's shared block
            for r, c in T.Parallel(blk_m, D):
                z = (xf[r, c] - mu[r]) * inv_sigma[r]
                x_in[r, c] = T.Cast(out_dtype, z * T.Cast(stat, w_in[c]) + T.Cast(stat, b_in[c]))
            T.copy(x_in, Y[bx * blk_m, 0])

    return main


@tilelang.jit(out_idx=[-3])
def layer_norm_backward(N, D, blk_m=32, threads=256, in_dtype="bfloat16"):
    """Gradients of the layer norm, one row at a time within a program's ``blk_m`` rows:
    dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * gamma; the program's sums of
    dy * xhat and dy go to dgamma and dbeta with T.atomic_add."""
    assert N % blk_m == 0, f"{blk_m} must divide N = {N}"
    stat = "float"

    @T.prim_func
    def main(
        DY: T.Tensor((N, D), in_dtype),
        X: T.Tensor((N, D), in_dtype),
        gamma: T.Tensor((D,), in_dtype),
        Mean: T.Tensor((N,), stat),
        Rstd: T.Tensor((N,), stat),
        DX: T.Tensor((N, D), in_dtype),
        DGamma: T.Tensor((D,), stat),
        DBeta: T.Tensor((D,), stat),
    ):
        with T.Kernel(T.ceildiv(N, blk_m), threads=threads) as bx:
            dy_row = T.alloc_shared((1, D), in_dtype)
            x_row = T.alloc_shared((1, D), in_dtype)
            w_in = T.alloc_shared((D,), in_dtype)
            dx_row = T.alloc_shared((1, D), in_dtype)

            xhat = T.alloc_fragment((1, D), stat)
            g = T.alloc_fragment((1, D), stat)
            g_xhat = T.alloc_fragment((1, D), stat)
            g_sum = T.alloc_fragment((1,), stat)
            g_xhat_sum = T.alloc_fragment((1,), stat)
            dw_part = T.alloc_fragment((D,), stat)
            db_part = T.alloc_fragment((D,), stat)

            T.copy(gamma, w_in)
            T.clear(dw_part)
            T.clear(db_part)

            one_over_d = T.float32(1.0) / T.Cast(stat, D)

            for step in T.serial(blk_m):
                n = bx * blk_m + step
                T.copy(DY[n, 0], dy_row)
                T.copy(X[n, 0], x_row)
                mu = Mean[n]
                inv_sigma = Rstd[n]

                for r, c in T.Parallel(1, D):
                    x_val = T.Cast(stat, x_row[r, c])
                    dy_val = T.Cast(stat, dy_row[r, c])
                    w_val = T.Cast(stat, w_in[c])
                    xhat[r, c] = (x_val - mu) * inv_sigma
                    g[r, c] = dy_val * w_val
                    g_xhat[r, c] = g[r, c] * xhat[r, c]
                T.reduce_sum(g, g_sum, dim=1)
                T.reduce_sum(g_xhat, g_xhat_sum, dim=1)

                for r, c in T.Parallel(1, D):
                    mean_g_xhat = g_xhat_sum[0] * one_over_d
                    mean_g = g_sum[0] * one_over_d
                    grad = inv_sigma * (g[r, c] - mean_g - xhat[r, c] * mean_g_xhat)
                    dx_row[r, c] = T.Cast(in_dtype, grad)
                    dy_again = T.Cast(stat, dy_row[r, c])
                    dw_part[c] += dy_again * xhat[r, c]
                    db_part[c] += dy_again
                T.copy(dx_row, DX[n, 0])

            for c in T.Parallel(D):
                T.atomic_add(DGamma[c], dw_part[c], memory_order="relaxed")
                T.atomic_add(DBeta[c], db_part[c], memory_order="relaxed")

    return main


ROWS, COLS, LN_EPS = 64, 256, 1e-5


def layer_norm_reference(x, w, b):
    """float32 layer norm of the rows of x with weight w and bias b, and each row's mean and
    1 / sqrt(var + eps) (biased variance)."""
    x = x.float()
    mu = x.sum(1) / x.shape[1]
    centred = x - mu[:, None]
    inv_sigma = 1.0 / torch.sqrt((centred * centred).sum(1) / x.shape[1] + LN_EPS)
    return centred * inv_sigma[:, None] * w.float() + b.float(), mu, inv_sigma


def _forward_inputs():
    return randn(ROWS, COLS, seed=1), randn(COLS, seed=2), randn(COLS, seed=3)


def _backward_inputs():
    x, w, b = _forward_inputs()
    _, mu, inv_sigma = layer_norm_reference(x, w, b)
    zeros = torch.zeros(COLS), torch.zeros(COLS)  # DGamma and DBeta start at zero
    return (randn(ROWS, COLS, seed=4), x, w, mu, inv_sigma, *zeros)


def _backward_reference(dy, x, w, mu, inv_sigma, dw0, db0):
    """The gradients written out: with xhat = (x - mu) * inv_sigma and g = dy * w,
    dx = inv_sigma * (g - mean(g) - xhat * mean(g * xhat)), dw = sum_rows dy * xhat, db = sum_rows dy."""
    dy, x, w = dy.float(), x.float(), w.float()
    xhat = (x - mu[:, None]) * inv_sigma[:, None]
    g = dy * w
    dx = inv_sigma[:, None] * (g - g.mean(1, keepdim=True) - xhat * (g * xhat).mean(1, keepdim=True))
    return dx, dw0 + (dy * xhat).sum(0), db0 + dy.sum(0)


def _rms_inputs():
    return (randn(ROWS, COLS, seed=1, dtype=torch.float32),)


EXAMPLES = [
    Example("norm/rms_norm", "norm/rms_norm.py: rms_norm", rms_norm_rows, dict(M=ROWS, N=COLS, blk_m=1),
            _rms_inputs, rms_reference),
    Example("norm/rms_norm_splitk", "norm/rms_norm.py: rms_norm_splitk", rms_norm_chunked,
            dict(M=ROWS, N=COLS, blk_m=1, blk_k=128), _rms_inputs, rms_reference),
    Example("norm/layernorm_fwd", "norm/layernorm.py: _layernorm_fwd", layer_norm_forward,
            dict(N=ROWS, D=COLS, eps=LN_EPS), _forward_inputs, layer_norm_reference),
    Example("norm/layernorm_bwd", "norm/layernorm.py: _layernorm_bwd", layer_norm_backward, dict(N=ROWS, D=COLS),
            _backward_inputs, _backward_reference, checked=("DX", "DGamma", "DBeta")),
]
