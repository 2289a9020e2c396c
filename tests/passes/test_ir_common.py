"""The matrix view of global tensor slices (passes.common.matrix_slice): leading dimensions folded
into rows, as InferTTLayout lays ND tensors out."""

import pytest
import tilelang  # noqa: F401
from tvm import arith, ir, tirx

from tilelang_tt.ir.common import Region
from tilelang_tt.ir.slices import matrix_slice, overhanging_axes

I = tirx.IntImm  # noqa: E741


def tensor(*shape):
    return tirx.decl_buffer(shape, "bfloat16", "A")


def region(buf, starts, extents):
    return Region(buf, tuple(I("int32", s) if isinstance(s, int) else s for s in starts), tuple(extents))


def values(view):
    return (int(view.row), int(view.col), view.rows, view.cols, int(view.bound_row), view.bound_rows)


@pytest.mark.parametrize("shape,starts,extents,expected", [
    ((128,), (64,), (32,), (0, 64, 1, 32, 0, 1)),                            # a row vector
    ((96, 64), (32, 32), (64, 32), (32, 32, 64, 32, 32, 96)),                # a matrix: bounded by its rows
    ((3, 64, 96), (2, 32, 0), (1, 32, 96), (160, 0, 32, 96, 32, 64)),       # inside matrix 2: bounded by it
    ((3, 40, 64), (2, 32, 0), (1, 32, 64), (160, 0, 32, 64, 32, 40)),       # matrices padded to 64 rows
    ((2, 3, 64, 32), (1, 2, 0, 0), (1, 1, 64, 32), (320, 0, 64, 32, 0, 64)),
    ((4, 32, 64), (2, 0, 0), (2, 32, 64), (64, 0, 64, 64, 64, 128)),        # whole matrices 2 and 3
    ((2, 4, 32, 32), (1, 2, 0, 0), (1, 2, 32, 32), (192, 0, 64, 32, 64, 128)),
])
def test_matrix_view(shape, starts, extents, expected):
    assert values(matrix_slice(region(tensor(*shape), starts, extents))) == expected


@pytest.mark.parametrize("shape,starts,extents", [
    ((32, 32, 64), (0, 5, 0), (32, 1, 64)),     # rows 32 apart: one column of matrices
    ((4, 64, 64), (0, 0, 0), (2, 32, 64)),      # two matrices, half of each
    ((4, 2, 32, 32), (0, 1, 0, 0), (2, 1, 32, 32)),
    ((4, 40, 64), (0, 0, 0), (2, 40, 64)),      # whole matrices, but each padded: padding inside the block
])
def test_slices_that_are_not_one_rectangle(shape, starts, extents):
    assert matrix_slice(region(tensor(*shape), starts, extents)) is None


def test_rows_past_the_slices_own_matrix_overhang():
    """Rows 64..127 of a 96-row matrix would be the next matrix's: padding, not data."""
    by = tirx.Var("by", "int32")
    analyzer = arith.Analyzer()
    analyzer.bind(by, ir.Range.from_min_extent(0, 2))
    inside = region(tensor(3, 96, 64), (1, 0, 0), (1, 96, 64))
    across = region(tensor(3, 96, 64), (1, by * 64, 0), (1, 64, 64))
    assert overhanging_axes(inside, analyzer) == (False, False)
    assert overhanging_axes(across, analyzer) == (True, False)
