"""Blocks that reach past the end of their tensor (the block size does not divide the shape, or
the tensor is not made of whole tiles): the reader moves only the tiles inside the tensor and
zero-fills the rest, partial tiles are zero-padded by the host, the writer drops what lies past
the end, and a kernel whose padding would reach a valid result is rejected (CheckPaddingTT)."""

import pytest
import tilelang.language as T
import torch

import tilelang_tt
from tests import op_kernels
from tests.kernels import eltwise, gemm
from tilelang_tt import TTCompileError


def bf16(*shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(torch.bfloat16)


def row_reduce_over_blocks(kind, M, N, bm, bn):
    """Row sum/max of A carried over the column blocks of A (the last one reaches past N when
    bn does not divide N)."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), R: T.Tensor((M, 1), "float32")):
        with T.Kernel(1, T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bn), "bfloat16")
            r = T.alloc_fragment((bm,), "float32")
            r_s = T.alloc_fragment((bm, 1), "float32")
            T.fill(r, 0.0 if kind == "sum" else -T.infinity("float32"))
            for k in T.Pipelined(T.ceildiv(N, bn), num_stages=2):
                T.copy(A[by * bm, k * bn], A_s)
                if kind == "sum":
                    T.reduce_sum(A_s, r, dim=1, clear=False)
                else:
                    T.reduce_max(A_s, r, dim=1, clear=False)
            for i in T.Parallel(bm):
                r_s[i, 0] = r[i]
            T.copy(r_s, R[by * bm, 0])

    return main


@pytest.mark.parametrize("M,N,bm,bn,grid", [(96, 160, 64, 64, None), (160, 96, 128, 64, (2, 1)),
                                              (32, 96, 32, 64, (1, 1))])
def test_eltwise_partial_blocks_move_only_the_tensor(M, N, bm, bn, grid):
    a, b = bf16(M, N, seed=1), bf16(M, N, seed=2)
    artifacts = tilelang_tt.compile(eltwise("add", M, N, bm, bn), grid=grid)
    c = artifacts.run(a, b)
    assert torch.equal(c, (a.float() + b.float()).to(torch.bfloat16))
    totals = artifacts.last_counters["total"]
    # exactly the tensors' tiles cross the NOC from and to DRAM: nothing past their ends
    assert totals["dram_bytes_read"] == 2 * M * N * 2
    assert totals["dram_bytes_written"] == M * N * 2


@pytest.mark.parametrize("M,N,K,bm,bn,bk", [(96, 96, 96, 64, 64, 64), (64, 160, 96, 64, 128, 64),
                                             (96, 64, 224, 64, 64, 128)])
def test_gemm_partial_blocks_contract_over_zeros(M, N, K, bm, bn, bk):
    a, b = bf16(M, K, seed=3), bf16(K, N, seed=4)
    artifacts = tilelang_tt.compile(gemm(M, N, K, bm, bn, bk))
    c = artifacts.run(a, b)
    ref = a.float() @ b.float()
    # one bf16 rounding on pack plus fp32 accumulation in another order than torch's
    tol = ref.abs() * 2.0 ** -8 + K * 2.0 ** -24 * (a.float().abs() @ b.float().abs())
    assert ((c.float() - ref).abs() <= tol).all()
    assert artifacts.last_counters["total"]["dram_bytes_written"] == M * N * 2


@pytest.mark.parametrize("M,N,bm,bn", [(48, 80, 64, 64), (100, 33, 32, 64), (1, 70, 32, 32)])
def test_eltwise_on_tensors_of_partial_tiles(M, N, bm, bn):
    a, b = bf16(M, N, seed=7), bf16(M, N, seed=8)
    artifacts = tilelang_tt.compile(eltwise("mul", M, N, bm, bn))
    assert torch.equal(artifacts.run(a, b), (a.float() * b.float()).to(torch.bfloat16))
    tiles = -(-M // 32) * -(-N // 32)  # whole tiles move: the partial ones carry their padding
    assert artifacts.last_counters["total"]["dram_bytes_read"] == 2 * tiles * 2048


def test_gemm_on_tensors_of_partial_tiles():
    """K = 70: the padded columns of A and rows of B are zeros, so the contraction is exact."""
    a, b = bf16(100, 70, seed=9), bf16(70, 90, seed=10)
    c = tilelang_tt.compile(gemm(100, 90, 70, 64, 64, 32)).run(a, b)
    ref = a.float() @ b.float()
    tol = ref.abs() * 2.0 ** -8 + 70 * 2.0 ** -24 * (a.float().abs() @ b.float().abs())
    assert ((c.float() - ref).abs() <= tol).all()


def test_row_softmax_with_partial_row_blocks():
    """Padding along rows only: every row's softmax is independent of the padded rows."""
    x = bf16(96, 128, seed=5)
    y = tilelang_tt.compile(op_kernels.softmax(96, 128, 64)).run(x)
    # bf16 output: half an ulp of values below 1 (2^-9), plus fp32 exp/sum error
    assert (y.float() - torch.softmax(x.float(), -1)).abs().max() <= 2.0 ** -8


def test_sum_over_zero_padding_is_exact():
    """A row sum over a column block past N adds the reader's zeros: exact."""
    a = bf16(64, 96, seed=6)
    r = tilelang_tt.compile(row_reduce_over_blocks("sum", 64, 96, 32, 64)).run(a)
    ref = a.float().sum(dim=1, keepdim=True)
    assert (r - ref).abs().max() <= 96 * 2.0 ** -24 * a.float().abs().sum(dim=1, keepdim=True).max()


def test_max_over_padding_is_rejected():
    with pytest.raises(TTCompileError) as info:
        tilelang_tt.compile(row_reduce_over_blocks("max", 64, 96, 32, 64))
    err = info.value
    assert err.pass_name == "CheckPaddingTT"
    assert "reduction runs along the columns of `A_s" in err.message
    assert "divide the tensor shape" in err.hint


def test_attention_over_a_partial_key_block_is_rejected():
    """Scores of padded keys are exp(0 - m) != 0: the softmax over them would be wrong."""
    with pytest.raises(TTCompileError) as info:
        tilelang_tt.compile(op_kernels.flash_attention(96, 64, 64, 64))
    assert "reach past the end of the tensor" in info.value.message


def exp_scan(rows, cols, dim, reverse):
    """T.cumsum of exp(A) in place: exp of the padding's zeros is 1, which a reversed scan along a padded axis
    would add into every valid value."""
    @T.prim_func
    def main(A: T.Tensor((rows, cols), "float32"), C: T.Tensor((rows, cols), "float32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((rows, cols), "float32")
            F = T.alloc_shared((rows, cols), "float32")
            T.copy(A[0, 0], A_s)
            for i, j in T.Parallel(rows, cols):
                F[i, j] = T.exp(A_s[i, j])
            T.cumsum(F, dim=dim, reverse=reverse)
            T.copy(F, C[0, 0])

    return main


@pytest.mark.parametrize("rows,cols,dim", [(8, 136, 1), (40, 64, 0)])
@pytest.mark.parametrize("reverse", [True, False])
def test_a_scan_along_a_padded_axis_sees_no_padding(rows, cols, dim, reverse):
    """Found by tests/fuzz/idioms.py: a reversed scan of an (8, 136) block added the 24 padding columns' ones."""
    a = torch.randn(rows, cols, generator=torch.Generator().manual_seed(5)) / 4
    got = tilelang_tt.compile(exp_scan(rows, cols, dim, reverse)).run(a)
    e = a.double().exp()
    ref = e.flip(dim).cumsum(dim).flip(dim) if reverse else e.cumsum(dim)
    # a product with a triangle of ones (ops/scan.py): a float32 block split hi + lo, float32 sums
    assert ((got.double() - ref).abs() <= 2.0 ** -16 * ref.abs()).all()


def test_a_reversed_scan_of_a_padded_vector_is_refused_as_a_scan_of_a_vector():
    """The scan's padding mask is for blocks of rank 2: a vector's scan reaches its own refusal (ops/scan.py),
    not an internal error of the mask (found by tests/fuzz/idioms.py)."""
    @T.prim_func
    def main(A: T.Tensor((40,), "float32"), C: T.Tensor((40,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            F = T.alloc_shared((40,), "float32")
            for j in T.Parallel(40):
                F[j] = T.exp(A[j])
            T.cumsum(F, dim=0, reverse=True)
            T.copy(F, C[0])

    with pytest.raises(TTCompileError, match="a scan of a vector") as info:
        tilelang_tt.compile(main)
    assert info.value.pass_name == "LowerTTTileIntrinsics"
