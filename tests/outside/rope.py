"""Rotary position embeddings, outside TileLang's examples/.

Modelled on tile-ai/TileOPs ``src/tileops/kernels/rope.py``: ``_make_rope_neox_1d`` (the two halves:
``x[row, col + half]`` and ``x[row, col - half]``), ``_make_rope_non_neox_1d`` (adjacent pairs),
``_make_rope_neox_2d`` (a flat ``(batch * seq * heads * dim,)`` tensor whose pair is found by index
arithmetic) and ``_make_rope_neox_position_ids_thd`` (the cos/sin row picked by a position id read
from a tensor). Written anew in their idiom, TileOPs' ``explicit_parallel`` strategy: a cached builder
of the sizes returning a ``@tilelang.jit`` function of ``(threads, num_per_thread)``, one program per
``threads * num_per_thread`` elements, a ``T.Parallel(threads, npt)`` nest computing each element's
flat index, row and column, and ``T.if_then_else`` choosing the partner. bfloat16 data; 64 positions
of 128 (the 2-D forms: 2 x 32 x 2 heads of 64); 32 threads of 8 elements (TileOPs: 256 of 8)."""

import functools

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn

THREADS, NPT = 32, 8


@functools.lru_cache(maxsize=8)
def rope_neox_1d_builder(seq_len, head_dim, dtype):
    half = head_dim // 2
    n_total = seq_len * head_dim

    @tilelang.jit(out_idx=[3])
    def kernel(threads_arg, npt_arg):
        @T.prim_func
        def main(
            x: T.Tensor((seq_len, head_dim), dtype),
            cos_table: T.Tensor((seq_len, half), dtype),
            sin_table: T.Tensor((seq_len, half), dtype),
            y: T.Tensor((seq_len, head_dim), dtype),
        ):
            with T.Kernel(T.ceildiv(n_total, threads_arg * npt_arg), threads=threads_arg) as bx:
                for i, j in T.Parallel(threads_arg, npt_arg):
                    flat = (bx * threads_arg + i) * npt_arg + j
                    row = flat // head_dim
                    col = flat % head_dim
                    c = cos_table[row, col % half]
                    s = sin_table[row, col % half]
                    partner = T.if_then_else(col < half, -x[row, col + half], x[row, col - half])
                    y[row, col] = x[row, col] * c + partner * s

        return main

    return kernel


@functools.lru_cache(maxsize=8)
def rope_non_neox_1d_builder(seq_len, head_dim, dtype):
    half = head_dim // 2
    n_total = seq_len * head_dim

    @tilelang.jit(out_idx=[3])
    def kernel(threads_arg, npt_arg):
        @T.prim_func
        def main(
            x: T.Tensor((seq_len, head_dim), dtype),
            cos_table: T.Tensor((seq_len, half), dtype),
            sin_table: T.Tensor((seq_len, half), dtype),
            y: T.Tensor((seq_len, head_dim), dtype),
        ):
            with T.Kernel(T.ceildiv(n_total, threads_arg * npt_arg), threads=threads_arg) as bx:
                for i, j in T.Parallel(threads_arg, npt_arg):
                    flat = (bx * threads_arg + i) * npt_arg + j
                    row = flat // head_dim
                    col = flat % head_dim
                    c = cos_table[row, col // 2]
                    s = sin_table[row, col // 2]
                    partner = T.if_then_else(col % 2 == 0, -x[row, col + 1], x[row, col - 1])
                    y[row, col] = x[row, col] * c + partner * s

        return main

    return kernel


@functools.lru_cache(maxsize=8)
def rope_neox_2d_builder(batch, seq_len, num_heads, head_dim, dtype):
    half = head_dim // 2
    n_total = batch * seq_len * num_heads * head_dim
    stride_b = seq_len * num_heads * head_dim
    stride_s = num_heads * head_dim

    @tilelang.jit(out_idx=[3])
    def kernel(threads_arg, npt_arg):
        @T.prim_func
        def main(
            x: T.Tensor((n_total,), dtype),
            cos_table: T.Tensor((seq_len, half), dtype),
            sin_table: T.Tensor((seq_len, half), dtype),
            y: T.Tensor((n_total,), dtype),
        ):
            with T.Kernel(T.ceildiv(n_total, threads_arg * npt_arg), threads=threads_arg) as bx:
                for i, j in T.Parallel(threads_arg, npt_arg):
                    flat = (bx * threads_arg + i) * npt_arg + j
                    in_batch = flat % stride_b
                    pos = in_batch // stride_s
                    col = (in_batch % stride_s) % head_dim
                    c = cos_table[pos, col % half]
                    s = sin_table[pos, col % half]
                    partner_col = T.if_then_else(col < half, col + half, col - half)
                    partner = x[flat - col + partner_col]
                    y[flat] = x[flat] * c + T.if_then_else(col < half, -partner, partner) * s

        return main

    return kernel


@functools.lru_cache(maxsize=8)
def rope_neox_position_ids_builder(num_tokens, num_heads, head_dim, rotary_dim, max_position, dtype):
    half = rotary_dim // 2
    token_stride = num_heads * head_dim
    n_total = num_tokens * token_stride

    @tilelang.jit(out_idx=[4])
    def kernel(threads_arg, npt_arg):
        @T.prim_func
        def main(
            x: T.Tensor((n_total,), dtype),
            cos_table: T.Tensor((max_position, half), dtype),
            sin_table: T.Tensor((max_position, half), dtype),
            position_ids: T.Tensor((num_tokens,), "int32"),
            y: T.Tensor((n_total,), dtype),
        ):
            with T.Kernel(T.ceildiv(n_total, threads_arg * npt_arg), threads=threads_arg) as bx:
                for i, j in T.Parallel(threads_arg, npt_arg):
                    flat = (bx * threads_arg + i) * npt_arg + j
                    if flat < n_total:
                        col = flat % head_dim
                        pos = position_ids[flat // token_stride]
                        c = cos_table[pos, col % half]
                        s = sin_table[pos, col % half]
                        partner_col = T.if_then_else(
                            col < half, col + half, T.if_then_else(col < rotary_dim, col - half, col))
                        partner = x[flat - col + partner_col]
                        rotated = T.if_then_else(col < half, -partner, partner)
                        y[flat] = T.if_then_else(col < rotary_dim, x[flat] * c + rotated * s, x[flat])

        return main

    return kernel


def _tables(positions, half, seed):
    angles = torch.rand(positions, half, generator=torch.Generator().manual_seed(seed)) * 6.28
    return torch.cos(angles).to(torch.bfloat16), torch.sin(angles).to(torch.bfloat16)


def _neox(x, cos, sin):
    """x * cos + rotate_half(x) * sin along the last axis; cos and sin broadcast to both halves."""
    x, cos, sin = x.float(), torch.cat([cos, cos], -1).float(), torch.cat([sin, sin], -1).float()
    half = x.shape[-1] // 2
    return x * cos + torch.cat([-x[..., half:], x[..., :half]], -1) * sin


def _non_neox(x, cos, sin):
    x = x.float()
    cos, sin = cos.float().repeat_interleave(2, -1), sin.float().repeat_interleave(2, -1)
    pairs = torch.stack([-x[..., 1::2], x[..., 0::2]], -1).reshape(x.shape)
    return x * cos + pairs * sin


SEQ, DIM = 64, 128
B2, S2, H2, D2 = 2, 32, 2, 64


def _inputs_1d():
    return (randn(SEQ, DIM, seed=31), *_tables(SEQ, DIM // 2, seed=32))


def _inputs_2d():
    return (randn(B2 * S2 * H2 * D2, seed=33), *_tables(S2, D2 // 2, seed=34))


def _reference_2d(x, cos, sin):
    return _neox(x.reshape(B2, S2, H2, D2), cos[:, None, :], sin[:, None, :]).reshape(-1)


def _inputs_position_ids():
    positions = torch.randperm(64, generator=torch.Generator().manual_seed(35))[:S2].to(torch.int32)
    return (randn(S2 * H2 * D2, seed=36), *_tables(64, D2 // 2, seed=37), positions)


def _reference_position_ids(x, cos, sin, positions):
    p = positions.long()
    return _neox(x.reshape(S2, H2, D2), cos[p][:, None, :], sin[p][:, None, :]).reshape(-1)


SOURCE = "tile-ai/TileOPs src/tileops/kernels/rope.py: "
EXAMPLES = [
    Example("rope/neox_1d", SOURCE + "_make_rope_neox_1d", rope_neox_1d_builder(SEQ, DIM, "bfloat16"),
            dict(threads_arg=THREADS, npt_arg=NPT), _inputs_1d, _neox),
    Example("rope/non_neox_1d", SOURCE + "_make_rope_non_neox_1d", rope_non_neox_1d_builder(SEQ, DIM, "bfloat16"),
            dict(threads_arg=THREADS, npt_arg=NPT), _inputs_1d, _non_neox),
    Example("rope/neox_2d", SOURCE + "_make_rope_neox_2d", rope_neox_2d_builder(B2, S2, H2, D2, "bfloat16"),
            dict(threads_arg=THREADS, npt_arg=NPT), _inputs_2d, _reference_2d),
    Example("rope/neox_position_ids", SOURCE + "_make_rope_neox_position_ids_thd",
            rope_neox_position_ids_builder(S2, H2, D2, D2, 64, "bfloat16"), dict(threads_arg=THREADS, npt_arg=NPT),
            _inputs_position_ids, _reference_position_ids),
]
