"""Vectors written into part of a tile (issue 11, item 3): a tensor of rank 2 or more that a kernel
copies only as vectors along its last dimension, starting inside a tile of its matrix view
(``Delta[bz, bh, by * bm:(by + 1) * bm]``: row ``bh`` of a (H, S) matrix), is laid out flat, as the
rank-1 tensor of its elements: a column when the kernel uses the vector per row (a row sum), a row
when per column. Programs run on the emulator against torch; what flat cannot serve is refused."""

import pytest
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_ops import assert_close, bf16
from tilelang_tt import TTCompileError


def row_sums(batch, heads, seq, dim, bm=32):
    """The attention backward's preprocess: S[b, h, t] = sum_d X[b, h, t, d] * Y[b, h, t, d]."""

    @T.prim_func
    def main(X: T.Tensor((batch, heads, seq, dim), "bfloat16"), Y: T.Tensor((batch, heads, seq, dim), "bfloat16"),
             S: T.Tensor((batch, heads, seq), "float32")):
        with T.Kernel(heads, T.ceildiv(seq, bm), batch) as (bh, by, bz):
            x = T.alloc_fragment((bm, dim), "bfloat16")
            y = T.alloc_fragment((bm, dim), "bfloat16")
            prod = T.alloc_fragment((bm, dim), "float32")
            sums = T.alloc_fragment((bm,), "float32")
            T.copy(X[bz, bh, by * bm:(by + 1) * bm, :], x)
            T.copy(Y[bz, bh, by * bm:(by + 1) * bm, :], y)
            for i, j in T.Parallel(bm, dim):
                prod[i, j] = x[i, j] * y[i, j]
            T.reduce_sum(prod, sums, 1)
            T.copy(sums, S[bz, bh, by * bm:(by + 1) * bm])

    return main


def minus_column_vector(batch, heads, seq, bm=32, bn=32):
    """C[b, h, i, j] = X[b, h, i, j] - V[b, h, j]: a vector per column, read from part of a tile."""

    @T.prim_func
    def main(X: T.Tensor((batch, heads, seq, seq), "float32"), V: T.Tensor((batch, heads, seq), "float32"),
             C: T.Tensor((batch, heads, seq, seq), "float32")):
        with T.Kernel(T.ceildiv(seq, bn), T.ceildiv(seq, bm), batch * heads) as (bx, by, bz):
            x = T.alloc_shared((bm, bn), "float32")
            v = T.alloc_shared((bn,), "float32")
            c = T.alloc_fragment((bm, bn), "float32")
            T.copy(X[bz // heads, bz % heads, by * bm:(by + 1) * bm, bx * bn:(bx + 1) * bn], x)
            T.copy(V[bz // heads, bz % heads, bx * bn:(bx + 1) * bn], v)
            for i, j in T.Parallel(bm, bn):
                c[i, j] = x[i, j] - v[j]
            T.copy(c, C[bz // heads, bz % heads, by * bm:(by + 1) * bm, bx * bn:(bx + 1) * bn])

    return main


@pytest.mark.parametrize("batch,heads,seq,dim,grid", [(1, 3, 64, 64, None), (2, 5, 96, 32, (4, 2))])
def test_a_per_row_vector_is_written_into_a_flat_column(batch, heads, seq, dim, grid):
    program = tilelang_tt.compile(row_sums(batch, heads, seq, dim), **({"grid": grid} if grid else {}))
    buffer = program.plan.buffers[2]
    assert (buffer.flat, buffer.column) == (True, True)
    assert buffer.num_pages == batch * heads * seq // 32  # one tile of 32 values per 32 elements
    x, y = bf16(batch, heads, seq, dim, seed=1), bf16(batch, heads, seq, dim, seed=2)
    out = torch.as_tensor(program.run(x, y)).float()
    assert_close(out, (x.float() * y.float()).sum(-1), 2.0 ** -10)


def test_a_per_column_vector_is_read_from_a_flat_row():
    batch, heads, seq = 2, 3, 64
    program = tilelang_tt.compile(minus_column_vector(batch, heads, seq), grid=(2, 2))
    buffer = program.plan.buffers[1]
    assert buffer.flat is True and buffer.column is False
    g = torch.Generator().manual_seed(3)
    x, v = torch.randn(batch, heads, seq, seq, generator=g), torch.randn(batch, heads, seq, generator=g)
    out = torch.as_tensor(program.run(x, v)).float()
    assert_close(out, x - v[:, :, None, :], 0.0)


def test_tensors_copied_as_blocks_of_tiles_or_at_whole_tiles_stay_tiled():
    program = tilelang_tt.compile(row_sums(1, 2, 64, 64))
    assert [b.flat for b in program.plan.buffers] == [False, False, True]
    two_d = tilelang_tt.compile(minus_column_vector(1, 1, 64))  # one head: V[0, 0, j] is row 0 of its tiles
    assert not two_d.plan.buffers[1].flat


def test_a_vector_past_the_end_of_its_row_writes_its_row_only():
    """Rows of 96 sums written 64 at a time: the second vector of a row passes its end (at a whole tile) and
    its last tile, which would be the next row's first 32 elements, is not written."""
    program = tilelang_tt.compile(row_sums(2, 3, 96, 32, bm=64))
    assert program.plan.buffers[2].flat is True
    x, y = bf16(2, 3, 96, 32, seed=4), bf16(2, 3, 96, 32, seed=5)
    out = torch.as_tensor(program.run(x, y)).float()
    assert_close(out, (x.float() * y.float()).sum(-1), 2.0 ** -10)


def scaled_rows(batch, heads, seq, bn, steps):
    """Y[b, h, :] = 2 X[b, h, :] + 1, a row of each (b, h) moved ``bn`` elements at a time through 1-D blocks
    (X and Y laid out flat): the last vector of a row may pass its end."""

    @T.prim_func
    def main(X: T.Tensor((batch, heads, seq), "float32"), Y: T.Tensor((batch, heads, seq), "float32")):
        with T.Kernel(heads, batch, threads=128) as (by, bz):
            s = T.alloc_fragment((bn,), "float32")
            y = T.alloc_fragment((bn,), "float32")
            for t in T.serial(steps):
                T.copy(X[bz, by, t * bn], s)
                for j in T.Parallel(bn):
                    y[j] = s[j] * 2.0 + 1.0
                T.copy(y, Y[bz, by, t * bn])

    return main


def test_a_vector_past_the_end_of_its_row_reads_zeros_there():
    """Its tiles past the row's end are read as zeros (TileLang's out-of-bounds value), not as the next row's
    elements, and not written: each row of Y is its own row of X, the tensors' ends never passed."""
    program = tilelang_tt.compile(scaled_rows(2, 4, 96, 64, 2))
    assert [b.flat for b in program.plan.buffers] == [True, True]
    x = torch.randn(2, 4, 96, generator=torch.Generator().manual_seed(6))
    out = torch.as_tensor(program.run(x))
    assert torch.equal(out, 2 * x + 1)
    assert "noc_async_read_zeros" in program.sources["reader.cpp"]  # the tiles past a row's end, not read


def test_a_vector_that_may_pass_the_end_of_its_row_inside_a_tile_is_refused():
    """Rows of 80 elements end inside a tile: a tile of the vector would hold elements of two rows."""
    with pytest.raises(TTCompileError, match=r"the vector slice of `S` \(extents \[1, 1, 64\] of \[1, 2, 80\]\) may "
                                             r"pass the end of its last dimension \(80\)") as info:
        tilelang_tt.compile(row_sums(1, 2, 80, 32, bm=64))
    assert "T.copy(sums, S[bz, bh, by * bm:(by + 1) * bm])" in str(info.value)
