"""A T.copy of a part of an on-chip block into a tensor (LowerCBIntrinsics): the writer waits for the whole
block, writes the part's tiles from their pages of the block and pops every page. Run on the emulator against
torch: the first columns of a block wider than its tensor (TileOPs' norms pad rows to 256 and store the first N),
over one and two tile rows, a part ending inside a tile."""

import pytest
import tilelang  # noqa: F401
import tilelang.language as T
import torch

from tests.compiler.test_ops import assert_close, run

torch.manual_seed(0)


def first_columns(M, N, NP=256):
    @T.prim_func
    def main(x: T.Tensor((M, N), "bfloat16"), y: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(1, threads=128) as bx:
            s = T.alloc_shared((M, NP), "bfloat16")
            l = T.alloc_fragment((M, NP), "float32")
            for i, j in T.Parallel(M, NP):
                s[i, j] = T.if_then_else(j < N, x[i, j], T.cast(0.0, "bfloat16"))
            for i, j in T.Parallel(M, NP):
                l[i, j] = T.cast(s[i, j], "float32") * 2.0
            T.copy(l[0:M, 0:N], y[0:M, 0:N])

    return main


@pytest.mark.parametrize("M, N", [(32, 128), (64, 128), (32, 224), (32, 200)])
def test_the_first_columns_of_a_block_into_a_tensor(M, N):
    x = torch.randn(M, N).to(torch.bfloat16)
    out, _ = run(first_columns(M, N), x, torch.zeros(M, N, dtype=torch.bfloat16))
    assert_close(out, x.float() * 2, 0.0)
