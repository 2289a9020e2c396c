"""Views of on-chip blocks (T.reshape of a fragment or a shared block: LowerBlockViewsTT), run on the emulator
against torch: per-group reductions of an [m, g, s] view of an [m, g * s] block along its last dimension (DeepSeek
TileKernels' per-token cast: T.reduce_absmax of the reshaped fragment), element accesses of a view in T.Parallel;
a copy between a tensor and a view that regroups the block's elements is refused at its line with the form that
compiles."""

import pytest
import tilelang  # noqa: F401
import tilelang.language as T
import torch

from tests.compiler.test_negative import compile_error
from tests.compiler.test_ops import assert_close, run

torch.manual_seed(0)

SOURCE = open(__file__).read()
REDUCE = {"absmax": T.reduce_absmax, "max": T.reduce_max, "sum": T.reduce_sum, "min": T.reduce_min,
          "abssum": T.reduce_abssum}


def line_of(marker: str) -> int:
    return next(i for i, text in enumerate(SOURCE.splitlines(), 1) if text.rstrip().endswith(f"# LINE: {marker}"))


def group_reduce(kind, M=32, G=2, S=128, dtype="bfloat16"):
    """O[m, g] = reduce over s of X[m, g * S + s]: the reduction of the block's [M, G, S] view along S."""

    @T.prim_func
    def main(X: T.Tensor((M, G * S), dtype), O: T.Tensor((M, G), "float32")):
        with T.Kernel(1, threads=128) as bx:
            x = T.alloc_fragment((M, G * S), dtype)
            r = T.alloc_fragment((M, G), dtype)
            o = T.alloc_fragment((M, G), "float32")
            T.copy(X[0, 0], x)
            REDUCE[kind](T.reshape(x, [M, G, S]), r, dim=2)
            for i, j in T.Parallel(M, G):
                o[i, j] = T.Cast("float32", r[i, j])
            T.copy(o, O[0, 0])

    return main


def _reference(kind, x, G):
    groups = x.float().reshape(x.shape[0], G, -1)
    return {"absmax": lambda: groups.abs().amax(2), "max": lambda: groups.amax(2), "min": lambda: groups.amin(2),
            "sum": lambda: groups.sum(2), "abssum": lambda: groups.abs().sum(2)}[kind]()


@pytest.mark.parametrize("kind, G", [("absmax", 2), ("max", 3), ("sum", 2), ("min", 2), ("abssum", 1)])
def test_a_reduction_of_a_view_along_its_groups(kind, G):
    x = torch.randn(32, G * 128).to(torch.bfloat16)
    out, _ = run(group_reduce(kind, G=G), x)
    assert_close(out, _reference(kind, x, G), 2.0**-7)


def view_elements(M=32, N=128):
    """Y[i, j] = 2 * X[i, j], the fragment written through its [M, 1, N] view (T.reshape adding a unit
    dimension), element by element."""

    @T.prim_func
    def main(X: T.Tensor((M, N), "bfloat16"), Y: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(1, threads=128) as bx:
            x = T.alloc_fragment((M, N), "bfloat16")
            T.copy(X[0, 0], x)
            rows = T.reshape(x, [M, 1, N])
            for i, k in T.Parallel(M, N):
                rows[i, 0, k] = rows[i, 0, k] * 2.0
            T.copy(x, Y[0, 0])

    return main


def test_elements_of_a_view_are_the_blocks_elements():
    x = torch.randn(32, 128).to(torch.bfloat16)
    out, _ = run(view_elements(), x)
    assert_close(out, x.float() * 2, 2.0**-7)


def copy_regrouped(N=2048, M=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "bfloat16"), B: T.Tensor((N // M, M), "bfloat16")):
        with T.Kernel(1) as _:
            A_shared = T.alloc_shared((N,), "bfloat16")
            for i in T.Parallel(N):
                A_shared[i] = A[i]
            T.copy(T.reshape(A_shared, [N // M, M]), B)  # LINE: copy_regrouped

    return main


def copy_in_its_shape(N=2048, M=64):
    """The form the refusal of ``copy_regrouped`` gives: the tensor passed in the shape the block is copied in."""
    @T.prim_func
    def main(A: T.Tensor((N // M, M), "bfloat16"), B: T.Tensor((N // M, M), "bfloat16")):
        with T.Kernel(1) as _:
            A_shared = T.alloc_shared((N // M, M), "bfloat16")
            T.copy(A, A_shared)
            T.copy(A_shared, B)

    return main


def test_a_copy_of_a_regrouping_view_into_a_tensor_is_refused_with_the_form_that_compiles():
    err = compile_error(copy_regrouped())
    assert err.pass_name == "LowerBlockViewsTT" and err.location[1] == line_of("copy_regrouped")
    assert "regroups its elements" in err.message and "A_shared" in err.hint and "on the host" in err.hint
    a = torch.randn(2048).to(torch.bfloat16)
    out, _ = run(copy_in_its_shape(), a.reshape(32, 64))
    assert_close(out, a.float().reshape(32, 64), 0.0)
