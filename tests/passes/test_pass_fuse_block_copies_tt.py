"""D4 FuseBlockCopiesTT alone: a copy of a block computed just before is packed by the op computing it."""

import pytest
import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.passes.helpers import cb_entry, tl, tt, tt_attrs
from tilelang_tt.passes.fuse_block_copies_tt import FuseBlockCopiesTT

PASS = "FuseBlockCopiesTT"


def compute_attrs(**cbs) -> dict:
    return tt_attrs({"tt.kernel_role": "compute", "tt.cb_desc": cbs})


ATTRS = compute_attrs(S=cb_entry(0, page_size=4096, data_format="Float32", block_tiles=(1, 2)),
                      P=cb_entry(1, block_tiles=(1, 2)), s_sum={**cb_entry(2, page_size=4096, data_format="Float32"),
                                                                 "vector": "col"})


def test_registered_under_spec_name():
    assert FuseBlockCopiesTT().info.name == PASS


def test_the_cast_copy_after_a_reduction_is_packed_by_the_exp_pass():
    """exp(S) into the float32 S, a row sum of S, then P = bfloat16(S): the exp pass packs its tiles
    into P too (the reduction only reads S), and the copy goes."""
    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main():
            T.func_attr(ATTRS)
            S = T.Buffer((32, 64), "float32", scope="local.fragment")
            P = T.Buffer((32, 64), "bfloat16", scope="local.fragment")
            s_sum = T.Buffer((32,), "float32", scope="local.fragment")
            i = T.int32()
            j = T.int32()
            tt.tile.eltwise(S.data, i, j, T.exp(S[i, j]))
            tt.tile.reduce("sum", S.data, s_sum.data, 1, T.bool(True))
            tt.tile.eltwise(P.data, i, j, T.Cast("bfloat16", S[i, j]))

    @I.ir_module(check_well_formed=False)
    class Expected:
        @T.prim_func
        def main():
            T.func_attr(ATTRS)
            S = T.Buffer((32, 64), "float32", scope="local.fragment")
            P = T.Buffer((32, 64), "bfloat16", scope="local.fragment")
            s_sum = T.Buffer((32,), "float32", scope="local.fragment")
            i = T.int32()
            j = T.int32()
            tt.tile.eltwise(S.data, i, j, T.exp(S[i, j]), P.data)
            tt.tile.reduce("sum", S.data, s_sum.data, 1, T.bool(True))

    tvm.ir.assert_structural_equal(FuseBlockCopiesTT()(Before), Expected, map_free_vars=True)


def test_the_copy_packs_the_latest_value():
    """S written again between the two: the copy copies the later value, whose op packs it."""
    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main():
            T.func_attr(ATTRS)
            S = T.Buffer((32, 64), "float32", scope="local.fragment")
            P = T.Buffer((32, 64), "bfloat16", scope="local.fragment")
            i = T.int32()
            j = T.int32()
            tt.tile.eltwise(S.data, i, j, T.exp(S[i, j]))
            tt.tile.eltwise(S.data, i, j, S[i, j] * T.float32(2))
            tt.tile.eltwise(P.data, i, j, T.Cast("bfloat16", S[i, j]))

    @I.ir_module(check_well_formed=False)
    class Expected:
        @T.prim_func
        def main():
            T.func_attr(ATTRS)
            S = T.Buffer((32, 64), "float32", scope="local.fragment")
            P = T.Buffer((32, 64), "bfloat16", scope="local.fragment")
            i = T.int32()
            j = T.int32()
            tt.tile.eltwise(S.data, i, j, T.exp(S[i, j]))
            tt.tile.eltwise(S.data, i, j, S[i, j] * T.float32(2), P.data)

    tvm.ir.assert_structural_equal(FuseBlockCopiesTT()(Before), Expected, map_free_vars=True)


@pytest.mark.parametrize("between", ["reads P", "reduces into S"])
def test_no_fusion_when_the_target_is_used_or_the_value_changes_in_between(between):
    """P read in between (its old value is still needed), or S written by another op in between (the
    copy copies that value): the copy stays."""
    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main():
            T.func_attr(ATTRS)
            S = T.Buffer((32, 64), "float32", scope="local.fragment")
            P = T.Buffer((32, 64), "bfloat16", scope="local.fragment")
            s_sum = T.Buffer((32,), "float32", scope="local.fragment")
            i = T.int32()
            j = T.int32()
            tt.tile.eltwise(S.data, i, j, T.exp(S[i, j]))
            if between == "reads P":
                tt.tile.eltwise(s_sum.data, i, 0, s_sum[i] + T.Cast("float32", P[i, 0]))
            else:
                tt.tile.reduce("sum", s_sum.data, S.data, 1, T.bool(True))
            tt.tile.eltwise(P.data, i, j, T.Cast("bfloat16", S[i, j]))

    tvm.ir.assert_structural_equal(FuseBlockCopiesTT()(Before), Before)


def test_no_fusion_into_a_wider_format():
    """A bfloat16 block copied to a float32 one holds bfloat16 values; DST packed straight to the float32
    block would keep the bits the bfloat16 pack rounded away: the copy stays."""
    attrs = compute_attrs(S=cb_entry(0, block_tiles=(1, 2)),
                          W=cb_entry(1, page_size=4096, data_format="Float32", block_tiles=(1, 2)))

    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main():
            T.func_attr(attrs)
            S = T.Buffer((32, 64), "bfloat16", scope="local.fragment")
            W = T.Buffer((32, 64), "float32", scope="local.fragment")
            i = T.int32()
            j = T.int32()
            tt.tile.eltwise(S.data, i, j, T.exp(S[i, j]))
            tt.tile.eltwise(W.data, i, j, T.Cast("float32", S[i, j]))

    tvm.ir.assert_structural_equal(FuseBlockCopiesTT()(Before), Before)
