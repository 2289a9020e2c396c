"""What a refusal tells its user (issue 29 item 7): the line of the statement it refuses (never only the kernel's
def line, also where TileLang's wrappers such as T.reduce_max and T.cumsum of a fragment build the statements),
names the user wrote, and a hint whose rewrite compiles and runs (each rewrite here is run against torch)."""

from __future__ import annotations

import inspect
import re

import pytest
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler import bad_kernels
from tests.compiler.test_reductions import vector_scan_rewritten
from tilelang_tt import TTCompileError


def atomic_max_only():
    """Each block's max into its own region of C with T.atomic_max, the kernel's only write of C."""
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(2, 2, threads=128) as (bx, by):
            A_s = T.alloc_shared((32, 32), "float32")
            T.copy(A[by * 32, bx * 32], A_s)
            T.atomic_max(C[by * 32, bx * 32], A_s)

    return main


def atomic_max_of_elements():
    """docs/porting.md's GPU column max: every block's maxima into one row with T.atomic_max per element."""
    @T.prim_func
    def main(X: T.Tensor((128, 64), "float32"), Y: T.Tensor((1, 64), "float32")):
        with T.Kernel(4, threads=128) as bx:
            x = T.alloc_shared((32, 64), "float32")
            m = T.alloc_fragment((64,), "float32")
            T.copy(X[bx * 32, 0], x)
            T.reduce_max(x, m, dim=0)
            for j in T.Parallel(64):
                T.atomic_max(Y[0, j], m[j])  # LINE: atomic_max_of_elements

    return main


def atomic_max_rewritten():
    """The hint's rewrite: C's region copied in, the max in a T.Parallel nest, copied back."""
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(2, 2, threads=128) as (bx, by):
            A_s = T.alloc_shared((32, 32), "float32")
            C_s = T.alloc_shared((32, 32), "float32")
            M = T.alloc_fragment((32, 32), "float32")
            T.copy(A[by * 32, bx * 32], A_s)
            T.copy(C[by * 32, bx * 32], C_s)
            for i, j in T.Parallel(32, 32):
                M[i, j] = T.max(A_s[i, j], C_s[i, j])
            T.copy(M, C[by * 32, bx * 32])

    return main


def vector_scan_of_a_fragment(n=96):
    """T.cumsum of a rank-1 fragment: TileLang's wrapper scans a shared copy it makes."""
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), C: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            F = T.alloc_fragment((n,), "float32")
            for j in T.Parallel(n):
                F[j] = A[j] * 2.0
            T.cumsum(F, dim=0)  # LINE: vector_scan_of_a_fragment
            T.copy(F, C[0])

    return main


def line_of(marker: str, module=None) -> tuple[str, int]:
    module = module or inspect.getmodule(line_of)
    lines, _ = inspect.getsourcelines(module)
    return inspect.getsourcefile(module), next(
        n for n, text in enumerate(lines, start=1) if text.rstrip().endswith(f"# LINE: {marker}"))


def identifiers(factory) -> set[str]:
    return set(re.findall(r"[A-Za-z_]\w*", inspect.getsource(factory)))


def test_a_kernel_writing_each_region_with_atomic_max_runs_as_its_rewrite_does():
    """Each block's T.atomic_max into a region of its own is the read-modify-write the rewrite spells out
    (LowerAtomicAddTT); only blocks combining into one region are refused (below)."""
    a, c = torch.randn(64, 64), torch.randn(64, 64)
    expected = torch.maximum(a, c)
    assert torch.equal(tilelang_tt.compile(atomic_max_only()).run(a, c.clone()), expected)
    assert torch.equal(tilelang_tt.compile(atomic_max_rewritten()).run(a, c.clone()), expected)


def test_an_atomic_max_of_elements_is_refused_at_that_statement():
    with pytest.raises(TTCompileError) as info:
        tilelang_tt.compile(atomic_max_of_elements())
    assert info.value.location[:2] == line_of("atomic_max_of_elements"), info.value
    assert "`T.atomic_max` into `Y`" in info.value.message and "T.atomic_add" in info.value.hint


@pytest.mark.parametrize("factory,marker,fragment", [
    (bad_kernels.unaligned_shape, "unaligned_shape", "the padding would enter the result"),
    (bad_kernels.stacked_reduction, "stacked_reduction", "a reduction runs over one matrix"),
], ids=["reduce_max", "reduce_sum"])
def test_a_refused_reduction_names_the_line_calling_its_wrapper(factory, marker, fragment):
    """T.reduce_* is a TileLang macro whose statements carry its own file's lines (reduce_op.py): the error
    stands at the user's line that called it (ir/common.py macro_call_span), not at the def line."""
    with pytest.raises(TTCompileError) as info:
        tilelang_tt.compile(factory())
    assert fragment in info.value.message
    assert info.value.location[:2] == line_of(marker, bad_kernels), info.value


def test_a_refused_scan_of_a_fragment_names_its_line_and_its_rewrite_runs():
    with pytest.raises(TTCompileError) as info:
        tilelang_tt.compile(vector_scan_of_a_fragment())
    err = info.value
    assert "a scan of a vector" in err.message
    assert err.location[:2] == line_of("vector_scan_of_a_fragment"), err
    assert "(1, n), copied into a (32, n) block" in err.hint and "along dim 1" in err.hint
    a = torch.randn(1, 96)  # the rewrite the hint names (a float32 block: split hi + lo, float32 sums)
    got = tilelang_tt.compile(vector_scan_rewritten(96)).run(a)
    torch.testing.assert_close(got, a.double().cumsum(1).float(), rtol=2.0 ** -16, atol=2.0 ** -16)
