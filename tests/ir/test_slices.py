"""ir/slices.py's row_slice: the rows of a row-major tensor a slice takes, along one leading
dimension or along several that make one run of strided rows."""

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.common import Region
from tilelang_tt.ir.slices import row_slice


def _region(shape, starts, extents) -> Region:
    buf = tirx.decl_buffer(shape, "bfloat16", "X")
    return Region(buf, tuple(tirx.IntImm("int32", s) if isinstance(s, int) else s for s in starts), tuple(extents))


def test_rows_along_one_leading_dimension():
    """A head Q[b, 8:24, 3, :] of a (2, 32, 4, 64) tensor: 16 rows 4 pages apart from page (b * 32 + 8) * 4 + 3."""
    b = tirx.Var("b", "int32")
    view = row_slice(_region((2, 32, 4, 64), (b, 8, 3, 0), (1, 16, 1, 64)))
    assert (view.stride, view.rows, view.cols, view.bound_rows) == (4, 16, 64, 32)
    assert tirx.analysis.expr_deep_equal(view.page, b * 128 + 35)
    assert int(view.bound_row) == 8


def test_whole_inner_dimensions_make_one_run_of_rows():
    """out[n, 0:8, 0:8, :] of an (N, 8, 8, F) tensor: 64 consecutive rows from page n * 64, counted
    along its second dimension (8 x 8 rows of it)."""
    n = tirx.Var("n", "int32")
    view = row_slice(_region((3, 8, 8, 128), (n, 0, 0, 0), (1, 8, 8, 128)))
    assert (view.stride, view.rows, view.cols, view.bound_rows) == (1, 64, 128, 64)
    assert tirx.analysis.expr_deep_equal(view.page, n * 64)
    assert int(view.bound_row) == 0


def test_rows_of_several_dimensions_that_are_no_run_are_none():
    """out[0, 0:4, 0:4, :] of a (1, 8, 8, F) tensor: 4 runs of 4 rows, 8 apart."""
    assert row_slice(_region((1, 8, 8, 128), (0, 0, 0, 0), (1, 4, 4, 128))) is None
