"""A block reaching past its tensor's end whose padding the kernel's own guard selects away (the last tile
of a row, read element by element under ``col < N`` with -inf or 0 elsewhere): its reductions see the
kernel's values, not padding (CheckPaddingTT). Run on the emulator against torch."""

import pytest
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_ops import assert_close, bf16


def guarded_row_stats(m, n, bm, bn):
    """Per row of X (n columns, not a multiple of bn): the maximum and the sum of exp(x - max), over column
    tiles of bn, the reads past the row's end guarded (-inf for the maximum, 0 for the sum)."""
    tiles = (n + bn - 1) // bn

    @T.prim_func
    def main(X: T.Tensor((m, n), "float32"), Mx: T.Tensor((m,), "float32"), Sm: T.Tensor((m,), "float32")):
        with T.Kernel(T.ceildiv(m, bm), threads=128) as by:
            t = T.alloc_fragment((bm, bn), "float32")
            e = T.alloc_fragment((bm, bn), "float32")
            mx = T.alloc_fragment((bm,), "float32")
            sm = T.alloc_fragment((bm,), "float32")
            part = T.alloc_fragment((bm,), "float32")
            T.fill(mx, -T.infinity("float32"))
            T.clear(sm)
            for k in T.serial(tiles):
                for i, j in T.Parallel(bm, bn):
                    t[i, j] = T.if_then_else(k * bn + j < n, X[by * bm + i, k * bn + j], -T.infinity("float32"))
                T.reduce_max(t, mx, dim=1, clear=False)
            for k in T.serial(tiles):
                for i, j in T.Parallel(bm, bn):
                    e[i, j] = T.if_then_else(k * bn + j < n, T.exp(X[by * bm + i, k * bn + j] - mx[i]), 0.0)
                T.reduce_sum(e, part, dim=1)
                for i in T.Parallel(bm):
                    sm[i] = sm[i] + part[i]
            T.copy(mx, Mx[by * bm])
            T.copy(sm, Sm[by * bm])

    return main


@pytest.mark.parametrize("m,n,bm,bn", [(64, 80, 32, 64), (32, 160, 32, 64)])
def test_reductions_over_a_guarded_last_tile(m, n, bm, bn):
    x = bf16(m, n, seed=80).float()
    mx, sm = (torch.as_tensor(o) for o in tilelang_tt.compile(guarded_row_stats(m, n, bm, bn)).run(x))
    assert torch.equal(mx, x.amax(1))  # bfloat16 values: exact in TF32, the maximum exact
    assert_close(sm, torch.exp(x - x.amax(1, keepdim=True)).sum(1), 2.0 ** -9)
