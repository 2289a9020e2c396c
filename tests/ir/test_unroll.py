"""ir/unroll.py: a serial loop is unrolled for LowerBlockGathersTT only where its steps change a selection: its
variable and the T.Parallel nest's loops share an index of an on-chip block read (a butterfly stage); a row of
the block picked per step is no selection."""

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.unroll import selects_per_step

X = tirx.decl_buffer((4, 64), "float32", "X", scope="shared.dyn")
Y = tirx.decl_buffer((64,), "float32", "Y", scope="local.fragment")


def stages(index_of):
    """``for s in T.serial(4): for j in T.Parallel(64): Y[j] = X[0, index_of(s, j)]``-like loops."""
    s, j = tirx.Var("s", "int32"), tirx.Var("j", "int32")
    row, col = index_of(s, j)
    nest = tirx.For(j, 0, 64, tirx.ForKind.PARALLEL, tirx.BufferStore(Y, tirx.BufferLoad(X, [row, col]), [j]))
    return tirx.For(s, 0, 4, tirx.ForKind.SERIAL, nest)


def test_a_butterfly_stage_selects_per_step():
    assert selects_per_step(stages(lambda s, j: (0, tirx.bitwise_xor(j, tirx.shift_left(1, s)))))


def test_a_row_per_step_is_no_selection():
    assert not selects_per_step(stages(lambda s, j: (s, j)))
