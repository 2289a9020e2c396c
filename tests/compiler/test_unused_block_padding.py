"""Shared memory padded against bank conflicts (``T.alloc_shared((bm, bn + PAD))``, TileOPs' kernels), used
only in its first ``bn`` columns (or ``bm`` rows): the block is what its accesses touch
(TrimUnusedBlockPaddingTT). Run on the emulator against torch."""

import pytest
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_ops import bf16


def padded_affine(m, n, bm, bn, pad_rows, pad_cols, dtype="bfloat16"):
    """Y = X * 2 + 1 through a shared block padded by ``pad_rows`` rows and ``pad_cols`` columns, written and
    read element by element in nests over its used part."""

    @T.prim_func
    def main(X: T.Tensor((m, n), dtype), Y: T.Tensor((m, n), dtype)):
        with T.Kernel(T.ceildiv(n, bn), T.ceildiv(m, bm), threads=128) as (bx, by):
            s = T.alloc_shared((bm + pad_rows, bn + pad_cols), dtype)
            o = T.alloc_fragment((bm, bn), dtype)
            for i, j in T.Parallel(bm, bn):
                s[i, j] = X[by * bm + i, bx * bn + j]
            for i, j in T.Parallel(bm, bn):
                o[i, j] = s[i, j] * 2.0 + 1.0
            T.copy(o, Y[by * bm, bx * bn])

    return main


@pytest.mark.parametrize("pad_rows,pad_cols", [(0, 8), (4, 0), (1, 16)])
def test_a_padded_shared_block_is_the_block_its_nests_use(pad_rows, pad_cols):
    x = bf16(64, 128, seed=60)
    artifacts = tilelang_tt.compile(padded_affine(64, 128, 32, 64, pad_rows, pad_cols))
    y = torch.as_tensor(artifacts.run(x)).float()
    assert torch.equal(y, (x.float() * 2 + 1).bfloat16().float())
