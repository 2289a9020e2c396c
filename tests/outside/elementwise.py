"""Element-wise operators over flat tensors and generated tables, outside TileLang's examples/.

Modelled on tile-ai/TileOPs ``src/tileops/kernels/elementwise/``: ``where.py`` (``_make_where_kernel``: a
uint8 condition, one ``T.if_then_else`` per element of a ``T.Parallel(threads, npt)`` nest over flat indices
under ``if idx < N``; the register-copy form writes the result back into the copied ``x`` fragment),
``masked_fill.py`` (``_make_masked_fill_kernel``, register-copy form: the mask and ``x`` copied into
fragments, the fill value a Python constant), ``prelu.py`` (``_make_prelu_kernel``: the channel of a flat
index ``(idx // inner_size) % C`` picks the slope read from the weight tensor), ``alibi.py``
(``_make_alibi_kernel``: the ALiBi bias table ``-2^(-8 (h + 1) / H) |row - col|`` of every head, computed
from the flat index alone) and ``sinusoidal.py`` (``_make_sinusoidal_kernel``: the sinusoidal position table,
``T.pow(10000, 2 (dim // 2) / d_model)``, sine on even and cosine on odd dimensions). Written anew in their
idioms; bfloat16 for float16; 4096 elements (TileOPs: any), 128 threads of 8 elements (TileOPs: 256)."""

import functools

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn

N_FLAT, THREADS, NPT = 4096, 128, 8
PRELU_C, PRELU_INNER = 8, 64  # x of shape (4096 // (8 * 64), 8, 64): the channel is dimension 1
ALIBI_HEADS, ALIBI_SEQ = 4, 32
SIN_SEQ, SIN_DIM = 32, 64


@functools.lru_cache(maxsize=8)
def where_builder(N, dtype):
    """TileOPs' where, direct form: ``out[idx] = cond[idx] != 0 ? x[idx] : y_in[idx]``."""
    block_size = THREADS * NPT

    @tilelang.jit(out_idx=[3])
    def kernel(threads_arg, npt_arg):
        @T.prim_func
        def main(
            cond: T.Tensor((N,), "uint8"),
            x: T.Tensor((N,), dtype),
            y_in: T.Tensor((N,), dtype),
            out: T.Tensor((N,), dtype),
        ):
            with T.Kernel(T.ceildiv(N, block_size), threads=threads_arg) as bx:
                for i, j in T.Parallel(threads_arg, npt_arg):
                    idx = (bx * threads_arg + i) * npt_arg + j
                    if idx < N:
                        out[idx] = T.if_then_else(cond[idx] != T.cast(0, "uint8"), x[idx], y_in[idx])

        return main

    return kernel


@functools.lru_cache(maxsize=8)
def masked_fill_builder(N, dtype, fill_value):
    """TileOPs' masked fill, register-copy form: the result goes back into the copied ``x`` fragment."""
    block_size = THREADS * NPT

    @tilelang.jit(out_idx=[2])
    def kernel(threads_arg, npt_arg):
        @T.prim_func
        def main(
            x: T.Tensor((N,), dtype),
            mask: T.Tensor((N,), "uint8"),
            out: T.Tensor((N,), dtype),
        ):
            with T.Kernel(T.ceildiv(N, block_size), threads=threads_arg) as bx:
                m_reg = T.alloc_fragment((block_size,), "uint8")
                x_reg = T.alloc_fragment((block_size,), dtype)
                T.copy(mask[bx * block_size:(bx + 1) * block_size], m_reg)
                T.copy(x[bx * block_size:(bx + 1) * block_size], x_reg)
                for i, j in T.Parallel(threads_arg, npt_arg):
                    k = i * npt_arg + j
                    fv = T.cast(fill_value, dtype)
                    x_reg[k] = T.if_then_else(m_reg[k] != T.cast(0, "uint8"), fv, x_reg[k])
                T.copy(x_reg, out[bx * block_size:(bx + 1) * block_size])

        return main

    return kernel


@functools.lru_cache(maxsize=8)
def prelu_builder(N, C, inner_size, dtype):
    """TileOPs' PReLU, direct form: the slope of the flat index's channel read from ``weight``."""
    block_size = THREADS * NPT

    @tilelang.jit(out_idx=[2])
    def kernel(threads_arg, npt_arg):
        @T.prim_func
        def main(
            x: T.Tensor((N,), dtype),
            weight: T.Tensor((C,), dtype),
            y: T.Tensor((N,), dtype),
        ):
            with T.Kernel(T.ceildiv(N, block_size), threads=threads_arg) as bx:
                for i, j in T.Parallel(threads_arg, npt_arg):
                    k = i * npt_arg + j
                    idx = bx * block_size + k
                    if idx < N:
                        val = x[idx]
                        ch = (idx // inner_size) % C
                        w = weight[ch]
                        v = T.cast(val, "float32")
                        wf = T.cast(w, "float32")
                        y[idx] = T.if_then_else(v > T.cast(0, "float32"), T.Cast(dtype, v), T.Cast(dtype, wf * v))

        return main

    return kernel


@functools.lru_cache(maxsize=8)
def alibi_builder(seq_len, num_heads, dtype):
    """TileOPs' ALiBi table: ``out[h, i, j] = -2^(-8 (h + 1) / H) * |i - j|``, flat, no input."""
    n_total = num_heads * seq_len * seq_len
    block_size = THREADS * NPT
    s2 = seq_len * seq_len

    @tilelang.jit(out_idx=[0])
    def kernel(threads_arg, npt_arg):
        @T.prim_func
        def main(out: T.Tensor((n_total,), dtype)):
            with T.Kernel(T.ceildiv(n_total, block_size), threads=threads_arg) as bx:
                for i, j in T.Parallel(threads_arg, npt_arg):
                    flat = (bx * threads_arg + i) * npt_arg + j
                    if flat < n_total:
                        h = flat // s2
                        rem = flat % s2
                        row = rem // seq_len
                        col = rem % seq_len
                        exp_val = T.cast(-8.0, "float32") * T.cast(h + 1, "float32") / T.cast(num_heads, "float32")
                        slope = T.exp2(exp_val)
                        dist = T.cast(row - col, "float32")
                        abs_dist = T.if_then_else(dist > T.cast(0, "float32"), dist, -dist)
                        out[flat] = T.Cast(dtype, -slope * abs_dist)

        return main

    return kernel


@functools.lru_cache(maxsize=8)
def sinusoidal_builder(seq_len, d_model, dtype):
    """TileOPs' sinusoidal position table, flat: sine on even dimensions, cosine on odd ones."""
    n_total = seq_len * d_model
    block_size = THREADS * NPT

    @tilelang.jit(out_idx=[0])
    def kernel(threads_arg, npt_arg):
        @T.prim_func
        def main(out: T.Tensor((n_total,), dtype)):
            with T.Kernel(T.ceildiv(n_total, block_size), threads=threads_arg) as bx:
                for i, j in T.Parallel(threads_arg, npt_arg):
                    flat = (bx * threads_arg + i) * npt_arg + j
                    if flat < n_total:
                        pos = flat // d_model
                        dim = flat % d_model
                        dim_pair = dim // 2
                        base = T.cast(10000.0, "float32")
                        exp_frac = T.cast(dim_pair, "float32") * T.cast(2.0, "float32") / T.cast(d_model, "float32")
                        divisor = T.pow(base, exp_frac)
                        angle = T.cast(pos, "float32") / divisor
                        is_even = dim % 2 == 0
                        result = T.if_then_else(is_even, T.sin(angle), T.cos(angle))
                        out[flat] = T.Cast(dtype, result)

        return main

    return kernel


def _mask(seed):
    return torch.randint(0, 2, (N_FLAT,), generator=torch.Generator().manual_seed(seed), dtype=torch.uint8)


def _alibi_reference():
    slopes = torch.tensor([2.0 ** (-8.0 * (h + 1) / ALIBI_HEADS) for h in range(ALIBI_HEADS)])
    pos = torch.arange(ALIBI_SEQ, dtype=torch.float32)
    dist = (pos[:, None] - pos[None, :]).abs()
    return (-slopes[:, None, None] * dist).reshape(-1)


def _sinusoidal_reference():
    pos = torch.arange(SIN_SEQ, dtype=torch.float64)[:, None]
    dim = torch.arange(SIN_DIM)
    angle = pos / torch.pow(10000.0, (dim // 2).double() * 2.0 / SIN_DIM)
    return torch.where(dim % 2 == 0, torch.sin(angle), torch.cos(angle)).float().reshape(-1)


@functools.lru_cache(maxsize=32)
def _make_nan_to_num_kernel(N, dtype, nan_val, posinf_val, neginf_val, output_dtype=None, is_fp8=False, threads=256,
                            npt=8):
    """TileOPs' nan_to_num (commit 52dbc086), register-copy form (``is_fp8=False``)."""
    block_size = threads * npt

    @tilelang.jit(out_idx=[1])
    def kernel(threads_arg, npt_arg):
        @T.prim_func
        def main(x: T.Tensor((N,), dtype), y: T.Tensor((N,), dtype)):
            with T.Kernel(T.ceildiv(N, block_size), threads=threads_arg) as bx:
                x_reg = T.alloc_fragment((block_size,), dtype)
                y_reg = T.alloc_fragment((block_size,), dtype)
                T.copy(x[bx * block_size : (bx + 1) * block_size], x_reg)
                for i, j in T.Parallel(threads_arg, npt_arg):
                    k = i * npt_arg + j
                    val = x_reg[k]
                    v32 = T.cast(val, "float32")
                    nan_r = T.cast(nan_val, val.dtype)
                    pos_r = T.cast(posinf_val, val.dtype)
                    neg_r = T.cast(neginf_val, val.dtype)
                    result = T.if_then_else(
                        T.isnan(v32),
                        nan_r,
                        T.if_then_else(
                            T.isinf(v32),
                            T.if_then_else(v32 > T.cast(0, "float32"), pos_r, neg_r),
                            val,
                        ),
                    )
                    y_reg[k] = result
                T.copy(y_reg, y[bx * block_size : (bx + 1) * block_size])

        return main

    return kernel


@functools.lru_cache(maxsize=32)
def _make_dropout_kernel(N, dtype, p, seed, threads=256, num_per_thread=8):
    """TileOPs' dropout (``src/tileops/kernels/dropout.py``, commit 52dbc086): ``T.rng_init`` and
    ``T.rng_rand_float`` per thread (cuRAND's Philox4_32_10)."""
    block_size = threads * num_per_thread
    scale = 1.0 / (1.0 - p) if p < 1.0 else 0.0

    @tilelang.jit(out_idx=[1])
    def kernel(threads_arg, npt_arg):
        @T.prim_func
        def main(x: T.Tensor((N,), dtype), y: T.Tensor((N,), dtype)):
            with T.Kernel(T.ceildiv(N, block_size), threads=threads_arg) as bx:
                T.rng_init(seed)
                for i, j in T.Parallel(threads_arg, npt_arg):
                    idx = (bx * threads_arg + i) * npt_arg + j
                    rand_val = T.rng_rand_float()
                    if idx < N:
                        keep = rand_val >= T.cast(p, "float32")
                        y[idx] = T.if_then_else(
                            keep,
                            x[idx] * T.cast(scale, x[idx].dtype),
                            T.cast(0.0, x[idx].dtype),
                        )

        return main

    return kernel


def _with_non_finite(seed):
    x = randn(N_FLAT, seed=seed)
    x[::7], x[1::11], x[2::13] = float("nan"), float("inf"), -float("inf")
    return x


def _prelu_reference(x, weight):
    channel = (torch.arange(N_FLAT) // PRELU_INNER) % PRELU_C
    w = weight.float()[channel]
    return torch.where(x.float() > 0, x.float(), w * x.float())


SOURCE = "tile-ai/TileOPs src/tileops/kernels/elementwise/"
SIZES = dict(threads_arg=THREADS, npt_arg=NPT)

EXAMPLES = [
    Example("elementwise/where", SOURCE + "where.py: _make_where_kernel (direct)", where_builder(N_FLAT, "bfloat16"),
            SIZES, lambda: (_mask(211), randn(N_FLAT, seed=212), randn(N_FLAT, seed=213)),
            lambda cond, x, y: torch.where(cond != 0, x.float(), y.float())),
    Example("elementwise/masked_fill", SOURCE + "masked_fill.py: _make_masked_fill_kernel (register copy)",
            masked_fill_builder(N_FLAT, "bfloat16", -1.5), SIZES, lambda: (randn(N_FLAT, seed=214), _mask(215)),
            lambda x, mask: x.float().masked_fill(mask != 0, -1.5)),
    Example("elementwise/prelu", SOURCE + "prelu.py: _make_prelu_kernel (direct)",
            prelu_builder(N_FLAT, PRELU_C, PRELU_INNER, "bfloat16"), SIZES,
            lambda: (randn(N_FLAT, seed=216), randn(PRELU_C, seed=217).abs() * 0.25), _prelu_reference),
    Example("elementwise/alibi", SOURCE + "alibi.py: _make_alibi_kernel",
            alibi_builder(ALIBI_SEQ, ALIBI_HEADS, "bfloat16"), SIZES, lambda: (), _alibi_reference),
    Example("elementwise/sinusoidal", SOURCE + "sinusoidal.py: _make_sinusoidal_kernel",
            sinusoidal_builder(SIN_SEQ, SIN_DIM, "bfloat16"), SIZES, lambda: (), _sinusoidal_reference),
    Example("elementwise/nan_to_num",
            SOURCE + "nan_to_num.py: _make_nan_to_num_kernel (register copy; commit 52dbc086)",
            _make_nan_to_num_kernel(N_FLAT, "bfloat16", 0.0, 1e4, -1e4, threads=THREADS, npt=NPT), SIZES,
            lambda: (_with_non_finite(218),), lambda x: torch.nan_to_num(x.float(), 0.0, 1e4, -1e4)),
    Example("elementwise/dropout", "tile-ai/TileOPs src/tileops/kernels/dropout.py: _make_dropout_kernel (p = 0; "
            "commit 52dbc086)", _make_dropout_kernel(N_FLAT, "bfloat16", 0.0, 7, threads=THREADS, num_per_thread=NPT),
            SIZES, lambda: (randn(N_FLAT, seed=219),), lambda x: x.float()),
]
