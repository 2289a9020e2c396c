"""Block transposes (issue 29 item 4): ``T.transpose(X, Y)`` of on-chip blocks and the transposed element
copy ``Y[i, j] = X[j, i]`` in a ``T.Parallel`` nest both lower to one element-wise value whose operand is
unpacked with ``transpose_tile`` from tile (c, r) of X for output tile (r, c) (tilelang_tt/ops/transpose.py);
run on the emulator against torch, in other authors' idioms (TileLang's test, a transpose after compute, a
scaled transposed copy), and the refusals of what it does not take."""

import inspect
import sys

import pytest
import tilelang  # noqa: F401
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_negative import assert_diagnostic, compile_error
from tests.compiler.test_ops import assert_close, bf16

THIS = inspect.getsourcefile(sys.modules[__name__])
SOURCE = inspect.getsource(sys.modules[__name__])


def transposed_blocks(m, n, bm, bn, dtype):
    """TileLang's ``test_tilelang_language_transpose``: B = A^T block by block, the block of A at (by, bx)
    written to B's block at (bx, by)."""

    @T.prim_func
    def main(A: T.Tensor((m, n), dtype), B: T.Tensor((n, m), dtype)):
        with T.Kernel(T.ceildiv(n, bn), T.ceildiv(m, bm), threads=128) as (bx, by):
            a = T.alloc_shared((bm, bn), dtype)
            a_t = T.alloc_shared((bn, bm), dtype)
            T.copy(A[by * bm:(by + 1) * bm, bx * bn:(bx + 1) * bn], a)
            T.transpose(a, a_t)
            T.copy(a_t, B[bx * bn:(bx + 1) * bn, by * bm:(by + 1) * bm])

    return main


def exp_then_transpose(m, n):
    """Y = exp(X)^T in float32: the transpose reads a fragment compute wrote."""

    @T.prim_func
    def main(X: T.Tensor((m, n), "float32"), Y: T.Tensor((n, m), "float32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            x = T.alloc_shared((m, n), "float32")
            e = T.alloc_fragment((m, n), "float32")
            y = T.alloc_fragment((n, m), "float32")
            T.copy(X, x)
            for i, j in T.Parallel(m, n):
                e[i, j] = T.exp(x[i, j])
            T.transpose(e, y)
            T.copy(y, Y)

    return main


def scaled_transposed_copy(m, n, scale):
    """Y = scale * X^T, the transpose written as an element copy in a nest (a GPU kernel's shared-memory
    transpose)."""

    @T.prim_func
    def main(X: T.Tensor((m, n), "bfloat16"), Y: T.Tensor((n, m), "bfloat16")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            x = T.alloc_shared((m, n), "bfloat16")
            y = T.alloc_fragment((n, m), "bfloat16")
            T.copy(X, x)
            for i, j in T.Parallel(n, m):
                y[i, j] = x[j, i] * scale
            T.copy(y, Y)

    return main


@pytest.mark.parametrize("m, n, bm, bn, dtype", [(128, 128, 64, 64, "bfloat16"), (64, 192, 64, 96, "bfloat16"),
                                                 (96, 64, 32, 64, "float32")])
def test_transpose_of_shared_blocks(m, n, bm, bn, dtype):
    a = bf16(m, n, seed=1) if dtype == "bfloat16" else torch.randn(m, n, generator=torch.Generator().manual_seed(1))
    art = tilelang_tt.compile(transposed_blocks(m, n, bm, bn, dtype))
    out = torch.as_tensor(art.run(a))
    assert torch.equal(out, a.t())  # a permutation of the values: exact
    assert "transpose_tile(" in art.sources["compute.cpp"]


def test_transpose_of_a_computed_fragment():
    x = torch.randn(32, 64, generator=torch.Generator().manual_seed(2))
    out = torch.as_tensor(tilelang_tt.compile(exp_then_transpose(32, 64)).run(x))
    assert_close(out, torch.exp(x).t(), 2.0 ** -10)


def test_transposed_element_copy_in_a_nest():
    x = bf16(64, 96, seed=3)
    out = torch.as_tensor(tilelang_tt.compile(scaled_transposed_copy(64, 96, 0.5)).run(x)).float()
    assert torch.equal(out, x.float().t() * 0.5)


def transpose_of_a_part(m=64, n=64):
    @T.prim_func
    def main(A: T.Tensor((m, n), "bfloat16"), B: T.Tensor((32, 32), "bfloat16")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            a = T.alloc_shared((m, n), "bfloat16")
            b = T.alloc_shared((32, 32), "bfloat16")
            T.copy(A, a)
            T.transpose(a[0:32, 0:32], b)  # LINE: transpose_of_a_part
            T.copy(b, B)

    return main


def transpose_to_a_wrong_shape(m=64, n=32):
    @T.prim_func
    def main(A: T.Tensor((m, n), "bfloat16"), B: T.Tensor((m, n), "bfloat16")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            a = T.alloc_shared((m, n), "bfloat16")
            b = T.alloc_shared((m, n), "bfloat16")
            T.copy(A, a)
            T.transpose(a, b)  # LINE: transpose_to_a_wrong_shape
            T.copy(b, B)

    return main


def test_transpose_of_a_part_of_a_block_is_refused():
    err = compile_error(transpose_of_a_part())
    assert_diagnostic(err, "LowerTTTileIntrinsics", "T.transpose of a part of `a` [64, 64]", "transpose_of_a_part",
                      THIS, SOURCE)
    assert "T.copy a slice into a block first" in err.hint


def test_transpose_to_a_block_of_another_shape_is_refused():
    err = compile_error(transpose_to_a_wrong_shape())
    assert_diagnostic(err, "LowerTTTileIntrinsics", "T.transpose from `a` [64, 32] to `b` [64, 32], which is not its "
                      "transpose", "transpose_to_a_wrong_shape", THIS, SOURCE)
