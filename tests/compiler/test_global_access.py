"""Global tensors read and written element-wise inside ``T.Parallel`` (issue 29, item 4), the way GPU
code writes them: LegalizeGlobalAccessTT reads each access's slice from its index expressions
(tilelang_tt/ir/element_access.py) and makes it a tile copy. Each form compiles and runs on the
emulator against torch, in the idioms of tests/outside's kernels: the two halves of a row (rotary
embedding), a transposed store or read, a flat index of a nest of two loops, into part of a row of a
matrix or over whole rows of it, rank-1 on-chip blocks at a flat index, the halves of a block staged in
a serial loop, a column of a tensor read per K step into a vector (fp8 GEMMs' scales), a column of a
tensor stored per row (quantisation scales, a running sum per column: an element written per row), guards the
blocks always pass and guards on the last rows, a slice ``H0:H1`` with ``H1 = H0 + 64``. The forms
that have no exact tile form (a pair swap ``j ^ 1``, a column of a tensor read in the nest over a
block, slices partly outside the tensor, scalar code over rows, a butterfly stage, a bit reversal
computed by a loop per element) are refused at their statement, with a rewrite."""

import inspect

import pytest
import tilelang.language as T
import torch

import tilelang_tt
from tilelang_tt import BufferLayout
from tests.compiler.test_negative import assert_diagnostic, compile_error
from tests.compiler.test_ops import assert_close, bf16

PATH = inspect.getsourcefile(inspect.currentframe())


def run(kernel, *inputs):
    return torch.as_tensor(tilelang_tt.compile(kernel).run(*inputs)).float()


def rotary_halves(rows, dim):
    """NeoX rotary embedding on blocks of 32 rows: the first half of a row is ``x1 * c - x2 * s``, the
    second ``x2 * c + x1 * s``, reading each half at ``j`` and ``j + half`` (TileOPs' rope kernels)."""
    half = dim // 2

    @T.prim_func
    def main(X: T.Tensor((rows, dim), "float32"), C: T.Tensor((rows, half), "float32"),
             S: T.Tensor((rows, half), "float32"), Y: T.Tensor((rows, dim), "float32")):
        with T.Kernel(1, rows // 32) as (_, by):
            for i, j in T.Parallel(32, half):
                row = by * 32 + i
                Y[row, j] = X[row, j] * C[row, j] - X[row, j + half] * S[row, j]
                Y[row, j + half] = X[row, j + half] * C[row, j] + X[row, j] * S[row, j]

    return main


def test_a_rotary_embedding_reads_the_two_halves_of_each_row():
    x, angles = torch.randn(64, 128), torch.rand(64, 64) * 6.28
    c, s = torch.cos(angles), torch.sin(angles)
    x1, x2 = x[:, :64], x[:, 64:]
    assert_close(run(rotary_halves(64, 128), x, c, s), torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], 1), 1e-5)


def partner_half(m, n, dtype="float32"):
    """TileOPs' NeoX rotary embedding on blocks of 32 rows, the partner half chosen per element,
    ``T.if_then_else(j < half, -x[.., j + half], x[.., j - half])``, the tables indexed ``j % half``:
    over the whole row each read would be a slice half outside the tensor; over each half of the row
    one inside it (the nest split in its halves)."""
    half = n // 2

    @T.prim_func
    def main(X: T.Tensor((m, n), dtype), C: T.Tensor((m, half), dtype), S: T.Tensor((m, half), dtype),
             Y: T.Tensor((m, n), dtype)):
        with T.Kernel(1, m // 32) as (_, by):
            for i, j in T.Parallel(32, n):
                row = by * 32 + i
                partner = T.if_then_else(j < half, -X[row, j + half], X[row, j - half])
                Y[row, j] = X[row, j] * C[row, j % half] + partner * S[row, j % half]

    return main


@pytest.mark.parametrize("m, n, dtype, tol", [(64, 128, "float32", 1e-5), (96, 64, "bfloat16", 2e-2)])
def test_a_partner_half_chosen_per_element_is_read_half_by_half(m, n, dtype, tol):
    x, angles = torch.randn(m, n), torch.rand(m, n // 2) * 6.28
    c, s = torch.cos(angles), torch.sin(angles)
    if dtype == "bfloat16":
        x, c, s = x.bfloat16(), c.bfloat16(), s.bfloat16()
    x1, x2 = x.float()[:, :n // 2], x.float()[:, n // 2:]
    c, s = c.float(), s.float()
    out = run(partner_half(m, n, dtype), x, c.to(x.dtype), s.to(x.dtype))
    assert_close(out, torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], 1), tol)


def transposed_store(m, n, bm=32, bn=32):
    """Y = X^T + 1 written the GPU way, the store's indices swapping the nest's loops."""

    @T.prim_func
    def main(X: T.Tensor((m, n), "bfloat16"), Y: T.Tensor((n, m), "bfloat16")):
        with T.Kernel(n // bn, m // bm) as (bx, by):
            for i, j in T.Parallel(bm, bn):
                Y[bx * bn + j, by * bm + i] = X[by * bm + i, bx * bn + j] + T.bfloat16(1)

    return main


def transposed_read(m, n):
    """Y = X^T * Z: a read whose indices swap the loops next to one in their order."""

    @T.prim_func
    def main(X: T.Tensor((n, m), "float32"), Z: T.Tensor((m, n), "float32"), Y: T.Tensor((m, n), "float32")):
        with T.Kernel(n // 32, m // 32) as (bx, by):
            for i, j in T.Parallel(32, 32):
                Y[by * 32 + i, bx * 32 + j] = X[bx * 32 + j, by * 32 + i] * Z[by * 32 + i, bx * 32 + j]

    return main


@pytest.mark.parametrize("bm, bn", [(32, 32), (32, 64)])
def test_a_transposed_store_is_the_nest_in_the_stores_order(bm, bn):
    x = bf16(64, 128, seed=1)
    assert_close(run(transposed_store(64, 128, bm, bn), x), x.float().T + 1, 2.0**-7)


def test_a_transposed_read_is_transposed_on_chip():
    x, z = torch.randn(96, 64), torch.randn(64, 96)
    artifacts = tilelang_tt.compile(transposed_read(64, 96))
    assert "transpose_tile" in artifacts.sources["compute.cpp"]
    assert_close(torch.as_tensor(artifacts.run(x, z)).float(), x.T * z, 1e-5)


def flat_gated(n, threads=128, npt=8):
    """y = silu(gate) * value over flat tensors, each of ``threads`` GPU threads computing ``npt``
    consecutive elements: the index ``(bx * threads + i) * npt + j`` (TileOPs' explicit_parallel)."""

    @T.prim_func
    def main(G: T.Tensor((n,), "float32"), V: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, threads * npt), threads=threads) as bx:
            for i, j in T.Parallel(threads, npt):
                idx = (bx * threads + i) * npt + j
                g = G[idx]
                Y[idx] = g * T.sigmoid(g) * V[idx]

    return main


def test_a_flat_index_of_two_loops_is_one_loop_over_their_elements():
    g, v = torch.randn(2048), torch.randn(2048)
    assert_close(run(flat_gated(2048), g, v), torch.nn.functional.silu(g) * v, 1e-2)


def flat_part_of_a_row(rows, dim, block=128):
    """kb-pilot's DSPy ReLU: a flat index ``g = bx * block + i`` read and written as ``x[g // dim, g %
    dim]``, guarded by ``g < rows * dim`` (with an else): each block is part of one row, staged in a
    fragment."""

    @T.prim_func
    def main(X: T.Tensor((rows, dim), "bfloat16"), Y: T.Tensor((rows, dim), "bfloat16")):
        with T.Kernel(T.ceildiv(rows * dim, block), threads=block) as bx:
            x = T.alloc_fragment((block,), "bfloat16")
            start = bx * block
            for i in T.Parallel(block):
                g = start + i
                if g < rows * dim:
                    x[i] = X[g // dim, g % dim]
                else:
                    x[i] = T.bfloat16(0)
            for i in T.Parallel(block):
                x[i] = T.max(x[i], T.bfloat16(0)) * T.bfloat16(2)
            for i in T.Parallel(block):
                g = start + i
                if g < rows * dim:
                    Y[g // dim, g % dim] = x[i]

    return main


def test_a_flat_index_into_part_of_a_row_is_that_row_slice():
    x = bf16(16, 256, seed=5)
    assert_close(run(flat_part_of_a_row(16, 256), x), torch.relu(x.float()) * 2, 2.0**-7)


def guarded_flat(n, block=256):
    """KernelBench's one element per thread: ``if idx < n:`` around the values and the store, which
    every block passes when ``block`` divides ``n``."""

    @T.prim_func
    def main(X: T.Tensor((n,), "bfloat16"), Y: T.Tensor((n,), "bfloat16")):
        with T.Kernel(T.ceildiv(n, block), threads=block) as bx:
            for tx in T.Parallel(block):
                idx: T.int32 = bx * block + tx
                if idx < n:
                    x = T.Cast("float32", X[idx])
                    Y[idx] = T.Cast("bfloat16", x * x + x)

    return main


def test_a_guard_every_block_passes_is_dropped():
    x = bf16(1024, seed=2)
    ref = x.float() * x.float() + x.float()
    assert_close(run(guarded_flat(1024), x), ref, 2.0**-6)


def staged_gemm_guarded(m, n, k, bm=32, bn=64, bk=32):
    """TileOPs' bmm epilogue: the staged result stored element-wise under ``if m_start + i < m and
    n_start + j < n``, both always true here (the blocks tile the output)."""

    @T.prim_func
    def main(A: T.Tensor((m, k), "bfloat16"), B: T.Tensor((k, n), "bfloat16"), C: T.Tensor((m, n), "bfloat16")):
        with T.Kernel(n // bn, m // bm) as (bx, by):
            a = T.alloc_shared((bm, bk), "bfloat16")
            b = T.alloc_shared((bk, bn), "bfloat16")
            c_shared = T.alloc_shared((bm, bn), "bfloat16")
            acc = T.alloc_fragment((bm, bn), "float32")
            T.clear(acc)
            m_start = by * bm
            n_start = bx * bn
            for ko in T.Pipelined(k // bk):
                T.copy(A[m_start, ko * bk], a)
                T.copy(B[ko * bk, n_start], b)
                T.gemm(a, b, acc)
            T.copy(acc, c_shared)
            for i, j in T.Parallel(bm, bn):
                if m_start + i < m and n_start + j < n:
                    C[m_start + i, n_start + j] = c_shared[i, j]

    return main


def test_guards_on_rows_and_columns_the_blocks_always_pass_are_dropped():
    a, b = bf16(64, 64, seed=3), bf16(64, 128, seed=4)
    assert_close(run(staged_gemm_guarded(64, 128, 64), a, b), a.float() @ b.float(), 2.0**-6)


def guarded_last_rows(m, n):
    """``if row < m:`` with the rows of the last block past ``m``: the writer writes the valid rows."""

    @T.prim_func
    def main(X: T.Tensor((m, n), "float32"), Y: T.Tensor((m, n), "float32")):
        with T.Kernel(1, T.ceildiv(m, 32)) as (_, by):
            for i, j in T.Parallel(32, n):
                row = by * 32 + i
                if row < m:
                    x = X[row, j]
                    Y[row, j] = x * 3.0

    return main


def test_a_guard_on_the_last_rows_writes_the_rows_inside_the_tensor():
    x = torch.randn(80, 64)
    assert_close(run(guarded_last_rows(80, 64), x), x * 3, 1e-6)


def named_bounds(m, n, w=64):
    """``T.copy(X[rows, H0:H1], x)`` with ``H1 = H0 + w``: the extent ``H1 - H0`` is ``w``."""

    @T.prim_func
    def main(X: T.Tensor((m, n), "float32"), Y: T.Tensor((m, n), "float32")):
        with T.Kernel(n // w, m // 32) as (bx, by):
            x = T.alloc_shared((32, w), "float32")
            y = T.alloc_fragment((32, w), "float32")
            H0 = bx * w
            H1 = H0 + w
            T.copy(X[by * 32:by * 32 + 32, H0:H1], x)
            for i, j in T.Parallel(32, w):
                y[i, j] = x[i, j] * 2.0
            T.copy(y, Y[by * 32:by * 32 + 32, H0:H1])

    return main


def test_a_slice_between_two_named_bounds_has_their_constant_extent():
    x = torch.randn(64, 128)
    assert_close(run(named_bounds(64, 128), x), x * 2, 1e-6)


def register_copy(n, threads=32, npt=8):
    """TileOPs' ``_make_unary_regcopy``: a block copied into a rank-1 fragment, computed element-wise at
    the flat index ``i * npt + j`` of a (threads, npt) nest, copied out."""
    block = threads * npt

    @T.prim_func
    def main(x: T.Tensor((n,), "bfloat16"), y: T.Tensor((n,), "bfloat16")):
        with T.Kernel(n // block, threads=threads) as bx:
            x_reg = T.alloc_fragment((block,), "bfloat16")
            y_reg = T.alloc_fragment((block,), "bfloat16")
            T.copy(x[bx * block:(bx + 1) * block], x_reg)
            for i, j in T.Parallel(threads, npt):
                val = x_reg[i * npt + j]
                y_reg[i * npt + j] = T.if_then_else(val > T.bfloat16(0), val, val * T.bfloat16(0.25))
            T.copy(y_reg, y[bx * block:(bx + 1) * block])

    return main


def test_on_chip_blocks_at_a_flat_index_of_the_nest_are_one_loop_over_their_elements():
    x = bf16(1024, seed=5)
    assert_close(run(register_copy(1024), x), torch.where(x.float() > 0, x.float(), x.float() * 0.25), 2.0**-7)


def flat_rows(rows, dim, threads=32, npt=8):
    """TileOPs' explicit-parallel elementwise form on matrices: rows and columns computed from the flat
    index of a (threads, npt) nest, ``Y[flat // dim, flat % dim]``, each block 2 whole rows of 128."""

    @T.prim_func
    def main(X: T.Tensor((rows, dim), "float32"), Z: T.Tensor((rows, dim), "float32"),
             Y: T.Tensor((rows, dim), "float32")):
        with T.Kernel(rows * dim // (threads * npt), threads=threads) as bx:
            for i, j in T.Parallel(threads, npt):
                flat = (bx * threads + i) * npt + j
                row = flat // dim
                col = flat % dim
                Y[row, col] = X[row, col] * Z[row, col] + T.float32(1)

    return main


def test_rows_and_columns_of_a_flat_index_are_a_block_of_whole_rows():
    x, z = torch.randn(64, 128), torch.randn(64, 128)
    assert_close(run(flat_rows(64, 128), x, z), x * z + 1, 1e-5)


def staged_halves(batch, n, threads=128, butterfly=False):
    """TileOPs' FFT kernels' staging: a row of ``x`` into a rank-1 shared block and back out, half by
    half in a serial loop (``smem[i + h * threads]``), each element scaled; ``butterfly``: one
    Walsh-Hadamard stage in between, the partners at ``j_idx`` and ``j_idx + 1`` (a permutation)."""

    @T.prim_func
    def main(x: T.Tensor((batch, n), "float32"), y: T.Tensor((batch, n), "float32")):
        with T.Kernel(batch, threads=threads) as bb:
            smem = T.alloc_shared([n], "float32")
            for h in range(n // threads):
                for i in T.Parallel(threads):
                    smem[i + h * threads] = x[bb, i + h * threads]
            if butterfly:
                for i in T.Parallel(n // 2):
                    j_idx = i * 2
                    u = smem[j_idx]
                    v = smem[j_idx + 1]
                    smem[j_idx] = u + v  # LINE: butterfly
                    smem[j_idx + 1] = u - v
            for h in range(n // threads):
                for i in T.Parallel(threads):
                    y[bb, i + h * threads] = smem[i + h * threads] * T.float32(0.5)

    return main


def test_halves_of_a_block_in_a_serial_loop_are_one_nest_over_the_block():
    x = torch.randn(8, 256)
    assert_close(run(staged_halves(8, 256), x), x * 0.5, 1e-6)


def hadamard_by_gemm(batch, n):
    """The rewrite the butterfly's refusal gives: the transform as a T.gemm with its matrix."""

    @T.prim_func
    def main(x: T.Tensor((batch, n), "float32"), H: T.Tensor((n, n), "float32"), y: T.Tensor((batch, n), "float32")):
        with T.Kernel(1, threads=128) as _:
            x_s = T.alloc_shared((batch, n), "float32")
            h_s = T.alloc_shared((n, n), "float32")
            y_l = T.alloc_fragment((batch, n), "float32")
            T.copy(x[0, 0], x_s)
            T.copy(H[0, 0], h_s)
            T.gemm(x_s, h_s, y_l, clear_accum=True)
            T.copy(y_l, y[0, 0])

    return main


def test_the_rewrite_of_a_butterfly_as_a_gemm_runs():
    h = torch.ones(1, 1, dtype=torch.float64)
    while h.shape[0] < 256:
        h = torch.cat([torch.cat([h, h], 1), torch.cat([h, -h], 1)], 0)
    x = torch.randn(8, 256)
    y = run(hadamard_by_gemm(8, 256), x, (h / 16).float())
    assert_close(y, (x.double() @ h / 16).float(), 4e-3)  # float32 operands of the FPU: TF32 products


# Refused forms: each at its statement, with a rewrite


def pair_swap(m, n):
    @T.prim_func
    def main(X: T.Tensor((m, n), "float32"), Y: T.Tensor((m, n), "float32")):
        with T.Kernel(1, m // 32) as (_, by):
            for i, j in T.Parallel(32, n):
                Y[by * 32 + i, j] = X[by * 32 + i, j ^ 1]  # LINE: pair_swap

    return main


def partner_pair(m, n):
    """Rotary embedding of adjacent pairs (GPT-J), the partner chosen per element,
    ``T.if_then_else(j % 2 == 0, -x[.., j + 1], x[.., j - 1])``: a permutation of the block's columns (each
    read alone a slice partly outside the tensor)."""

    @T.prim_func
    def main(X: T.Tensor((m, n), "float32"), Y: T.Tensor((m, n), "float32")):
        with T.Kernel(1, m // 32) as (_, by):
            for i, j in T.Parallel(32, n):
                Y[by * 32 + i, j] = T.if_then_else(  # LINE: partner_pair
                    j % 2 == 0, -X[by * 32 + i, j + 1], X[by * 32 + i, j - 1])

    return main


def test_pair_partners_read_from_the_tensor_are_gathered_exactly():
    """``X[.., j ^ 1]`` and ``T.if_then_else(j % 2 == 0, -X[.., j + 1], X[.., j - 1])``: reads of the row
    block at permuted columns (LowerBlockGathersTT), float32 bit for bit."""
    x = torch.randn(64, 128)
    assert torch.equal(run(pair_swap(64, 128), x), x[:, torch.arange(128) ^ 1])
    assert torch.equal(run(partner_pair(64, 128), x), torch.stack([-x[:, 1::2], x[:, 0::2]], -1).reshape(64, 128))


def pair_partner_by_gemm(m, n):
    """The rewrite the pair partner's refusal gives: the partners of a block as ``T.gemm`` by a
    permutation matrix passed as a tensor (P[j + 1, j] = -1 for an even column j, P[j - 1, j] = 1 for an
    odd one), then GPT-J's rotary embedding element-wise."""

    @T.prim_func
    def main(X: T.Tensor((m, n), "float32"), P: T.Tensor((n, n), "float32"), C: T.Tensor((m, n), "float32"),
             S: T.Tensor((m, n), "float32"), Y: T.Tensor((m, n), "float32")):
        with T.Kernel(1, m // 32) as (_, by):
            x_s = T.alloc_shared((32, n), "float32")
            p_s = T.alloc_shared((n, n), "float32")
            partner = T.alloc_fragment((32, n), "float32")
            T.copy(X[by * 32, 0], x_s)
            T.copy(P[0, 0], p_s)
            T.clear(partner)
            T.gemm(x_s, p_s, partner)
            for i, j in T.Parallel(32, n):
                Y[by * 32 + i, j] = x_s[i, j] * C[by * 32 + i, j] + partner[i, j] * S[by * 32 + i, j]

    return main


def test_the_rewrite_of_a_pair_partner_as_a_gemm_runs():
    x, angles = torch.randn(64, 64), torch.rand(64, 64) * 6.28
    c, s = torch.cos(angles), torch.sin(angles)
    p = torch.zeros(64, 64)
    p[torch.arange(1, 64, 2), torch.arange(0, 64, 2)] = -1
    p[torch.arange(0, 64, 2), torch.arange(1, 64, 2)] = 1
    partner = torch.stack([-x[:, 1::2], x[:, 0::2]], -1).reshape(64, 64)
    assert_close(run(pair_partner_by_gemm(64, 64), x, p, c, s), x * c + partner * s, 4e-3)  # TF32 products


def scale_vector_in_k_loop(m, n, groups):
    """fp8_gemm's per-row scale of each K group read into a vector, ``s[i] = S[by * 32 + i, k] * 2``
    (a column of ``S``): the reader reads an element per row, each K step."""

    @T.prim_func
    def main(A: T.Tensor((m, n), "float32"), S: T.Tensor((m, groups), "float32"), Y: T.Tensor((m, n), "float32")):
        with T.Kernel(1, m // 32) as (_, by):
            a = T.alloc_shared((32, n), "float32")
            s = T.alloc_shared((32,), "float32")
            acc = T.alloc_fragment((32, n), "float32")
            T.clear(acc)
            T.copy(A[by * 32, 0], a)
            for k in T.serial(groups):
                for i in T.Parallel(32):
                    s[i] = S[by * 32 + i, k] * T.float32(2)
                for i, j in T.Parallel(32, n):
                    acc[i, j] += a[i, j] * s[i]
            T.copy(acc, Y[by * 32, 0])

    return main


def test_a_column_of_a_tensor_read_per_k_step_into_a_vector_is_an_element_per_row():
    a, s = torch.randn(64, 64), torch.rand(64, 4) + 0.5
    assert_close(run(scale_vector_in_k_loop(64, 64, 4), a, s), a * 2 * s.sum(1, keepdim=True), 1e-4)


def scale_column_in_k_loop(m, n, groups):
    """fp8_gemm's per-row scale of each K group, ``S[by * 32 + i, k]``, read in the nest over the
    block: an element per element of the block (refused: read it into a vector first)."""

    @T.prim_func
    def main(A: T.Tensor((m, n), "float32"), S: T.Tensor((m, groups), "float32"), Y: T.Tensor((m, n), "float32")):
        with T.Kernel(1, m // 32) as (_, by):
            a = T.alloc_shared((32, n), "float32")
            acc = T.alloc_fragment((32, n), "float32")
            T.clear(acc)
            T.copy(A[by * 32, 0], a)
            for k in T.serial(groups):
                for i, j in T.Parallel(32, n):
                    acc[i, j] += a[i, j] * S[by * 32 + i, k]  # LINE: scale_column
            T.copy(acc, Y[by * 32, 0])

    return main


def scalar_rows(b, n):
    """A single-thread program per column: a running product swept down the column, stored element by
    element, no T.Parallel and no T.copy (ScalarRowsToBlocksTT takes sweeps along a row only)."""

    @T.prim_func
    def main(X: T.Tensor((n, b), "float32"), Y: T.Tensor((n, b), "float32")):
        with T.Kernel(b, threads=1) as bx:
            running = T.alloc_local((1,), "float32")
            running[0] = T.float32(1)
            for j in T.serial(n):
                running[0] *= X[j, bx]
                Y[j, bx] = running[0]  # LINE: scalar_rows

    return main


@pytest.mark.parametrize("kernel, pass_name, message, marker", [
    (scale_column_in_k_loop(64, 64, 4), "LowerTTTileIntrinsics", ("`S[by * 32 + i, k]` is not an element-wise access "
                                                                  "of an on-chip block"), "scale_column"),
    (scalar_rows(32, 64), "LegalizeGlobalAccessTT", ("`Y[j, bx]`: a scalar store into the global tensor `Y` outside "
                                                     "T.Parallel, and the kernel writes no global buffer with T.copy"),
     "scalar_rows"),
], ids=["scale_column", "scalar_rows"])
def test_a_form_without_a_tile_form_is_refused_at_its_statement(kernel, pass_name, message, marker):
    assert_diagnostic(compile_error(kernel), pass_name, message, marker, path=PATH, source=inspect.getsource(inspect.getmodule(run)))


def test_a_butterfly_is_refused_at_its_statement_with_the_gemm_rewrite():
    err = compile_error(staged_halves(8, 256, butterfly=True))
    assert_diagnostic(err, "LowerTTTileIntrinsics", "`smem[j_idx]` is not an element-wise access of an on-chip block",
                      "butterfly", path=PATH, source=inspect.getsource(inspect.getmodule(run)))
    assert "a permutation of the block" in err.hint and "T.gemm(x_s, H_s, y_l)" in err.hint


def bit_reversed_gather(batch, n):
    """TileOPs' FFT staging: each element's bit-reversed index computed by a loop, then gathered."""
    bits = n.bit_length() - 1

    @T.prim_func
    def main(x: T.Tensor((batch, n), "float32"), y: T.Tensor((batch, n), "float32")):
        with T.Kernel(batch, threads=n) as bb:
            smem = T.alloc_shared([n], "float32")
            for i in T.Parallel(n):
                rev = T.alloc_var("int32")
                rest = T.alloc_var("int32")
                rev = 0
                rest = i
                for _bit in T.serial(bits):  # LINE: bit_reversal
                    rev = (rev << 1) | (rest & 1)
                    rest = rest >> 1
                smem[i] = x[bb, rev]
            T.copy(smem, y[bb, 0])

    return main


def test_a_bit_reversed_gather_is_refused_at_its_loop_with_the_gemm_rewrite():
    err = compile_error(bit_reversed_gather(8, 256))
    assert_diagnostic(err, "LowerTTTileIntrinsics", "a loop `for _bit in T.serial(8)` inside T.Parallel computes a "
                      "value or an index per element", "bit_reversal", path=PATH,
                      source=inspect.getsource(inspect.getmodule(run)))
    assert "permutation matrix" in err.hint


def test_a_column_read_in_the_nest_over_a_block_is_refused_with_the_vector_rewrite():
    err = compile_error(scale_column_in_k_loop(64, 64, 4))
    assert "s[i] = S[by * bm + i, k]" in err.hint


def group_scales(m, n, group, scale_dtype):
    """DeepSeek's activation quantisation in TileOPs' idiom: a scale per row of each group of columns,
    stored into a column of ``S`` from a nest over the block's rows (``S[by * 32 + i, bx] = s[i]``), and
    the group divided by it. The writer writes the column an element per row: the other columns of its
    tiles are the other groups' scales."""

    @T.prim_func
    def main(X: T.Tensor((m, n), "float32"), S: T.Tensor((m, n // group), scale_dtype),
             Y: T.Tensor((m, n), "float32")):
        with T.Kernel(n // group, m // 32) as (bx, by):
            x = T.alloc_shared((32, group), "float32")
            amax = T.alloc_fragment((32,), "float32")
            y = T.alloc_fragment((32, group), "float32")
            T.copy(X[by * 32, bx * group], x)
            T.reduce_absmax(x, amax, dim=1)
            for i in T.Parallel(32):
                amax[i] = T.max(amax[i], T.float32(1e-4)) / T.float32(448)
            for i in T.Parallel(32):  # LINE: group_scales
                S[by * 32 + i, bx] = T.Cast(scale_dtype, amax[i])
            for i, j in T.Parallel(32, group):
                y[i, j] = x[i, j] / amax[i]
            T.copy(y, Y[by * 32, bx * group])

    return main


@pytest.mark.parametrize("scale_dtype, tol", [("float32", 1e-5), ("bfloat16", 1e-2)])
def test_a_column_stored_per_row_is_written_an_element_per_row(scale_dtype, tol):
    x = torch.randn(64, 256)
    s, y = tilelang_tt.compile(group_scales(64, 256, 64, scale_dtype)).run(x)
    amax = x.reshape(64, 4, 64).abs().amax(2).clamp(min=1e-4) / 448
    assert_close(torch.as_tensor(s).float(), amax, tol)
    assert_close(torch.as_tensor(y), x / amax.repeat_interleave(64, 1), 1e-3)


def guarded_group_maxima(m, n, group):
    """A maximum per row of each group of columns into a column of ``S``, the last block's rows past
    ``m`` guarded (``if by * 32 + i < m``): the writer writes the valid rows' elements only."""

    @T.prim_func
    def main(X: T.Tensor((m, n), "float32"), S: T.Tensor((m, n // group), "float32")):
        with T.Kernel(n // group, T.ceildiv(m, 32)) as (bx, by):
            x = T.alloc_shared((32, group), "float32")
            amax = T.alloc_fragment((32,), "float32")
            T.copy(X[by * 32, bx * group], x)
            T.reduce_max(x, amax, dim=1)
            for i in T.Parallel(32):
                if by * 32 + i < m:
                    S[by * 32 + i, bx] = amax[i]

    return main


def test_a_column_stored_in_the_valid_rows_is_written_in_those_rows():
    x = torch.randn(40, 128)
    s = torch.as_tensor(tilelang_tt.compile(guarded_group_maxima(40, 128, 64)).run(x))
    assert_close(s, x.reshape(40, 2, 64).amax(2), 1e-3)  # the maxima of the TF32 values (docs/numerics.md)


def token_scales(batch, seq, groups, dim, bm=32):
    """TileOPs' per-token quantisation: a scale per token of each group of a (batch, seq, groups)
    tensor, ``scale[b, pid_m * bm + i, g]``: a column of one of its matrices."""

    @T.prim_func
    def main(X: T.Tensor((batch, seq, groups, dim), "bfloat16"), scale: T.Tensor((batch, seq, groups), "float32")):
        with T.Kernel(batch, seq // bm, groups) as (b, pid_m, g):
            x = T.alloc_fragment((bm, dim), "float32")
            total = T.alloc_fragment((bm,), "float32")
            for i, j in T.Parallel(bm, dim):
                x[i, j] = X[b, pid_m * bm + i, g, j]
            T.reduce_sum(x, total, dim=1)
            for i in T.Parallel(bm):
                scale[b, pid_m * bm + i, g] = total[i] * T.float32(0.5)

    return main


def test_a_column_of_a_matrix_of_a_rank_3_tensor_is_written_per_row():
    x = bf16(2, 64, 3, 64, seed=7)
    out = tilelang_tt.compile(token_scales(2, 64, 3, 64)).run(x)
    assert_close(torch.as_tensor(out).float(), x.float().sum(3) * 0.5, 2e-2)


def running_sum_columns(m, n, bm):
    """KernelBench's cumulative sum: a program per ``bm`` rows sweeping the columns, each step adding
    a column of X into a per-row accumulator and storing it into that column of Y (``Y[row, j]``), the
    rows guarded (``if row < m``: every block passes it, the blocks tile ``m``)."""

    @T.prim_func
    def main(X: T.Tensor((m, n), "bfloat16"), Y: T.Tensor((m, n), "bfloat16")):
        with T.Kernel(T.ceildiv(m, bm), threads=bm) as bx:
            acc = T.alloc_fragment((bm,), "float32")
            T.clear(acc)
            for j in T.serial(n):
                for i in T.Parallel(bm):
                    row = bx * bm + i
                    if row < m:
                        acc[i] += T.Cast("float32", X[row, j])
                        Y[row, j] = T.Cast("bfloat16", acc[i])

    return main


@pytest.mark.parametrize("m, n, bm", [(64, 48, 64), (96, 40, 32)], ids=["two_tiles_of_rows", "three_blocks"])
def test_a_column_stored_per_step_of_a_serial_loop_is_a_running_sum(m, n, bm):
    x = bf16(m, n, seed=8)
    out = torch.as_tensor(tilelang_tt.compile(running_sum_columns(m, n, bm)).run(x)).float()
    assert_close(out, x.float().cumsum(1), 5e-2)


def test_a_column_of_a_tensor_stored_as_block_floats_is_refused_at_its_nest():
    err = compile_error(group_scales(64, 256, 64, "float32"), layouts={"S": BufferLayout(dtype="bfloat8_b")})
    assert_diagnostic(err, "LowerCBIntrinsics", "the writer writes a column of `S` (stored as Bfp8_b) an element per "
                      "row", "group_scales", path=PATH, source=inspect.getsource(inspect.getmodule(run)))
    assert "no BufferLayout dtype" in err.hint
