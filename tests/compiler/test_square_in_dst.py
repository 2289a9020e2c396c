"""x op x computes x once in DST (``eltwise.SfpuBinaryOperands``): layernorm's ``xc * xc`` copies each tile of
xc once and multiplies its DST slot by itself, where it copied it into two slots."""

import re

import tilelang  # noqa: F401
import tilelang.language as T
import torch

import tilelang_tt


def squares(m=64, n=128, bm=32):
    @T.prim_func
    def main(X: T.Tensor((m, n), "float32"), Y: T.Tensor((m, n), "float32")):
        with T.Kernel(T.ceildiv(m, bm), threads=128) as bx:
            x = T.alloc_fragment((bm, n), "float32")
            y = T.alloc_fragment((bm, n), "float32")
            T.copy(X[bx * bm, 0], x)
            for i, j in T.Parallel(bm, n):
                y[i, j] = (x[i, j] + 1.0) * (x[i, j] + 1.0)
            T.copy(y, Y[bx * bm, 0])

    return main


def test_a_square_copies_its_operand_once():
    art = tilelang_tt.compile(squares())
    compute = art.sources["compute.cpp"]
    assert compute.count("copy_tile(") == 1 and compute.count("add_unary_tile(") == 1
    assert re.search(r"mul_binary_tile\((t_\d+), \1, \1\)", compute)
    x = torch.randn(64, 128) * 1e3
    torch.testing.assert_close(art.run(x), (x + 1.0) * (x + 1.0), rtol=0, atol=0)
