"""NameValueConditionsTT alone: the condition of an ``if`` around tile work that reads a tensor becomes
a named bool the branch tests (the reader reads it and hands it on); conditions of block coordinates
and the block-sparse reads-and-accumulate branch stay as they are. End to end:
tests/compiler/test_value_control.py."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.passes.helpers import names, tl
from tilelang_tt.passes.name_value_conditions_tt import NameValueConditionsTT

PASS = "NameValueConditionsTT"


def test_registered_under_its_name():
    assert NameValueConditionsTT().info.name == PASS


@I.ir_module
class Before:
    @T.prim_func
    def main(A: T.Buffer((64, 32), "bfloat16"), counts: T.Buffer((2,), "int32"), C: T.Buffer((64, 32), "bfloat16")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                g: T.int32 = 1 - bx
                if counts[g] > 0:
                    tl.tileop.copy(tl.region(A[bx * 32, 0], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                else:
                    tl.tileop.copy(tl.region(A[0, 0], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                tl.tileop.copy(tl.region(a[0, 0], 1, 32, 32), tl.region(C[bx * 32, 0], 2, 32, 32))


@I.ir_module
class Expected:
    @T.prim_func
    def main(A: T.Buffer((64, 32), "bfloat16"), counts: T.Buffer((2,), "int32"), C: T.Buffer((64, 32), "bfloat16")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                g: T.int32 = 1 - bx
                counts_taken: T.bool = counts[1 - bx] > 0
                if counts_taken:
                    tl.tileop.copy(tl.region(A[bx * 32, 0], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                else:
                    tl.tileop.copy(tl.region(A[0, 0], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                tl.tileop.copy(tl.region(a[0, 0], 1, 32, 32), tl.region(C[bx * 32, 0], 2, 32, 32))


def test_a_condition_reading_a_tensor_is_named_with_its_named_values_expanded():
    after = NameValueConditionsTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected) == {"main": ["bx", "a", "g", "counts_taken"]}


def test_conditions_of_block_coordinates_and_block_sparse_reads_are_unchanged():
    """``if bx < 1`` each kernel computes; ``if Mask[bx, k]`` around reads and an accumulating gemm
    the reader alone decides (LowerTTTileIntrinsics): nothing to name."""
    @I.ir_module
    class Kept:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "bfloat16"), B: T.Buffer((64, 64), "bfloat16"),
                 Mask: T.Buffer((2, 2), "uint8"), C: T.Buffer((64, 64), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                    b = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                    acc = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    for k in range(2):
                        if Mask[bx, k] != T.uint8(0):
                            tl.tileop.copy(tl.region(A[bx * 32, k * 32], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                            tl.tileop.copy(tl.region(B[k * 32, bx * 32], 1, 32, 32), tl.region(b[0, 0], 2, 32, 32))
                            tl.tileop.gemm(tl.region(a[0, 0], 1, 32, 32), tl.region(b[0, 0], 1, 32, 32),
                                           tl.region(acc[0, 0], 3, 32, 32), False, False, 32, 32, 32, 0, False, 0, 0, 0)
                    if bx < 1:
                        tl.tileop.copy(tl.region(acc[0, 0], 1, 32, 32), tl.region(C[bx * 32, 0], 2, 32, 32))

    assert NameValueConditionsTT()(Kept)["main"].same_as(Kept["main"])
