"""An accumulator scaled per row (or per column) right before a T.gemm accumulates into it is scaled at the gemm's reload
(Gemm.fold_reload_scales): the same bits as the separate element-wise pass, where the DST budget leaves the
matmul its operand reuse."""

from __future__ import annotations

import pytest
import tilelang.language as T
import torch

import tilelang_tt
from tests import op_kernels as K
from tilelang_tt.ops.gemm import GEMM, scaled_sub_block, scales_at_reload


def rescaled_gemm(M, N, Kd, bk, per_row=True):
    """C = sum over K steps k of (C * S[k, :] per row, else per column) + A[:, k] @ B[k, :], C float32 (its bits
    visible)."""
    L = M if per_row else N

    @T.prim_func
    def main(A: T.Tensor((M, Kd), "bfloat16"), B: T.Tensor((Kd, N), "bfloat16"), S: T.Tensor((Kd // bk, L), "float32"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, bk), "bfloat16")
            B_s = T.alloc_shared((bk, N), "bfloat16")
            s = T.alloc_fragment((L,), "float32")
            acc = T.alloc_fragment((M, N), "float32")
            T.clear(acc)
            for k in T.Pipelined(Kd // bk, num_stages=2):
                T.copy(S[k, :], s)
                T.copy(A[0, k * bk], A_s)
                for i, j in T.Parallel(M, N):
                    acc[i, j] *= s[i] if per_row else s[j]
                T.copy(B[k * bk, 0], B_s)
                T.gemm(A_s, B_s, acc)
            T.copy(acc, C[0, 0])

    return main


def _unfolded(monkeypatch):
    monkeypatch.setattr(GEMM, "fold_reload_scales", lambda ctx, stmts: stmts)


def test_the_sub_block_leaves_a_vector_tile_per_row_and_keeps_the_operand_reuse():
    assert scaled_sub_block(2, 2, 4) == (1, 2)  # 2 x 2 and two vector tiles exceed 4
    assert scaled_sub_block(2, 4, 8) == (1, 4)
    assert scales_at_reload(2, 2, 4)  # 1 x 2 unpacks 1.5 tiles a product, as 2 x 2 does
    assert not scales_at_reload(2, 4, 4)  # 1 x 4 would become 1 x 2: 1.25 -> 1.5
    assert scaled_sub_block(2, 2, 4, per_row=False) == (1, 2)  # and a vector tile per column
    assert scaled_sub_block(1, 4, 4, per_row=False) == (1, 2)


@pytest.mark.parametrize("per_row", [True, False], ids=["per_row", "per_column"])
def test_a_rescaled_float32_accumulator_is_bit_identical(monkeypatch, per_row):
    M, N, Kd, bk = 64, 64, 128, 32
    g = torch.Generator().manual_seed(7)
    a = torch.randn(M, Kd, generator=g).to(torch.bfloat16)
    b = torch.randn(Kd, N, generator=g).to(torch.bfloat16)
    s = torch.rand(Kd // bk, M if per_row else N, generator=g) + 0.5
    bcast = "unary_bcast<BroadcastType::COL>" if per_row else "unary_bcast<BroadcastType::ROW>"
    folded = tilelang_tt.compile(rescaled_gemm(M, N, Kd, bk, per_row))
    compute = folded.sources["compute.cpp"]
    # the broadcast vector, its multiply and the matmul in one acquire
    acquire = compute.split(bcast)[1].split("tile_regs_release")[0]
    assert "mul_binary_tile(" in acquire and "matmul_block(" in acquire
    out = torch.as_tensor(folded.run(a, b, s))

    _unfolded(monkeypatch)
    separate = tilelang_tt.compile(rescaled_gemm(M, N, Kd, bk, per_row))
    acquire = separate.sources["compute.cpp"].split(bcast)[1].split("tile_regs_release")[0]
    assert "matmul_block(" not in acquire
    assert torch.equal(out.view(torch.int32), torch.as_tensor(separate.run(a, b, s)).view(torch.int32))

    ref = torch.zeros(M, N, dtype=torch.float64)
    for k in range(Kd // bk):
        ref = ref * (s[k].double()[:, None] if per_row else s[k].double()[None, :]) + a[:, k * bk:(k + 1) * bk].double() @ b[k * bk:(k + 1) * bk].double()
    assert (out.double() - ref).abs().max().item() <= 2.0 ** -8 * ref.abs().max().item()


@pytest.mark.parametrize("dim, folds", [(64, True), (128, False)])
def test_flash_attention_rescales_acc_o_at_the_reload_where_it_pays(monkeypatch, dim, folds):
    seq_len = 256
    g = torch.Generator().manual_seed(43)
    q, k, v = (torch.randn(1, 1, seq_len, dim, generator=g).to(torch.bfloat16) for _ in range(3))
    kernel = K.flash_attention(seq_len, dim, bn=128)
    folded = tilelang_tt.compile(kernel)
    reload = folded.sources["compute.cpp"].split("copy_tile(cb_acc_o")[1].split("tile_regs_release")[0]
    assert ("matmul_block(" in reload and "unary_bcast<BroadcastType::COL>(cb_scores_scale" in reload) == folds
    out = torch.as_tensor(folded.run(q, k, v)).float()

    _unfolded(monkeypatch)
    separate = tilelang_tt.compile(kernel)
    assert (separate.sources["compute.cpp"] != folded.sources["compute.cpp"]) == folds
    assert torch.equal(out, torch.as_tensor(separate.run(q, k, v)).float())
    ref = torch.softmax(q.float() @ k.float().transpose(-1, -2) / dim ** 0.5, dim=-1) @ v.float()
    assert (out - ref).abs().max().item() <= 2.0 ** -6 * max(ref.abs().max().item(), 1.0)
