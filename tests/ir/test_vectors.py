"""The vector kinds of rank-1 blocks (``ir.common.vector_kinds``) and which padded blocks stay zero in
their padding (``ir.padding.zero_padded``), on TileLang kernels."""

import tilelang  # noqa: F401
import tilelang.language as T

from tests.kernels import lower_until
from tests.passes.helpers import alloc
from tilelang_tt.ir.common import COL, ROW, allocations, vector_kinds
from tilelang_tt.ir.padding import zero_padded


def _scales_from_a_column(used_per_column: bool):
    @T.prim_func
    def main(X: T.Tensor((64, 64), "float32"), W: T.Tensor((64, 32), "float32"), Y: T.Tensor((64, 64), "float32")):
        with T.Kernel(1) as bx:
            x = T.alloc_shared((64, 64), "float32")
            w = T.alloc_fragment((64,), "float32")
            y = T.alloc_fragment((64, 64), "float32")
            T.copy(X[0, 0], x)
            T.copy(W[0:64, 8], w)
            for i, j in T.Parallel(64, 64):
                y[i, j] = x[i, j] * (w[j] if used_per_column else w[i])
            T.copy(y, Y[0, 0])

    return main


def test_a_vector_copied_from_a_column_is_a_column_unless_a_nest_uses_it_per_column():
    for per_column, kind in ((False, COL), (True, ROW)):
        func = lower_until(_scales_from_a_column(per_column), "InferTTLayout")["main"]
        (w,) = [b for b in allocations(func) if b.name == "w"]
        assert vector_kinds(func)[w] == kind


def test_the_first_rows_of_a_block_copied_into_a_padded_block_leave_its_padding_nonzero():
    """big (40 rows, zero-padded to 64: read from a tensor) copied whole into whole keeps zeros in the
    padding; its first 8 rows copied into head (8 rows, padded to 32) bring its rows 8..31 there."""

    @T.prim_func
    def main(B: T.Tensor((40, 64), "float32"), Y: T.Tensor((8, 64), "float32"), Z: T.Tensor((40, 64), "float32")):
        with T.Kernel(1) as bx:
            big = T.alloc_fragment((40, 64), "float32")
            head = T.alloc_fragment((8, 64), "float32")
            whole = T.alloc_fragment((40, 64), "float32")
            T.copy(B[0, 0], big)
            T.copy(big[:8, :], head)
            T.copy(big, whole)
            T.copy(head, Y[0, 0])
            T.copy(whole, Z[0, 0])

    func = lower_until(main, "PadBlocksTT")["main"]
    blocks = {alloc(func, name) for name in ("big", "head", "whole")}
    assert {b.name for b in zero_padded(func, blocks)} == {"big", "whole"}
