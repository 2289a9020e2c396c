"""Attention with the keys split across programs (flash decoding), modelled on tile-ai/tilelang's
examples/flash_decoding: example_gqa_decode.py (``flashattn``: decode_in_splits, the kernel
its heuristic picks on GPUs other than sm_89 — block_N 128, block_H 64, num_split 8, 2 stages,
128 threads — without its @autotune) and example_mha_inference.py (``flashattn`` with its
module-level num_split = 4 and its main's block_M 128, block_N 64).

Both are written anew for this catalogue in those examples' idioms, not copied: a ``@tilelang.jit``
factory returning a ``@T.prim_func`` with two ``T.Kernel`` launches. The first gives each program a
slice of the keys and runs the base-2 online softmax over it, writing a partial output and its
log2-sum-exp to ``T.alloc_global`` scratch tensors; the second rescales the partials by
2^(lse_part - lse_total) and sums them. The decoding kernel serves ``heads // groups`` query heads
from each key/value group and masks keys with a uint8 mask; the inference kernel copies with
``disable_tma=True`` as the example does. bfloat16 data, float32 accumulators. Sizes: decoding
batch 1, 32 heads, 8 KV groups, 1024 keys, dim 64, a random 0/1 mask; inference batch 1, 2 heads,
128 queries, 512 keys, dim 64.

References (float32): softmax(q k^T / sqrt(d)) v with the masked keys left out, query head h
reading group h // (heads // groups); plain softmax attention for the inference kernel."""

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn

LOG2E = 1.44269504
NO_WARP_SPECIALIZATION = {tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True}


@tilelang.jit(out_idx=[4], pass_configs=NO_WARP_SPECIALIZATION)
def gqa_split_decode(batch, heads, groups, seqlen_kv, dim, block_N, block_H, num_split, num_stages, threads):
    qk_scale = dim**-0.5 * LOG2E
    bf16, f32 = T.bfloat16, T.float32
    heads_per_group = heads // groups
    rows = min(block_H, heads_per_group)  # query heads a program owns
    keys = min(block_N, seqlen_kv // num_split)  # keys a step of the split loop reads
    per_split = seqlen_kv // num_split
    lanes = 128  # the combine kernel's threads, one log-sum-exp copy each

    @T.prim_func
    def decode_in_splits(
        Q: T.Tensor([batch, heads, dim], bf16),
        K: T.Tensor([batch, seqlen_kv, groups, dim], bf16),
        V: T.Tensor([batch, seqlen_kv, groups, dim], bf16),
        kv_mask: T.Tensor([batch, seqlen_kv, groups], "uint8"),
        Output: T.Tensor([batch, heads, dim], bf16),
    ):
        part_lse = T.alloc_global([batch, heads, num_split], bf16)
        part_out = T.alloc_global([batch, heads, num_split, dim], bf16)

        with T.Kernel(batch, heads // rows, num_split, threads=threads) as (bx, by, bz):
            q_s = T.alloc_shared([block_H, dim], bf16)
            k_s = T.alloc_shared([block_N, dim], bf16)
            v_s = T.alloc_shared([block_N, dim], bf16)
            o_s = T.alloc_shared([rows, dim], bf16)
            s = T.alloc_fragment([block_H, block_N], f32)
            p = T.alloc_fragment([block_H, block_N], bf16)
            visible = T.alloc_fragment([block_N], "uint8")
            o = T.alloc_fragment([block_H, dim], f32)
            m_new = T.alloc_fragment([block_H], f32)
            m_old = T.alloc_fragment([block_H], f32)
            alpha = T.alloc_fragment([block_H], f32)
            p_sum = T.alloc_fragment([block_H], f32)
            l = T.alloc_fragment([block_H], f32)

            b = bx
            hb = by
            part = bz
            group = hb // (heads_per_group // rows)

            T.copy(Q[b, hb * rows : hb * rows + block_H, :], q_s)
            T.fill(o, 0)
            T.fill(l, 0)
            T.fill(m_new, -T.infinity(f32))

            for kb in T.Pipelined(T.ceildiv(per_split, block_N), num_stages=num_stages):
                T.copy(K[b, per_split * part + kb * keys : per_split * part + (kb + 1) * keys, group, :], k_s)
                T.copy(kv_mask[b, per_split * part + kb * keys : per_split * part + (kb + 1) * keys, group], visible)
                T.clear(s)
                T.gemm(q_s, k_s, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                for i, j in T.Parallel(block_H, block_N):
                    s[i, j] = T.if_then_else((visible[j] != 0) & (j < per_split), s[i, j], -T.infinity(f32))
                T.copy(m_new, m_old)
                T.fill(m_new, -T.infinity(f32))
                T.reduce_max(s, m_new, dim=1, clear=False)
                for i in T.Parallel(block_H):
                    m_new[i] = T.max(m_new[i], m_old[i])
                for i in T.Parallel(block_H):
                    alpha[i] = T.exp2(m_old[i] * qk_scale - m_new[i] * qk_scale)
                for i, j in T.Parallel(block_H, block_N):
                    s[i, j] = T.exp2(s[i, j] * qk_scale - m_new[i] * qk_scale)
                T.reduce_sum(s, p_sum, dim=1)
                for i in T.Parallel(block_H):
                    l[i] = l[i] * alpha[i] + p_sum[i]
                T.copy(s, p)
                for i, d in T.Parallel(block_H, dim):
                    o[i, d] *= alpha[i]
                T.copy(V[b, per_split * part + kb * keys : per_split * part + (kb + 1) * keys, group, :], v_s)
                T.gemm(p, v_s, o, policy=T.GemmWarpPolicy.FullRow)
            for i, d in T.Parallel(block_H, dim):
                o[i, d] /= l[i]
            for i in T.Parallel(block_H):
                l[i] = T.log2(l[i]) + m_new[i] * qk_scale

            for i in T.Parallel(block_H):
                if i < rows:
                    part_lse[b, hb * rows + i, part] = l[i]
            T.copy(o[:rows, :], o_s)
            T.copy(o_s, part_out[b, hb * rows : (hb + 1) * rows, part, :])

        # combine: every thread keeps its own copy of a head's log-sum-exps
        with T.Kernel(heads, batch, threads=128) as (head, bi):
            row = T.alloc_fragment([dim], bf16)
            merged = T.alloc_fragment([dim], f32)
            lse_parts = T.alloc_fragment([num_split, lanes], bf16)
            lse_total = T.alloc_fragment([lanes], f32)
            lse_peak = T.alloc_fragment([lanes], f32)
            weight = T.alloc_fragment([lanes], f32)

            T.clear(lse_total)
            T.clear(merged)
            for sp, t in T.Parallel(num_split, lanes):
                lse_parts[sp, t] = part_lse[bi, head, sp]
            T.reduce_max(lse_parts, lse_peak, dim=0, clear=True)
            for sp in T.serial(num_split):
                for t in T.Parallel(lanes):
                    lse_total[t] += T.exp2(lse_parts[sp, t] - lse_peak[t])
            for t in T.Parallel(lanes):
                lse_total[t] = T.log2(lse_total[t]) + lse_peak[t]
            for sp in T.serial(num_split):
                for d in T.Parallel(dim):
                    row[d] = part_out[bi, head, sp, d]
                for t in T.Parallel(lanes):
                    weight[t] = T.exp2(lse_parts[sp, t] - lse_total[t])
                # weight[d]: the weight is the same in every lane, and dim <= lanes
                for d in T.Parallel(dim):
                    merged[d] += row[d] * weight[d]
            for d in T.Parallel(dim):
                Output[bi, head, d] = merged[d]

    @T.prim_func
    def decode_whole(
        Q: T.Tensor([batch, heads, dim], bf16),
        K: T.Tensor([batch, seqlen_kv, groups, dim], bf16),
        V: T.Tensor([batch, seqlen_kv, groups, dim], bf16),
        kv_mask: T.Tensor([batch, seqlen_kv, groups], "uint8"),
        Output: T.Tensor([batch, heads, dim], bf16),
    ):
        with T.Kernel(batch, heads // rows, num_split, threads=threads) as (bx, by, bz):
            q_s = T.alloc_shared([block_H, dim], bf16)
            k_s = T.alloc_shared([block_N, dim], bf16)
            v_s = T.alloc_shared([block_N, dim], bf16)
            o_s = T.alloc_shared([rows, dim], bf16)
            s = T.alloc_fragment([block_H, block_N], f32)
            p = T.alloc_fragment([block_H, block_N], bf16)
            visible = T.alloc_fragment([block_N], "uint8")
            o = T.alloc_fragment([block_H, dim], f32)
            m_new = T.alloc_fragment([block_H], f32)
            m_old = T.alloc_fragment([block_H], f32)
            alpha = T.alloc_fragment([block_H], f32)
            p_sum = T.alloc_fragment([block_H], f32)
            l = T.alloc_fragment([block_H], f32)

            b = bx
            hb = by
            group = hb // (heads_per_group // rows)

            T.copy(Q[b, hb * rows : hb * rows + block_H, :], q_s)
            T.fill(o, 0)
            T.fill(l, 0)
            T.fill(m_new, -T.infinity(f32))

            for kb in T.Pipelined(T.ceildiv(per_split, block_N), num_stages=num_stages):
                T.copy(K[b, kb * block_N : (kb + 1) * block_N, group, :], k_s)
                T.copy(kv_mask[b, kb * block_N : (kb + 1) * block_N, group], visible)
                T.clear(s)
                T.gemm(q_s, k_s, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                for i, j in T.Parallel(block_H, block_N):
                    s[i, j] = T.if_then_else(visible[j] != 0, s[i, j], -T.infinity(f32))
                T.copy(m_new, m_old)
                T.fill(m_new, -T.infinity(f32))
                T.reduce_max(s, m_new, dim=1, clear=False)
                for i in T.Parallel(block_H):
                    m_new[i] = T.max(m_new[i], m_old[i])
                for i in T.Parallel(block_H):
                    alpha[i] = T.exp2(m_old[i] * qk_scale - m_new[i] * qk_scale)
                for i, j in T.Parallel(block_H, block_N):
                    s[i, j] = T.exp2(s[i, j] * qk_scale - m_new[i] * qk_scale)
                T.reduce_sum(s, p_sum, dim=1)
                for i in T.Parallel(block_H):
                    l[i] = l[i] * alpha[i] + p_sum[i]
                T.copy(s, p)
                for i, d in T.Parallel(block_H, dim):
                    o[i, d] *= alpha[i]
                T.copy(V[b, kb * block_N : (kb + 1) * block_N, group, :], v_s)
                T.gemm(p, v_s, o, policy=T.GemmWarpPolicy.FullRow)
            for i, d in T.Parallel(block_H, dim):
                o[i, d] /= l[i]
            for i in T.Parallel(block_H):
                l[i] = T.log2(l[i]) + m_new[i] * qk_scale
            T.copy(o[:rows, :], o_s)
            T.copy(o_s, Output[b, hb * rows : (hb + 1) * rows, :])

    return decode_in_splits if num_split > 1 else decode_whole


def masked_gqa_reference(q, k, v, mask):
    """q [b, heads, d], k and v [b, s, groups, d], mask [b, s, groups] -> [b, heads, d]."""
    per_group = q.shape[1] // k.shape[2]
    k, v = (t.float().repeat_interleave(per_group, dim=2).permute(0, 2, 1, 3) for t in (k, v))  # [b, heads, s, d]
    hidden = mask.repeat_interleave(per_group, dim=2).permute(0, 2, 1) == 0  # [b, heads, s]
    scores = torch.matmul(k, q.float()[..., None])[..., 0] / q.shape[-1] ** 0.5
    weights = torch.softmax(scores.masked_fill(hidden, float("-inf")), dim=-1)
    return torch.matmul(weights[:, :, None, :], v)[:, :, 0]


SPLITS = 4  # example_mha_inference.py's module-level num_split


@tilelang.jit(out_idx=[3])
def split_kv_inference(batch, heads, seqlen_q, seqlen_kv, dim, is_causal, block_M, block_N):
    qk_scale = dim**-0.5 * LOG2E
    bf16, f32 = T.bfloat16, T.float32
    per_split = seqlen_kv // SPLITS

    @T.prim_func
    def split_kv_attention(
        Q: T.Tensor([batch, seqlen_q, heads, dim], bf16),
        K: T.Tensor([batch, seqlen_kv, heads, dim], bf16),
        V: T.Tensor([batch, seqlen_kv, heads, dim], bf16),
        Output: T.Tensor([batch, seqlen_q, heads, dim], bf16),
    ):
        part_lse = T.alloc_global([batch, heads, SPLITS, seqlen_q], bf16)
        part_out = T.alloc_global([batch, seqlen_q, heads, SPLITS, dim], bf16)

        # one program per query block, (batch, head) pair and key slice
        with T.Kernel(T.ceildiv(seqlen_q, block_M), heads * batch, SPLITS, threads=128) as (bx, by, bz):
            q_s = T.alloc_shared([block_M, dim], bf16)
            k_s = T.alloc_shared([block_N, dim], bf16)
            v_s = T.alloc_shared([block_N, dim], bf16)
            o_s = T.alloc_shared([block_M, dim], bf16)
            s = T.alloc_fragment([block_M, block_N], f32)
            p = T.alloc_fragment([block_M, block_N], bf16)
            o = T.alloc_fragment([block_M, dim], f32)
            m_new = T.alloc_fragment([block_M], f32)
            m_old = T.alloc_fragment([block_M], f32)
            alpha = T.alloc_fragment([block_M], f32)
            p_sum = T.alloc_fragment([block_M], f32)
            l = T.alloc_fragment([block_M], f32)

            qb = bx
            head = by % heads
            b = by // heads
            part = bz

            T.copy(Q[b, qb * block_M : (qb + 1) * block_M, head, :], q_s, disable_tma=True)
            T.fill(o, 0)
            T.fill(l, 0)
            T.fill(m_new, -T.infinity(f32))

            # (as in the example, the causal form does not split the keys)
            n_kv_blocks = (
                T.min(T.ceildiv(seqlen_kv, block_N), T.ceildiv((qb + 1) * block_M, block_N))
                if is_causal
                else T.ceildiv(per_split, block_N)
            )
            for kb in T.Pipelined(n_kv_blocks, num_stages=2):
                T.copy(K[b, per_split * part + kb * block_N : per_split * part + (kb + 1) * block_N, head, :], k_s)
                if is_causal:
                    for i, j in T.Parallel(block_M, block_N):
                        s[i, j] = T.if_then_else(qb * block_M + i >= kb * block_N + j, 0, -T.infinity(s.dtype))
                else:
                    T.clear(s)
                T.gemm(q_s, k_s, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)

                T.copy(m_new, m_old)
                T.fill(m_new, -T.infinity(f32))
                T.reduce_max(s, m_new, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    m_new[i] = T.max(m_new[i], m_old[i])
                for i in T.Parallel(block_M):
                    alpha[i] = T.exp2(m_old[i] * qk_scale - m_new[i] * qk_scale)
                for i, j in T.Parallel(block_M, block_N):
                    s[i, j] = T.exp2(s[i, j] * qk_scale - m_new[i] * qk_scale)
                T.reduce_sum(s, p_sum, dim=1)
                for i in T.Parallel(block_M):
                    l[i] = l[i] * alpha[i] + p_sum[i]
                T.copy(s, p)

                for i, d in T.Parallel(block_M, dim):
                    o[i, d] *= alpha[i]
                T.copy(V[b, per_split * part + kb * block_N : per_split * part + (kb + 1) * block_N, head, :], v_s)
                T.gemm(p, v_s, o, policy=T.GemmWarpPolicy.FullRow)

            for i, d in T.Parallel(block_M, dim):
                o[i, d] /= l[i]
            for i in T.Parallel(block_M):
                l[i] = T.log2(l[i]) + m_new[i] * qk_scale
            T.copy(l, part_lse[b, head, part, qb * block_M : (qb + 1) * block_M])
            T.copy(o, o_s)
            T.copy(o_s, part_out[b, qb * block_M : (qb + 1) * block_M, head, part, :], disable_tma=True)

        # combine the key slices of a query block
        with T.Kernel(T.ceildiv(seqlen_q, block_M), heads, batch, threads=128) as (qc, hc, bc):
            part_o = T.alloc_fragment([block_M, dim], bf16)
            merged = T.alloc_fragment([block_M, dim], f32)
            merged_s = T.alloc_shared([block_M, dim], bf16)
            lse_parts = T.alloc_fragment([SPLITS, block_M], bf16)
            lse_one = T.alloc_fragment([block_M], f32)
            lse_total = T.alloc_fragment([block_M], f32)
            lse_peak = T.alloc_fragment([block_M], f32)
            weight = T.alloc_fragment([block_M], f32)

            T.clear(lse_total)
            T.clear(merged)
            T.copy(part_lse[bc, hc, :, qc * block_M : (qc + 1) * block_M], lse_parts)
            T.reduce_max(lse_parts, lse_peak, dim=0, clear=True)
            for sp in T.Pipelined(SPLITS):
                T.copy(lse_parts[sp, :], lse_one)
                for i in T.Parallel(block_M):
                    lse_total[i] += T.exp2(lse_one[i] - lse_peak[i])
            for i in T.Parallel(block_M):
                lse_total[i] = T.log2(lse_total[i]) + lse_peak[i]
            for sp in T.Pipelined(SPLITS, num_stages=2):
                T.copy(part_out[bc, qc * block_M : (qc + 1) * block_M, hc, sp, :], part_o)
                for i in T.Parallel(block_M):
                    lse_one[i] = lse_parts[sp, i]
                for i in T.Parallel(block_M):
                    weight[i] = T.exp2(lse_one[i] - lse_total[i])
                for i, d in T.Parallel(block_M, dim):
                    merged[i, d] += part_o[i, d] * weight[i]
            T.copy(merged, merged_s)
            T.copy(merged_s, Output[bc, qc * block_M : (qc + 1) * block_M, hc, :], disable_tma=True)

    return split_kv_attention


def attention_bshd(q, k, v):
    """softmax(q k^T / sqrt(d)) v for [batch, seq, heads, dim] operands, in float32."""
    q, k, v = (t.float().transpose(1, 2) for t in (q, k, v))
    weights = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) / q.shape[-1] ** 0.5, dim=-1)
    return torch.matmul(weights, v).transpose(1, 2)


DECODE = dict(batch=1, heads=32, groups=8, seqlen_kv=1024, dim=64)


def _decode_inputs():
    b, h, g, s, d = (DECODE[key] for key in ("batch", "heads", "groups", "seqlen_kv", "dim"))
    mask = torch.randint(0, 2, (b, s, g), dtype=torch.uint8, generator=torch.Generator().manual_seed(4))
    return randn(b, h, d, seed=1), randn(b, s, g, d, seed=2), randn(b, s, g, d, seed=3), mask


def _inference_inputs():
    return randn(1, 128, 2, 64, seed=1), randn(1, 512, 2, 64, seed=2), randn(1, 512, 2, 64, seed=3)


EXAMPLES = [
    Example("flash_decoding/gqa_decode split", "flash_decoding/example_gqa_decode.py: flashattn", gqa_split_decode,
            dict(DECODE, block_N=128, block_H=64, num_split=8, num_stages=2, threads=128), _decode_inputs,
            masked_gqa_reference),
    Example("flash_decoding/mha_inference", "flash_decoding/example_mha_inference.py: flashattn", split_kv_inference,
            dict(batch=1, heads=2, seqlen_q=128, seqlen_kv=512, dim=64, is_causal=False, block_M=128, block_N=64),
            _inference_inputs, attention_bshd),
]
