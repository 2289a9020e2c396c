"""LowerParallelReductionsTT alone: a T.Parallel nest accumulating into a vector indexed by one of
its two loops becomes the block of the terms, its T.reduce_sum along the other loop and the add of
that vector; T.finalize_reducer goes; other nests are left as they are. The examples that need it
(gemv_alloc_reducer) run in tests/examples."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.passes.helpers import names, tl
from tilelang_tt.passes.lower_parallel_reductions_tt import LowerParallelReductionsTT

PASS = "LowerParallelReductionsTT"


def test_registered_under_its_name():
    assert LowerParallelReductionsTT().info.name == PASS


def test_hand_written_row_sums_become_a_reduction_along_the_columns():
    """gemv's ``sums[r] += w[r, c] * x[c]``: the terms (cast to the vector's float32) fill
    ``sums_terms``, T.reduce_sum along dimension 1 (the columns, the loop the vector does not
    index) gives ``sums_sum``, added to ``sums`` by row; both blocks are allocated beside the
    kernel's, and T.finalize_reducer (a combine across GPU threads) goes."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(W: T.Buffer((32, 64), "bfloat16"), X: T.Buffer((64,), "bfloat16"), Y: T.Buffer((32,), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    w = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="shared.dyn")
                    x = T.sblock_alloc_buffer((64,), "bfloat16", scope="shared.dyn")
                    sums = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(W[0, 0], 1, 32, 64), tl.region(w[0, 0], 2, 32, 64))
                    tl.tileop.copy(tl.region(X[0], 1, 64), tl.region(x[0], 2, 64))
                    tl.tileop.fill(tl.region(sums[0], 2, 32), 0)
                    for r in T.parallel(32):
                        for c in T.parallel(64):
                            sums[r] = sums[r] + T.Cast("float32", w[r, c] * x[c])
                    tl.tileop.finalize_reducer(tl.region(sums[0], 2, 32))
                    tl.tileop.copy(tl.region(sums[0], 1, 32), tl.region(Y[0], 2, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(W: T.Buffer((32, 64), "bfloat16"), X: T.Buffer((64,), "bfloat16"), Y: T.Buffer((32,), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    w = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="shared.dyn")
                    x = T.sblock_alloc_buffer((64,), "bfloat16", scope="shared.dyn")
                    sums = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    sums_terms = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    sums_sum = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(W[0, 0], 1, 32, 64), tl.region(w[0, 0], 2, 32, 64))
                    tl.tileop.copy(tl.region(X[0], 1, 64), tl.region(x[0], 2, 64))
                    tl.tileop.fill(tl.region(sums[0], 2, 32), 0)
                    for r in T.parallel(32):
                        for c in T.parallel(64):
                            sums_terms[r, c] = T.Cast("float32", w[r, c] * x[c])
                    tl.tileop.reduce(tl.region(sums_terms[0, 0], 1, 32, 64), tl.region(sums_sum[0], 2, 32), "sum", 1,
                                     T.bool(True))
                    for r in T.parallel(32):
                        sums[r] = sums[r] + sums_sum[r]
                    tl.tileop.copy(tl.region(sums[0], 1, 32), tl.region(Y[0], 2, 32))

    after = LowerParallelReductionsTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)  # assert_structural_equal ignores names


def test_hand_written_column_sums_reduce_along_the_rows():
    """The vector indexed by the inner loop: ``s[c] += a[r, c]`` sums along dimension 0; the terms
    are already float32, so no cast; the new names are unique (``s_sum`` is taken: ``s_sum1``)."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "float32"), S: T.Buffer((64,), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((32, 64), "float32", scope="shared.dyn")
                    s = T.sblock_alloc_buffer((64,), "float32", scope="local.fragment")
                    s_sum = T.sblock_alloc_buffer((64,), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(A[0, 0], 1, 32, 64), tl.region(a[0, 0], 2, 32, 64))
                    tl.tileop.fill(tl.region(s[0], 2, 64), 0)
                    for r in T.parallel(32):
                        for c in T.parallel(64):
                            s[c] = a[r, c] * a[r, c] + s[c]
                    tl.tileop.copy(tl.region(s[0], 1, 64), tl.region(S[0], 2, 64))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "float32"), S: T.Buffer((64,), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((32, 64), "float32", scope="shared.dyn")
                    s = T.sblock_alloc_buffer((64,), "float32", scope="local.fragment")
                    s_sum = T.sblock_alloc_buffer((64,), "float32", scope="local.fragment")
                    s_terms = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    s_sum1 = T.sblock_alloc_buffer((64,), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(A[0, 0], 1, 32, 64), tl.region(a[0, 0], 2, 32, 64))
                    tl.tileop.fill(tl.region(s[0], 2, 64), 0)
                    for r in T.parallel(32):
                        for c in T.parallel(64):
                            s_terms[r, c] = a[r, c] * a[r, c]
                    tl.tileop.reduce(tl.region(s_terms[0, 0], 1, 32, 64), tl.region(s_sum1[0], 2, 64), "sum", 0,
                                     T.bool(True))
                    for c in T.parallel(64):
                        s[c] = s[c] + s_sum1[c]
                    tl.tileop.copy(tl.region(s[0], 1, 64), tl.region(S[0], 2, 64))

    after = LowerParallelReductionsTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_hand_written_element_wise_nest_is_left_as_it_is():
    """A store indexed by both loops is element-wise, not an accumulation: nothing changes."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "float32"), C: T.Buffer((32, 64), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((32, 64), "float32", scope="shared.dyn")
                    c_l = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(A[0, 0], 1, 32, 64), tl.region(a[0, 0], 2, 32, 64))
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            c_l[i, j] = c_l[i, j] + a[i, j]
                    tl.tileop.copy(tl.region(c_l[0, 0], 1, 32, 64), tl.region(C[0, 0], 2, 32, 64))

    tvm.ir.assert_structural_equal(LowerParallelReductionsTT()(Before), Before)


def test_hand_written_nest_of_three_accumulations_and_named_scalars():
    """KernelBench's cosine similarity: named scalars (``val_p = T.Cast(...)``) and three accumulations
    in one nest: the scalars are substituted, one nest stores the three blocks of terms in order, then
    each vector gets its T.reduce_sum and its add, in the order of the accumulations."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(P: T.Buffer((32, 64), "bfloat16"), Q: T.Buffer((32, 64), "bfloat16")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    p = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="shared.dyn")
                    q = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="shared.dyn")
                    dot = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    pp = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(P[0, 0], 1, 32, 64), tl.region(p[0, 0], 2, 32, 64))
                    tl.tileop.copy(tl.region(Q[0, 0], 1, 32, 64), tl.region(q[0, 0], 2, 32, 64))
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            vp: T.float32 = T.Cast("float32", p[i, j])
                            dot[i] = dot[i] + vp * T.Cast("float32", q[i, j])
                            pp[i] = vp * vp + pp[i]

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(P: T.Buffer((32, 64), "bfloat16"), Q: T.Buffer((32, 64), "bfloat16")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    p = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="shared.dyn")
                    q = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="shared.dyn")
                    dot = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    pp = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    dot_terms = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    dot_sum = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    pp_terms = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    pp_sum = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(P[0, 0], 1, 32, 64), tl.region(p[0, 0], 2, 32, 64))
                    tl.tileop.copy(tl.region(Q[0, 0], 1, 32, 64), tl.region(q[0, 0], 2, 32, 64))
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            dot_terms[i, j] = T.Cast("float32", p[i, j]) * T.Cast("float32", q[i, j])
                            pp_terms[i, j] = T.Cast("float32", p[i, j]) * T.Cast("float32", p[i, j])
                    tl.tileop.reduce(tl.region(dot_terms[0, 0], 1, 32, 64), tl.region(dot_sum[0], 2, 32), "sum", 1,
                                     T.bool(True))
                    for i in T.parallel(32):
                        dot[i] = dot[i] + dot_sum[i]
                    tl.tileop.reduce(tl.region(pp_terms[0, 0], 1, 32, 64), tl.region(pp_sum[0], 2, 32), "sum", 1,
                                     T.bool(True))
                    for i in T.parallel(32):
                        pp[i] = pp[i] + pp_sum[i]

    after = LowerParallelReductionsTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_hand_written_max_and_min_accumulations_keep_the_element_wise_store():
    """``m[c] = T.max(m[c], a[r, c])`` reduces with "max" along the rows, ``n[c] = T.min(a[r, c], n[c])``
    with "min", each combined back with its own op; the element-wise store of the same nest stays in
    the nest, between the terms, in its place."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((32, 64), "float32", scope="shared.dyn")
                    b = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    m = T.sblock_alloc_buffer((64,), "float32", scope="local.fragment")
                    n = T.sblock_alloc_buffer((64,), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(A[0, 0], 1, 32, 64), tl.region(a[0, 0], 2, 32, 64))
                    for r in T.parallel(32):
                        for c in T.parallel(64):
                            m[c] = T.max(m[c], a[r, c])
                            b[r, c] = a[r, c] * T.float32(2)
                            n[c] = T.min(a[r, c], n[c])

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((32, 64), "float32", scope="shared.dyn")
                    b = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    m = T.sblock_alloc_buffer((64,), "float32", scope="local.fragment")
                    n = T.sblock_alloc_buffer((64,), "float32", scope="local.fragment")
                    m_terms = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    m_max = T.sblock_alloc_buffer((64,), "float32", scope="local.fragment")
                    n_terms = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    n_min = T.sblock_alloc_buffer((64,), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(A[0, 0], 1, 32, 64), tl.region(a[0, 0], 2, 32, 64))
                    for r in T.parallel(32):
                        for c in T.parallel(64):
                            m_terms[r, c] = a[r, c]
                            b[r, c] = a[r, c] * T.float32(2)
                            n_terms[r, c] = a[r, c]
                    tl.tileop.reduce(tl.region(m_terms[0, 0], 1, 32, 64), tl.region(m_max[0], 2, 64), "max", 0,
                                     T.bool(True))
                    for c in T.parallel(64):
                        m[c] = T.max(m[c], m_max[c])
                    tl.tileop.reduce(tl.region(n_terms[0, 0], 1, 32, 64), tl.region(n_min[0], 2, 64), "min", 0,
                                     T.bool(True))
                    for c in T.parallel(64):
                        n[c] = T.min(n[c], n_min[c])

    after = LowerParallelReductionsTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


def test_hand_written_nest_reading_its_accumulator_is_left_as_it_is():
    """A store that reads the vector being accumulated in the same nest (``y[i, j] = s[i]``) sees a
    partial sum on a GPU: no reduction has that meaning, the nest is left for C2 to refuse."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((32, 64), "float32", scope="shared.dyn")
                    y = T.sblock_alloc_buffer((32, 64), "float32", scope="local.fragment")
                    s = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(A[0, 0], 1, 32, 64), tl.region(a[0, 0], 2, 32, 64))
                    for i in T.parallel(32):
                        for j in T.parallel(64):
                            s[i] = s[i] + a[i, j]
                            y[i, j] = s[i]

    tvm.ir.assert_structural_equal(LowerParallelReductionsTT()(Before), Before)
