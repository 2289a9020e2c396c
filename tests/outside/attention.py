"""Attention and decoding pieces, outside TileLang's examples/.

Modelled on DeepSeek-V3.2-Exp ``inference/kernel.py`` (``fp8_index_kernel``: the lightning indexer's
scores — per (batch, query) a ``(heads, dim)`` query block against key blocks, ``T.gemm(.., transpose_B,
clear_accum=True)`` into a ``(keys, heads)`` fragment, ``relu(logits) * q_s[h]`` written with the
fragment's indices swapped, a row sum and ``* k_s``, inside a ``T.Pipelined`` loop that allocates its
blocks; ``T.symbolic`` batch, queries and keys), on sgl-project/sglang
``python/sglang/srt/layers/attention/nsa/tilelang_kernel.py`` (``sparse_attention_fwd_kernel_v1``: DeepSeek
sparse attention over top-k key indices, the key rows gathered ``KV[b, Indices[..], g, d]`` element by
element, a main and a tail gemm into the same scores, an online softmax with ``exp2``, slices
``Q[b, s, H0:H1, :D]``) and on tile-ai/TileOPs ``src/tileops/kernels/attention/gqa_decode.py``
(``_gqa_decode_no_split_kernel``: grouped-query decoding with the valid key length a scalar
``real_seqlen_kv: T.int32`` parameter, the online softmax and rescale as ``T.macro`` builders from
``attention/online_softmax.py``) and ``src/tileops/kernels/fp8_lightning_indexer.py``
(``_fp8_lightning_indexer_kernel`` with one key group: the ``(keys, queries * heads)`` scores viewed by
``T.reshape`` as a rank-4 fragment and summed over heads into a rank-3 one, the key range of a query
block the min / max of per-query bounds read from tensors into ``T.alloc_var``, a ``T.dynamic`` query
count that also sizes the ``seq_len * heads`` rows of the queries). Written anew in their idioms;
bfloat16 for float16 and float8; sizes scaled down (the indexer's key blocks 256 / 64 for 512 / 128;
16 heads; 128 to 256 keys)."""

import functools

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn

LOG2E = 1.44269504
BF16, FP32 = "bfloat16", "float32"
PASS_CONFIGS = {tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True,
                tilelang.PassConfigKey.TL_DISABLE_TMA_LOWER: True}


@tilelang.jit(out_idx=[4], pass_configs=PASS_CONFIGS)
def fp8_index_kernel(h: int, d: int, blk_n1: int = 512, blk_n2: int = 128):
    b = T.symbolic("b")
    m = T.symbolic("m")
    n = T.symbolic("n")

    @T.prim_func
    def fp8_index_kernel_(
        q: T.Tensor[(b, m, h, d), BF16],
        q_s: T.Tensor[(b, m, h), FP32],
        k: T.Tensor[(b, n, d), BF16],
        k_s: T.Tensor[(b, n), FP32],
        o: T.Tensor[(b, m, n), FP32],
    ):
        with T.Kernel(b, m, T.ceildiv(n, blk_n1)) as (i_b, i_m, i1_n):
            q_smem = T.alloc_shared((h, d), "bfloat16")
            T.copy(q[i_b, i_m, 0, 0], q_smem)
            q_s_frag = T.alloc_fragment(h, "float32")
            T.copy(q_s[i_b, i_m, 0], q_s_frag)

            for i2_n in T.Pipelined(blk_n1 // blk_n2, num_stages=2):
                k_smem = T.alloc_shared((blk_n2, d), "bfloat16")
                T.copy(k[i_b, i1_n * blk_n1 + i2_n * blk_n2, 0], k_smem)
                k_s_frag = T.alloc_fragment(blk_n2, "float32")
                T.copy(k_s[i_b, i1_n * blk_n1 + i2_n * blk_n2], k_s_frag)

                logits = T.alloc_fragment((blk_n2, h), "float32")
                T.gemm(k_smem, q_smem, logits, transpose_A=False, transpose_B=True, clear_accum=True)
                for i_h, i3_n in T.Parallel(h, blk_n2):
                    logits[i3_n, i_h] = T.max(logits[i3_n, i_h], 0) * q_s_frag[i_h]
                logits_sum = T.alloc_fragment(blk_n2, "float32")
                T.reduce_sum(logits, logits_sum, dim=1)
                for i3_n in T.Parallel(blk_n2):
                    logits_sum[i3_n] *= k_s_frag[i3_n]
                T.copy(logits_sum, o[i_b, i_m, i1_n * blk_n1 + i2_n * blk_n2])

    return fp8_index_kernel_


@tilelang.jit(out_idx=[-1], pass_configs=PASS_CONFIGS)
def sparse_attention_fwd_kernel_v1(num_heads, dim, tail_dim, topk, *, kv_group=1, sm_scale=None, block_I=64,
                                   num_stages=2, threads=256):
    sm_scale = ((1.0 / (dim + tail_dim)) ** 0.5 if sm_scale is None else sm_scale) * LOG2E
    batch = T.symbolic("batch")
    seq_len = T.symbolic("seq_len")
    seq_len_kv = T.symbolic("seq_len_kv")
    H = num_heads // kv_group
    padded_H = max(tilelang.math.next_power_of_2(H), 16)
    BI, NI, D, D_tail = block_I, tilelang.cdiv(topk, block_I), dim, tail_dim
    dtype, accum_dtype = "bfloat16", "float"

    @T.prim_func
    def main(
        Q: T.Tensor([batch, seq_len, num_heads, dim + tail_dim], dtype),
        KV: T.Tensor([batch, seq_len_kv, kv_group, dim + tail_dim], dtype),
        Indices: T.Tensor([batch, seq_len, kv_group, topk], "int32"),
        Output: T.Tensor([batch, seq_len, num_heads, dim], dtype),
    ):
        with T.Kernel(seq_len, batch, kv_group, threads=threads) as (bx, by, bz):
            Q_shared = T.alloc_shared([padded_H, D], dtype)
            Q_tail_shared = T.alloc_shared([padded_H, D_tail], dtype)
            KV_shared = T.alloc_shared([BI, D], dtype)
            K_tail_shared = T.alloc_shared([BI, D_tail], dtype)
            O_shared = T.alloc_shared([padded_H, D], dtype)
            mask = T.alloc_fragment([BI], "bool")
            acc_o = T.alloc_fragment([padded_H, D], accum_dtype)
            acc_s = T.alloc_fragment([padded_H, BI], accum_dtype)
            S_shared = T.alloc_shared([padded_H, BI], dtype)
            sumexp = T.alloc_fragment([padded_H], accum_dtype)
            sumexp_i = T.alloc_fragment([padded_H], accum_dtype)
            alpha = T.alloc_fragment([padded_H], accum_dtype)
            m_i = T.alloc_fragment([padded_H], accum_dtype)
            m_i_prev = T.alloc_fragment([padded_H], accum_dtype)

            T.fill(acc_o, 0)
            T.fill(sumexp, 0)
            T.fill(m_i, -(2**30))
            b_i, g_i, s_i = by, bz, bx
            H0 = g_i * padded_H
            H1 = H0 + padded_H
            T.copy(Q[b_i, s_i, H0:H1, :D], Q_shared)
            T.copy(Q[b_i, s_i, H0:H1, D:], Q_tail_shared)

            for i_i in T.Pipelined(NI, num_stages=num_stages):
                for bi_i in T.Parallel(BI):
                    mask[bi_i] = Indices[b_i, s_i, g_i, i_i * BI + bi_i] >= 0
                for bi_i, d_i in T.Parallel(BI, D):
                    KV_shared[bi_i, d_i] = KV[b_i, Indices[b_i, s_i, g_i, i_i * BI + bi_i], g_i, d_i]
                for bi_i, d_i in T.Parallel(BI, D_tail):
                    K_tail_shared[bi_i, d_i] = KV[b_i, Indices[b_i, s_i, g_i, i_i * BI + bi_i], g_i, D + d_i]
                for h_i, bi_i in T.Parallel(padded_H, BI):
                    acc_s[h_i, bi_i] = T.if_then_else(mask[bi_i], 0, -T.infinity(acc_s.dtype))
                T.gemm(Q_shared, KV_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullCol)
                T.gemm(Q_tail_shared, K_tail_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullCol)
                T.copy(m_i, m_i_prev)
                T.reduce_max(acc_s, m_i, dim=1, clear=False)
                for h_i in T.Parallel(padded_H):
                    alpha[h_i] = T.exp2((m_i_prev[h_i] - m_i[h_i]) * sm_scale)
                for h_i, bi_i in T.Parallel(padded_H, BI):
                    acc_s[h_i, bi_i] = T.exp2(acc_s[h_i, bi_i] * sm_scale - m_i[h_i] * sm_scale)
                T.reduce_sum(acc_s, sumexp_i, dim=1)
                for h_i in T.Parallel(padded_H):
                    sumexp[h_i] = sumexp[h_i] * alpha[h_i] + sumexp_i[h_i]
                for h_i, d_i in T.Parallel(padded_H, D):
                    acc_o[h_i, d_i] = acc_o[h_i, d_i] * alpha[h_i]
                T.copy(acc_s, S_shared)
                T.gemm(S_shared, KV_shared, acc_o, policy=T.GemmWarpPolicy.FullCol)

            for h_i, d_i in T.Parallel(padded_H, D):
                acc_o[h_i, d_i] /= sumexp[h_i]
            T.copy(acc_o, O_shared)
            T.copy(acc_o, Output[b_i, s_i, H0:H1, :])

    return main


def make_online_softmax(scale, accum_dtype, block_rows, block_cols):
    @T.macro
    def online_softmax(acc_s, scores_max, scores_max_prev, scores_scale, scores_sum, logsum):
        T.copy(scores_max, scores_max_prev)
        T.fill(scores_max, -T.infinity(accum_dtype))
        T.reduce_max(acc_s, scores_max, dim=1, clear=False)
        for i in T.Parallel(block_rows):
            scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
        for i, j in T.Parallel(block_rows, block_cols):
            acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
        T.reduce_sum(acc_s, scores_sum, dim=1)
        for i in T.Parallel(block_rows):
            logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]

    return online_softmax


def make_rescale(block_rows, head_dim):
    @T.macro
    def rescale(acc_o, scores_scale):
        for i, j in T.Parallel(block_rows, head_dim):
            acc_o[i, j] *= scores_scale[i]

    return rescale


@functools.lru_cache(maxsize=8)
def gqa_decode_builder(batch, heads, groups, seqlen_kv, dim, dtype):
    scale = dim**-0.5 * LOG2E
    accum_dtype = "float"

    @tilelang.jit(out_idx=[-1])
    def _func(block_H, block_N, num_stages, threads):
        kv_group_num = heads // groups
        valid_block_H = min(block_H, kv_group_num)
        online_softmax = make_online_softmax(scale, accum_dtype, block_H, block_N)
        rescale = make_rescale(block_H, dim)

        @T.prim_func
        def gqa_decode_no_split(
            Q: T.Tensor([batch, heads, dim], dtype),
            K: T.Tensor([batch, seqlen_kv, groups, dim], dtype),
            V: T.Tensor([batch, seqlen_kv, groups, dim], dtype),
            real_seqlen_kv: T.int32,
            Output: T.Tensor([batch, heads, dim], dtype),
        ):
            with T.Kernel(batch, heads // valid_block_H, 1, threads=threads) as (bx, by, bz):
                Q_shared = T.alloc_shared([block_H, dim], dtype)
                K_shared = T.alloc_shared([block_N, dim], dtype)
                V_shared = T.alloc_shared([block_N, dim], dtype)
                O_shared = T.alloc_shared([valid_block_H, dim], dtype)
                acc_s = T.alloc_fragment([block_H, block_N], accum_dtype)
                acc_s_cast = T.alloc_fragment([block_H, block_N], dtype)
                acc_o = T.alloc_fragment([block_H, dim], accum_dtype)
                scores_max = T.alloc_fragment([block_H], accum_dtype)
                scores_max_prev = T.alloc_fragment([block_H], accum_dtype)
                scores_scale = T.alloc_fragment([block_H], accum_dtype)
                scores_sum = T.alloc_fragment([block_H], accum_dtype)
                logsum = T.alloc_fragment([block_H], accum_dtype)

                bid, hid = bx, by
                cur_kv_head = hid // (kv_group_num // valid_block_H)
                T.copy(Q[bid, hid * valid_block_H:hid * valid_block_H + block_H, :], Q_shared)
                T.fill(acc_o, 0)
                T.fill(logsum, 0)
                T.fill(scores_max, -T.infinity(accum_dtype))
                for k in T.Pipelined(T.ceildiv(real_seqlen_kv, block_N), num_stages=num_stages):
                    T.copy(K[bid, k * block_N:(k + 1) * block_N, cur_kv_head, :], K_shared)
                    T.clear(acc_s)
                    T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                    for i, j in T.Parallel(block_H, block_N):
                        acc_s[i, j] = T.if_then_else(k * block_N + j < real_seqlen_kv, acc_s[i, j],
                                                     -T.infinity(accum_dtype))
                    online_softmax(acc_s, scores_max, scores_max_prev, scores_scale, scores_sum, logsum)
                    T.copy(acc_s, acc_s_cast)
                    rescale(acc_o, scores_scale)
                    T.copy(V[bid, k * block_N:(k + 1) * block_N, cur_kv_head, :], V_shared)
                    T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)
                for i, j in T.Parallel(block_H, dim):
                    acc_o[i, j] /= logsum[i]
                T.copy(acc_o[:valid_block_H, :], O_shared)
                T.copy(O_shared, Output[bid, hid * valid_block_H:(hid + 1) * valid_block_H, :])

        return gqa_decode_no_split

    return _func


@functools.lru_cache(maxsize=8)
def lightning_indexer_builder(batch, heads, index_dim, kv_group):
    """TileOPs' fp8 lightning indexer with one key group: the ``(keys, queries * heads)`` scores
    viewed by ``T.reshape`` as a rank-4 fragment, reduced over heads into a rank-3 one; the key
    range of a query block is the min / max of per-query bounds read from tensors."""

    @tilelang.jit
    def _func(block_N=256, num_stages=3, threads=512, block_Q=None):
        block_Q = max(1, 128 // heads) if block_Q is None else block_Q
        seq_len = T.dynamic("seq_len")
        seq_len_kv = T.dynamic("seq_len_kv")
        heads_per_group = heads // kv_group

        @T.prim_func
        def main(
            IndexQ: T.Tensor([batch, seq_len * heads, index_dim], "bfloat16"),
            IndexK: T.Tensor([batch, seq_len_kv, kv_group, index_dim], "bfloat16"),
            IndexKScale: T.Tensor([batch, seq_len_kv, kv_group], "float32"),
            Logits: T.Tensor([batch, seq_len, seq_len_kv, kv_group], "float32"),
            Weights: T.Tensor([seq_len, heads], "float32"),
            CuSeqLenKS: T.Tensor([seq_len], "int32"),
            CuSeqLenKE: T.Tensor([seq_len], "int32"),
        ):
            with T.Kernel(T.ceildiv(seq_len, block_Q), batch, threads=threads) as (bx, by):
                index_q_shared = T.alloc_shared([block_Q * heads, index_dim], "bfloat16")
                index_k_scale_fragment = T.alloc_fragment([block_N, kv_group], "float32")
                s = T.alloc_fragment([block_N, block_Q * heads], "float32")
                s_reshaped = T.reshape(s, (block_N, block_Q, heads_per_group, kv_group))
                logits = T.alloc_fragment([block_N, block_Q, kv_group], "float32")
                weights = T.alloc_fragment([block_Q, heads], "float32")
                index_k_group_shared = T.alloc_shared([block_N, index_dim], "bfloat16")

                seq_len_i = bx * block_Q
                b_i = by
                cu_k_s_min = T.alloc_var("int32")
                cu_k_e_max = T.alloc_var("int32")
                cu_k_s_min = 2147483647
                cu_k_e_max = -2147483648
                for bq_i in T.serial(block_Q):
                    cu_k_s_min = T.min(cu_k_s_min, T.min(CuSeqLenKS[seq_len_i + bq_i], seq_len_kv))
                for bq_i in T.serial(block_Q):
                    cu_k_e_max = T.max(cu_k_e_max, T.min(CuSeqLenKE[seq_len_i + bq_i], seq_len_kv))

                T.copy(IndexQ[b_i, seq_len_i * heads, 0], index_q_shared)
                T.copy(Weights[seq_len_i, 0], weights)
                for nbn_i in T.Pipelined(T.ceildiv(cu_k_e_max - cu_k_s_min, block_N), num_stages=num_stages):
                    T.copy(IndexKScale[b_i, cu_k_s_min + nbn_i * block_N, 0], index_k_scale_fragment)
                    T.copy(IndexK[b_i, cu_k_s_min + nbn_i * block_N:cu_k_s_min + (nbn_i + 1) * block_N, 0,
                                  0:index_dim], index_k_group_shared)
                    T.gemm(index_k_group_shared, index_q_shared, s, transpose_B=True, clear_accum=True,
                           policy=T.GemmWarpPolicy.FullCol)
                    for bn_i, bq_i, h_i, g in T.Parallel(block_N, block_Q, heads_per_group, kv_group):
                        s_reshaped[bn_i, bq_i, h_i, g] = (T.max(s_reshaped[bn_i, bq_i, h_i, g], 0)
                                                          * weights[bq_i, g * heads_per_group + h_i]) \
                            * index_k_scale_fragment[bn_i, g]
                    T.reduce_sum(s_reshaped, logits, dim=-2, clear=True)
                    for bq_i, bn_i, g in T.Parallel(block_Q, block_N, kv_group):
                        Logits[b_i, seq_len_i + bq_i, cu_k_s_min + nbn_i * block_N + bn_i, g] = logits[bn_i, bq_i, g]

        return main

    return _func


IDX_B, IDX_M, IDX_N, IDX_H, IDX_D = 1, 2, 512, 32, 64


def _index_inputs():
    g = torch.Generator().manual_seed(111)
    return (randn(IDX_B, IDX_M, IDX_H, IDX_D, seed=112), torch.rand(IDX_B, IDX_M, IDX_H, generator=g),
            randn(IDX_B, IDX_N, IDX_D, seed=113), torch.rand(IDX_B, IDX_N, generator=g))


def _index_reference(q, q_s, k, k_s):
    logits = torch.einsum("bmhd,bnd->bmnh", q.float(), k.float())
    return (logits.clamp(min=0) * q_s[:, :, None, :]).sum(-1) * k_s[:, None, :]


SP_B, SP_S, SP_SKV, SP_H, SP_D, SP_TAIL, SP_TOPK = 1, 32, 128, 16, 64, 32, 64


def _sparse_inputs():
    g = torch.Generator().manual_seed(121)
    indices = torch.stack([torch.randperm(SP_SKV, generator=g)[:SP_TOPK] for _ in range(SP_S)])
    indices[:, -8:] = -1  # masked slots
    return (randn(SP_B, SP_S, SP_H, SP_D + SP_TAIL, seed=122), randn(SP_B, SP_SKV, 1, SP_D + SP_TAIL, seed=123),
            indices.reshape(SP_B, SP_S, 1, SP_TOPK).to(torch.int32))


def _sparse_reference(q, kv, indices):
    q, kv, idx = q.float()[0], kv.float()[0, :, 0], indices.long()[0, :, 0]
    gathered = kv[idx.clamp(min=0)]  # (s, topk, d + tail)
    scores = torch.einsum("shd,std->sht", q, gathered) * (SP_D + SP_TAIL) ** -0.5
    scores = scores.masked_fill((idx < 0)[:, None, :], float("-inf"))
    probs = torch.softmax(scores, dim=-1).to(torch.bfloat16).float()
    return torch.einsum("sht,std->shd", probs, gathered[..., :SP_D])[None]


GQ_B, GQ_HEADS, GQ_GROUPS, GQ_SKV, GQ_DIM, GQ_REAL = 2, 32, 4, 128, 64, 100


def _gqa_inputs():
    return (randn(GQ_B, GQ_HEADS, GQ_DIM, seed=131), randn(GQ_B, GQ_SKV, GQ_GROUPS, GQ_DIM, seed=132),
            randn(GQ_B, GQ_SKV, GQ_GROUPS, GQ_DIM, seed=133))


def _gqa_reference(q, k, v):
    k = k.float()[:, :GQ_REAL].repeat_interleave(GQ_HEADS // GQ_GROUPS, dim=2)
    v = v.float()[:, :GQ_REAL].repeat_interleave(GQ_HEADS // GQ_GROUPS, dim=2)
    scores = torch.einsum("bhd,bshd->bhs", q.float(), k) * GQ_DIM**-0.5
    return torch.einsum("bhs,bshd->bhd", torch.softmax(scores, dim=-1), v)


LI_B, LI_S, LI_SKV, LI_H, LI_D = 1, 16, 256, 16, 64


def _indexer_inputs():
    g = torch.Generator().manual_seed(141)
    return (randn(LI_B, LI_S * LI_H, LI_D, seed=142), randn(LI_B, LI_SKV, 1, LI_D, seed=143),
            torch.rand(LI_B, LI_SKV, 1, generator=g), torch.zeros(LI_B, LI_S, LI_SKV, 1),
            torch.rand(LI_S, LI_H, generator=g), torch.zeros(LI_S, dtype=torch.int32),
            torch.full((LI_S,), LI_SKV, dtype=torch.int32))


def _indexer_reference(q, k, k_scale, _logits, weights, _ks, _ke):
    scores = torch.einsum("bqhd,bnd->bqnh", q.float().reshape(LI_B, LI_S, LI_H, LI_D), k.float()[:, :, 0])
    out = (scores.clamp(min=0) * weights[None, :, None, :]).sum(-1) * k_scale[:, None, :, 0]
    return out[..., None]


EXAMPLES = [
    Example("attention/fp8_index", "deepseek-ai/DeepSeek-V3.2-Exp inference/kernel.py: fp8_index_kernel",
            fp8_index_kernel, dict(h=IDX_H, d=IDX_D, blk_n1=256, blk_n2=64), _index_inputs, _index_reference),
    Example("attention/sparse_attention_fwd",
            "sgl-project/sglang python/sglang/srt/layers/attention/nsa/tilelang_kernel.py: "
            "sparse_attention_fwd_kernel_v1", sparse_attention_fwd_kernel_v1,
            dict(num_heads=SP_H, dim=SP_D, tail_dim=SP_TAIL, topk=SP_TOPK, block_I=32, threads=128),
            _sparse_inputs, _sparse_reference),
    Example("attention/gqa_decode",
            "tile-ai/TileOPs src/tileops/kernels/attention/gqa_decode.py: _gqa_decode_no_split_kernel",
            gqa_decode_builder(GQ_B, GQ_HEADS, GQ_GROUPS, GQ_SKV, GQ_DIM, "bfloat16"),
            dict(block_H=8, block_N=32, num_stages=2, threads=128), _gqa_inputs, _gqa_reference,
            scalars={"real_seqlen_kv": GQ_REAL}),
    Example("attention/fp8_lightning_indexer",
            "tile-ai/TileOPs src/tileops/kernels/fp8_lightning_indexer.py: _fp8_lightning_indexer_kernel (kv_group 1)",
            lightning_indexer_builder(LI_B, LI_H, LI_D, 1), dict(block_N=64, num_stages=0, threads=128),
            _indexer_inputs, _indexer_reference, checked=("Logits",)),
]
