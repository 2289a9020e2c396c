"""Every reduction and scan TileLang has, on the emulator against torch (ops/reduce.py, ops/scan.py):
``T.reduce_sum/max/min/abssum/absmax`` along either dimension, with and without ``clear``, of fragments
and shared blocks, bfloat16 and float32; ``T.cumsum`` along either dimension, forward and reversed, in
place and into another block; kernels written as TileLang's own tests and its users write them.

Tolerances (docs/numerics.md): a reduction reads its block through the source registers, where a
bfloat16 datum is exact and a float32 one is truncated to TF32 (10 mantissa bits; 9 where the matrix
unit multiplies it in SrcA): maxima and minima of bfloat16 blocks are exact, and of float32 blocks
those of the truncated values; sums are float32 sums (fp32 DST) in another order, within 2^-12 of
the largest, plus the truncation of each float32 term.
"""

import pytest
import torch
import tilelang  # noqa: F401
import tilelang.language as T

import tilelang_tt
from tilelang_tt import TTCompileError

KINDS = ("sum", "max", "min", "abssum", "absmax")
REDUCE = {"sum": T.reduce_sum, "max": T.reduce_max, "min": T.reduce_min, "absmax": T.reduce_absmax}


def reduce_into(kind, src, dst, dim, clear):
    """``T.reduce_<kind>(src, dst, dim=dim, clear=clear)``; T.reduce_abssum takes no ``clear`` (it
    clears), so its accumulating form is ``T.reduce(src, dst, "abssum", dim, False)``."""
    if kind == "abssum":
        if clear:
            T.reduce_abssum(src, dst, dim=dim)
        else:
            T.reduce(src, dst, "abssum", dim % 2, False)
    else:
        REDUCE[kind](src, dst, dim=dim, clear=clear)


def reduction(kind, dim, M, N, dtype="bfloat16", clear=True, src_scope="fragment", dst_scope="fragment"):
    """R = reduce_<kind>(A, dim) of one block, as TileLang's reduce tests write it (src and dst in
    fragments or shared blocks); without ``clear`` combined with the old value R0."""
    n = M if dim % 2 == 1 else N

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), R0: T.Tensor((n,), "float32"), R: T.Tensor((n,), "float32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((M, N), dtype)
            A_f = T.alloc_fragment((M, N), dtype)
            old = T.alloc_shared((n,), "float32")
            r_f = T.alloc_fragment((n,), "float32")
            r_s = T.alloc_shared((n,), "float32")
            T.copy(A, A_s)
            if not clear:
                T.copy(R0, old)
                if dst_scope == "fragment":
                    T.copy(old, r_f)
                else:
                    T.copy(old, r_s)
            if src_scope == "fragment":
                T.copy(A_s, A_f)
            if dst_scope == "fragment":
                reduce_into(kind, A_f if src_scope == "fragment" else A_s, r_f, dim, clear)
                T.copy(r_f, R)
            else:
                reduce_into(kind, A_f if src_scope == "fragment" else A_s, r_s, dim, clear)
                T.copy(r_s, R)

    return main


def tf32(x: torch.Tensor) -> torch.Tensor:
    """``x`` as the source registers hold it: float32 truncated to TF32 (10 mantissa bits)."""
    bits = x.float().contiguous().view(torch.int32)
    return (bits & -(1 << 13)).view(torch.float32)


def reference(kind, x, dim, old=None):
    d = dim % 2
    x = x.abs() if kind.startswith("abs") else x
    out = x.sum(d) if kind.endswith("sum") else x.amax(d) if kind.endswith("max") else x.amin(d)
    if old is None:
        return out
    return out + old if kind.endswith("sum") else torch.maximum(out, old) if kind.endswith("max") \
        else torch.minimum(out, old)


def data(M, N, dtype, seed):
    return torch.randn(M, N, generator=torch.Generator().manual_seed(seed)).to(getattr(torch, dtype))


def check(kind, out, a, dim, old, dtype):
    """Extrema exactly those of the values as the source registers read them; sums within 2^-12 of
    the largest (summation order), plus the truncation of each float32 term."""
    x = a.float() if dtype == "bfloat16" else tf32(a)
    ref = reference(kind, x, dim, old)
    if not kind.endswith("sum"):
        assert torch.equal(out, ref), (out - ref).abs().max()
        return
    bound = 2.0 ** -12 * max(ref.abs().max().item(), 1.0)
    if dtype == "float32":  # a column sum multiplies each datum in SrcA, which reads 9 of TF32's 10 bits
        bound += 2.0 ** -9 * a.float().abs().sum(dim % 2).max().item()
    assert (out - ref).abs().max().item() <= bound


def run(kernel, *inputs):
    artifacts = tilelang_tt.compile(kernel)
    return torch.as_tensor(artifacts.run(*inputs)).float(), artifacts


@pytest.mark.parametrize("clear", [True, False])
@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("kind", KINDS)
def test_each_reduction_along_each_dimension(kind, dim, clear):
    M, N = 64, 96
    a = data(M, N, "bfloat16", seed=1)
    old = torch.randn(M if dim == 1 else N, generator=torch.Generator().manual_seed(2))
    out, artifacts = run(reduction(kind, dim, M, N, clear=clear), a, old)
    check(kind, out, a, dim, None if clear else old, "bfloat16")
    compute = artifacts.get_source("compute")
    assert "reduce_tile" in compute
    # min is -max(-x): the block negated, the maxima negated back and combined by min
    assert ("binary_min_tile" in compute) == (kind == "min" and not clear)
    assert ("abs_tile" in compute) == kind.startswith("abs")


@pytest.mark.parametrize("kind", ["min", "absmax", "sum"])
def test_dim_minus_one_is_along_the_rows(kind):
    a = data(64, 64, "bfloat16", seed=3)
    out, _ = run(reduction(kind, -1, 64, 64), a, torch.zeros(64))
    check(kind, out, a, 1, None, "bfloat16")


@pytest.mark.parametrize("kind,dim,dtype,src_scope,dst_scope,clear", [
    ("sum", 1, "float32", "shared", "shared", True),
    ("max", 0, "float32", "shared", "shared", False),
    ("min", 1, "float32", "fragment", "shared", False),
    ("abssum", 0, "float32", "fragment", "shared", True),
    ("absmax", 1, "float32", "shared", "fragment", False),
    ("min", 0, "bfloat16", "shared", "shared", True),
    ("abssum", 1, "bfloat16", "shared", "fragment", False),
    ("absmax", 0, "bfloat16", "fragment", "shared", True),
])
def test_reductions_of_shared_blocks_and_float32(kind, dim, dtype, src_scope, dst_scope, clear):
    """TileLang's scope combinations (its reduce tests' src_scope x dst_scope): a shared source or
    result is copied into a fragment and back around the reduction (tilelang's reduce macro)."""
    M, N = 64, 64
    a = data(M, N, dtype, seed=4)
    old = torch.randn(M if dim == 1 else N, generator=torch.Generator().manual_seed(5))
    out, _ = run(reduction(kind, dim, M, N, dtype, clear, src_scope, dst_scope), a, old)
    check(kind, out, a, dim, None if clear else old, dtype)


def row_minimum_as_a_column(M, N):
    """The result as TileLang's other output shape, (M, 1) for a reduction along dim 1."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), R: T.Tensor((M, 1), "float32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((M, N), "bfloat16")
            r = T.alloc_fragment((M, 1), "float32")
            T.copy(A, A_s)
            T.reduce_min(A_s, r, dim=1)
            T.copy(r, R)

    return main


def test_a_result_of_shape_m_by_1():
    a = data(64, 64, "bfloat16", seed=14)
    out, _ = run(row_minimum_as_a_column(64, 64), a)
    assert torch.equal(out, a.float().amin(1, keepdim=True))


def absmax_quantize(M, N, bm, fp8_max=448.0):
    """Per-row FP8 quantization scales, as DeepSeek's and TileLang's act_quant examples write them:
    amax = max |x| along each row (at least a small floor), scale = amax / 448, y = x / scale."""

    @T.prim_func
    def main(X: T.Tensor((M, N), "bfloat16"), Y: T.Tensor((M, N), "float32"), S: T.Tensor((M, 1), "float32")):
        with T.Kernel(1, T.ceildiv(M, bm), threads=128) as (bx, by):
            x_s = T.alloc_shared((bm, N), "bfloat16")
            x_f = T.alloc_fragment((bm, N), "float32")
            amax = T.alloc_fragment((bm,), "float32")
            s_f = T.alloc_fragment((bm, 1), "float32")
            y_f = T.alloc_fragment((bm, N), "float32")
            T.copy(X[by * bm, 0], x_s)
            T.copy(x_s, x_f)
            T.reduce_absmax(x_f, amax, dim=1)
            for i in T.Parallel(bm):
                amax[i] = T.max(amax[i], 1e-4)
                s_f[i, 0] = amax[i] / fp8_max
            for i, j in T.Parallel(bm, N):
                y_f[i, j] = x_f[i, j] / s_f[i, 0]
            T.copy(y_f, Y[by * bm, 0])
            T.copy(s_f, S[by * bm, 0])

    return main


def test_absmax_quantization_scale():
    x = data(128, 256, "bfloat16", seed=6)
    artifacts = tilelang_tt.compile(absmax_quantize(128, 256, 32))
    y, s = (torch.as_tensor(o).float() for o in artifacts.run(x))
    amax = x.float().abs().amax(1, keepdim=True).clamp_min(1e-4)
    assert torch.allclose(s, amax / 448.0, rtol=2.0 ** -22, atol=0)  # amax exact, the division in fp32 (SFPU)
    assert torch.allclose(y, x.float() / (amax / 448.0), rtol=2.0 ** -20, atol=0)
    assert y.abs().max().item() <= 448.0 * (1 + 2.0 ** -20)


def min_max_normalize(M, N, bn):
    """Columns scaled to [0, 1]: (x - min) / (max - min) along each column (dim=0)."""

    @T.prim_func
    def main(X: T.Tensor((M, N), "bfloat16"), Y: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), 1, threads=128) as (bx, by):
            x_s = T.alloc_shared((M, bn), "bfloat16")
            lo = T.alloc_fragment((bn,), "float32")
            hi = T.alloc_fragment((bn,), "float32")
            y_f = T.alloc_fragment((M, bn), "float32")
            T.copy(X[0, bx * bn], x_s)
            T.reduce_min(x_s, lo, dim=0)
            T.reduce_max(x_s, hi, dim=0)
            for i, j in T.Parallel(M, bn):
                y_f[i, j] = (x_s[i, j] - lo[j]) / (hi[j] - lo[j])
            T.copy(y_f, Y[0, bx * bn])

    return main


def test_min_max_normalization_along_columns():
    x = data(64, 128, "bfloat16", seed=7).float()
    out, _ = run(min_max_normalize(64, 128, 64), x.to(torch.bfloat16))
    lo, hi = x.amin(0), x.amax(0)
    ref = (x - lo) / (hi - lo)
    assert out.min().item() == 0.0 and torch.allclose(out, ref, rtol=2.0 ** -20, atol=2.0 ** -22)


def running_extrema(kind, M, N, bm, bn, stages=2):
    """A row minimum or absolute sum carried over a pipelined loop along the rows (clear=False)."""
    start = T.infinity("float32") if kind == "min" else 0.0

    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), R: T.Tensor((M,), "float32")):
        with T.Kernel(1, T.ceildiv(M, bm), threads=128) as (bx, by):
            a_s = T.alloc_shared((bm, bn), "bfloat16")
            acc = T.alloc_fragment((bm,), "float32")
            T.fill(acc, start)
            for k in T.Pipelined(T.ceildiv(N, bn), num_stages=stages):
                T.copy(A[by * bm, k * bn], a_s)
                reduce_into(kind, a_s, acc, 1, False)
            T.copy(acc, R[by * bm])

    return main


@pytest.mark.parametrize("kind", ["min", "abssum", "absmax"])
def test_reduction_carried_across_a_pipelined_loop(kind):
    a = data(64, 256, "bfloat16", seed=8)
    out, _ = run(running_extrema(kind, 64, 256, 32, 64), a)
    check(kind, out, a, 1, None, "bfloat16")


def reduce_unit(kind, dim, n, clear):
    """A reduction along an extent of 1 ([n, 1] along dim 1, [1, n] along dim 0): each result its one
    element, its absolute value for the abs kinds, combined with 0.25 without ``clear``."""
    shape = (n, 1) if dim == 1 else (1, n)

    @T.prim_func
    def main(X: T.Tensor(shape, "float32"), R: T.Tensor((n,), "float32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            X_s = T.alloc_shared(shape, "float32")
            acc = T.alloc_fragment((n,), "float32")
            T.copy(X[0, 0], X_s)
            if not clear:
                T.fill(acc, 0.25)
            reduce_into(kind, X_s, acc, dim, clear)
            T.copy(acc, R[0])

    return main


@pytest.mark.parametrize("kind,dim,clear", [("min", 1, False), ("abssum", 0, True), ("absmax", 1, False),
                                            ("abssum", 1, False), ("min", 0, True)])
def test_a_reduction_along_an_extent_of_one_is_each_element(kind, dim, clear):
    x = torch.randn(*((32, 1) if dim == 1 else (1, 32)), generator=torch.Generator().manual_seed(9))
    out, artifacts = run(reduce_unit(kind, dim, 32, clear), x)
    ref = reference(kind, x, dim, None if clear else torch.full((32,), 0.25))
    assert torch.equal(out, ref)
    assert "reduce_tile" not in artifacts.get_source("compute")


def ragged_rows(kind, M, N, bn):
    """A reduction along rows of blocks wider than what is left of the tensor (N not a multiple of bn):
    the reader pads each block's columns with zeros."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), R: T.Tensor((M,), "float32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            a_s = T.alloc_shared((M, bn), "bfloat16")
            acc = T.alloc_fragment((M,), "float32")
            T.fill(acc, 0.0)
            for k in T.Pipelined(T.ceildiv(N, bn), num_stages=2):
                T.copy(A[0, k * bn], a_s)
                reduce_into(kind, a_s, acc, 1, False)
            T.copy(acc, R[0])

    return main


def test_absolute_sums_reduce_zero_padding_and_minima_refuse_it():
    """|0| = 0 keeps the reader's zero padding (CheckPaddingTT's analysis): an absolute sum
    over it is exact; a minimum (and a maximum) would take the zeros."""
    a = data(64, 80, "bfloat16", seed=17)
    out, _ = run(ragged_rows("abssum", 64, 80, 64), a)
    check("abssum", out, a, 1, None, "bfloat16")
    with pytest.raises(TTCompileError, match="the padding would enter the result"):
        tilelang_tt.compile(ragged_rows("min", 64, 80, 64))


# -- T.cumsum --------------------------------------------------------------------------------------
def cumsum_smem(M, N, block_M, block_N, dim=0, reverse=False, dtype="bfloat16"):
    """TileLang's test_tilelang_language_cumsum.py ``cumsum_smem_test``: a shared block scanned in place."""

    @T.prim_func
    def cumsum(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_N), dtype)
            T.copy(A[by * block_M, bx * block_N], A_shared)
            T.cumsum(src=A_shared, dim=dim, reverse=reverse)
            T.copy(A_shared, B[by * block_M, bx * block_N])

    return cumsum


def cumsum_fragment(M, N, block_M, block_N, dim=0, reverse=False, dtype="bfloat16"):
    """TileLang's ``cumsum_fragment_test``: a fragment scanned in place (TileLang scans a shared copy)."""

    @T.prim_func
    def cumsum(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_N), dtype)
            A_fragment = T.alloc_fragment((block_M, block_N), dtype)
            T.copy(A[by * block_M, bx * block_N], A_shared)
            T.copy(A_shared, A_fragment)
            T.cumsum(src=A_fragment, dim=dim, reverse=reverse)
            T.copy(A_fragment, B[by * block_M, bx * block_N])

    return cumsum


def cumsum_reference(a, block_M, block_N, dim, reverse):
    """TileLang's ref_program: each block's cumsum along ``dim`` (of the flipped block with ``reverse``)."""
    ref = torch.empty_like(a)
    for i in range(0, a.shape[0], block_M):
        for j in range(0, a.shape[1], block_N):
            blk = a[i:i + block_M, j:j + block_N]
            ref[i:i + block_M, j:j + block_N] = blk.flip(dims=[dim]).cumsum(dim).flip(dims=[dim]) if reverse \
                else blk.cumsum(dim)
    return ref


@pytest.mark.parametrize("scope", ["smem", "fragment"])
@pytest.mark.parametrize("dim,reverse", [(0, False), (1, False), (1, True), (0, True)])
def test_cumsum_bfloat16(scope, dim, reverse):
    """bfloat16 blocks of 2 x 4 tiles (the scan along dim 1 crosses tiles): exactly torch's float32
    cumsum rounded once to bfloat16."""
    M, N, bm, bn = 128, 256, 64, 128
    a = data(M, N, "bfloat16", seed=10)
    make = cumsum_smem if scope == "smem" else cumsum_fragment
    out, artifacts = run(make(M, N, bm, bn, dim, reverse), a)
    ref = cumsum_reference(a.float(), bm, bn, dim, reverse).to(torch.bfloat16).float()
    assert torch.equal(out, ref)
    assert "matmul_block" in artifacts.get_source("compute")


@pytest.mark.parametrize("scope,dim,reverse", [("smem", 0, False), ("fragment", 1, True)])
def test_cumsum_float32(scope, dim, reverse):
    """float32 blocks: split into a bfloat16 part and the float32 rest, whose truncation to TF32 (9
    bits in SrcA, along dim 0) leaves each term within 2^-17 of itself; each sum in float32 (64 terms)."""
    M, N, bm, bn = 128, 128, 64, 64
    a = data(M, N, "float32", seed=11)
    make = cumsum_smem if scope == "smem" else cumsum_fragment
    out, artifacts = run(make(M, N, bm, bn, dim, reverse, "float32"), a)
    exact = cumsum_reference(a.double(), bm, bn, dim, reverse)
    magnitude = cumsum_reference(a.double().abs(), bm, bn, dim, reverse)
    assert ((out.double() - exact).abs() <= (2.0 ** -17 + 66 * 2.0 ** -24) * magnitude).all()
    assert (out.double() - exact).abs().max() > 0  # float32 sums: not the exact sums
    assert artifacts.get_source("compute").count("matmul_block_init") == 2  # the two parts


def test_cumsum_float32_of_blocks_past_the_tensor():
    """A float32 scan along columns of blocks the reader pads with zero rows: the split's parts keep
    the zeros (X - bfloat16(X) is 0 there), which add nothing."""
    M, N, bm, bn = 80, 64, 64, 64
    a = data(M, N, "float32", seed=18)
    out, _ = run(cumsum_smem(M, N, bm, bn, 0, True, "float32"), a)
    exact = cumsum_reference(a.double(), bm, bn, 0, True)
    magnitude = cumsum_reference(a.double().abs(), bm, bn, 0, True)
    assert ((out.double() - exact).abs() <= (2.0 ** -17 + 66 * 2.0 ** -24) * magnitude).all()


def prefix_sum_rows(M, N, bm, bn):
    """Row prefix sums of rows longer than one scan: each (bm, bn) block scanned into a float32
    fragment (``T.cumsum(src, dst)``), plus the running total of the blocks before it (a row sum
    carried with clear=False): the rewrite the refusal of long scans names."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, T.ceildiv(M, bm), threads=128) as (bx, by):
            a_s = T.alloc_shared((bm, bn), "bfloat16")
            scan = T.alloc_fragment((bm, bn), "float32")
            o_f = T.alloc_fragment((bm, bn), "float32")
            carry = T.alloc_fragment((bm,), "float32")
            T.fill(carry, 0.0)
            for k in T.Pipelined(T.ceildiv(N, bn), num_stages=2):
                T.copy(A[by * bm, k * bn], a_s)
                T.cumsum(a_s, dst=scan, dim=1)
                for i, j in T.Parallel(bm, bn):
                    o_f[i, j] = scan[i, j] + carry[i]
                T.reduce_sum(a_s, carry, dim=1, clear=False)
                T.copy(o_f, B[by * bm, k * bn])

    return main


def cumsum_into_shared(M, N, dim, reverse):
    """``T.cumsum(src, dst)`` into another shared block of the source's dtype."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), B: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((M, N), "bfloat16")
            B_s = T.alloc_shared((M, N), "bfloat16")
            T.copy(A, A_s)
            T.cumsum(A_s, dst=B_s, dim=dim, reverse=reverse)
            T.copy(B_s, B)

    return main


@pytest.mark.parametrize("dim,reverse", [(1, True), (0, False)])
def test_cumsum_into_another_shared_block(dim, reverse):
    a = data(64, 96, "bfloat16", seed=15)
    out, _ = run(cumsum_into_shared(64, 96, dim, reverse), a)
    assert torch.equal(out, cumsum_reference(a.float(), 64, 96, dim, reverse).to(torch.bfloat16).float())


def test_prefix_sum_of_long_rows_in_blocks_with_a_carry():
    a = data(64, 1024, "bfloat16", seed=12)
    out, artifacts = run(prefix_sum_rows(64, 1024, 32, 256), a)
    ref = a.double().cumsum(1)
    assert ((out.double() - ref).abs() <= 2.0 ** -20 * a.double().abs().cumsum(1)).all()  # float32 sums
    assert "A_s_acc" not in artifacts.get_source("compute")  # scanned straight into the float32 fragment


def moe_token_positions(T_, E, bt):
    """MoE routing: each token's position among the tokens routed to its expert, the cumsum of the
    one-hot routing mask down the tokens (dim 0) minus one, and each expert's count, the last row."""

    @T.prim_func
    def main(Mask: T.Tensor((T_, E), "bfloat16"), Pos: T.Tensor((T_, E), "float32"),
             Count: T.Tensor((E,), "float32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            m_s = T.alloc_shared((T_, E), "bfloat16")
            c_f = T.alloc_fragment((T_, E), "float32")
            p_f = T.alloc_fragment((T_, E), "float32")
            n_f = T.alloc_fragment((E,), "float32")
            T.copy(Mask, m_s)
            T.cumsum(m_s, dst=c_f, dim=0)
            for i, j in T.Parallel(T_, E):
                p_f[i, j] = (c_f[i, j] - 1.0) * m_s[i, j]
            T.reduce_sum(m_s, n_f, dim=0)
            T.copy(p_f, Pos)
            T.copy(n_f, Count)

    return main


def test_moe_routing_positions_by_cumsum():
    tokens, experts = 256, 32
    choice = torch.randint(0, experts, (tokens,), generator=torch.Generator().manual_seed(13))
    mask = torch.nn.functional.one_hot(choice, experts).to(torch.bfloat16)
    artifacts = tilelang_tt.compile(moe_token_positions(tokens, experts, 32))
    pos, count = (torch.as_tensor(o).float() for o in artifacts.run(mask))
    m = mask.float()
    assert torch.equal(pos, (m.cumsum(0) - 1) * m)  # integers below 2^24: exact
    assert torch.equal(count, m.sum(0))


# -- refused forms ---------------------------------------------------------------------------------
def long_scan(n):
    @T.prim_func
    def main(A: T.Tensor((32, n), "bfloat16"), B: T.Tensor((32, n), "bfloat16")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((32, n), "bfloat16")
            T.copy(A, A_s)
            T.cumsum(A_s, dim=1)  # LINE: long_scan
            T.copy(A_s, B)

    return main


def vector_scan(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((n,), "float32")
            T.copy(A, A_s)
            T.cumsum(A_s, dim=0)  # LINE: vector_scan
            T.copy(A_s, B)

    return main


def vector_scan_rewritten(n):
    """The rewrite the refusal of a vector's scan names: the values as a (1, n) tensor, scanned in a
    (32, n) block the reader pads with zero rows."""

    @T.prim_func
    def main(A: T.Tensor((1, n), "float32"), B: T.Tensor((1, n), "float32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((32, n), "float32")
            T.copy(A[0, 0], A_s)
            T.cumsum(A_s, dim=1)
            T.copy(A_s, B[0, 0])

    return main


def test_a_vector_scanned_as_a_row_of_a_block():
    a = torch.randn(1, 128, generator=torch.Generator().manual_seed(16))
    out, _ = run(vector_scan_rewritten(128), a)
    assert ((out.double() - a.double().cumsum(1)).abs() <= (2.0 ** -17 + 130 * 2.0 ** -24) * a.double().abs().cumsum(1)).all()


def integer_scan(n):
    @T.prim_func
    def main(A: T.Tensor((32, n), "int32"), B: T.Tensor((32, n), "int32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((32, n), "int32")
            T.copy(A, A_s)
            T.cumsum(A_s, dim=1)  # LINE: integer_scan
            T.copy(A_s, B)

    return main


def scan_read_after_its_loop(n):
    @T.prim_func
    def main(A: T.Tensor((64, n), "bfloat16"), B: T.Tensor((32, n), "bfloat16")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((32, n), "bfloat16")
            for k in T.serial(2):  # LINE: scan_read_after_its_loop
                T.copy(A[k * 32, 0], A_s)
                T.cumsum(A_s, dim=1)
            T.copy(A_s, B)

    return main


def bitwise_reduction(n):
    """TileLang builds a reduction of blocks inside its reduce macro (tilelang/language/reduce_op.py),
    whose statements carry the macro's source lines, not the user's: a reduction's error names the
    line calling the macro (ir/common.py macro_call_span; as tests/compiler/bad_kernels.py unaligned_shape's)."""
    @T.prim_func
    def main(A: T.Tensor((32, n), "int32"), R: T.Tensor((32,), "int32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((32, n), "int32")
            r = T.alloc_fragment((32,), "int32")
            T.copy(A, A_s)
            T.reduce_bitor(A_s, r, dim=1)  # LINE: bitwise_reduction
            T.copy(r, R)

    return main


def line_of(marker: str) -> int:
    import inspect
    lines, _ = inspect.getsourcelines(inspect.getmodule(line_of))
    return next(n for n, text in enumerate(lines, start=1) if text.rstrip().endswith(f"# LINE: {marker}"))


@pytest.mark.parametrize("kernel,marker,message,hint", [
    (long_scan(512), "long_scan", "T.cumsum of `A_s` [32, 512] along dim 1: a scan of 512 elements",
     "each adding the total of those before it"),
    (vector_scan(64), "vector_scan", "a scan of a vector", "copied into a (32, n) block"),
    (integer_scan(64), "integer_scan", "unsupported compute on `A_s` (int32)", "bfloat16 or float32"),
    # the block the reader refills in the loop and compute scans in place leaves the loop: refused where
    # blocks are versioned (VersionOnChipBuffersTT), at the loop
    (scan_read_after_its_loop(64), "scan_read_after_its_loop", "takes a new value inside the loop",
     "T.alloc_fragment copy of `A_s`"),
    (bitwise_reduction(64), "bitwise_reduction", "T.reduce_bitor is not supported", "T.reduce_absmax"),
], ids=["long", "vector", "integer", "read_outside", "bitwise"])
def test_refused_reductions_and_scans_name_their_line_and_a_rewrite(kernel, marker, message, hint):
    with pytest.raises(TTCompileError) as info:
        tilelang_tt.compile(kernel)
    err = info.value
    expected_pass = "VersionOnChipBuffersTT" if marker == "scan_read_after_its_loop" else "LowerTTTileIntrinsics"
    assert err.pass_name == expected_pass and message in err.message, err.message
    assert err.location is not None and err.location[:2] == (__file__, line_of(marker)), err.location
    assert hint in err.hint, err.hint
