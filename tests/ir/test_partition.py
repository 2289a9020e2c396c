"""ir/partition.py: a T.Parallel nest split where its conditions and integer divisions change, each
part simplified with its range (LegalizeGlobalAccessTT's partner halves)."""

import tilelang  # noqa: F401
import tvm
from tvm import arith, tirx

from tilelang_tt.ir.partition import partitioned

X = tirx.decl_buffer((64, 64), "float32", "X")
Y = tirx.decl_buffer((64, 64), "float32", "Y")
C = tirx.decl_buffer((64, 32), "float32", "C")


def nest(value_of, extent_j=64):
    """A nest over (i in 32, j in ``extent_j``) storing ``value_of(i, j)`` into ``Y[i, j]``."""
    i, j = tirx.Var("i", "int32"), tirx.Var("j", "int32")
    loops = [tirx.For(i, 0, 32, tirx.ForKind.PARALLEL, tirx.Evaluate(0)),
             tirx.For(j, 0, extent_j, tirx.ForKind.PARALLEL, tirx.Evaluate(0))]
    return loops, tirx.BufferStore(Y, value_of(i, j), [i, j])


def if_then_else(cond, a, b):
    return tirx.Call("float32", tvm.ir.Op.get("tirx.if_then_else"), [cond, a, b])


def test_a_partner_half_is_two_parts_with_the_branch_each_takes():
    loops, body = nest(lambda i, j: if_then_else(j < 32, -X[i, j + 32], X[i, j - 32]) * C[i, j % 32])
    parts = partitioned(loops, body, arith.Analyzer())
    assert [[int(lp.extent) for lp in part_loops] for part_loops, _ in parts] == [[32, 32], [32, 32]]
    (i0, j0), first = [lp.loop_var for lp in parts[0][0]], parts[0][1]
    (i1, j1), second = [lp.loop_var for lp in parts[1][0]], parts[1][1]
    assert not {i0, j0} & {i1, j1}  # each part defines its own loop variables
    tvm.ir.assert_structural_equal(first, tirx.BufferStore(Y, -X[i0, j0 + 32] * C[i0, j0], [i0, j0]),
                                   map_free_vars=True)
    tvm.ir.assert_structural_equal(second, tirx.BufferStore(Y, X[i1, j1] * C[i1, j1], [i1, j1 + 32]),
                                   map_free_vars=True)


def test_a_pair_swap_changes_at_every_other_element_and_is_not_parts():
    loops, body = nest(lambda i, j: if_then_else(tirx.floormod(j, 2) == 0, -X[i, j + 1], X[i, j - 1]))
    assert partitioned(loops, body, arith.Analyzer()) is None


def test_a_condition_on_the_block_coordinate_is_not_split():
    bx = tirx.Var("bx", "int32")
    analyzer = arith.Analyzer()
    analyzer.bind(bx, tvm.ir.Range(0, 4))
    loops, body = nest(lambda i, j: if_then_else(j < 64 - bx, X[i, j], tirx.const(0, "float32")))
    assert partitioned(loops, body, analyzer) is None


def test_a_nest_without_conditions_or_divisions_is_not_split():
    loops, body = nest(lambda i, j: X[i, j] * 2.0)
    assert partitioned(loops, body, arith.Analyzer()) is None
