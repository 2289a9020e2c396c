"""T.atomic_addx2 / T.atomic_addx4 (two or four consecutive elements added at once, a thread's pair or quad): a serial
loop of element adds (LowerAtomicAddTT) that FuseInnerLoopsTT makes one T.Parallel loop with the lanes' loop, then
the read-modify-write of a T.atomic_add; blocks adding into one region take turns as theirs do."""

import pytest
import tilelang.language as T
import torch

import tilelang_tt


def pairs(width, splits, dtype):
    """B += sum over the splits of A[s] (A: (splits, 64, 64)), each lane adding ``width`` consecutive elements."""
    add = T.atomic_addx2 if width == 2 else T.atomic_addx4

    @T.prim_func
    def main(A: T.Tensor((splits, 64, 64), dtype), B: T.Tensor((64, 64), dtype)):
        with T.Kernel(2, 2, splits, threads=32) as (bx, by, bz):
            for i, j in T.Parallel(32, 32 // width):
                add(B[bx * 32 + i, by * 32 + j * width], A[bz, bx * 32 + i, by * 32 + j * width])

    return main


@pytest.mark.parametrize("width,splits,dtype", [(2, 1, "bfloat16"), (4, 1, "float32"), (2, 3, "float32")])
def test_pairs_and_quads_add_as_torch(width, splits, dtype):
    a = torch.randn(splits, 64, 64).to(getattr(torch, dtype))
    b = torch.randn(64, 64).to(getattr(torch, dtype))
    out = tilelang_tt.compile(pairs(width, splits, dtype)).run(a, b.clone())
    ref = b.float() + a.float().sum(dim=0)
    torch.testing.assert_close(out.float(), ref, rtol=1e-2 if dtype == "bfloat16" else 1e-5, atol=1e-2)
