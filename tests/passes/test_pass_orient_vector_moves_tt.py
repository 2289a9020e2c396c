"""A2b OrientVectorMovesTT alone: a column vector moved to or from a row of a tensor in tiles goes
through a row vector block; other moves are left as they are."""

import tilelang  # noqa: F401
import tilelang.language as TL
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import lower_until, run_pass
from tests.passes.helpers import names, tl, tt_attrs
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.passes.orient_vector_moves_tt import PASS, OrientVectorMovesTT

F32 = {"memory": "DRAM", "layout": "interleaved", "dtype": "float32", "shape": [64, 64], "tile_shape": [32, 32],
       "data_format": "Float32", "page_size": 4096}


def _vector(kind: str, tiles) -> dict:
    return {"index": -1, "page_size": 4096, "num_pages": 4, "data_format": "Float32", "block_pages": 2,
            "block_tiles": list(tiles), "vector": kind, "producer": "", "consumer": "", "buffer": "", "source": ""}


def test_registered_under_its_name():
    assert OrientVectorMovesTT().info.name == PASS == "OrientVectorMovesTT"


@I.ir_module
class Before:
    @T.prim_func
    def main(W: T.Buffer((64, 64), "float32"), S: T.Buffer((64, 64), "float32")):
        T.func_attr(tt_attrs({"tt.layout_desc": {"W": F32, "S": F32},
                              "tt.cb_desc": {"s": _vector("col", (2, 1)), "w": _vector("col", (2, 1))}}))
        with T.sblock("tilelang_root"):
            T.reads()
            T.writes()
            w = T.sblock_alloc_buffer((64,), "float32", scope="local.fragment")
            s = T.sblock_alloc_buffer((64,), "float32", scope="local.fragment")
            tl.tileop.copy(tl.region(W[32, 0], 1, 1, 64), tl.region(w[0], 2, 64))
            for i in T.parallel(64):
                s[i] = w[i] * T.float32(2)
            tl.tileop.copy(tl.region(s[0], 1, 64), tl.region(S[32, 0], 2, 1, 64))


@I.ir_module
class Expected:
    @T.prim_func
    def main(W: T.Buffer((64, 64), "float32"), S: T.Buffer((64, 64), "float32")):
        T.func_attr(tt_attrs({"tt.layout_desc": {"W": F32, "S": F32},
                              "tt.cb_desc": {"s": _vector("col", (2, 1)), "s_row": _vector("row", (1, 2)),
                                             "w": _vector("col", (2, 1)), "w_row": _vector("row", (1, 2))}}))
        with T.sblock("tilelang_root"):
            T.reads()
            T.writes()
            w = T.sblock_alloc_buffer((64,), "float32", scope="local.fragment")
            s = T.sblock_alloc_buffer((64,), "float32", scope="local.fragment")
            w_row = T.sblock_alloc_buffer((64,), "float32", scope="local.fragment")
            s_row = T.sblock_alloc_buffer((64,), "float32", scope="local.fragment")
            tl.tileop.copy(tl.region(W[32, 0], 1, 1, 64), tl.region(w_row[0], 2, 64))
            for k in T.parallel(64):
                w[k] = w_row[k]
            for i in T.parallel(64):
                s[i] = w[i] * T.float32(2)
            for k1 in T.parallel(64):
                s_row[k1] = s[k1]
            tl.tileop.copy(tl.region(s_row[0], 1, 64), tl.region(S[32, 0], 2, 1, 64))


def test_a_column_vector_read_from_and_written_to_rows_goes_through_row_blocks():
    after = OrientVectorMovesTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_vectors_along_their_slices_are_unchanged():
    """A column vector copied into a column of a tensor (per-row scales), and a row vector into a row,
    already lie along their slices: the function comes back as it is."""

    @TL.prim_func
    def main(A: TL.Tensor((64, 64), "float32"), S: TL.Tensor((64, 64), "float32"), R: TL.Tensor((64, 64), "float32")):
        with TL.Kernel(1) as bx:
            a = TL.alloc_shared((64, 64), "float32")
            per_row = TL.alloc_fragment((64,), "float32")
            per_col = TL.alloc_fragment((64,), "float32")
            TL.copy(A[0, 0], a)
            TL.reduce_sum(a, per_row, dim=1)
            TL.reduce_sum(a, per_col, dim=0)
            TL.copy(per_row, S[0:64, 3])
            TL.copy(per_col, R[32, 0:64])

    before = lower_until(main, PASS)
    assert run_pass(before, PASS)["main"].same_as(before["main"])


def test_the_per_row_sums_copied_into_a_row_of_a_real_kernel_get_a_row_block():
    before = lower_until(_row_sums_into_a_row(), PASS)
    after = run_pass(before, PASS)["main"]
    cbs = Attr.CB_DESC.read(after)
    assert (cbs["s"].vector, cbs["s_row"].vector) == ("col", "row")
    assert cbs["s_row"].block_tiles == cbs["s"].block_tiles[::-1] == (1, 2)
    assert names(tvm.IRModule({"main": after}))["main"][-1] == "k"  # the nest copying s into s_row


def _row_sums_into_a_row():
    @TL.prim_func
    def main(A: TL.Tensor((64, 64), "float32"), S: TL.Tensor((64, 64), "float32")):
        with TL.Kernel(1) as bx:
            a = TL.alloc_shared((64, 64), "float32")
            s = TL.alloc_fragment((64,), "float32")
            TL.copy(A[0, 0], a)
            TL.reduce_sum(a, s, dim=1)
            TL.copy(s, S[32, 0:64])

    return main
