"""T.Parallel over an extent known only at run time (issue 29, item 5): an extent the kernel bounds
(``span = T.min(valid_len, 512)``) is the nest over its largest value with each store guarded by
the run-time extent (BoundParallelExtentsTT); the writer writes the valid elements of a vector, or
the valid rows of a matrix, only."""

import pytest
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_negative import assert_diagnostic, compile_error
from pathlib import Path


def prefix_minus_one(N, threads=128, dtype="float32", bound=None):
    """tile-ai/tilelang's parallel_elementwise_dynamic in another hand: B is zeros, then its first
    ``T.min(valid, bound)`` elements A - 1 (``bound`` N by default; a larger one passes the end of
    the tensors, whose elements past it are not read or written)."""
    bound = N if bound is None else bound

    @T.prim_func
    def main(A: T.Tensor((N,), dtype), valid: T.int32, B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=threads) as _:
            for i in T.Parallel(N):
                B[i] = 0.0
            span = T.min(valid, bound)
            for i in T.Parallel(span):
                B[i] = A[i] - 1.0

    return main


def leading_rows(M, N, dtype="float32"):
    """The first ``T.min(rows, M)`` rows of A, doubled, into C; the other rows of C keep their values."""
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), rows: T.int32, C: T.Tensor((M, N), dtype)):
        with T.Kernel(1, threads=128) as _:
            for i, j in T.Parallel(T.min(rows, M), N):
                C[i, j] = A[i, j] * 2.0

    return main


def unbounded(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), valid: T.int32, B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as _:
            for i in T.Parallel(valid):  # LINE: unbounded_parallel
                B[i] = A[i] + 1.0

    return main


@pytest.mark.parametrize("N, valid, bound", [(512, 200, None), (512, 0, None), (256, 256, None), (256, 1000, None),
                                             (96, 33, None), (100, 120, 128), (100, 64, 128)])
def test_the_valid_prefix_of_a_vector_is_written(N, valid, bound):
    artifacts = tilelang_tt.compile(prefix_minus_one(N, bound=bound))
    a = torch.randn(N, generator=torch.Generator().manual_seed(31))
    b = torch.as_tensor(artifacts.run(a, valid))
    ref = torch.zeros(N)
    ref[:valid] = a[:valid] - 1.0
    torch.testing.assert_close(b, ref)


@pytest.mark.parametrize("rows", [5, 32, 64])
def test_the_valid_rows_of_a_matrix_are_written(rows):
    artifacts = tilelang_tt.compile(leading_rows(32, 64))
    a = torch.randn(32, 64, generator=torch.Generator().manual_seed(32))
    c0 = torch.full((32, 64), 7.0)
    c = torch.as_tensor(artifacts.run(a, rows, c0.clone()))
    ref = c0.clone()
    ref[:rows] = a[:rows] * 2.0
    torch.testing.assert_close(c, ref)


def test_an_extent_without_a_bound_is_refused_at_the_loop():
    err = compile_error(unbounded(256))
    assert_diagnostic(err, "CheckKernelFormsTT", "T.Parallel over valid, an extent that depends on a dynamic size",
                      "unbounded_parallel", path=__file__, source=Path(__file__).read_text())
