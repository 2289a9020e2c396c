"""Indices read from tensors (issue 29, item 5): a value read from a tensor selects a matrix of a
batched tensor (a mixture of experts' weights ``W[expert, ...]``, a gather of whole matrices). Its
range is unknown when compiling; the access is in range iff the value is, so the data-movement
kernel checks it at run time (AssertTensorIndicesTT: tt-metal's ``ASSERT``) and a run with an index
out of range stops rather than reading another tensor's memory. An index the kernel clamps with
``T.min`` is proven in range and is not checked."""

import pytest
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_ops import assert_close, bf16
from tilelang_tt.emulator.driver import EmulatorError


def expert_matmul(tokens, E, N, K, bm, bn, bk, clamp=False, dtype="bfloat16"):
    """Each block of ``bm`` token rows times the weights of its expert (NT), the expert read from a
    table per block: ``Y[t0:t0 + bm] = X[t0:t0 + bm] @ W[ids[by]].T``."""
    @T.prim_func
    def main(X: T.Tensor((tokens, K), dtype), W: T.Tensor((E, N, K), dtype), ids: T.Tensor((tokens // bm,), "int32"),
             Y: T.Tensor((tokens, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), tokens // bm, threads=128) as (bx, by):
            x_s = T.alloc_shared((bm, bk), dtype)
            w_s = T.alloc_shared((bn, bk), dtype)
            acc = T.alloc_fragment((bm, bn), "float32")
            expert = T.min(ids[by], E - 1) if clamp else ids[by]
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(X[by * bm, k * bk], x_s)
                T.copy(W[expert, bx * bn, k * bk], w_s)
                T.gemm(x_s, w_s, acc, transpose_B=True)
            T.copy(acc, Y[by * bm, bx * bn])

    return main


def gather_scaled(B, E, M, N):
    """Each output matrix is a scaled copy of the table's matrix ``src[index[b]]``, read whole."""
    @T.prim_func
    def main(src: T.Tensor((E, M, N), "float32"), index: T.Tensor((B,), "int32"), out: T.Tensor((B, M, N), "float32")):
        with T.Kernel(B, threads=128) as b:
            tile = T.alloc_shared((M, N), "float32")
            res = T.alloc_fragment((M, N), "float32")
            T.copy(src[index[b], 0:M, 0:N], tile)
            for i, j in T.Parallel(M, N):
                res[i, j] = tile[i, j] * 2.0
            T.copy(res, out[b, 0:M, 0:N])

    return main


@pytest.mark.parametrize("tokens, E, N, K, ids", [
    (128, 3, 64, 64, [2, 0, 2, 1]),
    (64, 5, 128, 96, [4, 3]),
], ids=["4-blocks-3-experts", "2-blocks-5-experts"])
def test_each_block_multiplies_by_the_expert_its_table_names(tokens, E, N, K, ids):
    artifacts = tilelang_tt.compile(expert_matmul(tokens, E, N, K, 32, 64, 32))
    x, w = bf16(tokens, K, seed=11), bf16(E, N, K, seed=12)
    table = torch.tensor(ids, dtype=torch.int32)
    y = torch.as_tensor(artifacts.run(x, w, table)).float()
    ref = torch.cat([x[b * 32:(b + 1) * 32].float() @ w[e].float().T for b, e in enumerate(ids)])
    assert_close(y, ref, 2.0 ** -7)
    assert "ASSERT(" in artifacts.sources["reader.cpp"]


def test_a_gathered_matrix_is_read_at_the_index_read_from_the_table():
    src = torch.randn(4, 32, 64, generator=torch.Generator().manual_seed(13))
    index = torch.tensor([3, 0, 3], dtype=torch.int32)
    out = torch.as_tensor(tilelang_tt.compile(gather_scaled(3, 4, 32, 64)).run(src, index))
    torch.testing.assert_close(out, src[index.long()] * 2.0)


@pytest.mark.parametrize("bad", [3, -1])
def test_an_index_out_of_range_stops_the_run(bad):
    """Expert 3 of 3 (or -1) would read past ``W`` (or before it): the reader's check stops the run
    at its line rather than multiplying by another tensor's memory."""
    artifacts = tilelang_tt.compile(expert_matmul(64, 3, 64, 64, 32, 64, 32))
    x, w = bf16(64, 64, seed=14), bf16(3, 64, 64, seed=15)
    with pytest.raises(EmulatorError, match="ASSERT"):
        artifacts.run(x, w, torch.tensor([0, bad], dtype=torch.int32))


def test_an_index_clamped_with_t_min_is_not_checked():
    """``T.min(ids[by], E - 1)`` keeps the expert below E; what stays unknown is its lower end, which
    the reader checks alone."""
    artifacts = tilelang_tt.compile(expert_matmul(64, 3, 64, 64, 32, 64, 32, clamp=True))
    checks = {line.strip() for line in artifacts.sources["reader.cpp"].splitlines() if "ASSERT(" in line}
    assert checks == {"ASSERT(0 <= static_cast<int32_t>(expert));"}
    x, w = bf16(64, 64, seed=16), bf16(3, 64, 64, seed=17)
    y = torch.as_tensor(artifacts.run(x, w, torch.tensor([7, 1], dtype=torch.int32))).float()
    ref = torch.cat([x[:32].float() @ w[2].float().T, x[32:].float() @ w[1].float().T])
    assert_close(y, ref, 2.0 ** -7)
