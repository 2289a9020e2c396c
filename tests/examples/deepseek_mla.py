"""Multi-head latent attention decoding (DeepSeek MLA), modelled on tile-ai/tilelang's
examples/deepseek_mla/example_mla_decode.py (its ``flashattn`` factory: decode_whole, and
decode_in_splits when num_split > 1).

Written anew for this catalogue in that example's idioms, not copied: a ``@tilelang.jit`` factory
returning one of two ``@T.prim_func`` kernels. Every query head of a batch entry reads the single
latent KV head: the score of a key is q . kv + q_pe . k_pe (two ``T.gemm`` calls into one
accumulator) and the latent kv is also the value. A program takes ``block_H`` heads and runs the
base-2 online softmax over key blocks. The split form gives each of ``num_split`` programs a slice
of the keys, writes partial outputs and their log-sum-exps to ``T.alloc_global`` scratch tensors,
and a second ``T.Kernel`` combines them with ``T.alloc_var`` scalars. bfloat16 data, float32
accumulators. Sizes: batch 1, 32 heads, 128 keys, dim 64, pe_dim 32, block_N 64,
block_H = min(64, heads) as the example's main sets it; num_split 1 (the example's) and 2.

The reference is softmax([q, q_pe] . [kv, k_pe] / sqrt(dim + pe_dim)) kv in float32."""

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn

LOG2E = 1.44269504


@tilelang.jit(out_idx=[4], pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True})
def mla_decode(batch, heads, kv_head_num, seqlen_kv, dim, pe_dim, block_N, block_H, num_split, softmax_scale):
    qk_scale = float(softmax_scale * LOG2E)
    bf16, f32 = T.bfloat16, T.float32
    heads_per_kv = heads // kv_head_num
    rows = min(block_H, heads_per_kv)  # heads a program really owns
    assert kv_head_num == 1, "the latent KV is a single head"
    keys_per_split = seqlen_kv // num_split

    @T.prim_func
    def decode_in_splits(
        Q: T.Tensor([batch, heads, dim], bf16),
        Q_pe: T.Tensor([batch, heads, pe_dim], bf16),
        KV: T.Tensor([batch, seqlen_kv, kv_head_num, dim], bf16),
        K_pe: T.Tensor([batch, seqlen_kv, kv_head_num, pe_dim], bf16),
        Output: T.Tensor([batch, heads, dim], bf16),
    ):
        split_lse = T.alloc_global([batch, heads, num_split], bf16)
        split_out = T.alloc_global([batch, heads, num_split, dim], bf16)

        # each program: block_H heads against one slice of the keys
        with T.Kernel(batch, heads // min(block_H, heads_per_kv), num_split, threads=256) as (b, hb, part):
            q_s = T.alloc_shared([block_H, dim], bf16)
            p_s = T.alloc_shared([block_H, block_N], bf16)
            qpe_s = T.alloc_shared([block_H, pe_dim], bf16)
            kv_s = T.alloc_shared([block_N, dim], bf16)
            kpe_s = T.alloc_shared([block_N, pe_dim], bf16)
            o_s = T.alloc_shared([block_H, dim], bf16)
            score = T.alloc_fragment([block_H, block_N], f32)
            p = T.alloc_fragment([block_H, block_N], bf16)
            o = T.alloc_fragment([block_H, dim], f32)
            m_new = T.alloc_fragment([block_H], f32)
            m_old = T.alloc_fragment([block_H], f32)
            alpha = T.alloc_fragment([block_H], f32)
            p_sum = T.alloc_fragment([block_H], f32)
            l = T.alloc_fragment([block_H], f32)

            kv_head = hb // (heads_per_kv // block_H)
            T.use_swizzle(10)

            T.copy(Q[b, hb * rows : (hb + 1) * rows, :], q_s)
            T.copy(Q_pe[b, hb * rows : (hb + 1) * rows, :], qpe_s)
            T.fill(o, 0)
            T.fill(l, 0)
            T.fill(m_new, -T.infinity(f32))

            for kb in T.Pipelined(T.ceildiv(keys_per_split, block_N), num_stages=2):
                lo = keys_per_split * part + kb * block_N
                hi = keys_per_split * part + (kb + 1) * block_N
                T.copy(KV[b, lo:hi, kv_head, :], kv_s)
                T.copy(K_pe[b, lo:hi, kv_head, :], kpe_s)
                T.clear(score)
                T.gemm(q_s, kv_s, score, transpose_B=True, policy=T.GemmWarpPolicy.FullCol)
                T.gemm(qpe_s, kpe_s, score, transpose_B=True, policy=T.GemmWarpPolicy.FullCol)
                T.copy(m_new, m_old)
                T.fill(m_new, -T.infinity(f32))
                T.reduce_max(score, m_new, dim=1, clear=False)
                for i in T.Parallel(block_H):
                    m_new[i] = T.max(m_new[i], m_old[i])
                for i in T.Parallel(block_H):
                    alpha[i] = T.exp2(m_old[i] * qk_scale - m_new[i] * qk_scale)
                for i, j in T.Parallel(block_H, block_N):
                    score[i, j] = T.exp2(score[i, j] * qk_scale - m_new[i] * qk_scale)
                T.reduce_sum(score, p_sum, dim=1)
                T.copy(score, p_s)
                T.copy(p_s, p)
                for i in T.Parallel(block_H):
                    l[i] = l[i] * alpha[i] + p_sum[i]
                for i, d in T.Parallel(block_H, dim):
                    o[i, d] *= alpha[i]
                T.gemm(p, kv_s, o, policy=T.GemmWarpPolicy.FullCol)
            for i, d in T.Parallel(block_H, dim):
                o[i, d] /= l[i]
            for i in T.Parallel(block_H):
                l[i] = T.log2(l[i]) + m_new[i] * qk_scale
            T.copy(l, split_lse[b, hb * rows : (hb + 1) * rows, part])
            T.copy(o, o_s)
            T.copy(o_s, split_out[b, hb * rows : (hb + 1) * rows, part, :])

        # merge the slices: weights 2^(lse_part - lse_total)
        with T.Kernel(heads, batch, threads=128) as (h, b):
            part_row = T.alloc_fragment([dim], bf16)
            merged = T.alloc_fragment([dim], f32)
            lse_part = T.alloc_var(f32)
            lse_total = T.alloc_var(f32)
            lse_peak = T.alloc_var(f32)
            weight = T.alloc_var(f32)

            T.clear(lse_total)
            T.clear(merged)
            lse_peak = -T.infinity(f32)
            for sp in T.serial(num_split):
                lse_peak = T.max(lse_peak, split_lse[b, h, sp])
            for sp in T.Pipelined(num_split, num_stages=1):
                lse_part = split_lse[b, h, sp]
                lse_total += T.exp2(lse_part - lse_peak)
            lse_total = T.log2(lse_total) + lse_peak
            for sp in T.serial(num_split):
                for d in T.Parallel(dim):
                    part_row[d] = split_out[b, h, sp, d]
                lse_part = split_lse[b, h, sp]
                weight = T.exp2(lse_part - lse_total)
                for d in T.Parallel(dim):
                    merged[d] += part_row[d] * weight
            for d in T.Parallel(dim):
                Output[b, h, d] = merged[d]

    @T.prim_func
    def decode_whole(
        Q: T.Tensor([batch, heads, dim], bf16),
        Q_pe: T.Tensor([batch, heads, pe_dim], bf16),
        KV: T.Tensor([batch, seqlen_kv, kv_head_num, dim], bf16),
        K_pe: T.Tensor([batch, seqlen_kv, kv_head_num, pe_dim], bf16),
        Output: T.Tensor([batch, heads, dim], bf16),
    ):
        with T.Kernel(heads // min(block_H, heads_per_kv), batch, threads=256) as (hb, b):
            q_s = T.alloc_shared([block_H, dim], bf16)
            p_s = T.alloc_shared([block_H, block_N], bf16)
            qpe_s = T.alloc_shared([block_H, pe_dim], bf16)
            kv_s = T.alloc_shared([block_N, dim], bf16)
            kpe_s = T.alloc_shared([block_N, pe_dim], bf16)
            o_s = T.alloc_shared([block_H, dim], bf16)
            score = T.alloc_fragment([block_H, block_N], f32)
            o = T.alloc_fragment([block_H, dim], f32)
            m_new = T.alloc_fragment([block_H], f32)
            m_old = T.alloc_fragment([block_H], f32)
            alpha = T.alloc_fragment([block_H], f32)
            p_sum = T.alloc_fragment([block_H], f32)
            l = T.alloc_fragment([block_H], f32)

            kv_head = hb // (heads_per_kv // block_H)

            T.copy(Q[b, hb * rows : (hb + 1) * rows, :], q_s)
            T.copy(Q_pe[b, hb * rows : (hb + 1) * rows, :], qpe_s)
            T.fill(o, 0)
            T.fill(l, 0)
            T.fill(m_new, -T.infinity(f32))

            for kb in T.Pipelined(T.ceildiv(seqlen_kv, block_N), num_stages=2):
                T.copy(KV[b, kb * block_N : (kb + 1) * block_N, kv_head, :], kv_s)
                T.copy(K_pe[b, kb * block_N : (kb + 1) * block_N, kv_head, :], kpe_s)
                # the first gemm starts the scores afresh, the second adds the positional part
                T.gemm(q_s, kv_s, score, transpose_B=True, policy=T.GemmWarpPolicy.FullCol, clear_accum=True)
                T.gemm(qpe_s, kpe_s, score, transpose_B=True, policy=T.GemmWarpPolicy.FullCol)
                T.copy(m_new, m_old)
                T.fill(m_new, -T.infinity(f32))
                T.reduce_max(score, m_new, dim=1, clear=False)
                for i in T.Parallel(block_H):
                    m_new[i] = T.max(m_new[i], m_old[i])
                for i in T.Parallel(block_H):
                    alpha[i] = T.exp2(m_old[i] * qk_scale - m_new[i] * qk_scale)
                for i, j in T.Parallel(block_H, block_N):
                    score[i, j] = T.exp2(score[i, j] * qk_scale - m_new[i] * qk_scale)
                T.reduce_sum(score, p_sum, dim=1)
                T.copy(score, p_s)
                for i in T.Parallel(block_H):
                    l[i] = l[i] * alpha[i] + p_sum[i]
                for i, d in T.Parallel(block_H, dim):
                    o[i, d] *= alpha[i]
                T.gemm(p_s, kv_s, o, policy=T.GemmWarpPolicy.FullCol)
            for i, d in T.Parallel(block_H, dim):
                o[i, d] /= l[i]
            T.copy(o, o_s)
            T.copy(o_s, Output[b, hb * rows : (hb + 1) * rows, :])

    return decode_in_splits if num_split > 1 else decode_whole


def mla_reference(q, q_pe, kv, k_pe):
    """q [b, h, dim], q_pe [b, h, pe_dim], kv [b, s, 1, dim], k_pe [b, s, 1, pe_dim] -> [b, h, dim]."""
    kv, k_pe = kv[:, :, 0].float(), k_pe[:, :, 0].float()
    scores = torch.matmul(q.float(), kv.transpose(1, 2)) + torch.matmul(q_pe.float(), k_pe.transpose(1, 2))
    weights = torch.softmax(scores / (q.shape[-1] + q_pe.shape[-1]) ** 0.5, dim=-1)
    return torch.matmul(weights, kv)


BATCH, HEADS, KV_HEADS, KV_LEN, DIM, PE_DIM = 1, 32, 1, 128, 64, 32


def _inputs():
    return (randn(BATCH, HEADS, DIM, seed=1), randn(BATCH, HEADS, PE_DIM, seed=2),
            randn(BATCH, KV_LEN, KV_HEADS, DIM, seed=3), randn(BATCH, KV_LEN, KV_HEADS, PE_DIM, seed=4))


def _entry(num_split):
    return Example(f"deepseek_mla/mla_decode{' split' if num_split > 1 else ''}",
                   "deepseek_mla/example_mla_decode.py: flashattn", mla_decode,
                   dict(batch=BATCH, heads=HEADS, kv_head_num=KV_HEADS, seqlen_kv=KV_LEN, dim=DIM, pe_dim=PE_DIM,
                        block_N=64, block_H=min(64, HEADS // KV_HEADS), num_split=num_split,
                        softmax_scale=(DIM + PE_DIM) ** -0.5),
                   _inputs, mla_reference)


EXAMPLES = [_entry(1), _entry(2)]
