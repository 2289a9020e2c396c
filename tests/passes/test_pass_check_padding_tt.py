"""C3b CheckPaddingTT alone: padding past a tensor's end may not reach a result; TIR unchanged."""

import pytest
import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.passes.helpers import tl, tt
from tilelang_tt.errors import TTCompileError
from tilelang_tt.passes.check_padding_tt import CheckPaddingTT

PASS = "CheckPaddingTT"


def test_registered_under_its_name():
    assert CheckPaddingTT().info.name == PASS


def padded_row_sum(value: str, kind: str = "sum"):
    """A is 32 x 80, its block 32 x 96: the block's last 16 columns are padding (the reader's zeros).
    E = value(A_s) element-wise, then E reduced along its rows (over the columns)."""
    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32, 80), "bfloat16"), R: T.Buffer((32, 32), "float32")):
            i = T.int32()
            j = T.int32()
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                A_s = T.sblock_alloc_buffer((32, 96), "bfloat16", scope="shared.dyn")
                E = T.sblock_alloc_buffer((32, 96), "float32", scope="local.fragment")
                S = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                tt.read_to_cb(tl.region(A[0, 0], 1, 32, 96), tl.region(A_s[0, 0], 2, 32, 96))
                if value == "copy":
                    tt.tile.eltwise(E.data, i, j, T.Cast("float32", A_s[i, j]))
                else:
                    tt.tile.eltwise(E.data, i, j, T.exp(T.Cast("float32", A_s[i, j])))
                tt.tile.reduce(kind, E.data, S.data, 1, True)

    return Before


def test_a_sum_over_the_readers_zeros_passes_unchanged():
    """A copy (a cast) keeps the reader's zeros: summing them adds nothing."""
    before = padded_row_sum("copy")
    tvm.ir.assert_structural_equal(CheckPaddingTT()(before), before, map_free_vars=True)


@pytest.mark.parametrize("value,kind,block", [("exp", "sum", "E"), ("copy", "max", "E"), ("copy", "min", "E")])
def test_computed_padding_or_an_extremum_over_padding_is_refused(value, kind, block):
    """exp(0) = 1 in the padded columns: their sum would enter each row's result; a max over zeros
    may exceed every valid value of a row of negatives, a min every value of a row of positives."""
    with pytest.raises(TTCompileError, match=rf"the reduction runs along the columns of `{block}`, which reach "
                                             "past the end of the tensor") as err:
        CheckPaddingTT()(padded_row_sum(value, kind))
    assert err.value.pass_name == PASS and "divide the tensor shape" in err.value.hint


def test_a_gemm_contracting_over_computed_padding_is_refused():
    """A gemm contracts exp(A_s) (padding exp(0) = 1 in A's columns past 80) with B_s over those columns."""
    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32, 80), "bfloat16"), B: T.Buffer((96, 32), "bfloat16")):
            i = T.int32()
            j = T.int32()
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                A_s = T.sblock_alloc_buffer((32, 96), "bfloat16", scope="shared.dyn")
                B_s = T.sblock_alloc_buffer((96, 32), "bfloat16", scope="shared.dyn")
                E = T.sblock_alloc_buffer((32, 96), "bfloat16", scope="local.fragment")
                C_l = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                tt.read_to_cb(tl.region(A[0, 0], 1, 32, 96), tl.region(A_s[0, 0], 2, 32, 96))
                tt.read_to_cb(tl.region(B[0, 0], 1, 96, 32), tl.region(B_s[0, 0], 2, 96, 32))
                tt.tile.eltwise(E.data, i, j, T.exp(A_s[i, j]))
                tt.mm.mma(E.data, B_s.data, C_l.data, 0, 0, 1, 1, False, True)

    with pytest.raises(TTCompileError, match="T.gemm contracts along the columns of `E`"):
        CheckPaddingTT()(Before)


def masked_row_max(limit: int):
    """A is 32 x 80, its block 32 x 96 (16 columns of padding); E selects A_s where a mask the reader
    generates (columns below ``limit``) is 1, else -inf (softmax's guarded last tile), then its row maxima."""
    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32, 80), "bfloat16")):
            i = T.int32()
            j = T.int32()
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                A_s = T.sblock_alloc_buffer((32, 96), "bfloat16", scope="shared.dyn")
                M = T.sblock_alloc_buffer((32, 96), "float32", scope="shared.dyn")
                E = T.sblock_alloc_buffer((32, 96), "float32", scope="local.fragment")
                S = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                tt.read_to_cb(tl.region(A[0, 0], 1, 32, 96), tl.region(A_s[0, 0], 2, 32, 96))
                tt.generate_block(tl.region(M[0, 0], 2, 32, 96), i, j,
                                  T.if_then_else(j < limit, T.float32(1), T.float32(0)))
                tt.tile.eltwise(E.data, i, j, T.Select(M[i, j] != T.float32(0), T.Cast("float32", A_s[i, j]),
                                                       T.float32("-inf")))
                tt.tile.reduce("max", E.data, S.data, 1, True)

    return Before


def test_padding_a_generated_mask_selects_away_is_the_kernels_value():
    """The mask is 0 on every padded column (80 and on): E holds -inf there, the kernel's own value, not
    padding; its maximum is the kernel's. A mask 1 on columns 80 to 89 lets the padding through: refused."""
    before = masked_row_max(80)
    tvm.ir.assert_structural_equal(CheckPaddingTT()(before), before, map_free_vars=True)  # no error, unchanged
    with pytest.raises(TTCompileError, match=r"the reduction runs along the columns of `E`"):
        CheckPaddingTT()(masked_row_max(90))


def test_a_read_past_the_end_only_in_another_branch_pads_nothing():
    """Block t of 96 columns of A (32 x 160): t = 1 passes the end, but the read under ``t < 1`` is of t = 0
    only (the branch's condition); its row maxima see no padding. Outside the branch: refused."""
    def kernel(guarded: bool):
        @I.ir_module(check_well_formed=False)
        class Before:
            @T.prim_func
            def main(A: T.Buffer((32, 160), "bfloat16")):
                i = T.int32()
                j = T.int32()
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    A_s = T.sblock_alloc_buffer((32, 96), "bfloat16", scope="shared.dyn")
                    E = T.sblock_alloc_buffer((32, 96), "float32", scope="local.fragment")
                    S = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    for t in range(2):
                        if t < 1 or not guarded:
                            tt.read_to_cb(tl.region(A[0, t * 96], 1, 32, 96), tl.region(A_s[0, 0], 2, 32, 96))
                            tt.tile.eltwise(E.data, i, j, T.Cast("float32", A_s[i, j]))
                            tt.tile.reduce("max", E.data, S.data, 1, True)

        return Before

    before = kernel(True)
    tvm.ir.assert_structural_equal(CheckPaddingTT()(before), before, map_free_vars=True)  # no error, unchanged
    with pytest.raises(TTCompileError, match=r"the reduction runs along the columns of `E`"):
        CheckPaddingTT()(kernel(False))
