"""Chunked linear attention and retention, modelled on tile-ai/tilelang's examples/linear_attention:
example_linear_attn_fwd.py (tl_fused_chunk_fwd_kernel) and example_retention_fwd.py
(retention_chunks_kernel).

Written anew for this catalogue in those examples' idioms, not copied: ``@tilelang.jit`` factories
returning a ``@T.prim_func`` over a (value block, key block, batch * head) grid that walks the
sequence in chunks of 64 with ``T.Pipelined(0, chunks)``, carrying a running key-value state
S = sum k^T v in a fragment. Per chunk: the scaled queries are loaded element-wise, the intra-chunk
part is (Q K^T masked to s <= t) V and the inter-chunk part Q S (``T.gemm`` with transposed
operands). Linear attention adds its chunk output into O with ``T.atomic_add`` and stores the final
state; retention weighs a query t and key s by gamma^(t - s), gamma = 1 - 2^(-5 - head), through a
per-head ``T.alloc_var`` log2 decay. bfloat16 data; float32 accumulators, O and final_state of the
linear form. Sizes: batch 1, seq 128, 2 heads, dim 64 (the examples fix the chunk and BK = BV = 64).
As the linear attention example's main does, q and k are L2-normalised and O starts at zero.

References, from the definitions (float32, scale = dim^-1/2): linear attention
o_t = sum_{s <= t} (scale q_t . k_s) v_s and final state sum_s k_s^T v_s; retention
o_t = sum_{s <= t} gamma^(t - s) (scale q_t . k_s) v_s (the example itself has no reference)."""

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn

CHUNK = 64
BLOCK_D = 64  # the examples' BK = BV


@tilelang.jit(out_idx=[4], pass_configs={tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True})
def chunked_linear_attention(B, S, H, DK, DV, dtype: T.dtype = T.bfloat16, scale: float = None):
    scale = DK**-0.5 if scale is None else scale
    f32 = T.float32
    assert S % CHUNK == 0 and DK % BLOCK_D == 0 and DV % BLOCK_D == 0
    n_chunks = tilelang.cdiv(S, CHUNK)

    @T.prim_func
    def linear_attention_chunks(
        Q: T.Tensor([B, S, H, DK], dtype),
        K: T.Tensor([B, S, H, DK], dtype),
        V: T.Tensor([B, S, H, DV], dtype),
        O: T.Tensor([B, S, H, DV], f32),
        final_state: T.Tensor([B, H, DK, DV], f32),
    ):
        with T.Kernel(tilelang.cdiv(DV, BLOCK_D), tilelang.cdiv(DK, BLOCK_D), B * H) as (vb, kb, bh):
            b = bh // H
            head = bh % H

            q_c = T.alloc_shared([CHUNK, BLOCK_D], dtype)
            k_c = T.alloc_shared([CHUNK, BLOCK_D], dtype)
            v_c = T.alloc_shared([CHUNK, BLOCK_D], dtype)
            state = T.alloc_fragment([BLOCK_D, BLOCK_D], f32)
            state_s = T.alloc_shared([BLOCK_D, BLOCK_D], dtype)
            qk = T.alloc_fragment([CHUNK, CHUNK], f32)
            qk_s = T.alloc_shared([CHUNK, CHUNK], dtype)
            out = T.alloc_fragment([CHUNK, BLOCK_D], f32)
            out_s = T.alloc_shared([CHUNK, BLOCK_D], f32)

            T.use_swizzle(10)
            T.clear(state)

            for c in T.Pipelined(0, n_chunks):
                for t, d in T.Parallel(CHUNK, BLOCK_D):
                    q_c[t, d] = Q[b, c * CHUNK + t, head, kb * BLOCK_D + d] * scale
                T.copy(K[b, c * CHUNK : (c + 1) * CHUNK, head, kb * BLOCK_D : (kb + 1) * BLOCK_D], k_c)
                T.copy(V[b, c * CHUNK : (c + 1) * CHUNK, head, vb * BLOCK_D : (vb + 1) * BLOCK_D], v_c)

                # within the chunk: causal (q k^T) v
                T.gemm(q_c, k_c, qk, clear_accum=True, transpose_B=True)
                for t, s in T.Parallel(CHUNK, CHUNK):
                    qk_s[t, s] = T.if_then_else(t >= s, qk[t, s], 0)
                T.gemm(qk_s, v_c, out, clear_accum=True)
                # earlier chunks through the state as it was before this one
                T.copy(state, state_s)
                T.gemm(k_c, v_c, state, transpose_A=True)
                T.gemm(q_c, state_s, out)
                T.copy(out, out_s)
                T.atomic_add(O[b, c * CHUNK : (c + 1) * CHUNK, head, vb * BLOCK_D : (vb + 1) * BLOCK_D], out_s)

            T.copy(state, final_state[b, head, kb * BLOCK_D : (kb + 1) * BLOCK_D, vb * BLOCK_D : (vb + 1) * BLOCK_D])

    return linear_attention_chunks


@tilelang.jit(out_idx=3, pass_configs={"tl.disable_warp_specialized": True})
def chunked_retention(B, S, H, DK, DV, dtype: T.dtype = T.bfloat16, scale: float = None):
    scale = DK**-0.5 if scale is None else scale
    f32 = T.float32
    assert S % CHUNK == 0 and DK % BLOCK_D == 0 and DV % BLOCK_D == 0
    key_blocks = tilelang.cdiv(DK, BLOCK_D)
    n_chunks = tilelang.cdiv(S, CHUNK)

    @T.prim_func
    def retention_chunks(
        Q: T.Tensor([B, S, H, DK], dtype),
        K: T.Tensor([B, S, H, DK], dtype),
        V: T.Tensor([B, S, H, DV], dtype),
        O: T.Tensor([key_blocks, B, S, H, DV], dtype),
    ):
        with T.Kernel(tilelang.cdiv(DV, BLOCK_D), key_blocks, B * H) as (vb, kb, bh):
            b = bh // H
            head = bh % H
            lg = T.alloc_var(T.float32)  # log2 gamma of this head
            lg = T.log2(1 - T.exp2(-5.0 - 1.0 * head))

            q_c = T.alloc_shared([CHUNK, BLOCK_D], dtype)
            k_c = T.alloc_shared([CHUNK, BLOCK_D], dtype)
            v_c = T.alloc_shared([CHUNK, BLOCK_D], dtype)
            state = T.alloc_fragment([BLOCK_D, BLOCK_D], f32)
            state_s = T.alloc_shared([BLOCK_D, BLOCK_D], dtype)
            qk = T.alloc_fragment([CHUNK, CHUNK], f32)
            qk_s = T.alloc_shared([CHUNK, CHUNK], dtype)
            out = T.alloc_fragment([CHUNK, BLOCK_D], f32)
            T.clear(state)

            T.use_swizzle(10)

            for c in T.Pipelined(0, n_chunks):
                for t, d in T.Parallel(CHUNK, BLOCK_D):
                    q_c[t, d] = Q[b, c * CHUNK + t, head, kb * BLOCK_D + d] * scale
                T.copy(K[b, c * CHUNK : (c + 1) * CHUNK, head, kb * BLOCK_D : (kb + 1) * BLOCK_D], k_c)
                T.copy(V[b, c * CHUNK : (c + 1) * CHUNK, head, vb * BLOCK_D : (vb + 1) * BLOCK_D], v_c)

                T.gemm(q_c, k_c, qk, clear_accum=True, transpose_B=True)
                for t, s in T.Parallel(CHUNK, CHUNK):
                    qk_s[t, s] = T.if_then_else(t >= s, qk[t, s] * T.exp2((t - s) * lg), 0)

                # the state decays by gamma^(t + 1) on its way to query t
                T.copy(state, state_s)
                T.gemm(q_c, state_s, out, clear_accum=True)
                for t, d in T.Parallel(CHUNK, BLOCK_D):
                    out[t, d] = T.exp2((t + 1) * lg) * out[t, d]
                T.gemm(qk_s, v_c, out)

                # next state: gamma^CHUNK S + sum_s gamma^(CHUNK - 1 - s) k_s^T v_s
                for t, d in T.Parallel(CHUNK, BLOCK_D):
                    v_c[t, d] = v_c[t, d] * T.exp2((CHUNK - t - 1) * lg)
                for i, j in T.Parallel(BLOCK_D, BLOCK_D):
                    state[i, j] = T.exp2(CHUNK * lg) * state[i, j]
                T.copy(out, O[kb, b, c * CHUNK : (c + 1) * CHUNK, head, vb * BLOCK_D : (vb + 1) * BLOCK_D])
                T.gemm(k_c, v_c, state, transpose_A=True)

    return retention_chunks


BATCH, SEQ, HEADS, DIM = 1, 128, 2, 64


def _decayed_attention(q, k, v, gamma):
    """sum_{s <= t} gamma^(t - s) (scale q_t . k_s) v_s for [seq, dim] operands of one head."""
    t = torch.arange(q.shape[0])
    lag = (t[:, None] - t[None, :]).float()
    weights = torch.where(lag >= 0, gamma ** lag.clamp(min=0), torch.zeros(()))
    return ((q @ k.T) * q.shape[-1] ** -0.5 * weights) @ v


def linear_attention_reference(q, k, v, o0):
    q, k, v = q.float(), k.float(), v.float()
    out, state = torch.empty(BATCH, SEQ, HEADS, DIM), torch.empty(BATCH, HEADS, DIM, DIM)
    for b in range(BATCH):
        for h in range(HEADS):
            out[b, :, h] = _decayed_attention(q[b, :, h], k[b, :, h], v[b, :, h], 1.0)
            state[b, h] = k[b, :, h].T @ v[b, :, h]
    return o0 + out, state


def retention_reference(q, k, v):
    q, k, v = q.float(), k.float(), v.float()
    out = torch.empty(BATCH, SEQ, HEADS, DIM)
    for b in range(BATCH):
        for h in range(HEADS):
            out[b, :, h] = _decayed_attention(q[b, :, h], k[b, :, h], v[b, :, h], 1 - 2.0 ** (-5 - h))
    return out[None]  # one key block


def _unit_rows(x):
    return (x.float() / torch.linalg.vector_norm(x.float(), dim=-1, keepdim=True)).bfloat16()


def _qkv():
    return tuple(randn(BATCH, SEQ, HEADS, DIM, seed=s) for s in (1, 2, 3))


def _linear_inputs():
    q, k, v = _qkv()
    return _unit_rows(q), _unit_rows(k), v, torch.zeros(BATCH, SEQ, HEADS, DIM)


SIZES = dict(B=BATCH, S=SEQ, H=HEADS, DK=DIM, DV=DIM)

EXAMPLES = [
    Example("linear_attention/linear_attn_fwd",
            "linear_attention/example_linear_attn_fwd.py: tl_fused_chunk_fwd_kernel", chunked_linear_attention, SIZES,
            _linear_inputs, linear_attention_reference, checked=("O", "final_state")),
    Example("linear_attention/retention_fwd", "linear_attention/example_retention_fwd.py: retention_chunks_kernel",
            chunked_retention, SIZES, _qkv, retention_reference),
]
