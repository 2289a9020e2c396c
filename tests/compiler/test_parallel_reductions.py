"""Accumulations in a ``T.Parallel`` (issue 12, item 6: the gemv examples): ``v[r] += term(r, c)`` over a
2-D nest, the GPU way of summing a block's rows with every thread adding its element (into a
``T.alloc_reducer`` that ``T.finalize_reducer`` combines), is a ``T.reduce_sum`` of the terms along
the loop the vector does not name (LowerParallelReductionsTT). Run on the emulator against torch."""

import pytest
import tilelang
import tilelang.language as T
import torch
from tvm import tirx

import tilelang_tt
from tests.compiler.test_ops import assert_close, bf16
from tests.kernels import eltwise, lower_until, run_pass
from tests.passes.helpers import nodes

PASS = "LowerParallelReductionsTT"


def gemv(m, n, bm, bn, along="rows", reducer=True):
    """y = W x (``along="rows"``: each row's sum) or y = W^T x' (``"cols"``: each column's sum),
    accumulated element by element over a K loop of blocks."""

    @T.prim_func
    def main(W: T.Tensor((m, n), "bfloat16"), x: T.Tensor((n if along == "rows" else m,), "bfloat16"),
             y: T.Tensor((m if along == "rows" else n,), "float32")):
        with T.Kernel(T.ceildiv(m if along == "rows" else n, bm), threads=128) as b:
            if reducer:
                sums = T.alloc_reducer(bm, "float32", replication="all")
            else:
                sums = T.alloc_fragment((bm,), "float32")
            T.clear(sums)
            if along == "rows":
                for k in T.serial(T.ceildiv(n, bn)):
                    w = T.alloc_shared((bm, bn), "bfloat16")
                    v = T.alloc_shared((bn,), "bfloat16")
                    T.copy(W[b * bm, k * bn], w)
                    T.copy(x[k * bn], v)
                    for r, c in T.Parallel(bm, bn):
                        sums[r] += T.Cast("float32", w[r, c]) * T.Cast("float32", v[c])
            else:
                for k in T.serial(T.ceildiv(m, bn)):
                    w = T.alloc_shared((bn, bm), "bfloat16")
                    v = T.alloc_shared((bn,), "bfloat16")
                    T.copy(W[k * bn, b * bm], w)
                    T.copy(x[k * bn], v)
                    for r, c in T.Parallel(bn, bm):
                        sums[c] += T.Cast("float32", w[r, c]) * T.Cast("float32", v[r])
            if reducer:
                T.finalize_reducer(sums)
            T.copy(sums, y[b * bm])

    return main


@pytest.mark.parametrize("along,reducer,grid", [("rows", True, (1, 1)), ("rows", True, (2, 1)),
                                                ("rows", False, None), ("cols", False, (2, 1))])
def test_an_accumulation_over_a_parallel_nest_is_a_reduction(along, reducer, grid):
    w, x = bf16(128, 96, seed=1), bf16(96 if along == "rows" else 128, seed=2)
    art = tilelang_tt.compile(gemv(128, 96, 64, 32, along, reducer), **({"grid": grid} if grid else {}))
    out = torch.as_tensor(art.run(w, x))
    ref = w.float() @ x.float() if along == "rows" else w.float().T @ x.float()
    assert_close(out, ref, 2.0 ** -10)


def test_the_nest_becomes_terms_a_reduce_and_an_add():
    before = lower_until(gemv(64, 64, 64, 32), PASS)
    after = run_pass(before, PASS)["main"]
    reduces = nodes(after.body, lambda n: isinstance(n, tirx.Evaluate) and isinstance(n.value, tirx.Call)
                    and n.value.op.name == "tl.tileop.reduce")
    assert len(reduces) == 1
    src, dst, kind, dim, clear = reduces[0].value.args
    assert (src.args[0].buffer.name, dst.args[0].buffer.name, kind.value, int(dim), bool(clear)) == (
        "sums_terms", "sums_sum", "sum", 1, True)
    assert not nodes(after.body, lambda n: isinstance(n, tirx.Evaluate) and isinstance(n.value, tirx.Call)
                     and n.value.op.name == "tl.tileop.finalize_reducer")


def test_a_nest_storing_every_element_is_unchanged():
    before = lower_until(eltwise("add", 64, 64, 32, 32), PASS)
    assert run_pass(before, PASS)["main"].same_as(before["main"])


def row_stats(m, n, bm, bn, dtype="bfloat16"):
    """Per row of X: the dot product with Y, the sum of squares of X and the maximum of X, three
    accumulations (named scalars, sum and max) in one nest per K step; the dot starts from a bias the
    kernel copies in, the maximum from -inf, the squares from T.clear."""

    @T.prim_func
    def main(X: T.Tensor((m, n), dtype), Y: T.Tensor((m, n), dtype), Bias: T.Tensor((m,), "float32"),
             Dot: T.Tensor((m,), "float32"), Sq: T.Tensor((m,), "float32"), Mx: T.Tensor((m,), "float32")):
        with T.Kernel(T.ceildiv(m, bm), threads=128) as b:
            xs = T.alloc_shared((bm, bn), dtype)
            ys = T.alloc_shared((bm, bn), dtype)
            dot = T.alloc_fragment((bm,), "float32")
            sq = T.alloc_fragment((bm,), "float32")
            mx = T.alloc_fragment((bm,), "float32")
            T.copy(Bias[b * bm], dot)
            T.clear(sq)
            T.fill(mx, -T.infinity("float32"))
            for k in T.Pipelined(T.ceildiv(n, bn), num_stages=2):
                T.copy(X[b * bm, k * bn], xs)
                T.copy(Y[b * bm, k * bn], ys)
                for i, j in T.Parallel(bm, bn):
                    x = T.Cast("float32", xs[i, j])
                    dot[i] += x * T.Cast("float32", ys[i, j])
                    sq[i] = sq[i] + x * x
                    mx[i] = T.max(mx[i], x)
            T.copy(dot, Dot[b * bm])
            T.copy(sq, Sq[b * bm])
            T.copy(mx, Mx[b * bm])

    return main


@pytest.mark.parametrize("m,n,bm,bn", [(64, 96, 32, 32), (128, 64, 64, 64)])
def test_several_accumulations_in_one_nest_are_reductions(m, n, bm, bn):
    x, y = bf16(m, n, seed=3), bf16(m, n, seed=4)
    bias = torch.randn(m, generator=torch.Generator().manual_seed(5))
    dot, sq, mx = (torch.as_tensor(o) for o in tilelang_tt.compile(row_stats(m, n, bm, bn)).run(x, y, bias))
    assert_close(dot, bias + (x.float() * y.float()).sum(1), 2.0 ** -10)
    assert_close(sq, (x.float() ** 2).sum(1), 2.0 ** -10)
    assert torch.equal(mx, x.float().amax(1))


def column_min(m, n, bm):
    """Each column's minimum over all rows, ``T.min`` accumulated element by element over row blocks,
    into a vector that starts as a tensor's values (a running minimum carried in, no T.fill)."""

    @T.prim_func
    def main(A: T.Tensor((m, n), "float32"), Init: T.Tensor((n,), "float32"), Out: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=128) as _:
            a = T.alloc_shared((bm, n), "float32")
            lo = T.alloc_fragment((n,), "float32")
            T.copy(Init[0], lo)
            for k in T.serial(m // bm):
                T.copy(A[k * bm, 0], a)
                for r, c in T.Parallel(bm, n):
                    lo[c] = T.min(a[r, c], lo[c])
            T.copy(lo, Out[0])

    return main


def test_a_min_accumulation_along_the_rows_is_a_column_reduction():
    # values of bfloat16 precision: a float32 block's extrema are those of its TF32 values (docs/numerics.md)
    a = bf16(96, 64, seed=6).float()
    init = bf16(64, seed=7).float() - 1.5
    out = torch.as_tensor(tilelang_tt.compile(column_min(96, 64, 32)).run(a, init))
    assert torch.equal(out, torch.minimum(a.amin(0), init))
