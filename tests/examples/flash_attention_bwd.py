"""Flash attention training kernels, modelled on the four kernels of tile-ai/tilelang's
examples/flash_attention/example_mha_bwd_bhsd.py: flashattn_fwd (forward that also stores the
log-sum-exp), flashattn_bwd_preprocess (Delta = rowsum(O * dO)), flashattn_bwd_postprocess (dQ from
float32 to bfloat16) and flashattn_bwd (dQ, dK, dV).

Written anew for this catalogue in that example's idioms, not copied: ``@tilelang.jit`` factories
returning ``@T.prim_func`` kernels over (batch, heads, seq, dim) tensors, the example's grids (the
backward runs one program per key block of a head and loops over query blocks), its log2-domain
scores, the ``T.annotate_layout`` of dQ for the atomic adds, and ``T.gemm`` with transposed operands.
bfloat16 data; float32 accumulators, lse, Delta and dQ. Called as the example's autograd function
calls them (block_M = block_N = 64) on batch 1, 2 heads, seq 128, dim 64.

References: the forward's output and the gradients of softmax(Q K^T / sqrt(d)) V from torch autograd
in float32; lse is log2 of the softmax denominator of the scaled scores, Delta rowsum(O * dO)."""

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn

LOG2E = 1.44269504
FAST_MATH = {tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True}


@tilelang.jit(out_idx=[3, 4], pass_configs=FAST_MATH)
def attention_fwd_with_lse(batch, heads, seq_len, dim, is_causal, block_M, block_N):
    """flashattn_fwd: the forward pass, storing per query log2(sum 2^(s * scale)) in lse."""
    qk_scale = dim**-0.5 * LOG2E
    layout = [batch, heads, seq_len, dim]
    bf16, f32 = T.bfloat16, T.float32

    @T.prim_func
    def fwd_with_lse(
        Q: T.Tensor(layout, bf16),
        K: T.Tensor(layout, bf16),
        V: T.Tensor(layout, bf16),
        Output: T.Tensor(layout, bf16),
        lse: T.Tensor([batch, heads, seq_len], f32),
    ):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=128) as (bx, by, bz):
            q_s = T.alloc_shared([block_M, dim], bf16)
            k_s = T.alloc_shared([block_N, dim], bf16)
            v_s = T.alloc_shared([block_N, dim], bf16)
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
            n_kv_blocks = T.ceildiv((bx + 1) * block_M, block_N) if is_causal else T.ceildiv(seq_len, block_N)
            for kb in T.Pipelined(n_kv_blocks, num_stages=1):
                T.copy(K[bz, by, kb * block_N : (kb + 1) * block_N, :], k_s)
                if is_causal:
                    for i, j in T.Parallel(block_M, block_N):
                        s[i, j] = T.if_then_else(bx * block_M + i >= kb * block_N + j, 0, -T.infinity(s.dtype))
                else:
                    for i, j in T.Parallel(block_M, block_N):
                        s[i, j] = T.if_then_else(kb * block_N + j >= seq_len, -T.infinity(s.dtype), 0)
                T.gemm(q_s, k_s, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.copy(V[bz, by, kb * block_N : (kb + 1) * block_N, :], v_s)
                # running maxima (this one does not reset them before the reduction)
                T.copy(m_new, m_old)
                T.reduce_max(s, m_new, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    m_new[i] = T.max(m_new[i], m_old[i])
                for i in T.Parallel(block_M):
                    alpha[i] = T.exp2(m_old[i] * qk_scale - m_new[i] * qk_scale)
                for i, d in T.Parallel(block_M, dim):
                    o[i, d] *= alpha[i]
                for i, j in T.Parallel(block_M, block_N):
                    s[i, j] = T.exp2(s[i, j] * qk_scale - m_new[i] * qk_scale)
                T.copy(s, p)
                T.gemm(p, v_s, o, policy=T.GemmWarpPolicy.FullRow)
                T.reduce_sum(s, p_sum, dim=1)
                for i in T.Parallel(block_M):
                    l[i] = l[i] * alpha[i] + p_sum[i]
            for i, d in T.Parallel(block_M, dim):
                o[i, d] /= l[i]
            T.copy(o, Output[bz, by, bx * block_M : (bx + 1) * block_M, :])
            # log2 of the full denominator: log2(l) + the maximum it was taken against
            for i in T.Parallel(block_M):
                l[i] = T.log2(l[i]) + m_new[i] * qk_scale
            T.copy(l, lse[bz, by, bx * block_M : (bx + 1) * block_M])

    return fwd_with_lse


@tilelang.jit(out_idx=[2], pass_configs=FAST_MATH)
def attention_bwd_delta(batch, heads, seq_len, dim):
    """flashattn_bwd_preprocess: Delta[b, h, t] = sum_d O[b, h, t, d] * dO[b, h, t, d], over 32 x 32
    tiles (a program per head and 32 rows)."""
    tile = 32
    layout = [batch, heads, seq_len, dim]
    bf16, f32 = T.bfloat16, T.float32

    @T.prim_func
    def bwd_delta(
        O: T.Tensor(layout, bf16),
        dO: T.Tensor(layout, bf16),
        Delta: T.Tensor([batch, heads, seq_len], f32),
    ):
        with T.Kernel(heads, T.ceildiv(seq_len, tile), batch) as (bx, by, bz):
            o_t = T.alloc_fragment([tile, tile], bf16)
            do_t = T.alloc_fragment([tile, tile], bf16)
            prod = T.alloc_fragment([tile, tile], f32)
            rows = T.alloc_fragment([tile], f32)
            T.clear(prod)
            for c in range(T.ceildiv(dim, tile)):
                T.copy(O[bz, bx, by * tile : (by + 1) * tile, c * tile : (c + 1) * tile], o_t)
                T.copy(dO[bz, bx, by * tile : (by + 1) * tile, c * tile : (c + 1) * tile], do_t)
                for i, j in T.Parallel(tile, tile):
                    prod[i, j] += o_t[i, j] * do_t[i, j]
            T.reduce_sum(prod, rows, 1)
            T.copy(rows, Delta[bz, bx, by * tile : (by + 1) * tile])

    return bwd_delta


def _dq_atomic_layout(dQ):
    """dQ's element order matched to the 8 x 8 fragments of the gemm that produces it, so that its
    (scalar) atomic adds go to consecutive addresses."""
    return T.Layout(dQ.shape, lambda b, h, t, d: [b, h, t // 8, d // 8, d % 2, 4 * (t % 8) + (d % 8) // 2])


@tilelang.jit(out_idx=[1], pass_configs=FAST_MATH)
def attention_bwd_dq_cast(batch, heads, seq_len, dim):
    """flashattn_bwd_postprocess: dQ (float32, in the atomic layout) copied out as bfloat16."""
    rows = 64
    layout = [batch, heads, seq_len, dim]

    @T.prim_func
    def bwd_dq_cast(
        dQ: T.Tensor(layout, T.float32),
        dQ_out: T.Tensor(layout, T.bfloat16),
    ):
        with T.Kernel(T.ceildiv(seq_len, rows), heads, batch, threads=128) as (bx, by, bz):
            T.annotate_layout({dQ: _dq_atomic_layout(dQ)})
            T.copy(dQ[bz, by, bx * rows : (bx + 1) * rows, :], dQ_out[bz, by, bx * rows : (bx + 1) * rows, :])

    return bwd_dq_cast


@tilelang.jit(pass_configs=FAST_MATH)
def attention_bwd(batch, heads, seq_len, dim, is_causal, block_M, block_N):
    """flashattn_bwd: a program holds block_M keys and values of one head and loops over the query
    blocks, working with transposed scores: P^T = 2^(K Q^T * scale - lse), dV += P^T dO,
    dS^T = P^T * (V dO^T - Delta) / sqrt(d), dK += dS^T Q, and dQ += dS K added with T.atomic_add."""
    softmax_scale = dim**-0.5
    qk_scale = dim**-0.5 * LOG2E
    layout = [batch, heads, seq_len, dim]
    bf16, f32 = T.bfloat16, T.float32

    @T.prim_func
    def bwd_grads(
        Q: T.Tensor(layout, bf16),
        K: T.Tensor(layout, bf16),
        V: T.Tensor(layout, bf16),
        dO: T.Tensor(layout, bf16),
        lse: T.Tensor([batch, heads, seq_len], f32),
        Delta: T.Tensor([batch, heads, seq_len], f32),
        dQ: T.Tensor(layout, f32),
        dK: T.Tensor(layout, bf16),
        dV: T.Tensor(layout, bf16),
    ):
        with T.Kernel(heads, T.ceildiv(seq_len, block_M), batch, threads=128) as (bx, by, bz):
            k_s = T.alloc_shared([block_M, dim], bf16)
            ds_t_s = T.alloc_shared([block_M, block_N], bf16)
            q_s = T.alloc_shared([block_N, dim], bf16)
            v_s = T.alloc_shared([block_M, dim], bf16)
            p_t = T.alloc_fragment([block_M, block_N], f32)
            dp_t = T.alloc_fragment([block_M, block_N], f32)
            p_t_bf = T.alloc_fragment([block_M, block_N], bf16)
            ds_t_bf = T.alloc_fragment([block_M, block_N], bf16)
            lse_s = T.alloc_shared([block_N], f32)
            delta_s = T.alloc_shared([block_N], f32)
            do_s = T.alloc_shared([block_N, dim], bf16)
            dv_acc = T.alloc_fragment([block_M, dim], f32)
            dk_acc = T.alloc_fragment([block_M, dim], f32)
            dq_part = T.alloc_fragment([block_N, dim], f32)
            dv_s = T.alloc_shared([block_M, dim], bf16)
            dk_s = T.alloc_shared([block_M, dim], bf16)

            T.annotate_layout({dQ: _dq_atomic_layout(dQ)})
            T.copy(K[bz, bx, by * block_M : (by + 1) * block_M, :], k_s)
            T.copy(V[bz, bx, by * block_M : (by + 1) * block_M, :], v_s)
            T.clear(dv_acc)
            T.clear(dk_acc)
            # causal: query blocks before this key block see none of its keys
            first = T.floordiv(by * block_M, block_N) if is_causal else 0
            last = T.ceildiv(seq_len, block_N)
            for qb in T.Pipelined(first, last, num_stages=2):
                T.copy(Q[bz, bx, qb * block_N : (qb + 1) * block_N, :], q_s)
                T.clear(p_t)
                T.gemm(k_s, q_s, p_t, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.copy(lse[bz, bx, qb * block_N : (qb + 1) * block_N], lse_s)
                for i, j in T.Parallel(block_M, block_N):
                    p_t[i, j] = T.exp2(p_t[i, j] * qk_scale - lse_s[j])
                if is_causal:
                    for i, j in T.Parallel(block_M, block_N):
                        p_t[i, j] = T.if_then_else(by * block_M + i <= qb * block_N + j, p_t[i, j], 0)
                # (no bound mask without causality: rows past seq_len only meet rows past seq_len)
                T.copy(dO[bz, bx, qb * block_N : (qb + 1) * block_N, :], do_s)
                T.clear(dp_t)
                T.gemm(v_s, do_s, dp_t, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.copy(p_t, p_t_bf)
                T.gemm(p_t_bf, do_s, dv_acc, policy=T.GemmWarpPolicy.FullRow)

                T.copy(Delta[bz, bx, qb * block_N : (qb + 1) * block_N], delta_s)
                for i, j in T.Parallel(block_M, block_N):
                    ds_t_bf[i, j] = p_t[i, j] * (dp_t[i, j] - delta_s[j]) * softmax_scale
                T.gemm(ds_t_bf, q_s, dk_acc, policy=T.GemmWarpPolicy.FullRow)

                T.copy(ds_t_bf, ds_t_s)
                T.clear(dq_part)
                T.gemm(ds_t_s, k_s, dq_part, transpose_A=True)
                for i, d in T.Parallel(block_N, dim):
                    T.atomic_add(dQ[bz, bx, qb * block_N + i, d], dq_part[i, d])
            T.copy(dv_acc, dv_s)
            T.copy(dk_acc, dk_s)
            T.copy(dv_s, dV[bz, bx, by * block_M : (by + 1) * block_M, :])
            T.copy(dk_s, dK[bz, bx, by * block_M : (by + 1) * block_M, :])

    return bwd_grads


SHAPE = (1, 2, 128, 64)  # batch, heads, seq, dim


def _scaled_scores(q, k):
    return torch.matmul(q.float(), k.float().transpose(-1, -2)) / SHAPE[-1] ** 0.5


def _attention(q, k, v):
    return torch.matmul(torch.softmax(_scaled_scores(q, k), dim=-1), v.float())


def _qkv():
    return tuple(randn(*SHAPE, seed=s) for s in (1, 2, 3))


def _forward_reference(q, k, v):
    """The output, and log2 of sum_j exp(s_ij) = logsumexp(s) / ln 2."""
    return _attention(q, k, v), torch.logsumexp(_scaled_scores(q, k), dim=-1) * LOG2E


def _backward_inputs():
    q, k, v = _qkv()
    o, lse = _forward_reference(q, k, v)
    do = randn(*SHAPE, seed=4)
    delta = (o.bfloat16().float() * do.float()).sum(-1)  # from the bfloat16 output, as the kernels see it
    dq0 = torch.zeros(SHAPE)  # the example's caller zeroes dQ; dK and dV are overwritten
    return q, k, v, do, lse, delta, dq0, torch.zeros(SHAPE, dtype=torch.bfloat16), torch.zeros(SHAPE,
                                                                                               dtype=torch.bfloat16)


def _backward_reference(q, k, v, do, lse, delta, dq0, dk0, dv0):
    q, k, v = (t.float().requires_grad_(True) for t in (q, k, v))
    _attention(q, k, v).backward(do.float())
    return dq0 + q.grad, k.grad, v.grad


SIZES = dict(batch=SHAPE[0], heads=SHAPE[1], seq_len=SHAPE[2], dim=SHAPE[3])
SOURCE = "flash_attention/example_mha_bwd_bhsd.py: "

EXAMPLES = [
    Example("flash_attention/mha_bwd_bhsd fwd", SOURCE + "flashattn_fwd", attention_fwd_with_lse,
            dict(SIZES, is_causal=False, block_M=64, block_N=64), _qkv, _forward_reference),
    Example("flash_attention/mha_bwd_bhsd preprocess", SOURCE + "flashattn_bwd_preprocess", attention_bwd_delta,
            SIZES, lambda: (randn(*SHAPE, seed=5), randn(*SHAPE, seed=4)),
            lambda o, do: (o.float() * do.float()).sum(-1)),
    Example("flash_attention/mha_bwd_bhsd postprocess", SOURCE + "flashattn_bwd_postprocess", attention_bwd_dq_cast,
            SIZES, lambda: (randn(*SHAPE, seed=6, dtype=torch.float32),), lambda dq: dq.bfloat16()),
    Example("flash_attention/mha_bwd_bhsd bwd", SOURCE + "flashattn_bwd", attention_bwd,
            dict(SIZES, is_causal=False, block_M=64, block_N=64), _backward_inputs, _backward_reference,
            checked=("dQ", "dK", "dV")),
]
