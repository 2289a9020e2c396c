"""D4 FuseBlockCopiesTT alone: a copy of a block computed just before is packed by the op computing it."""

import pytest
import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.passes.helpers import cb_entry, tt, tt_attrs
from tilelang_tt.passes.fuse_block_copies_tt import FuseBlockCopiesTT

PASS = "FuseBlockCopiesTT"


def compute_attrs(**cbs) -> dict:
    return tt_attrs({"tt.kernel_role": "compute", "tt.cb_desc": cbs})


ATTRS = compute_attrs(S=cb_entry(0, page_size=4096, data_format="Float32", block_tiles=(1, 2)),
                      P=cb_entry(1, block_tiles=(1, 2)), s_sum={**cb_entry(2, page_size=4096, data_format="Float32"),
                                                                 "vector": "col"})


def test_registered_under_spec_name():
    assert FuseBlockCopiesTT().info.name == PASS


@pytest.mark.parametrize("between", ["reduces S", "writes S again", "reads P", "reduces into S"])
def test_the_cast_copy_is_packed_by_the_op_computing_the_value(between):
    """exp(S) into the float32 S, then P = bfloat16(S). With a row sum of S between them (it only reads
    S) the exp pass packs its tiles into P too; with S written again by an element-wise op the copy
    copies that later value, whose op packs it; the copy goes. With P read between them (its old value
    is still needed), or S written by another op (a reduction into it), the copy stays."""
    fused = between in ("reduces S", "writes S again")

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
            if between == "reduces S":
                tt.tile.reduce("sum", S.data, s_sum.data, 1, T.bool(True))
            elif between == "writes S again":
                tt.tile.eltwise(S.data, i, j, S[i, j] * T.float32(2))
            elif between == "reads P":
                tt.tile.eltwise(s_sum.data, i, 0, s_sum[i] + T.Cast("float32", P[i, 0]))
            else:
                tt.tile.reduce("sum", s_sum.data, S.data, 1, T.bool(True))
            tt.tile.eltwise(P.data, i, j, T.Cast("bfloat16", S[i, j]))

    @I.ir_module(check_well_formed=False)
    class Fused:
        @T.prim_func
        def main():
            T.func_attr(ATTRS)
            S = T.Buffer((32, 64), "float32", scope="local.fragment")
            P = T.Buffer((32, 64), "bfloat16", scope="local.fragment")
            s_sum = T.Buffer((32,), "float32", scope="local.fragment")
            i = T.int32()
            j = T.int32()
            if between == "reduces S":
                tt.tile.eltwise(S.data, i, j, T.exp(S[i, j]), P.data)
                tt.tile.reduce("sum", S.data, s_sum.data, 1, T.bool(True))
            else:
                tt.tile.eltwise(S.data, i, j, T.exp(S[i, j]))
                tt.tile.eltwise(S.data, i, j, S[i, j] * T.float32(2), P.data)

    tvm.ir.assert_structural_equal(FuseBlockCopiesTT()(Before), Fused if fused else Before, map_free_vars=True)


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
