"""Kernels of several launches sharing scratch tensors, written anew in the idioms of inference engines'
split-KV decoding and of normalisation kernels, run on the emulator against torch:

* a grouped-query decode split over the keys (each program serves the query heads of one KV head,
  padded to a block of 32 rows, and stores its log-sum-exps under ``if i < heads_per_group``), then a
  combine with ``T.alloc_var`` scalars (``T.clear`` of them, a weight set per iteration of a loop over
  the splits): the guard keeps the blocks' stores disjoint, the scalars are inlined per iteration, and
  the partial outputs, written in rows by the split launch, are read as vectors in those rows;
* per-row statistics stored into a row of a tensor and read back as per-row scales, in a row of
  whole tiles (a column vector block moved along a row: through a row block) and inside a tile;
* per-row maxima of each split stored into a row of a scratch tensor (a column, flat, on its own),
  read by the next launch as one block of tiles: both launches take the tiles;
* a score mask that joins a mask block's test and an index test with ``&``, and selections on
  comparisons of block values joined with and, or, not;
* scales read from a column of a tensor and used per column; stores guarded by the rows they keep.
"""

import math

import tilelang  # noqa: F401
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_ops import assert_close

LOG2E = 1.44269504


def gqa_split_decode(batch=1, heads=8, kv_heads=2, seq_kv=256, dim=64, splits=4, block_N=32, block_H=32):
    """Decode attention of ``heads`` query heads over ``kv_heads`` key/value heads (a group of
    heads // kv_heads query heads each), the keys in ``splits`` slices."""
    group = heads // kv_heads
    per_split = seq_kv // splits
    scale = dim**-0.5 * LOG2E
    bf16, f32 = "bfloat16", "float32"

    @T.prim_func
    def main(Q: T.Tensor((batch, heads, dim), bf16), K: T.Tensor((batch, seq_kv, kv_heads, dim), bf16),
             V: T.Tensor((batch, seq_kv, kv_heads, dim), bf16), Out: T.Tensor((batch, heads, dim), bf16)):
        lse_split = T.alloc_global((batch, heads, splits), f32)
        out_split = T.alloc_global((batch, heads, splits, dim), f32)
        with T.Kernel(kv_heads, splits, batch) as (kvh, sp, b):
            q_s = T.alloc_shared((block_H, dim), bf16)
            k_s = T.alloc_shared((block_N, dim), bf16)
            v_s = T.alloc_shared((block_N, dim), bf16)
            o_s = T.alloc_shared((group, dim), f32)
            acc_s = T.alloc_fragment((block_H, block_N), f32)
            acc_p = T.alloc_fragment((block_H, block_N), bf16)
            acc_o = T.alloc_fragment((block_H, dim), f32)
            row_max = T.alloc_fragment((block_H,), f32)
            row_max_prev = T.alloc_fragment((block_H,), f32)
            rescale = T.alloc_fragment((block_H,), f32)
            row_sum = T.alloc_fragment((block_H,), f32)
            denom = T.alloc_fragment((block_H,), f32)
            T.copy(Q[b, kvh * group : kvh * group + block_H, :], q_s)
            T.fill(acc_o, 0)
            T.fill(denom, 0)
            T.fill(row_max, -T.infinity(f32))
            for t in T.Pipelined(per_split // block_N, num_stages=2):
                start = sp * per_split + t * block_N
                T.copy(K[b, start : start + block_N, kvh, :], k_s)
                T.clear(acc_s)
                T.gemm(q_s, k_s, acc_s, transpose_B=True)
                T.copy(row_max, row_max_prev)
                T.reduce_max(acc_s, row_max, dim=1, clear=False)
                for h in T.Parallel(block_H):
                    rescale[h] = T.exp2((row_max_prev[h] - row_max[h]) * scale)
                for h, n in T.Parallel(block_H, block_N):
                    acc_s[h, n] = T.exp2((acc_s[h, n] - row_max[h]) * scale)
                T.reduce_sum(acc_s, row_sum, dim=1)
                for h in T.Parallel(block_H):
                    denom[h] = denom[h] * rescale[h] + row_sum[h]
                T.copy(acc_s, acc_p)
                for h, d in T.Parallel(block_H, dim):
                    acc_o[h, d] *= rescale[h]
                T.copy(V[b, start : start + block_N, kvh, :], v_s)
                T.gemm(acc_p, v_s, acc_o)
            for h, d in T.Parallel(block_H, dim):
                acc_o[h, d] /= denom[h]
            for h in T.Parallel(block_H):
                if h < group:
                    lse_split[b, kvh * group + h, sp] = T.log2(denom[h]) + row_max[h] * scale
            T.copy(acc_o[:group, :], o_s)
            T.copy(o_s, out_split[b, kvh * group : (kvh + 1) * group, sp, :])

        with T.Kernel(heads, batch) as (head, bb):
            acc = T.alloc_fragment((dim,), f32)
            part = T.alloc_fragment((dim,), f32)
            lse_max = T.alloc_var(f32)
            lse_sum = T.alloc_var(f32)
            w = T.alloc_var(f32)
            T.clear(acc)
            T.clear(lse_sum)
            lse_max = -T.infinity(f32)
            for s in T.serial(splits):
                lse_max = T.max(lse_max, lse_split[bb, head, s])
            for s in T.serial(splits):
                lse_sum += T.exp2(lse_split[bb, head, s] - lse_max)
            for s in T.serial(splits):
                w = T.exp2(lse_split[bb, head, s] - lse_max) / lse_sum
                for d in T.Parallel(dim):
                    part[d] = out_split[bb, head, s, d]
                for d in T.Parallel(dim):
                    acc[d] += part[d] * w
            for d in T.Parallel(dim):
                Out[bb, head, d] = acc[d]

    return main


def test_a_grouped_split_kv_decode_and_its_combine_run_against_torch():
    q = torch.randn(1, 8, 64).bfloat16()
    k, v = torch.randn(1, 256, 2, 64).bfloat16(), torch.randn(1, 256, 2, 64).bfloat16()
    artifacts = tilelang_tt.compile(gqa_split_decode())
    out = artifacts.run(q, k, v)
    keys, values = (t.float().repeat_interleave(4, dim=2)[0].transpose(0, 1) for t in (k, v))  # [heads, seq, dim]
    weights = torch.softmax(torch.einsum("hd,hsd->hs", q.float()[0], keys) / math.sqrt(64), dim=-1)
    assert_close(out.float()[0], torch.einsum("hs,hsd->hd", weights, values), 2.0**-6)
    # the split launch writes the partial outputs in rows; the combine reads them as vectors of those rows
    (out_split,) = [b for b in artifacts.plan.buffers if b.name == "out_split"]
    assert out_split.layout.value == "row_major" and out_split.scratch


def row_stats_then_scale(rows=128, cols=64, block=64, stat_row=32):
    """Launch 0 stores each block's per-row sums of squares into row ``stat_row`` of ``Stats``;
    launch 1 reads them back as per-row scales: y = x / (1 + sum of squares of its row)."""

    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), Y: T.Tensor((rows, cols), "float32")):
        Stats = T.alloc_global((64, rows), "float32")
        with T.Kernel(rows // block) as by:
            x = T.alloc_shared((block, cols), "float32")
            sq = T.alloc_fragment((block, cols), "float32")
            ss = T.alloc_fragment((block,), "float32")
            T.copy(X[by * block, 0], x)
            for i, j in T.Parallel(block, cols):
                sq[i, j] = x[i, j] * x[i, j]
            T.reduce_sum(sq, ss, dim=1)
            T.copy(ss, Stats[stat_row, by * block : (by + 1) * block])
        with T.Kernel(rows // block) as by:
            x = T.alloc_shared((block, cols), "float32")
            s = T.alloc_fragment((block,), "float32")
            y = T.alloc_fragment((block, cols), "float32")
            T.copy(X[by * block, 0], x)
            T.copy(Stats[stat_row, by * block : (by + 1) * block], s)
            for i, j in T.Parallel(block, cols):
                y[i, j] = x[i, j] / (1 + s[i])
            T.copy(y, Y[by * block, 0])

    return main


def test_per_row_values_stored_into_a_row_of_tiles_and_read_back_per_row():
    """Row 32 starts a tile row: the tensor stays in tiles and each launch moves its column vector
    through a row vector block (before, the writer wrote the block's row 0, the first value and
    padding, and the reader a row into a block read by column: 7 to 22 off)."""
    artifacts = tilelang_tt.compile(row_stats_then_scale())
    (stats,) = [b for b in artifacts.plan.buffers if b.scratch]
    assert (stats.layout.value, stats.flat, stats.column) == ("interleaved", False, False)
    x = torch.randn(128, 64)
    assert_close(artifacts.run(x), x / (1 + (x * x).sum(1, keepdim=True)), 2.0**-8)


def test_per_row_values_stored_into_a_row_inside_a_tile_and_read_back_per_row():
    """Row 3 lies inside a tile row: both launches lay the tensor out flat, as a column."""
    artifacts = tilelang_tt.compile(row_stats_then_scale(stat_row=3))
    (stats,) = [b for b in artifacts.plan.buffers if b.scratch]
    assert (stats.flat, stats.column) == (True, True)
    x = torch.randn(128, 64)
    assert_close(artifacts.run(x), x / (1 + (x * x).sum(1, keepdim=True)), 2.0**-8)


def split_row_max(rows=64, cols=256, splits=4):
    """Launch 0: each split's per-row maxima into row ``split`` of a scratch tensor; launch 1 reads
    the (splits, rows) tensor as one block and takes the maximum over the splits."""
    width = cols // splits

    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), M: T.Tensor((rows,), "float32")):
        part_max = T.alloc_global((splits, rows), "float32")
        with T.Kernel(splits) as sp:
            x = T.alloc_shared((rows, width), "float32")
            m = T.alloc_fragment((rows,), "float32")
            T.copy(X[0, sp * width], x)
            T.reduce_max(x, m, dim=1)
            T.copy(m, part_max[sp, 0:rows])
        with T.Kernel(1) as bx:
            parts = T.alloc_fragment((splits, rows), "float32")
            best = T.alloc_fragment((rows,), "float32")
            T.copy(part_max[0:splits, 0:rows], parts)
            T.reduce_max(parts, best, dim=0)
            T.copy(best, M[0:rows])

    return main


def test_a_scratch_tensor_one_launch_writes_as_a_column_and_the_next_reads_in_tiles():
    """Launch 0 alone would lay part_max out flat as a column (its rows start inside a tile), which
    launch 1, reading a block of tiles, cannot take: launch 0 is compiled again with tiles."""
    artifacts = tilelang_tt.compile(split_row_max())
    (part_max,) = [b for b in artifacts.plan.buffers if b.scratch]
    assert (part_max.layout.value, part_max.flat, part_max.column) == ("interleaved", False, False)
    x = torch.randn(64, 256)
    # compute transposes each tile of the vector through its 19-bit source registers (tf32: 10 bits)
    assert_close(artifacts.run(x), x.max(dim=1).values, 2.0**-10)


def masked_scores(rows=32, cols=64, valid=48):
    """Scores kept where a key is visible (a uint8 mask) and inside the valid length, both tests in
    one condition joined with ``&``; -inf elsewhere."""

    @T.prim_func
    def main(S: T.Tensor((rows, cols), "float32"), Mask: T.Tensor((cols,), "uint8"),
             Out: T.Tensor((rows, cols), "float32")):
        with T.Kernel(1) as bx:
            s = T.alloc_fragment((rows, cols), "float32")
            seen = T.alloc_fragment((cols,), "uint8")
            T.copy(S[0, 0], s)
            T.copy(Mask[0:cols], seen)
            for i, j in T.Parallel(rows, cols):
                s[i, j] = T.if_then_else((seen[j] != 0) & (j < valid), s[i, j], -T.infinity("float32"))
            T.copy(s, Out[0, 0])

    return main


def test_a_selection_on_a_mask_block_and_an_index_joined_with_and_runs_against_torch():
    s, mask = torch.randn(32, 64), torch.randint(0, 2, (64,), dtype=torch.uint8)
    out = tilelang_tt.compile(masked_scores()).run(s, mask)
    keep = (mask != 0) & (torch.arange(64) < 48)
    assert torch.equal(out, torch.where(keep, s, torch.tensor(float("-inf"))))


def per_column_scales_from_a_column(rows=64, cols=64, column=8):
    """Scales read from a column of W and used per column of the block (``w[j]``): a row vector
    whose slice is a column, moved through a column block."""

    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), W: T.Tensor((cols, 32), "float32"),
             Y: T.Tensor((rows, cols), "float32")):
        with T.Kernel(1) as bx:
            x = T.alloc_shared((rows, cols), "float32")
            w = T.alloc_fragment((cols,), "float32")
            y = T.alloc_fragment((rows, cols), "float32")
            T.copy(X[0, 0], x)
            T.copy(W[0:cols, column], w)
            for i, j in T.Parallel(rows, cols):
                y[i, j] = x[i, j] * w[j]
            T.copy(y, Y[0, 0])

    return main


def test_a_column_of_a_tensor_read_as_per_column_scales_runs_against_torch():
    x, w = torch.randn(64, 64), torch.randn(64, 32)
    out = tilelang_tt.compile(per_column_scales_from_a_column()).run(x, w)
    assert_close(out, x * w[:, 8][None, :], 2.0**-10)  # the transpose's 19-bit source registers


def test_stores_guarded_by_the_rows_they_keep_run_against_torch():
    """Each block sums 32 rows from row 4 * g and keeps the first 4 sums: the blocks' stores are apart."""
    from tests.passes.test_pass_layout_aware_work_partition_tt import guarded_row_sums

    x = torch.randn(64, 64)
    out = tilelang_tt.compile(guarded_row_sums(4)).run(x)
    assert_close(out[:32, 0], x[:32].sum(dim=1), 2.0**-10)


def test_selections_on_comparisons_of_block_values_joined_with_and_or_not_run_against_torch():
    from tests.compiler.bad_kernels import unsupported_expression

    a = torch.randn(64, 64).bfloat16() * 2
    x = a.float()
    cases = [(lambda v: T.if_then_else(T.And(v > 0, v < 1), v, v * 2), torch.where((x > 0) & (x < 1), x, x * 2)),
             (lambda v: T.if_then_else(T.Or(v < -1, v > 1), v, v * 0), torch.where((x < -1) | (x > 1), x, x * 0)),
             (lambda v: T.if_then_else(T.Not(v > 0), v, v * 2), torch.where(~(x > 0), x, x * 2))]
    for value, ref in cases:
        assert torch.equal(tilelang_tt.compile(unsupported_expression(value)).run(a).float(), ref)
