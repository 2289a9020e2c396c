"""Rows of tensors whose sizes are known only at run time (issue 29, item 5): a slice of a
``T.dynamic``-sized tensor that is no block of tiles (a head ``K[b, s0:s0 + 32, h, :]`` of a
(B, S, H, D) tensor: rows of several matrices; 16 rows of an (n, K) tensor: part of its tiles) lays
the tensor out in rows, as for static sizes: the page count is a formula of the sizes, the page
stride of a slice's rows one too, which the reader computes from the sizes it gets as runtime
arguments."""

from pathlib import Path

import pytest
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_negative import assert_diagnostic, compile_error
from tests.compiler.test_ops import assert_close, bf16
from tilelang_tt.emulator.driver import EmulatorError


def head_rows(H, D, bs, dtype="bfloat16"):
    """Each block copies 32 rows of one head of X (batch, seq, heads, dim), seq dynamic, and stores
    them doubled into the head's rows of Y: the slices are rows H pages apart."""
    seq = T.dynamic("seq")

    @T.prim_func
    def main(X: T.Tensor((2, seq, H, D), dtype), Y: T.Tensor((2, seq, H, D), dtype)):
        with T.Kernel(H, T.ceildiv(seq, bs), 2, threads=128) as (h, bx, b):
            x = T.alloc_shared((bs, D), dtype)
            y = T.alloc_fragment((bs, D), dtype)
            T.copy(X[b, bx * bs:(bx + 1) * bs, h, :], x)
            for i, j in T.Parallel(bs, D):
                y[i, j] = x[i, j] * 2.0
            T.copy(y, Y[b, bx * bs:(bx + 1) * bs, h, :])

    return main


def token_rows(K, bn, dtype="float32"):
    """Blocks of ``bn`` < 32 token rows of an (n, K) tensor, n dynamic: part of a tile each."""
    n = T.dynamic("n")

    @T.prim_func
    def main(A: T.Tensor((n, K), dtype), B: T.Tensor((n, K), dtype)):
        with T.Kernel(T.ceildiv(n, bn), threads=128) as bx:
            a = T.alloc_shared((bn, K), dtype)
            T.copy(A[bx * bn, 0], a)
            for i, j in T.Parallel(bn, K):
                a[i, j] = a[i, j] + 1.0
            T.copy(a, B[bx * bn, 0])

    return main


@pytest.mark.parametrize("seq", [64, 80])  # 80: the last block holds 16 rows
def test_heads_of_a_dynamic_sequence_are_read_and_written_as_rows(seq):
    artifacts = tilelang_tt.compile(head_rows(H=3, D=64, bs=32))
    layouts = {b.name: b.layout for b in artifacts.plan.buffers}
    assert layouts == {"X": "row_major", "Y": "row_major"}
    x = bf16(2, seq, 3, 64, seed=21)
    y = torch.as_tensor(artifacts.run(x)).float()
    assert_close(y, x.float() * 2.0, 2.0 ** -7)


@pytest.mark.parametrize("n", [48, 80])
def test_blocks_of_16_rows_of_a_dynamic_tensor(n):
    artifacts = tilelang_tt.compile(token_rows(K=64, bn=16))
    a = torch.randn(n, 64, generator=torch.Generator().manual_seed(22))
    b = torch.as_tensor(artifacts.run(a))
    torch.testing.assert_close(b, a + 1.0)


def dynamic_width_heads():
    """Heads ``X[s0:s0 + 32, h, 0:32]`` of a (seq, heads, dim) tensor whose dim is dynamic: rows of
    several matrices, each a page of dim elements, a size known only at run time."""
    seq, dim = T.dynamic("seq"), T.dynamic("dim")

    @T.prim_func
    def main(X: T.Tensor((seq, 4, dim), "float32"), Y: T.Tensor((seq, 4, dim), "float32")):
        with T.Kernel(4, T.ceildiv(seq, 32), threads=128) as (h, bx):
            x = T.alloc_shared((32, 32), "float32")
            T.copy(X[bx * 32:(bx + 1) * 32, h, 0:32], x)  # LINE: dynamic_width_heads
            T.copy(x, Y[bx * 32:(bx + 1) * 32, h, 0:32])

    return main


def test_rows_of_a_dynamic_width_are_refused_at_the_copy():
    err = compile_error(dynamic_width_heads())
    assert_diagnostic(err, "InferTTLayout", "`X` [seq, 4, dim] has a slice that is no block of tiles (rows of several "
                      "matrices, or part of a tile) and a last dimension known only at run time",
                      "dynamic_width_heads", path=__file__, source=Path(__file__).read_text())
    assert "static last dimension" in err.hint


def valid_key_sums(S, H, D, clamp, guard=False):
    """Per (batch, head), the sums of the first ``valid`` keys of K (batch, S, heads, dim), 32 rows at a
    time into 32 row slots, the last block masked as a decoding kernel masks its scores; ``valid``
    is a scalar the caller gives. Unclamped, the loop over ``T.ceildiv(valid, 32)`` blocks may run
    past the S keys; ``guard`` skips the blocks past them (``if k * 32 < S``)."""
    @T.prim_func
    def main(K: T.Tensor((2, S, H, D), "float32"), valid: T.int32, Y: T.Tensor((2, H, 32, D), "float32")):
        with T.Kernel(H, 2, threads=128) as (h, b):
            k_s = T.alloc_shared((32, D), "float32")
            acc = T.alloc_fragment((32, D), "float32")
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(T.min(valid, S) if clamp else valid, 32), num_stages=2):
                if guard:
                    if k * 32 < S:
                        T.copy(K[b, k * 32:(k + 1) * 32, h, :], k_s)
                        for i, j in T.Parallel(32, D):
                            acc[i, j] += T.if_then_else(k * 32 + i < valid, k_s[i, j], 0.0)
                else:
                    T.copy(K[b, k * 32:(k + 1) * 32, h, :], k_s)  # LINE: valid_key_sums
                    for i, j in T.Parallel(32, D):
                        acc[i, j] += T.if_then_else(k * 32 + i < valid, k_s[i, j], 0.0)
            T.copy(acc, Y[b, h, 0:32, :])

    return main


@pytest.mark.parametrize("valid, form", [(100, "clamp"), (128, "clamp"), (7, "clamp"), (100, "guard"),
                                         (200, "guard"), (100, "unclamped"), (128, "unclamped"), (33, "unclamped")])
def test_a_run_time_length_bounded_by_the_tensor_reads_a_partial_last_block(valid, form):
    """Clamped by T.min, the blocks past the tensor skipped by an ``if`` (valid 200 of 128 keys), or
    unclamped: the loop clamped at the tensor by the compiler, under a run-time check (ClampRunTimeLoopsTT)."""
    kernel = valid_key_sums(S=128, H=2, D=64, clamp=form == "clamp", guard=form == "guard")
    artifacts = tilelang_tt.compile(kernel)
    k = torch.randn(2, 128, 2, 64, generator=torch.Generator().manual_seed(23))
    y = torch.as_tensor(artifacts.run(k, valid))
    keys = torch.zeros(2, 128, 2, 64)
    keys[:, :valid] = k[:, :valid]
    ref = keys.view(2, 4, 32, 2, 64).sum(1).permute(0, 2, 1, 3)  # slot i sums keys i, 32 + i, ...
    torch.testing.assert_close(y, ref, rtol=1e-5, atol=1e-5)


def test_an_unclamped_length_past_the_tensor_stops_at_the_readers_check():
    """The kernel's own assumption (its 200 keys are inside K's 128) is false: the reader's ASSERT
    stops the run at the loop instead of reading past K."""
    artifacts = tilelang_tt.compile(valid_key_sums(S=128, H=2, D=64, clamp=False))
    with pytest.raises(EmulatorError, match=r"ASSERT\(valid <= 128\) failed"):
        artifacts.run(torch.randn(2, 128, 2, 64), 200)


def keys_from_the_end(S, D):
    """The key blocks of head 1 walked from the last one the run-time length reaches back to the first:
    the start falls as k grows, so no count of iterations keeps it inside."""
    @T.prim_func
    def main(K: T.Tensor((S, 2, D), "float32"), valid: T.int32, Y: T.Tensor((32, D), "float32")):
        with T.Kernel(1, threads=128) as _:
            k_s = T.alloc_shared((32, D), "float32")
            acc = T.alloc_fragment((32, D), "float32")
            T.clear(acc)
            for k in T.serial(T.ceildiv(valid, 32)):
                T.copy(K[(T.ceildiv(valid, 32) - 1 - k) * 32:(T.ceildiv(valid, 32) - k) * 32, 1, :], k_s)  # LINE: keys_from_the_end
                for i, j in T.Parallel(32, D):
                    acc[i, j] += k_s[i, j]
            T.copy(acc, Y)

    return main


def test_a_run_time_length_walked_from_the_end_is_refused_at_the_copy():
    err = compile_error(keys_from_the_end(S=128, D=64))
    assert_diagnostic(err, "LayoutAwareWorkPartitionTT", "the slice of `K` may start past the end of dimension 0",
                      "keys_from_the_end", path=__file__, source=Path(__file__).read_text())
    assert "T.ceildiv(T.min(n, 128), 32)" in err.hint


def run_time_slice():
    """The first n - 1 lengths of a table of n copied into a block of 16 (FLA's prepare_chunk_offsets)."""
    n = T.dynamic("n")

    @T.prim_func
    def main(L: T.Tensor([n], "float32"), Y: T.Tensor([16], "float32")):
        with T.Kernel(1, threads=32) as _:
            blk = T.alloc_fragment((16,), "float32")
            T.copy(L[:n - 1], blk)  # LINE: run_time_slice
            T.copy(blk, Y)

    return main


def test_a_slice_of_a_run_time_extent_is_refused_at_its_copy():
    err = compile_error(run_time_slice())
    assert_diagnostic(err, "LayoutAwareWorkPartitionTT", "T.copy between the slice of `L` starting at [0], whose "
                      "extent n - 1 is known only at run time and the block `blk` [16]", "run_time_slice",
                      path=__file__, source=Path(__file__).read_text())
    assert "T.if_then_else(i < n, blk[i], 0)" in err.hint
