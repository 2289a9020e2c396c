"""The "Refused forms" table of docs/what-compiles.md is what the fuzz tests accept as a compile error
(tests/fuzz/runner.py reads it): each row's form is refused with the message its row names, and the
fuzz runner recognises that refusal as the row's form."""

from __future__ import annotations

import pytest
import tilelang.language as T

import tilelang_tt
from tests import op_kernels
from tests.compiler import bad_kernels
from tests.compiler.test_reductions import vector_scan
from tests.fuzz.runner import REFUSED, refusal
from tilelang_tt import BufferLayout


def stacked_partial_matrices():
    """A [2, 40, 32] block: two matrices of 40 rows each, which would be padded each on its own."""
    @T.prim_func
    def main(A: T.Tensor((4, 40, 32), "bfloat16"), B: T.Tensor((4, 40, 32), "bfloat16")):
        with T.Kernel(2, threads=128) as bx:
            A_s = T.alloc_shared((2, 40, 32), "bfloat16")
            T.copy(A[bx * 2:(bx + 1) * 2, :, :], A_s)
            T.copy(A_s, B[bx * 2:(bx + 1) * 2, :, :])

    return main


def vector_into_rows():
    """The row sums, a vector, copied into a row of a tensor laid out in rows."""
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), R: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((64, 64), "float32")
            r = T.alloc_fragment((64,), "float32")
            T.copy(A[0, 0], A_s)
            T.reduce_sum(A_s, r, dim=1)
            T.copy(r, R[0, 0:64])

    return main


# message fragment of a row -> a kernel with that row's form, and its options
KERNELS = {
    "the padding would enter the result": (bad_kernels.unaligned_shape, {}),
    "cannot be padded to whole tiles": (stacked_partial_matrices, {}),
    "is moved to or from the row-major tensor": (vector_into_rows, {"layouts": {"R": BufferLayout(layout="row_major")}}),
    "unsupported compute on": (lambda: op_kernels.binary("maximum", 64, 64, 32, 64, dtype="uint32"), {}),
    "a scan of a vector": (lambda: vector_scan(64), {}),
    "L1 overflow": (bad_kernels.blocks_past_l1, {}),
}


def test_the_table_is_read_and_every_row_has_a_kernel_here():
    assert set(REFUSED) == set(KERNELS), "a row of the Refused forms table needs a kernel in KERNELS (or one went away)"
    assert all(form for form in REFUSED.values())


@pytest.mark.parametrize("fragment", sorted(KERNELS))
def test_each_documented_form_is_refused_as_documented(fragment):
    kernel, options = KERNELS[fragment]
    with pytest.raises(tilelang_tt.TTCompileError) as info:
        tilelang_tt.compile(kernel(), **options)
    assert fragment in info.value.message
    assert refusal(info.value) == REFUSED[fragment]
