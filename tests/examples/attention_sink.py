"""Causal attention with a learned sink per head, modelled on tile-ai/tilelang's
examples/attention_sink/example_mha_sink_fwd_bhsd.py (``flashattn``: full attention, and a sliding
window).

Written anew for this catalogue in that example's idioms, not copied: a ``@tilelang.jit`` factory
returning a ``@T.prim_func`` over a (query block, head, batch) grid, the causal (or windowed) mask
written into the score block before ``T.gemm``, a pipelined loop over the key blocks a query block
can see, and the base-2 online softmax; the sink logit of the head, read element-wise from
``Sinks[by]`` into a per-row fragment, only joins the denominator at the end. With a window the
running maximum is kept at 0 while a row has seen no key (its -inf would give NaN). bfloat16 data,
float32 accumulators; without the example's ``@autotune``, with its main's blocks (128 x 128,
2 stages, 256 threads). Sizes: batch 1, 2 heads, seq 256, dim 64; window 128.

The reference, in float32: softmax over the visible keys' logits q . k / sqrt(d) and the head's sink
logit, of which only the keys' weights multiply V."""

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn

LOG2E = 1.44269504


@tilelang.jit(out_idx=[3], pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True})
def attention_with_sinks(
    batch,
    heads,
    seq_q,
    seq_kv,
    dim,
    window_size=None,  # keys older than this many positions are hidden; None: all earlier keys
    sm_scale=None,
    block_M=64,
    block_N=64,
    num_stages=1,
    threads=128,
    dtype: T.dtype = T.bfloat16,
):
    assert window_size is None or window_size % block_N == 0, "the window must be a whole number of key blocks"
    sm_scale = dim**-0.5 if sm_scale is None else sm_scale
    qk_scale = sm_scale * LOG2E
    past = seq_kv - seq_q
    assert past >= 0, "there must be at least as many keys as queries"
    f32 = T.float32

    @T.prim_func
    def main(
        Q: T.Tensor([batch, heads, seq_q, dim], dtype),
        K: T.Tensor([batch, heads, seq_kv, dim], dtype),
        V: T.Tensor([batch, heads, seq_kv, dim], dtype),
        Output: T.Tensor([batch, heads, seq_q, dim], dtype),
        Sinks: T.Tensor([heads], dtype),
    ):
        with T.Kernel(T.ceildiv(seq_q, block_M), heads, batch, threads=threads) as (bx, by, bz):
            q_s = T.alloc_shared([block_M, dim], dtype)
            k_s = T.alloc_shared([block_N, dim], dtype)
            v_s = T.alloc_shared([block_N, dim], dtype)
            o_s = T.alloc_shared([block_M, dim], dtype)
            s = T.alloc_fragment([block_M, block_N], f32)
            p = T.alloc_fragment([block_M, block_N], dtype)
            o = T.alloc_fragment([block_M, dim], f32)
            m_new = T.alloc_fragment([block_M], f32)
            m_old = T.alloc_fragment([block_M], f32)
            alpha = T.alloc_fragment([block_M], f32)
            p_sum = T.alloc_fragment([block_M], f32)
            l = T.alloc_fragment([block_M], f32)
            sink = T.alloc_fragment([block_M], dtype)

            T.copy(Q[bz, by, bx * block_M : (bx + 1) * block_M, :], q_s)
            T.fill(o, 0)
            T.fill(l, 0)
            T.fill(m_new, -T.infinity(f32))
            for i in T.Parallel(block_M):
                sink[i] = Sinks[by]

            # the key blocks this query block sees: up to its last query, back to its window
            stop = T.min(T.ceildiv(seq_kv, block_N), T.ceildiv((bx + 1) * block_M + past, block_N))
            begin = T.max(0, (bx * block_M + past - window_size) // block_N) if window_size is not None else 0

            for kb in T.Pipelined(begin, stop, num_stages=num_stages):
                T.copy(K[bz, by, kb * block_N : (kb + 1) * block_N, :], k_s)
                for i, j in T.Parallel(block_M, block_N):
                    qpos = bx * block_M + i + past
                    kpos = kb * block_N + j
                    if window_size is not None:
                        s[i, j] = T.if_then_else(qpos >= kpos and qpos < kpos + window_size, 0, -T.infinity(s.dtype))
                    else:
                        s[i, j] = T.if_then_else(qpos >= kpos, 0, -T.infinity(s.dtype))
                T.gemm(q_s, k_s, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)

                T.copy(m_new, m_old)
                T.fill(m_new, -T.infinity(f32))
                T.reduce_max(s, m_new, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    m_new[i] = T.max(m_new[i], m_old[i])
                for i in T.Parallel(block_M):
                    if window_size is not None:  # a row that has seen no key yet keeps a maximum of 0
                        m_new[i] = T.if_then_else(m_new[i] == -T.infinity(f32), 0, m_new[i])
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

            # the sink: one more term of the denominator, exp(sink - max) in base 2
            for i in T.Parallel(block_M):
                l[i] += T.exp2(sink[i] * LOG2E - m_new[i] * qk_scale)
            for i, d in T.Parallel(block_M, dim):
                o[i, d] /= l[i]
            T.copy(o, o_s)
            T.copy(o_s, Output[bz, by, bx * block_M : (bx + 1) * block_M, :])

    return main


def sink_attention_reference(q, k, v, sinks, window=None):
    """q [b, h, sq, d], k and v [b, h, skv, d], sinks [h] -> [b, h, sq, d] in float32. Query i (at
    position i + skv - sq) sees keys j <= its position, and with a window only the last ``window``."""
    q, k, v, sinks = q.float(), k.float(), v.float(), sinks.float()
    seq_q, seq_k = q.shape[2], k.shape[2]
    qpos = torch.arange(seq_q)[:, None] + (seq_k - seq_q)
    kpos = torch.arange(seq_k)[None, :]
    hidden = kpos > qpos
    if window:
        hidden |= kpos <= qpos - window
    logits = (q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5).masked_fill(hidden, float("-inf"))
    sink = sinks[None, :, None, None].expand(*logits.shape[:3], 1)
    weights = torch.softmax(torch.cat([logits, sink], dim=-1), dim=-1)[..., :-1]
    return weights @ v


BATCH, HEADS, SEQ, DIM = 1, 2, 256, 64


def _inputs():
    return (randn(BATCH, HEADS, SEQ, DIM, seed=1), randn(BATCH, HEADS, SEQ, DIM, seed=2),
            randn(BATCH, HEADS, SEQ, DIM, seed=3), randn(HEADS, seed=4))


def _entry(window):
    return Example(f"attention_sink/mha_sink_fwd_bhsd{' window' if window else ''}",
                   "attention_sink/example_mha_sink_fwd_bhsd.py: flashattn", attention_with_sinks,
                   dict(batch=BATCH, heads=HEADS, seq_q=SEQ, seq_kv=SEQ, dim=DIM, window_size=window, block_M=128,
                        block_N=128, num_stages=2, threads=256, dtype=T.bfloat16),
                   _inputs, lambda q, k, v, sinks: sink_attention_reference(q, k, v, sinks, window))


EXAMPLES = [_entry(None), _entry(128)]
