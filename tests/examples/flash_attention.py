"""Flash attention forward, modelled on tile-ai/tilelang's examples/flash_attention:
example_mha_fwd_bhsd.py, example_mha_fwd_bshd.py and example_gqa_fwd_bshd.py (each a ``flashattn``
factory under ``@autotune``), causal and not.

The kernels are written anew for this catalogue in those examples' idioms, not copied: a
``@tilelang.jit`` factory returning a ``@T.prim_func`` whose grid is (query block, head, batch), a
``T.Pipelined`` loop over key blocks with the mask written into the score block before
``T.gemm(..., transpose_B=True)``, and the online softmax in base 2 (running row maximum, the
rescaling of the output and the running denominator, then P V with ``T.gemm``). The (batch, seq,
head, dim) forms slice a head out of each tensor as ``Q[bz, bx * block_M:(bx + 1) * block_M, by, :]``;
in the grouped-query form ``groups`` query heads read one key/value head. bfloat16 data, float32
accumulators; the blocks are those the examples' mains pass (no autotuning). Sizes: dim 64,
seq 128 (64 queries against 128 keys for the causal bhsd entry, which exercises its past_len).

The references compute softmax(Q K^T / sqrt(dim)) V in float32 from the definition, with the causal
mask aligned to the last query (query i sees keys j <= i + seq_kv - seq_q)."""

from functools import partial

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn

LOG2E = 1.44269504
FAST_MATH = {tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True}


@tilelang.jit(out_idx=[3], pass_configs=FAST_MATH)
def mha_fwd_bhsd(batch, heads, seq_q, seq_kv, dim, is_causal, block_M=64, block_N=64, num_stages=1, threads=128):
    """Q [batch, heads, seq_q, dim] against K, V [batch, heads, seq_kv, dim]; the queries are the
    last seq_q positions of the keys' sequence."""
    qk_scale = dim**-0.5 * LOG2E  # softmax in base 2
    past = seq_kv - seq_q
    assert past >= 0, "there must be at least as many keys as queries"
    bf16, f32 = T.bfloat16, T.float32

    @T.prim_func
    def main(
        Q: T.Tensor([batch, heads, seq_q, dim], bf16),
        K: T.Tensor([batch, heads, seq_kv, dim], bf16),
        V: T.Tensor([batch, heads, seq_kv, dim], bf16),
        Output: T.Tensor([batch, heads, seq_q, dim], bf16),
    ):
        with T.Kernel(T.ceildiv(seq_q, block_M), heads, batch, threads=threads) as (bx, by, bz):
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

            T.copy(Q[bz, by, bx * block_M : (bx + 1) * block_M, :], q_s)
            T.fill(o, 0)
            T.fill(l, 0)
            T.fill(m_new, -T.infinity(f32))

            # causal: stop after the key block holding this query block's last query
            n_kv_blocks = (
                T.min(T.ceildiv(seq_kv, block_N), T.ceildiv((bx + 1) * block_M + past, block_N))
                if is_causal
                else T.ceildiv(seq_kv, block_N)
            )
            for kb in T.Pipelined(n_kv_blocks, num_stages=num_stages):
                T.copy(K[bz, by, kb * block_N : (kb + 1) * block_N, :], k_s)
                if is_causal:
                    for i, j in T.Parallel(block_M, block_N):
                        qpos = bx * block_M + i + past
                        kpos = kb * block_N + j
                        s[i, j] = T.if_then_else(qpos >= kpos, 0, -T.infinity(s.dtype))
                else:
                    for i, j in T.Parallel(block_M, block_N):
                        s[i, j] = T.if_then_else(kb * block_N + j >= seq_kv, -T.infinity(s.dtype), 0)
                T.gemm(q_s, k_s, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)

                # new row maxima, and the factor that moves the old terms onto them
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
                T.copy(V[bz, by, kb * block_N : (kb + 1) * block_N, :], v_s)
                T.gemm(p, v_s, o, policy=T.GemmWarpPolicy.FullRow)

            for i, d in T.Parallel(block_M, dim):
                o[i, d] /= l[i]
            T.copy(o, o_s)
            T.copy(o_s, Output[bz, by, bx * block_M : (bx + 1) * block_M, :])

    return main


@tilelang.jit(out_idx=[3], pass_configs=FAST_MATH)
def mha_fwd_bshd(batch, heads, seq_len, dim, is_causal, block_M=64, block_N=64, num_stages=1, threads=128):
    """Q, K, V and Output [batch, seq_len, heads, dim]: each program reads its head's rows."""
    qk_scale = dim**-0.5 * LOG2E
    layout = [batch, seq_len, heads, dim]
    bf16, f32 = T.bfloat16, T.float32

    @T.prim_func
    def main(
        Q: T.Tensor(layout, bf16),
        K: T.Tensor(layout, bf16),
        V: T.Tensor(layout, bf16),
        Output: T.Tensor(layout, bf16),
    ):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (bx, by, bz):
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

            T.copy(Q[bz, bx * block_M : (bx + 1) * block_M, by, :], q_s)
            T.fill(o, 0)
            T.fill(l, 0)
            T.fill(m_new, -T.infinity(f32))

            n_kv_blocks = (
                T.min(T.ceildiv(seq_len, block_N), T.ceildiv((bx + 1) * block_M, block_N))
                if is_causal
                else T.ceildiv(seq_len, block_N)
            )
            for kb in T.Pipelined(n_kv_blocks, num_stages=num_stages):
                T.copy(K[bz, kb * block_N : (kb + 1) * block_N, by, :], k_s)
                if is_causal:
                    for i, j in T.Parallel(block_M, block_N):
                        s[i, j] = T.if_then_else(bx * block_M + i >= kb * block_N + j, 0, -T.infinity(s.dtype))
                else:
                    for i, j in T.Parallel(block_M, block_N):
                        s[i, j] = T.if_then_else(kb * block_N + j >= seq_len, -T.infinity(s.dtype), 0)
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
                T.copy(V[bz, kb * block_N : (kb + 1) * block_N, by, :], v_s)
                T.gemm(p, v_s, o, policy=T.GemmWarpPolicy.FullRow)

            for i, d in T.Parallel(block_M, dim):
                o[i, d] /= l[i]
            T.copy(o, o_s)
            T.copy(o_s, Output[bz, bx * block_M : (bx + 1) * block_M, by, :])

    return main


@tilelang.jit(out_idx=[3], pass_configs=FAST_MATH)
def gqa_fwd_bshd(batch, heads, seq_len, dim, is_causal, groups=1, block_M=64, block_N=64, num_stages=0,
                 threads=128):
    """Grouped-query attention: Q and Output have ``heads`` heads, K and V ``heads // groups``;
    query head h reads key/value head h // groups."""
    qk_scale = dim**-0.5 * LOG2E
    kv_heads = heads // groups
    bf16, f32 = T.bfloat16, T.float32

    @T.prim_func
    def main(
        Q: T.Tensor([batch, seq_len, heads, dim], bf16),
        K: T.Tensor([batch, seq_len, kv_heads, dim], bf16),
        V: T.Tensor([batch, seq_len, kv_heads, dim], bf16),
        Output: T.Tensor([batch, seq_len, heads, dim], bf16),
    ):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (bx, by, bz):
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

            T.copy(Q[bz, bx * block_M : (bx + 1) * block_M, by, :], q_s)
            T.fill(o, 0)
            T.fill(l, 0)
            T.fill(m_new, -T.infinity(f32))

            n_kv_blocks = (
                T.min(T.ceildiv(seq_len, block_N), T.ceildiv((bx + 1) * block_M, block_N))
                if is_causal
                else T.ceildiv(seq_len, block_N)
            )
            for kb in T.Pipelined(n_kv_blocks, num_stages=num_stages):
                T.copy(K[bz, kb * block_N : (kb + 1) * block_N, by // groups, :], k_s)
                if is_causal:
                    for i, j in T.Parallel(block_M, block_N):
                        s[i, j] = T.if_then_else(bx * block_M + i >= kb * block_N + j, 0, -T.infinity(s.dtype))
                else:
                    for i, j in T.Parallel(block_M, block_N):
                        s[i, j] = T.if_then_else(kb * block_N + j >= seq_len, -T.infinity(s.dtype), 0)
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
                T.copy(V[bz, kb * block_N : (kb + 1) * block_N, by // groups, :], v_s)
                T.gemm(p, v_s, o, policy=T.GemmWarpPolicy.FullRow)

            for i, d in T.Parallel(block_M, dim):
                o[i, d] /= l[i]
            T.copy(o, o_s)
            T.copy(o_s, Output[bz, bx * block_M : (bx + 1) * block_M, by, :])

    return main


def attention(q, k, v, causal):
    """softmax(q k^T / sqrt(d)) v over the last two dimensions ([..., seq, dim] operands); with
    ``causal``, query i sees keys j <= i + (seq_k - seq_q)."""
    scores = torch.matmul(q, k.transpose(-1, -2)) / q.shape[-1] ** 0.5
    if causal:
        seq_q, seq_k = q.shape[-2], k.shape[-2]
        hidden = torch.arange(seq_k)[None, :] > torch.arange(seq_q)[:, None] + (seq_k - seq_q)
        scores = scores.masked_fill(hidden, float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), v)


def mha_fwd_bhsd_ref_program(Q, K, V, is_causal):
    return attention(Q, K, V, is_causal)


def mha_fwd_bshd_ref_program(Q, K, V, is_causal):
    return gqa_fwd_bshd_ref_program(Q, K, V, is_causal, groups=1)


def gqa_fwd_bshd_ref_program(Q, K, V, is_causal, groups=1):
    """[batch, seq, heads, dim] operands; each key/value head serves ``groups`` consecutive query heads."""
    assert Q.shape[2] == K.shape[2] * groups == V.shape[2] * groups, (Q.shape, K.shape, V.shape, groups)
    q, k, v = (t.transpose(1, 2) for t in (Q, K, V))  # to [batch, heads, seq, dim]
    k, v = (t.repeat_interleave(groups, dim=1) for t in (k, v))
    return attention(q, k, v, is_causal).transpose(1, 2)


def _qkv(q_shape, kv_shape):
    return lambda: (randn(*q_shape, seed=1), randn(*kv_shape, seed=2), randn(*kv_shape, seed=3))


def _in_float32(ref):
    return lambda *tensors: ref(*(t.float() for t in tensors))


def _entry(kernel, name, source, sizes, blocks, q_shape, kv_shape, ref):
    causal = sizes["is_causal"]
    return Example(f"flash_attention/{name}{' causal' if causal else ''}", f"flash_attention/{source}: flashattn",
                   kernel, dict(sizes, **blocks), _qkv(q_shape, kv_shape), _in_float32(partial(ref, is_causal=causal)))


def _bhsd(is_causal, seq_q):
    return _entry(mha_fwd_bhsd, "mha_fwd_bhsd", "example_mha_fwd_bhsd.py",
                  dict(batch=1, heads=1, seq_q=seq_q, seq_kv=128, dim=64, is_causal=is_causal),
                  dict(block_M=64, block_N=64, num_stages=1, threads=128), (1, 1, seq_q, 64), (1, 1, 128, 64),
                  mha_fwd_bhsd_ref_program)


def _bshd(is_causal):
    return _entry(mha_fwd_bshd, "mha_fwd_bshd", "example_mha_fwd_bshd.py",
                  dict(batch=1, heads=2, seq_len=128, dim=64, is_causal=is_causal),
                  dict(block_M=128, block_N=128, num_stages=1, threads=128), (1, 128, 2, 64), (1, 128, 2, 64),
                  mha_fwd_bshd_ref_program)


def _gqa(is_causal):
    return _entry(gqa_fwd_bshd, "gqa_fwd_bshd", "example_gqa_fwd_bshd.py",
                  dict(batch=1, heads=4, seq_len=128, dim=64, is_causal=is_causal, groups=2),
                  dict(block_M=64, block_N=64, num_stages=2, threads=128), (1, 128, 4, 64), (1, 128, 2, 64),
                  partial(gqa_fwd_bshd_ref_program, groups=2))


EXAMPLES = [_bhsd(False, 128), _bhsd(True, 64), _bshd(False), _bshd(True), _gqa(False), _gqa(True)]
