"""Per-token casts with absmax scaling factors, fused or not with SwiGLU, outside TileLang's examples/.

Modelled on deepseek-ai/TileKernels ``tile_kernels/quant/per_token_cast_kernel.py``
(``get_per_token_cast_kernel``, no input scales: a ``T.dynamic`` token count, the input a
``T.StridedTensor``, blocks of ``block_m = 4096 // block_k`` tokens by ``block_k`` channels read into a
fragment, ``T.reshape`` of the fragment to ``[block_m, groups, per_channels]`` and ``T.reduce_absmax`` along
its last dimension, ``get_sf_and_inv``'s ``T.max(amax, 1e-4) / max`` scale in a ``T.alloc_var`` stored
element by element, the values scaled by the inverse through a shared block) and
``quant/swiglu_forward_and_per_token_cast_kernel.py`` (``get_swiglu_forward_and_per_token_cast_kernel``,
``use_clamp`` without the routing inputs: one program per ``TILE_X = 16`` tokens of ``TILE_Y = hidden``,
the gate and the value read element-wise from the two halves of ``x``, clamped by the scalar parameter
``swiglu_clamp_value: T.float32`` inside ``T.Parallel`` through ``T.alloc_var`` values, the reduction into
the scale fragment itself, rewritten in place with the inverse). Written anew in their idioms; the fp8
outputs are bfloat16 (no fp8 on Tenstorrent) with the e4m3 range 448; the scale tensors row-major
(``use_tma_aligned_col_major_sf=False``, contiguous); 64 tokens of 256 channels in groups of 128 (TileKernels'
block of 16 tokens by 256: at 512 channels its four groups and the scales read back per column need 37 circular
buffers, over Wormhole's 32)."""

import functools

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn

FP8_MAX, CLAMP_MIN = 448.0, 1e-4
PASS_CONFIGS = {tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True}


@T.macro
def get_sf_and_inv(amax):
    """TileKernels' ``get_sf_and_inv`` without rounding: the scale and its inverse of a clamped amax."""
    clamped_amax = T.max(amax, CLAMP_MIN)
    sf = T.alloc_var(T.float32)
    sf = clamped_amax / FP8_MAX
    return sf, FP8_MAX / clamped_amax


@functools.lru_cache(maxsize=8)
def per_token_cast_builder(hidden, num_per_channels):
    num_threads, num_elems_per_thread = 128, 32
    num_elems_per_block = num_threads * num_elems_per_thread
    block_k = max(num_per_channels, _gcd(num_elems_per_block, hidden))
    block_m = 1 if num_elems_per_block % block_k != 0 else num_elems_per_block // block_k
    num_groups = block_k // num_per_channels

    @tilelang.jit(pass_configs=PASS_CONFIGS)
    def get_per_token_cast_kernel(in_dtype, out_dtype):
        num_tokens = T.dynamic("num_tokens")

        @T.prim_func
        def per_token_cast_kernel(
            x: T.StridedTensor[(num_tokens, hidden), (hidden, 1), in_dtype],
            out: T.Tensor[(num_tokens, hidden), out_dtype],
            out_sf: T.Tensor[(num_tokens, hidden // num_per_channels), T.float32],
        ):
            with T.Kernel(T.ceildiv(num_tokens, block_m), T.ceildiv(hidden, block_k),
                          threads=num_threads) as (pid_token, pid_hidden):
                x_fragment = T.alloc_fragment((block_m, block_k), in_dtype)
                sf_inv_fragment = T.alloc_fragment((block_m, num_groups), T.float32)
                out_shared = T.alloc_shared((block_m, block_k), out_dtype)

                T.copy(x[pid_token * block_m, pid_hidden * block_k], x_fragment, disable_tma=True)

                amax_fragment = T.alloc_fragment((block_m, num_groups), in_dtype)
                x_fragment_reshaped = T.reshape(x_fragment, [block_m, num_groups, num_per_channels])
                T.reduce_absmax(x_fragment_reshaped, amax_fragment, dim=2)
                for i, j in T.Parallel(block_m, num_groups):
                    amax = T.cast(amax_fragment[i, j], T.float32)
                    sf, sf_inv = get_sf_and_inv(amax)
                    out_sf[pid_token * block_m + i, pid_hidden * num_groups + j] = sf
                    sf_inv_fragment[i, j] = sf_inv

                for i, j in T.Parallel(block_m, block_k):
                    out_shared[i, j] = x_fragment[i, j] * sf_inv_fragment[i, j // num_per_channels]
                T.copy(out_shared, out[pid_token * block_m, pid_hidden * block_k], disable_tma=True)

        return per_token_cast_kernel

    return get_per_token_cast_kernel


def _gcd(a, b):
    while b:
        a, b = b, a % b
    return a


@functools.lru_cache(maxsize=8)
def swiglu_cast_builder(hidden, num_per_channels):
    num_elems_per_block, num_threads = 4096, 256
    tile_x, tile_y = 1, num_per_channels
    while tile_y * 2 <= num_elems_per_block and hidden % (tile_y * 2) == 0:
        tile_y *= 2
    while tile_x * tile_y % num_threads != 0:
        tile_x *= 2
    if tile_x == 1 and hidden <= 8192:
        tile_y = hidden
    while tile_x * tile_y * 2 <= num_elems_per_block:
        tile_x *= 2
    num_groups = tile_y // num_per_channels

    @tilelang.jit(pass_configs=PASS_CONFIGS)
    def get_swiglu_kernel(in_dtype, out_dtype):
        num_expanded_tokens = T.dynamic("num_expanded_tokens")
        num_blocks = T.ceildiv(num_expanded_tokens, tile_x) * T.ceildiv(hidden, tile_y)

        @T.prim_func
        def swiglu_forward_and_per_token_cast_kernel(
            x: T.Tensor[(num_expanded_tokens, hidden * 2), in_dtype],
            out: T.Tensor[(num_expanded_tokens, hidden), out_dtype],
            out_sf: T.Tensor[(num_expanded_tokens, hidden // num_per_channels), T.float32],
            swiglu_clamp_value: T.float32,
        ):
            with T.Kernel(num_blocks, threads=num_threads) as pid:
                x_fragment = T.alloc_fragment((tile_x, tile_y), T.float32)
                x_fragment_reshaped = T.reshape(x_fragment, [tile_x, num_groups, num_per_channels])
                xl_fragment = T.alloc_fragment((tile_x, tile_y), in_dtype)
                xr_fragment = T.alloc_fragment((tile_x, tile_y), in_dtype)
                pid_x, pid_y = pid // T.ceildiv(hidden, tile_y), pid % T.ceildiv(hidden, tile_y)
                sf_inv_fragment = T.alloc_fragment((tile_x, num_groups), T.float32)
                out_fragment = T.alloc_fragment((tile_x, tile_y), out_dtype)

                for i, j in T.Parallel(tile_x, tile_y):
                    xl_fragment[i, j] = x[pid_x * tile_x + i, pid_y * tile_y + j]
                    xr_fragment[i, j] = x[pid_x * tile_x + i, pid_y * tile_y + j + hidden]

                for i, j in T.Parallel(tile_x, tile_y):
                    val_l = T.alloc_var(T.float32)
                    val_r = T.alloc_var(T.float32)
                    val_l = T.float32(xl_fragment[i, j])
                    val_r = T.float32(xr_fragment[i, j])
                    val_l = T.min(val_l, swiglu_clamp_value)
                    val_r = T.max(T.min(val_r, swiglu_clamp_value), -swiglu_clamp_value)
                    x_fragment[i, j] = val_l / (1 + T.exp(-val_l)) * val_r

                T.reduce_absmax(x_fragment_reshaped, sf_inv_fragment, dim=2)
                for i, j in T.Parallel(tile_x, num_groups):
                    sf, sf_inv = get_sf_and_inv(sf_inv_fragment[i, j])
                    out_sf[pid_x * tile_x + i, pid_y * num_groups + j] = sf
                    sf_inv_fragment[i, j] = sf_inv

                for i, j in T.Parallel(tile_x, tile_y):
                    out_fragment[i, j] = x_fragment[i, j] * sf_inv_fragment[i, j // num_per_channels]
                T.copy(out_fragment, out[pid_x * tile_x, pid_y * tile_y])

        return swiglu_forward_and_per_token_cast_kernel

    return get_swiglu_kernel


@tilelang.jit
def parallel_vectorized_cast_kernel(M: int, dtype_A: str, dtype_B: str):
    """tile-ai/tilelang ``testing/python/language/test_tilelang_language_vectorized_cast.py`` (commit a35008a4),
    as written."""
    assert M % 256 == 0

    @T.prim_func
    def main(
        A: T.Tensor[(M,), dtype_A],  # noqa: F821
        B: T.Tensor[(M,), dtype_B],  # noqa: F821
    ):
        with T.Kernel(1, threads=128):
            A_local = T.alloc_fragment((M,), dtype_A)
            B_local = T.alloc_fragment((M,), dtype_B)

            T.copy(A, A_local)
            for i in T.Parallel(M):
                B_local[i] = A_local[i]
            T.copy(B_local, B)

    return main


def _per_token_cast_reference(values, per_channels):
    groups = values.reshape(values.shape[0], -1, per_channels)
    amax = groups.abs().amax(dim=2).clamp(min=CLAMP_MIN)
    out = (groups * (FP8_MAX / amax)[..., None]).reshape(values.shape)
    return out, amax / FP8_MAX


CAST_TOKENS, CAST_HIDDEN, SWIGLU_TOKENS, SWIGLU_HIDDEN, PER_CHANNELS, CLAMP = 64, 256, 32, 256, 128, 3.0


def _cast_inputs():
    """x, and the outputs the caller allocates (TileKernels passes every tensor)."""
    return (randn(CAST_TOKENS, CAST_HIDDEN, seed=231), torch.zeros(CAST_TOKENS, CAST_HIDDEN, dtype=torch.bfloat16),
            torch.zeros(CAST_TOKENS, CAST_HIDDEN // PER_CHANNELS))


def _swiglu_inputs():
    return (randn(SWIGLU_TOKENS, 2 * SWIGLU_HIDDEN, seed=232) * 2,
            torch.zeros(SWIGLU_TOKENS, SWIGLU_HIDDEN, dtype=torch.bfloat16),
            torch.zeros(SWIGLU_TOKENS, SWIGLU_HIDDEN // PER_CHANNELS))


def _swiglu_reference(x, _out, _out_sf):
    x = x.float()
    gate = x[:, :SWIGLU_HIDDEN].clamp(max=CLAMP)
    value = x[:, SWIGLU_HIDDEN:].clamp(-CLAMP, CLAMP)
    return _per_token_cast_reference(gate * torch.sigmoid(gate) * value, PER_CHANNELS)


QUANT = "deepseek-ai/TileKernels tile_kernels/quant/"

EXAMPLES = [
    Example("cast/per_token_cast", QUANT + "per_token_cast_kernel.py: get_per_token_cast_kernel (e4m3, no input sf)",
            per_token_cast_builder(CAST_HIDDEN, PER_CHANNELS), dict(in_dtype="bfloat16", out_dtype="bfloat16"),
            _cast_inputs,
            lambda x, out, out_sf: _per_token_cast_reference(x.float(), PER_CHANNELS), checked=("out", "out_sf")),
    Example("cast/swiglu_per_token_cast",
            QUANT + "swiglu_forward_and_per_token_cast_kernel.py: get_swiglu_forward_and_per_token_cast_kernel "
            "(use_clamp, no weights)", swiglu_cast_builder(SWIGLU_HIDDEN, PER_CHANNELS),
            dict(in_dtype="bfloat16", out_dtype="bfloat16"),
            _swiglu_inputs, _swiglu_reference,
            checked=("out", "out_sf"), scalars={"swiglu_clamp_value": CLAMP}),
    Example("cast/parallel_vectorized_cast", "tile-ai/tilelang testing/python/language/"
            "test_tilelang_language_vectorized_cast.py: parallel_vectorized_cast_kernel (float32 to bfloat16, 4 lanes; "
            "commit a35008a4)", parallel_vectorized_cast_kernel, dict(M=512, dtype_A="float32", dtype_B="bfloat16"),
            lambda: (randn(512, seed=233, dtype=torch.float32), torch.zeros(512, dtype=torch.bfloat16)),
            lambda a, b: a.to(torch.bfloat16).float(), checked=("B",)),
]
