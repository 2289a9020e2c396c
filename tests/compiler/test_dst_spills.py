"""Element-wise values needing more DST registers than an acquire holds (SpillDSTTT): their longest-held
operands are computed into blocks of their own first, then the value reads them. Run on the emulator
against torch, in a 32-bit DST (float32 blocks: 4 registers) and a 16-bit one (bfloat16: 8)."""

import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_ops import assert_close, bf16


def products_of_sums(m, n, bm, bn):
    """y = (a*b + c*d) * (a*c + b*d) + (a*d + b*c) * (a*b - c*d) over float32 blocks: 5 registers (no square x*x,
    which takes one register where a product of two blocks takes two: eltwise.SfpuBinaryOperands)."""

    @T.prim_func
    def main(A: T.Tensor((m, n), "float32"), B: T.Tensor((m, n), "float32"), C: T.Tensor((m, n), "float32"),
             D: T.Tensor((m, n), "float32"), Y: T.Tensor((m, n), "float32")):
        with T.Kernel(T.ceildiv(n, bn), T.ceildiv(m, bm), threads=128) as (bx, by):
            a = T.alloc_shared((bm, bn), "float32")
            b = T.alloc_shared((bm, bn), "float32")
            c = T.alloc_shared((bm, bn), "float32")
            d = T.alloc_shared((bm, bn), "float32")
            y = T.alloc_fragment((bm, bn), "float32")
            T.copy(A[by * bm, bx * bn], a)
            T.copy(B[by * bm, bx * bn], b)
            T.copy(C[by * bm, bx * bn], c)
            T.copy(D[by * bm, bx * bn], d)
            for i, j in T.Parallel(bm, bn):
                y[i, j] = (a[i, j] * b[i, j] + c[i, j] * d[i, j]) * (a[i, j] * c[i, j] + b[i, j] * d[i, j]) + \
                    (a[i, j] * d[i, j] + b[i, j] * c[i, j]) * (a[i, j] * b[i, j] - c[i, j] * d[i, j])
            T.copy(y, Y[by * bm, bx * bn])

    return main


def test_a_float32_value_of_five_registers_runs_in_two_passes():
    a, b, c, d = (torch.randn(64, 128, generator=torch.Generator().manual_seed(s)) for s in range(40, 44))
    artifacts = tilelang_tt.compile(products_of_sums(64, 128, 32, 64))
    y = torch.as_tensor(artifacts.run(a, b, c, d))
    ref = (a * b + c * d) * (a * c + b * d) + (a * d + b * c) * (a * b - c * d)
    assert_close(y, ref, 2.0 ** -18)  # float32 throughout: a few float32 roundings
    assert [cb.name for cb in artifacts.plan.cbs if "spill" in cb.name] == ["y_spill"]


def piecewise(m, n, bn, dtype):
    """A different expression per range of columns, written as nested T.if_then_else on the column index
    (masks the reader generates, each ``where_tile`` holding its three operands): 10 registers."""

    @T.prim_func
    def main(X: T.Tensor((m, n), dtype), G: T.Tensor((m, n), dtype), Y: T.Tensor((m, n), dtype)):
        with T.Kernel(T.ceildiv(n, bn), threads=128) as bx:
            x = T.alloc_shared((m, bn), dtype)
            g = T.alloc_shared((m, bn), dtype)
            y = T.alloc_fragment((m, bn), dtype)
            T.copy(X[0, bx * bn], x)
            T.copy(G[0, bx * bn], g)
            for i, j in T.Parallel(m, bn):
                y[i, j] = T.if_then_else(j < bn // 8, x[i, j] - g[i, j], T.if_then_else(
                    j < bn // 4, x[i, j] * g[i, j], T.if_then_else(
                        j < bn // 2, T.exp(x[i, j]) - g[i, j], T.if_then_else(
                            j < 3 * bn // 4, T.max(x[i, j], g[i, j]) * x[i, j], x[i, j] + g[i, j] * g[i, j]))))
            T.copy(y, Y[0, bx * bn])

    return main


def test_a_bfloat16_selection_of_ten_registers_spills_its_branches():
    x, g = bf16(32, 256, seed=45), bf16(32, 256, seed=46)
    artifacts = tilelang_tt.compile(piecewise(32, 256, 128, "bfloat16"))
    y = torch.as_tensor(artifacts.run(x, g)).float()
    xf, gf = x.float(), g.float()
    col = torch.arange(256) % 128
    ref = torch.where(col < 16, xf - gf, torch.where(col < 32, xf * gf, torch.where(col < 64, torch.exp(xf) - gf, (
        torch.where(col < 96, torch.maximum(xf, gf) * xf, xf + gf * gf)))))
    assert_close(y, ref, 2.0 ** -6)  # bfloat16 DST: each op rounds, exp_tile's error
    assert any("spill" in cb.name for cb in artifacts.plan.cbs)
    assert artifacts.plan.kernel("compute").config.fp32_dest_acc_en is False  # the spills hold bfloat16
