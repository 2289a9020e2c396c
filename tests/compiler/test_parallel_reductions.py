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
