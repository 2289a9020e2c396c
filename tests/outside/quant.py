"""Activation quantisation with absmax scales, outside TileLang's examples/.

Modelled on DeepSeek-V3.2-Exp's ``inference/kernel.py`` (``act_quant_kernel``: per-block scales of
1 x 128 groups, also in sgl-project/sglang ``python/sglang/srt/layers/attention/nsa/tilelang_kernel.py``)
and on tile-ai/TileOPs ``src/tileops/kernels/fp8_quant.py`` (``_fp8_quant_kernel``: per-token scales of a
4-D ``[batch, seq, group, dim]`` tensor). Written anew in their idioms: ``T.symbolic`` rows,
``T.reduce_absmax`` along the row, ``T.max(amax, 1e-4)``, ``T.clamp`` to the fp8 range, the scale stored
element by element at ``S[pid_m * blk_m + i, pid_n]``, the optional power-of-two scale built from the
float's bits (``T.reinterpret``, shifts and masks), TileOPs' 3-D grid over (batch, row block, group) with
element-wise loads and stores of the 4-D tensor. The quantised values are bfloat16 (the fp8 types have
no Tenstorrent form); their range and scales are the fp8 kernels'."""

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn

FP8_MAX = 448.0
PASS_CONFIGS = {tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True,
                tilelang.PassConfigKey.TL_DISABLE_TMA_LOWER: True}


def fast_log2_ceil(x):
    bits_x = T.reinterpret("uint32", x)
    exp_x = (bits_x >> 23) & 0xFF
    man_bits = bits_x & ((1 << 23) - 1)
    return T.Cast("int32", exp_x - 127 + T.if_then_else(man_bits != 0, 1, 0))


def fast_pow2(x):
    bits_x = (x + 127) << 23
    return T.reinterpret("float32", bits_x)


def fast_round_scale(amax, fp8_max_inv):
    return fast_pow2(fast_log2_ceil(amax * fp8_max_inv))


@tilelang.jit(pass_configs=PASS_CONFIGS)
def act_quant_kernel(N, in_dtype="bfloat16", out_dtype="bfloat16", scale_dtype="float32", round_scale=False):
    """Y = clamp(X / s, -448, 448) with s = max(amax, 1e-4) / 448 per row of each 128-column group
    (rounded up to a power of two with ``round_scale``); S holds the scales."""
    M = T.symbolic("M")
    fp8_min, fp8_max = -FP8_MAX, FP8_MAX
    fp8_max_inv = 1 / fp8_max
    num_stages = 0 if round_scale else 2
    blk_m = 32
    group_size = 128

    @T.prim_func
    def act_quant_kernel_(
        X: T.Tensor[(M, N), in_dtype],
        Y: T.Tensor[(M, N), out_dtype],
        S: T.Tensor[(M, T.ceildiv(N, group_size)), scale_dtype],
    ):
        with T.Kernel(T.ceildiv(M, blk_m), T.ceildiv(N, group_size), threads=128) as (pid_m, pid_n):
            x_shared = T.alloc_shared((blk_m, group_size), in_dtype)
            x_local = T.alloc_fragment((blk_m, group_size), in_dtype)
            amax_local = T.alloc_fragment((blk_m,), scale_dtype)
            s_local = T.alloc_fragment((blk_m,), scale_dtype)
            y_local = T.alloc_fragment((blk_m, group_size), out_dtype)
            y_shared = T.alloc_shared((blk_m, group_size), out_dtype)

            for _ in T.Pipelined(1, num_stages=num_stages):
                T.copy(X[pid_m * blk_m, pid_n * group_size], x_shared)
                T.copy(x_shared, x_local)
                T.reduce_absmax(x_local, amax_local, dim=1)
                for i in T.Parallel(blk_m):
                    amax_local[i] = T.max(amax_local[i], 1e-4)
                    if round_scale:
                        s_local[i] = fast_round_scale(amax_local[i], fp8_max_inv)
                    else:
                        s_local[i] = amax_local[i] * fp8_max_inv
                for i, j in T.Parallel(blk_m, group_size):
                    y_local[i, j] = T.clamp(x_local[i, j] / s_local[i], fp8_min, fp8_max)
                for i in T.Parallel(blk_m):
                    S[pid_m * blk_m + i, pid_n] = s_local[i]
                T.copy(y_local, y_shared)
                T.copy(y_shared, Y[pid_m * blk_m, pid_n * group_size])

    return act_quant_kernel_


def fp8_quant_builder(batch, seq_len_kv, kv_group, index_dim, in_dtype):
    """TileOPs' per-token quantisation of a [batch, seq, group, dim] tensor: one program per
    (batch, ``block_m`` rows, group); the tile is gathered element by element."""

    @tilelang.jit(out_idx=[1, 2])
    def _fp8_quant_fwd_func(num_stages, block_m):
        out_dtype = "bfloat16"
        scale_dtype = T.float32
        fp8_max_inv = 1 / FP8_MAX

        @T.prim_func
        def _fp8_quant_fwd_main(
            input_tensor: T.Tensor[(batch, seq_len_kv, kv_group, index_dim), in_dtype],
            scale_tensor: T.Tensor[(batch, seq_len_kv, kv_group), scale_dtype],
            output_tensor: T.Tensor[(batch, seq_len_kv, kv_group, index_dim), out_dtype],
        ):
            with T.Kernel(batch, T.ceildiv(seq_len_kv, block_m), kv_group, threads=128) as (bx, pid_m, g):
                input_local = T.alloc_fragment((block_m, index_dim), in_dtype)
                amax_local = T.alloc_fragment((block_m,), scale_dtype)
                scale_local = T.alloc_fragment((block_m,), scale_dtype)
                output_local = T.alloc_fragment((block_m, index_dim), out_dtype)

                for i, j in T.Parallel(block_m, index_dim):
                    input_local[i, j] = input_tensor[bx, pid_m * block_m + i, g, j]
                T.reduce_absmax(input_local, amax_local, dim=1)
                for i in T.Parallel(block_m):
                    amax_local[i] = T.max(amax_local[i], 1e-4)
                    scale_local[i] = amax_local[i] * fp8_max_inv
                for i, j in T.Parallel(block_m, index_dim):
                    output_local[i, j] = T.clamp(input_local[i, j] / scale_local[i], -FP8_MAX, FP8_MAX)
                for i in T.Parallel(block_m):
                    scale_tensor[bx, pid_m * block_m + i, g] = scale_local[i]
                for i, j in T.Parallel(block_m, index_dim):
                    output_tensor[bx, pid_m * block_m + i, g, j] = output_local[i, j]

        return _fp8_quant_fwd_main

    return _fp8_quant_fwd_func


ROWS, COLS, GROUP = 64, 256, 128


def _act_quant_inputs():
    """X, and the Y and S the caller allocates (the kernel has no out_idx)."""
    return (randn(ROWS, COLS, seed=21), torch.zeros(ROWS, COLS, dtype=torch.bfloat16),
            torch.zeros(ROWS, COLS // GROUP))


def _act_quant_reference(x, _y=None, _s=None, round_scale=False):
    groups = x.float().reshape(x.shape[0], -1, GROUP)
    amax = groups.abs().amax(dim=2).clamp(min=1e-4)
    scale = amax / FP8_MAX
    if round_scale:
        scale = torch.exp2(torch.ceil(torch.log2(scale)))
    y = (groups / scale[:, :, None]).clamp(-FP8_MAX, FP8_MAX)
    return y.reshape(x.shape), scale


def _fp8_quant_reference(x):
    amax = x.float().abs().amax(dim=3).clamp(min=1e-4)
    scale = amax / FP8_MAX
    return scale, (x.float() / scale[..., None]).clamp(-FP8_MAX, FP8_MAX)


EXAMPLES = [
    Example("quant/act_quant", "deepseek-ai/DeepSeek-V3.2-Exp inference/kernel.py: act_quant_kernel",
            act_quant_kernel, dict(N=COLS), _act_quant_inputs, _act_quant_reference,
            checked=("Y", "S")),
    Example("quant/act_quant round_scale",
            "deepseek-ai/DeepSeek-V3.2-Exp inference/kernel.py: act_quant_kernel (round_scale=True)",
            act_quant_kernel, dict(N=COLS, round_scale=True), _act_quant_inputs,
            lambda *inputs: _act_quant_reference(*inputs, round_scale=True), checked=("Y", "S")),
    Example("quant/fp8_quant_per_token", "tile-ai/TileOPs src/tileops/kernels/fp8_quant.py: _fp8_quant_kernel",
            fp8_quant_builder(2, 64, 2, 128, "bfloat16"), dict(num_stages=0, block_m=32),
            lambda: (randn(2, 64, 2, 128, seed=22),), _fp8_quant_reference),
]
