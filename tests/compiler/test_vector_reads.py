"""A vector of a global tensor read along the nest dimension that is not its own (issue 29, item 4):
a row of a tensor used per row of a ``T.Parallel`` nest (``A[0, k]`` of a (1, K) activation in a
GEMV, per-head weights ``W[h, by * 32 + i]``) or a column used per column (``B[k, 0]`` of a (K, 1)
vector, KernelBench's GEMV). LegalizeGlobalAccessTT reads the vector as the one-row (one-column) block
it is in the tensor's tiles and compute turns its tiles (``transpose_tile``) into the vector the nest
reads. Each runs on the emulator against torch; a column of a wider tensor read per column is refused at
its statement. A T.copy of a row into a vector used per row runs too (OrientVectorMovesTT; it moved the
row's tiles as they are before: wrong numbers)."""

import inspect

import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_negative import assert_diagnostic, compile_error
from tests.compiler.test_ops import assert_close, bf16

PATH = inspect.getsourcefile(inspect.currentframe())


def run(kernel, *inputs):
    return torch.as_tensor(tilelang_tt.compile(kernel).run(*inputs)).float()


def gemv_column_vector(m, k, bm=64, bk=64):
    """y = A @ x for x of shape (K, 1), KernelBench's layout of the vector: a nest over (rows, a K
    step) accumulates ``A[row, k] * x[k, 0]`` per row, the column ``x[k0:k0 + bk, 0]`` read along the
    nest's columns; y (M, 1) is stored a row per element."""

    @T.prim_func
    def main(A: T.Tensor((m, k), "bfloat16"), x: T.Tensor((k, 1), "bfloat16"), y: T.Tensor((m, 1), "bfloat16")):
        with T.Kernel(m // bm, threads=128) as bx:
            acc = T.alloc_fragment((bm,), "float32")
            T.clear(acc)
            for ko in T.serial(k // bk):
                for i, kk in T.Parallel(bm, bk):
                    acc[i] += T.Cast("float32", A[bx * bm + i, ko * bk + kk]) * T.Cast("float32", x[ko * bk + kk, 0])
            for i in T.Parallel(bm):
                y[bx * bm + i, 0] = T.Cast("bfloat16", acc[i])

    return main


def test_a_gemv_whose_vector_is_a_column_runs():
    a, x = bf16(128, 256, seed=1), bf16(256, 1, seed=2)
    assert_close(run(gemv_column_vector(128, 256), a, x), a.float() @ x.float(), 2e-2)


def per_row_scale_from_a_row(m, n, bm=32, bn=64):
    """Y = X * s[:, None] with the scales kept as a (1, M) row (a GEMV's activation layout), read per
    row of the block: ``S[0, by * bm + i]``."""

    @T.prim_func
    def main(X: T.Tensor((m, n), "float32"), S: T.Tensor((1, m), "float32"), Y: T.Tensor((m, n), "float32")):
        with T.Kernel(n // bn, m // bm) as (bx, by):
            for i, j in T.Parallel(bm, bn):
                Y[by * bm + i, bx * bn + j] = X[by * bm + i, bx * bn + j] * S[0, by * bm + i]

    return main


def test_a_row_of_scales_read_per_row_runs():
    x, s = torch.randn(96, 128), torch.rand(1, 96) + 0.5
    artifacts = tilelang_tt.compile(per_row_scale_from_a_row(96, 128))
    assert "transpose_tile" in artifacts.sources["compute.cpp"]
    assert_close(torch.as_tensor(artifacts.run(x, s)).float(), x * s.T, 1e-5)


def per_head_row_weights(heads, m, n, bm=32):
    """Per-head weights ``W[h, row]`` of a (H, M) tensor read per row of each head's block (the row
    ``h`` inside a tile of W: a partial tile read), bfloat16: ``Y[h, row, :] = X[h, row, :] * W[h, row]``."""

    @T.prim_func
    def main(X: T.Tensor((heads, m, n), "bfloat16"), W: T.Tensor((heads, m), "bfloat16"),
             Y: T.Tensor((heads, m, n), "bfloat16")):
        with T.Kernel(m // bm, heads) as (by, h):
            for i, j in T.Parallel(bm, n):
                Y[h, by * bm + i, j] = X[h, by * bm + i, j] * W[h, by * bm + i]

    return main


def test_a_row_of_a_wider_tensor_read_per_row_runs():
    x, w = bf16(3, 64, 32, seed=3), bf16(3, 64, seed=4)
    ref = (x.float() * w.float()[:, :, None]).to(torch.bfloat16).float()
    assert_close(run(per_head_row_weights(3, 64, 32), x, w), ref, 1e-2)


def column_bias_per_column(m, n, bn=64):
    """``Y[i, j] = X[i, j] + b[j, 0]``: a bias kept as a (N, 1) column (a GEMV's output reused),
    read along the block's columns; float32."""

    @T.prim_func
    def main(X: T.Tensor((m, n), "float32"), b: T.Tensor((n, 1), "float32"), Y: T.Tensor((m, n), "float32")):
        with T.Kernel(n // bn, m // 32) as (bx, by):
            for i, j in T.Parallel(32, bn):
                Y[by * 32 + i, bx * bn + j] = T.max(X[by * 32 + i, bx * bn + j] + b[bx * bn + j, 0], T.float32(0))

    return main


def test_a_column_bias_read_per_column_runs():
    x, b = torch.randn(64, 192), torch.randn(192, 1)
    assert_close(run(column_bias_per_column(64, 192), x, b), torch.relu(x + b.T), 1e-5)


def column_of_a_wider_tensor_per_column(m, n):
    """``S[bx * 64 + j, 1]``: column 1 of a (N, 2) tensor read along the block's columns; its tiles hold
    the other column too (a column vector of the tensor's own tiles is column 0 only): refused."""

    @T.prim_func
    def main(X: T.Tensor((m, n), "float32"), S: T.Tensor((n, 2), "float32"), Y: T.Tensor((m, n), "float32")):
        with T.Kernel(n // 64, m // 32) as (bx, by):
            for i, j in T.Parallel(32, 64):
                Y[by * 32 + i, bx * 64 + j] = X[by * 32 + i, bx * 64 + j] * S[bx * 64 + j, 1]  # LINE: wide_column

    return main


def test_a_column_of_a_wider_tensor_read_per_column_is_refused_at_the_statement():
    err = compile_error(column_of_a_wider_tensor_per_column(32, 128))
    assert_diagnostic(err, "LowerTTTileIntrinsics", "`S[bx * 64 + j, 1]` is not an element-wise access of an on-chip "
                      "block", "wide_column", path=PATH, source=inspect.getsource(inspect.getmodule(run)))


def row_copied_into_a_column_vector(m, n):
    """The same scales written with a T.copy of the row into a vector the nest uses per row: the copy
    moves a row of S's tiles, the vector holds its values down a column, so the row goes through a row
    vector block that compute turns (OrientVectorMovesTT; it ran with wrong numbers before)."""

    @T.prim_func
    def main(X: T.Tensor((m, n), "float32"), S: T.Tensor((1, m), "float32"), Y: T.Tensor((m, n), "float32")):
        with T.Kernel(1, m // 32) as (bx, by):
            s = T.alloc_fragment((32,), "float32")
            x = T.alloc_shared((32, n), "float32")
            y = T.alloc_fragment((32, n), "float32")
            T.copy(S[0, by * 32], s)
            T.copy(X[by * 32, 0], x)
            for i, j in T.Parallel(32, n):
                y[i, j] = x[i, j] * s[i]
            T.copy(y, Y[by * 32, 0])

    return main


def test_a_row_copied_into_a_vector_used_per_row_runs():
    for m, n in ((64, 32), (128, 64)):
        x, s = torch.randn(m, n), torch.randn(1, m)
        assert torch.equal(run(row_copied_into_a_column_vector(m, n), x, s), x * s[0][:, None])


def row_scales_staged_per_row(m, n):
    """The scales of a (1, M) row staged into a vector by a 1-D nest (``s[i] = S[0, by * 32 + i]``) and
    used per row, then the row sums stored back into a (1, M) row (``R[0, by * 32 + i] = r[i] + 1``):
    both move the row's tiles as a [1, 32] block, turned into (out of) the column vectors on-chip."""

    @T.prim_func
    def main(X: T.Tensor((m, n), "float32"), S: T.Tensor((1, m), "float32"), Y: T.Tensor((m, n), "float32"),
             R: T.Tensor((1, m), "float32")):
        with T.Kernel(1, m // 32) as (bx, by):
            s = T.alloc_fragment((32,), "float32")
            x = T.alloc_shared((32, n), "float32")
            y = T.alloc_fragment((32, n), "float32")
            r = T.alloc_fragment((32,), "float32")
            for i in T.Parallel(32):
                s[i] = S[0, by * 32 + i]
            T.copy(X[by * 32, 0], x)
            for i, j in T.Parallel(32, n):
                y[i, j] = x[i, j] * s[i]
            T.reduce_sum(y, r, dim=1)
            for i in T.Parallel(32):
                R[0, by * 32 + i] = r[i] + T.float32(1)
            T.copy(y, Y[by * 32, 0])

    return main


def test_a_row_staged_into_a_vector_used_per_row_and_stored_back_runs():
    x, s = torch.randn(64, 32), torch.rand(1, 64) + 0.5
    y, r = tilelang_tt.compile(row_scales_staged_per_row(64, 32)).run(x, s)
    assert_close(torch.as_tensor(y).float(), x * s.T, 1e-5)
    assert_close(torch.as_tensor(r).float(), (x * s.T).sum(1)[None] + 1, 1e-3)
