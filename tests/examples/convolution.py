"""2-D convolution as an implicit GEMM, modelled on tile-ai/tilelang's
examples/convolution/example_convolution.py (convolution).

Written anew for this catalogue in that example's idioms, not copied: an eager ``@tilelang.jit``
kernel over NHWC images and an (KH, KW, C, F) filter bank, whose output pixels (N * OH * OW rows)
and filters (F columns) form a GEMM: ``T.im2col`` gathers a block of image patches, the filters and
the output are read as 2-D views of their parameters (``T.Tensor(shape, dtype, buffer.data)``), and
``T.gemm`` accumulates in float32. bfloat16 data. The example's call: 64 x 128 x 32 blocks,
3 stages, 256 threads, stride 1, dilation 1, padding 1, 3 x 3 filters; here one 8 x 8 image of
32 channels and 128 filters (its 128 images of 64 x 64 x 128)."""

import tilelang
import tilelang.language as T
import torch.nn.functional as F

from tests.examples.harness import Example, randn


@tilelang.jit
def conv2d_implicit_gemm(images, filters, S, D, P, block_M, block_N, block_K, num_stages, threads,
                         dtype=T.bfloat16, accum_dtype=T.float32):
    N, C, H, W, F, K = T.const("N, C, H, W, F, K")
    reach = D * (K - 1) + 1  # the dilated filter's extent
    OH = (H + 2 * P - reach) // S + 1
    OW = (W + 2 * P - reach) // S + 1

    images: T.Tensor((N, H, W, C), dtype)
    filters: T.Tensor((K, K, C, F), dtype)
    out = T.empty((N, OH, OW, F), dtype)

    with T.Kernel(T.ceildiv(F, block_N), T.ceildiv(N * OH * OW, block_M), threads=threads) as (bx, by):
        patches = T.alloc_shared((block_M, block_K), dtype)
        taps = T.alloc_shared((block_K, block_N), dtype)
        acc = T.alloc_fragment((block_M, block_N), accum_dtype)
        staged = T.alloc_shared((block_M, block_N), dtype)

        filters_2d = T.Tensor((K * K * C, F), dtype, filters.data)  # (kh, kw, c) rows
        out_2d = T.Tensor((N * OH * OW, F), dtype, out.data)  # (n, oh, ow) rows

        T.clear(acc)
        for kk in T.Pipelined(T.ceildiv(K * K * C, block_K), num_stages=num_stages):
            T.im2col(images, patches, by, kk, K, S, D, P)
            T.copy(filters_2d[kk * block_K, bx * block_N], taps)
            T.gemm(patches, taps, acc)

        T.copy(acc, staged)
        T.copy(staged, out_2d[by * block_M, bx * block_N])

    return out


def conv_reference(x, w, stride, padding, dilation):
    """out[n, oh, ow, f] = sum over (c, kh, kw) of the patch at (oh, ow) times w[kh, kw, c, f]: the
    patches unfolded from the NCHW image, one matrix product with the flattened filters."""
    n, h, wd, c = x.shape
    k, f = w.shape[0], w.shape[3]
    cols = F.unfold(x.float().permute(0, 3, 1, 2), k, dilation=dilation, padding=padding, stride=stride)
    flat = w.float().permute(3, 2, 0, 1).reshape(f, c * k * k)  # rows f, columns (c, kh, kw) as unfold
    oh = (h + 2 * padding - dilation * (k - 1) - 1) // stride + 1
    ow = (wd + 2 * padding - dilation * (k - 1) - 1) // stride + 1
    return (flat @ cols).reshape(n, f, oh, ow).permute(0, 2, 3, 1)


BATCH, CHANNELS, SIDE, FILTERS, KSIZE, STRIDE, DILATION, PAD = 1, 32, 8, 128, 3, 1, 1, 1

EXAMPLES = [
    Example("convolution/convolution", "convolution/example_convolution.py: convolution", conv2d_implicit_gemm,
            dict(N=BATCH, C=CHANNELS, H=SIDE, W=SIDE, F=FILTERS, K=KSIZE, S=STRIDE, D=DILATION, P=PAD, block_M=64,
                 block_N=128, block_K=32, num_stages=3, threads=256),
            lambda: (randn(BATCH, SIDE, SIDE, CHANNELS, seed=1), randn(KSIZE, KSIZE, CHANNELS, FILTERS, seed=2)),
            lambda x, w: conv_reference(x, w, STRIDE, PAD, DILATION)),
]
