"""Pooling over windows of a row, outside TileLang's examples/.

Taken from tile-ai/TileOPs ``src/tileops/kernels/pool/avg_pool1d.py`` at commit 52dbc086
(``_avg_pool1d_kernel``: ``T.use_swizzle(10)``, one output element per ``T.Parallel`` point of a flat index
over ``(n, c_in, out_l)``, the window summed by a ``T.serial`` loop into a ``T.alloc_var``, a fast path when
the whole block's windows lie inside one row and a guarded one with the divisor of
``count_include_pad``). The authors' code as written; float16 made bfloat16 and the sizes small
(2 x 4 channels of 64, windows of 4 at stride 2 with padding 1, blocks of 64 outputs)."""

import functools

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn


def pool_output_dim(input_size, kernel_size, stride, padding, ceil_mode, dilation=1):
    """TileOPs' ``pool/common.py: pool_output_dim``."""
    effective_kernel = dilation * (kernel_size - 1) + 1
    if ceil_mode:
        out = (input_size + 2 * padding - effective_kernel + stride - 1) // stride + 1
    else:
        out = (input_size + 2 * padding - effective_kernel) // stride + 1
    if ceil_mode and out > 0 and (out - 1) * stride >= input_size + padding:
        out -= 1
    return max(out, 0)


@functools.lru_cache(maxsize=64)
def _avg_pool1d_kernel(n, c_in, l_in, kernel_l, stride_l, pad_l, ceil_mode, count_include_pad, dtype="float16"):
    accum_dtype = "float"
    out_l = pool_output_dim(l_in, kernel_l, stride_l, pad_l, ceil_mode)
    total_output = n * c_in * out_l

    @tilelang.jit(out_idx=[1])
    def _avg_pool1d_func(block_m: int, threads: int):
        @T.prim_func
        def _avg_pool1d_main(
            x: T.Tensor((n, c_in, l_in), dtype),  # type: ignore
            out: T.Tensor((n, c_in, out_l), dtype),  # type: ignore
        ):
            with T.Kernel(T.ceildiv(total_output, block_m), threads=threads) as bx:
                T.use_swizzle(10)
                tile_out_start = bx * block_m
                tile_out_end = tile_out_start + block_m - 1
                tile_ol_start = tile_out_start % out_l
                tile_ol_end = tile_out_end % out_l
                tile_same_row = tile_out_start // out_l == tile_out_end // out_l
                tile_input_start = tile_ol_start * stride_l - pad_l
                tile_input_end = tile_ol_end * stride_l + kernel_l - 1 - pad_l
                tile_spatial_full = (
                    tile_same_row & (tile_input_start >= 0) & (tile_input_end < l_in)
                )
                for i in T.Parallel(block_m):
                    out_idx = bx * block_m + i
                    if out_idx < total_output:
                        ol = out_idx % out_l
                        nc_idx = out_idx // out_l
                        c_idx = nc_idx % c_in
                        batch = nc_idx // c_in

                        sum_val = T.alloc_var(T.float32)
                        sum_val = T.cast(0.0, accum_dtype)

                        if tile_spatial_full:
                            for kw in T.serial(kernel_l):
                                il = ol * stride_l + kw - pad_l
                                sum_val += T.cast(x[batch, c_idx, il], accum_dtype)
                            out[batch, c_idx, ol] = T.cast(
                                sum_val / T.cast(kernel_l, accum_dtype),
                                dtype,
                            )
                        else:
                            for kw in T.serial(kernel_l):
                                il = ol * stride_l + kw - pad_l
                                if il >= 0 and il < l_in:
                                    sum_val += T.cast(x[batch, c_idx, il], accum_dtype)

                            window_start = ol * stride_l - pad_l
                            window_end = window_start + kernel_l
                            valid_start = T.max(window_start, 0)
                            valid_end = T.min(window_end, l_in)
                            valid_count = T.max(valid_end - valid_start, 0)
                            padded_start = T.max(window_start, -pad_l)
                            padded_end = T.min(window_end, l_in + pad_l)
                            padded_count = T.max(padded_end - padded_start, 0)
                            divisor = T.max(
                                T.if_then_else(count_include_pad, padded_count, valid_count),
                                1,
                            )
                            out[batch, c_idx, ol] = T.cast(
                                sum_val / T.cast(divisor, accum_dtype),
                                dtype,
                            )

        return _avg_pool1d_main

    return _avg_pool1d_func


POOL = dict(n=2, c_in=4, l_in=64, kernel_l=4, stride_l=2, pad_l=1)

EXAMPLES = [
    Example("pool/avg_pool1d", "tile-ai/TileOPs src/tileops/kernels/pool/avg_pool1d.py: _avg_pool1d_kernel "
            "(commit 52dbc086)", _avg_pool1d_kernel(**POOL, ceil_mode=False, count_include_pad=True, dtype="bfloat16"),
            dict(block_m=64, threads=64), lambda: (randn(2, 4, 64, seed=331),),
            lambda x: torch.nn.functional.avg_pool1d(x.float(), 4, 2, 1, count_include_pad=True)),
]
