"""Two irregular matrix products, modelled on tile-ai/tilelang's
examples/blocksparse_gemm/example_blocksparse_gemm.py (blocksparse_matmul) and
examples/grouped_gemm/example_grouped_gemm_fwd.py (grouped_gemm).

Both are written anew for this catalogue in those examples' idioms, not copied: eager
``@tilelang.jit`` kernels (``T.const`` sizes, ``T.empty`` output) with a pipelined ``T.gemm`` loop.
The block-sparse product skips the K steps whose entry in a boolean (row block, column block,
K block) mask is false, under ``T.use_swizzle(panel_size=..., enable=...)``. The grouped product
multiplies consecutive row groups of A by their own matrix of B: each row-block program finds its
group by scanning int32 group offsets padded to whole blocks (a ``T.alloc_var`` updated with
``T.if_then_else``), reads that group's slice of B, and stores only the rows its group has.
bfloat16 data, float32 accumulators. Block-sparse: the example's default 128 x 128 x 32 blocks,
2 stages, 128 threads, rasterisation on, half the blocks kept, on 256 x 256 x 256. Grouped: its
main's 64 x 128 x 64 blocks, 2 stages, 256 threads; groups of 64 and 128 rows, K 128, N 256."""

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn


@tilelang.jit
def masked_block_matmul(
    A, B, tile_mask, block_M, block_N, block_K, num_stages, thread_num, enable_rasteration, dtype=T.bfloat16,
    accum_dtype=T.float32
):
    M, N, K = T.const("M, N, K")

    A: T.Tensor((M, K), dtype)
    B: T.Tensor((K, N), dtype)
    tile_mask: T.Tensor((M // block_M, N // block_N, K // block_K), "bool")
    C = T.empty((M, N), dtype)

    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=thread_num) as (bx, by):
        a_blk = T.alloc_shared((block_M, block_K), dtype)
        b_blk = T.alloc_shared((block_K, block_N), dtype)
        acc = T.alloc_fragment((block_M, block_N), accum_dtype)
        c_blk = T.alloc_shared((block_M, block_N), dtype)

        T.use_swizzle(panel_size=10, enable=enable_rasteration)
        T.clear(acc)
        for kk in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            if tile_mask[by, bx, kk]:  # only the K blocks the mask keeps
                T.copy(A[by * block_M, kk * block_K], a_blk)
                T.copy(B[kk * block_K, bx * block_N], b_blk)
                T.gemm(a_blk, b_blk, acc)
        T.copy(acc, c_blk)
        T.copy(c_blk, C[by * block_M, bx * block_N])

    return C


def masked_product(a, b, mask, bm, bn, bk):
    """C[i-block, j-block] = sum over the K blocks k with mask[i, j, k] of A[i, k] B[k, j] (float32)."""
    a, b = a.float(), b.float()
    c = torch.zeros(a.shape[0], b.shape[1])
    for i, j, k in mask.nonzero().tolist():
        c[i * bm:(i + 1) * bm, j * bn:(j + 1) * bn] += a[i * bm:(i + 1) * bm, k * bk:(k + 1) * bk] @ \
            b[k * bk:(k + 1) * bk, j * bn:(j + 1) * bn]
    return c


@tilelang.jit
def grouped_matmul(
    A,
    B,
    group_sizes,
    group_starts,
    group_padded_starts,
    group_sizes_list,
    block_M,
    block_N,
    block_K,
    trans_b=False,
    num_stages=2,
    threads=128,
    dtype=T.bfloat16,
):
    """A [sum of the group sizes, K]; B [groups, K, N] ([groups, N, K] with ``trans_b``)."""
    K, N = T.const("K, N")
    rows = sum(group_sizes_list)
    n_groups = len(group_sizes_list)
    row_blocks = sum(-(-size // block_M) for size in group_sizes_list)  # each group padded to whole blocks

    b_shape, b_blk_shape = ([n_groups, N, K], [block_N, block_K]) if trans_b else ([n_groups, K, N],
                                                                                  [block_K, block_N])

    A: T.Tensor([rows, K], dtype)
    B: T.Tensor(b_shape, dtype)
    C = T.empty([rows, N], dtype)
    group_sizes: T.Tensor([n_groups], T.int32)
    group_starts: T.Tensor([n_groups], T.int32)
    group_padded_starts: T.Tensor([n_groups], T.int32)

    with T.Kernel(row_blocks, T.ceildiv(N, block_N), threads=threads) as (bx, by):
        a_blk = T.alloc_shared([block_M, block_K], dtype)
        b_blk = T.alloc_shared(b_blk_shape, dtype)
        acc = T.alloc_fragment([block_M, block_N], T.float32)
        g = T.alloc_var(dtype=T.int32)
        g_rows = T.alloc_var(dtype=T.int32)

        padded_row = bx * block_M

        # the last group whose padded start is at or before this block
        g = 0
        for i in range(n_groups):
            reached = padded_row >= group_padded_starts[i]
            g = T.if_then_else(reached, i, g)

        g_rows = group_sizes[g]
        row = padded_row - group_padded_starts[g] + group_starts[g]
        valid = T.max(0, T.min(block_M, g_rows + group_padded_starts[g] - padded_row))

        T.clear(acc)
        for kk in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[row : row + block_M, kk * block_K : (kk + 1) * block_K], a_blk)
            if trans_b:
                T.copy(B[g, by * block_N : (by + 1) * block_N, kk * block_K : (kk + 1) * block_K], b_blk)
            else:
                T.copy(B[g, kk * block_K : (kk + 1) * block_K, by * block_N : (by + 1) * block_N], b_blk)
            T.gemm(a_blk, b_blk, acc, transpose_B=trans_b)

        for r, c in T.Parallel(block_M, block_N):
            if r < valid:
                C[row + r, by * block_N + c] = acc[r, c]

    return C


def group_offsets(sizes, pad):
    """Each group's first row, and its first row when every group is padded to a multiple of pad."""
    starts, padded = [0], [0]
    for size in sizes[:-1]:
        starts.append(starts[-1] + size)
        padded.append(padded[-1] + -(-size // pad) * pad)
    return starts, padded


def grouped_product(a, b, sizes):
    """The rows of group g of a times b[g], stacked (float32)."""
    parts = torch.split(a.float(), list(sizes))
    return torch.cat([part @ b[g].float() for g, part in enumerate(parts)])


SPARSE = dict(M=256, N=256, K=256, block_M=128, block_N=128, block_K=32, num_stages=2, thread_num=128,
              enable_rasteration=True)


def _sparse_inputs():
    kept = torch.rand((2, 2, 8), generator=torch.Generator().manual_seed(3)) > 0.5
    return randn(256, 256, seed=1), randn(256, 256, seed=2), kept


GROUPS, GROUP_K, GROUP_N, GROUP_BLOCK_M = (64, 128), 128, 256, 64


def _grouped_inputs():
    starts, padded = group_offsets(GROUPS, GROUP_BLOCK_M)
    as_int32 = (torch.tensor(v, dtype=torch.int32) for v in (GROUPS, starts, padded))
    return (randn(sum(GROUPS), GROUP_K, seed=5), randn(len(GROUPS), GROUP_K, GROUP_N, seed=6), *as_int32)


EXAMPLES = [
    Example("blocksparse_gemm/blocksparse_matmul", "blocksparse_gemm/example_blocksparse_gemm.py: blocksparse_matmul",
            masked_block_matmul, SPARSE, _sparse_inputs, lambda a, b, mask: masked_product(a, b, mask, 128, 128, 32)),
    Example("grouped_gemm/grouped_gemm_fwd", "grouped_gemm/example_grouped_gemm_fwd.py: grouped_gemm", grouped_matmul,
            dict(K=GROUP_K, N=GROUP_N, group_sizes_list=GROUPS, block_M=GROUP_BLOCK_M, block_N=128, block_K=64,
                 trans_b=False, num_stages=2, threads=256),
            _grouped_inputs, lambda a, b, *offsets: grouped_product(a, b, GROUPS)),
]
