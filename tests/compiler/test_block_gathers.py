"""Reads of a block at computed indices inside T.Parallel (permutations and gathers of its columns or rows):
products with selection matrices on the matrix unit (LowerBlockGathersTT). Run on the emulator against torch;
float32 gathers are bit for bit (three bfloat16 pieces), bfloat16 ones too."""

import inspect
import math

import pytest
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_negative import assert_diagnostic, compile_error
from tests.compiler.test_ops import assert_close, bf16

PATH = inspect.getsourcefile(inspect.currentframe())
TORCH = {"float32": torch.float32, "bfloat16": torch.bfloat16}


def run(kernel, *inputs):
    return torch.as_tensor(tilelang_tt.compile(kernel).run(*inputs))


def rotated_copy(m, n, shift, dtype):
    """Each block of 32 x 32 copied with its columns rotated, ``B[i, j] = A_s[i, (j + shift) % 32]``."""

    @T.prim_func
    def main(A: T.Tensor((m, n), dtype), B: T.Tensor((m, n), dtype)):
        with T.Kernel(n // 32, m // 32) as (bx, by):
            a_s = T.alloc_shared((32, 32), dtype)
            b_l = T.alloc_fragment((32, 32), dtype)
            T.copy(A[by * 32, bx * 32], a_s)
            for i, j in T.Parallel(32, 32):
                b_l[i, j] = a_s[i, (j + shift) % 32]
            T.copy(b_l, B[by * 32, bx * 32])

    return main


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_a_rotated_copy_is_exact(dtype):
    a = bf16(64, 96, seed=1).to(TORCH[dtype]) if dtype == "bfloat16" else torch.randn(64, 96)
    cols = torch.arange(96)
    ref = a[:, (cols // 32) * 32 + (cols % 32 + 3) % 32]
    assert torch.equal(run(rotated_copy(64, 96, 3, dtype), a), ref)


def rotated_vector(rows, n, dtype):
    """A row per block in a vector, rotated: ``y_l[k] = x_s[(k + 5) % n] * 2`` (the vector multiplied as a tile
    of rows)."""

    @T.prim_func
    def main(X: T.Tensor((rows, n), dtype), Y: T.Tensor((rows, n), dtype)):
        with T.Kernel(rows) as bx:
            x_s = T.alloc_shared((n,), dtype)
            y_l = T.alloc_fragment((n,), dtype)
            T.copy(X[bx, 0:n], x_s)
            for k in T.Parallel(n):
                y_l[k] = x_s[(k + 5) % n] * 2.0
            T.copy(y_l, Y[bx, 0:n])

    return main


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_a_rotated_vector_is_exact(dtype):
    x = bf16(4, 256, seed=5).to(TORCH[dtype]) if dtype == "bfloat16" else torch.randn(4, 256)
    assert torch.equal(run(rotated_vector(4, 256, dtype), x), x[:, (torch.arange(256) + 5) % 256] * 2)


def rotated_rows_from_tensor(m, n):
    """The rows of each block rotated, read from the tensor: ``Y[by * 32 + i, j] = X[by * 32 + (i + 5) % 32, j]``."""

    @T.prim_func
    def main(X: T.Tensor((m, n), "float32"), Y: T.Tensor((m, n), "float32")):
        with T.Kernel(1, m // 32) as (_, by):
            for i, j in T.Parallel(32, n):
                Y[by * 32 + i, j] = X[by * 32 + (i + 5) % 32, j] * 2.0

    return main


def test_rows_rotated_in_a_tensor_read_are_a_product_from_the_left():
    x = torch.randn(96, 64)
    rows = torch.arange(96)
    assert torch.equal(run(rotated_rows_from_tensor(96, 64), x), x[(rows // 32) * 32 + (rows % 32 + 5) % 32] * 2)


def interleaved_rope(m, n, dtype):
    """GPT-J's rotary embedding of adjacent pairs in a shared block: the partner ``x_s[i, j ^ 1]``, negated
    at even columns, the cos and sin of each pair repeated, ``c_s[i, j // 2]``."""

    @T.prim_func
    def main(X: T.Tensor((m, n), dtype), C: T.Tensor((m, n // 2), dtype), S: T.Tensor((m, n // 2), dtype),
             Y: T.Tensor((m, n), dtype)):
        with T.Kernel(m // 32, threads=128) as bx:
            x_s = T.alloc_shared((32, n), dtype)
            c_s = T.alloc_shared((32, n // 2), dtype)
            s_s = T.alloc_shared((32, n // 2), dtype)
            y_l = T.alloc_fragment((32, n), dtype)
            T.copy(X[bx * 32, 0], x_s)
            T.copy(C[bx * 32, 0], c_s)
            T.copy(S[bx * 32, 0], s_s)
            for i, j in T.Parallel(32, n):
                sign = T.if_then_else(j % 2 == 0, -1.0, 1.0)
                y_l[i, j] = x_s[i, j] * c_s[i, j // 2] + sign * x_s[i, j ^ 1] * s_s[i, j // 2]
            T.copy(y_l, Y[bx * 32, 0])

    return main


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_interleaved_rotary_pairs(dtype):
    t = TORCH[dtype]
    x, angles = bf16(64, 128, seed=2).to(t), torch.rand(64, 64, generator=torch.Generator().manual_seed(3)) * 6.28
    c, s = torch.cos(angles).to(t), torch.sin(angles).to(t)
    xf, cf, sf = x.float(), c.float().repeat_interleave(2, 1), s.float().repeat_interleave(2, 1)
    pairs = torch.stack([-xf[:, 1::2], xf[:, 0::2]], -1).reshape(xf.shape)
    y = run(interleaved_rope(64, 128, dtype), x, c, s).float()
    # the gathered operands are exact: the error is the element-wise arithmetic's
    assert_close(y, xf * cf + pairs * sf, 2.0 ** -7 if dtype == "bfloat16" else 2.0 ** -12)


def flat_table_scale(n, dim, dtype, threads=32, npt=8):
    """A flat nest over elements of rows of ``dim`` (TileOPs' explicit-parallel rope), each element scaled by a
    table entry per pair of rows and pair of columns, ``tab[flat // (2 * dim), flat % dim // 2]``: the table's
    box of rows and columns gathered into the flat vector."""
    per = threads * npt

    @T.prim_func
    def main(X: T.Tensor((n,), dtype), Tab: T.Tensor((n // (2 * dim), dim // 2), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(n // per, threads=threads) as bx:
            for i, j in T.Parallel(threads, npt):
                flat = (bx * threads + i) * npt + j
                Y[flat] = X[flat] * Tab[flat // (2 * dim), flat % dim // 2]

    return main


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_a_table_read_at_a_row_and_column_of_a_flat_index_is_gathered(dtype):
    t = TORCH[dtype]
    x, tab = bf16(1024, seed=6).to(t), bf16(8, 32, seed=7).to(t)
    flat = torch.arange(1024)
    ref = (x.float() * tab.float()[flat // 128, flat % 64 // 2]).to(t)
    assert torch.equal(run(flat_table_scale(1024, 64, dtype), x, tab), ref)


def hadamard_rows(m, n):
    """A Walsh-Hadamard transform of each row by butterfly stages on a 2-D block, ping-pong between two
    fragments: stage ``s`` combines column ``j`` with its partner ``j ^ (1 << s)``."""
    stages = int(math.log2(n))

    @T.prim_func
    def main(X: T.Tensor((m, n), "float32"), Y: T.Tensor((m, n), "float32")):
        with T.Kernel(m // 32, threads=128) as bx:
            a = T.alloc_fragment((32, n), "float32")
            b = T.alloc_fragment((32, n), "float32")
            T.copy(X[bx * 32, 0], a)
            for s in T.serial(stages):
                for i, j in T.Parallel(32, n):
                    h = 1 << s
                    b[i, j] = T.if_then_else(j & h == 0, a[i, j] + a[i, j ^ h], a[i, j ^ h] - a[i, j])
                for i, j in T.Parallel(32, n):
                    a[i, j] = b[i, j]
            for i, j in T.Parallel(32, n):
                b[i, j] = a[i, j] * (1.0 / math.sqrt(n))
            T.copy(b, Y[bx * 32, 0])

    return main


def _hadamard(n):
    h = torch.ones(1, 1, dtype=torch.float64)
    while h.shape[0] < n:
        h = torch.cat([torch.cat([h, h], 1), torch.cat([h, -h], 1)], 0)
    return h


@pytest.mark.parametrize("n", [64, 128])
def test_hadamard_butterflies(n):
    x = torch.randn(32, n)
    y = run(hadamard_rows(32, n), x)
    assert_close(y.double(), x.double() @ _hadamard(n) / math.sqrt(n), 1e-5)


def _reversed(j, bits):
    """``j``'s ``bits`` low bits in reverse order, as one expression of shifts and masks."""
    rev = 0
    for b in range(bits):
        rev = rev | (((j >> b) & 1) << (bits - 1 - b))
    return rev


def bit_reversed_columns(m, n):
    """A bit-reversal permutation of each row's 256 columns, the index written with shifts and masks."""
    bits = int(math.log2(n))

    @T.prim_func
    def main(X: T.Tensor((m, n), "bfloat16"), Y: T.Tensor((m, n), "bfloat16")):
        with T.Kernel(m // 32, threads=128) as bx:
            x_s = T.alloc_shared((32, n), "bfloat16")
            y_l = T.alloc_fragment((32, n), "bfloat16")
            T.copy(X[bx * 32, 0], x_s)
            for i, j in T.Parallel(32, n):
                y_l[i, j] = x_s[i, _reversed(j, bits)]
            T.copy(y_l, Y[bx * 32, 0])

    return main


def test_a_bit_reversal_of_256():
    x = bf16(64, 256, seed=4)
    rev = torch.tensor([int(f"{j:08b}"[::-1], 2) for j in range(256)])
    assert torch.equal(run(bit_reversed_columns(64, 256), x), x[:, rev])


def shifted_past_the_block(m, n):
    @T.prim_func
    def main(X: T.Tensor((m, n), "bfloat16"), Y: T.Tensor((m, n), "bfloat16")):
        with T.Kernel(m // 32) as bx:
            x_s = T.alloc_shared((32, n), "bfloat16")
            y_l = T.alloc_fragment((32, n), "bfloat16")
            T.copy(X[bx * 32, 0], x_s)
            for i, j in T.Parallel(32, n):
                y_l[i, j] = x_s[i, j + 1]  # LINE: past_the_block
            T.copy(y_l, Y[bx * 32, 0])

    return main


def index_from_a_tensor(m, n):
    @T.prim_func
    def main(X: T.Tensor((m, n), "bfloat16"), P: T.Tensor((n,), "int32"), Y: T.Tensor((m, n), "bfloat16")):
        with T.Kernel(m // 32) as bx:
            x_s = T.alloc_shared((32, n), "bfloat16")
            p_s = T.alloc_shared((n,), "int32")
            y_l = T.alloc_fragment((32, n), "bfloat16")
            T.copy(X[bx * 32, 0], x_s)
            T.copy(P[0], p_s)
            for i, j in T.Parallel(32, n):
                y_l[i, j] = x_s[i, p_s[j]]  # LINE: tensor_index
            T.copy(y_l, Y[bx * 32, 0])

    return main


@pytest.mark.parametrize("kernel, message, marker", [
    (shifted_past_the_block(64, 64), "`x_s[i, j + 1]` reads outside the block `x_s` (extent 64 along dim 1): at element "
                                     "[0, 63] of the T.Parallel nest its index is 64", "past_the_block"),
    (index_from_a_tensor(64, 64), "`x_s[i, p_s[j]]` reads the block `x_s` at an index that depends on the tensor "
                                  "value `p_s[j]`", "tensor_index"),
], ids=["outside", "tensor_value"])
def test_a_gather_without_a_selection_matrix_is_refused_at_its_statement(kernel, message, marker):
    assert_diagnostic(compile_error(kernel), "LowerBlockGathersTT", message, marker, path=PATH,
                      source=inspect.getsource(inspect.getmodule(run)))
