"""Mixture-of-experts routing, outside TileLang's examples/.

Modelled on tile-ai/TileOPs ``src/tileops/kernels/moe/``: ``fused_topk.py`` (``_fused_topk_kernel``,
softmax scoring without bias: one warp per token, each lane holding experts ``lane, lane + 32, ..`` in
``T.alloc_local`` registers, max / sum / arg-max all-reduced with ``T.shfl_xor``, lane 0 writing the
k-th weight and id), ``permute_align.py`` (``_make_align_kernel``: one program of threads counting
tokens per expert with shared ``T.atomic_add``, a warp prefix sum of the padded counts with
``T.tvm_warp_shuffle_up``, the exclusive cumsum, the expert id of every GEMM block, the sentinel fill)
and ``unpermute.py`` (``_make_unpermute_kernel``: per token, the K expert rows gathered at
``fwd_idx[token * K + k]`` with a ``T.copy`` of a row slice, weighted and summed in a float32
fragment). Written anew in their idioms, scaled down: 16 tokens of 64 experts choosing 2, 2 tokens a
program (TileOPs' default: 16); 64 token slots over 8 experts in blocks of 16, 64 threads (TileOPs:
1024); 32 tokens of hidden size 256.

Two grouped GEMMs of TileOPs skip work on values read on device: ``moe_grouped_gemm_nopad.py``
(``_moe_grouped_gemm_kernel``: rows of the experts' tokens without padding, a 1-D grid of blocks, a
block past the scheduler's ``total_tiles[0]`` leaving at once, the others reading their expert and
rows from the scheduler's tables, storing the valid rows) and ``moe_grouped_gemm.py``
(``_moe_grouped_gemm_mma_kernel``, masked layout: each group's slab of rows, the blocks past the
group's count, every block of an empty group, skipping their tile). DeepSeek's TileKernels
``moe/expand_to_fused_kernel.py`` (``get_expand_to_fused_kernel``) zeroes the fused rows no token
fills (``if pos_to_expert[pid_token] < 0``), leaves early past the tokens (``T.thread_return()``) and
copies each token's row to the positions a table gives; its ``moe/normalize_weight_kernel.py``
(``get_normalize_weight_kernel``) normalises each token's top-k weights with a thread per token of a
``T.dynamic`` count, the weights in a ``T.alloc_local`` array (``T.vectorized`` loads and stores, a
``T.unroll`` sum into a ``T.alloc_var(init=1e-20)``), 256 tokens choosing 8. Scaled down: 3 experts of 40, 0
and 24 tokens; slabs of 64 rows holding 50, 0 and 20; K = N = 64, 32-row blocks (TileOPs: 64)."""

import functools
import math

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn

WARP = 32


@functools.lru_cache(maxsize=8)
def fused_topk_builder(num_tokens, num_experts, top_k):
    @tilelang.jit(out_idx=[])
    def _func(TOKENS_PER_BLOCK):
        elems = -(-num_experts // WARP)
        log_warp = int(math.log2(WARP))
        num_blocks = -(-num_tokens // TOKENS_PER_BLOCK)

        @T.prim_func
        def main(
            gating_output: T.Tensor([num_tokens, num_experts], "float32"),
            topk_weights: T.Tensor([num_tokens, top_k], "float32"),
            topk_ids: T.Tensor([num_tokens, top_k], "int32"),
        ):
            with T.Kernel(num_blocks, threads=TOKENS_PER_BLOCK * WARP) as (block_id,):
                tx = T.get_thread_binding()
                lane = tx % WARP
                token = block_id * TOKENS_PER_BLOCK + tx // WARP
                scores = T.alloc_local([elems], "float32")
                if token < num_tokens:
                    for j in T.serial(elems):
                        e = j * WARP + lane
                        if e < num_experts:
                            scores[j] = gating_output[token, e]
                        else:
                            scores[j] = -T.infinity("float32")
                    row_max = T.alloc_var(T.float32)
                    row_max = -T.infinity("float32")
                    for j in T.serial(elems):
                        row_max = T.max(row_max, scores[j])
                    for i in T.serial(log_warp):
                        row_max = T.max(row_max, T.shfl_xor(row_max, T.int32(WARP // 2) >> i))
                    row_sum = T.alloc_var(T.float32)
                    row_sum = T.float32(0)
                    for j in T.serial(elems):
                        v = T.exp(scores[j] - row_max)
                        scores[j] = v
                        row_sum = row_sum + v
                    for i in T.serial(log_warp):
                        row_sum = row_sum + T.shfl_xor(row_sum, T.int32(WARP // 2) >> i)
                    inv_sum = T.alloc_var(T.float32)
                    inv_sum = T.float32(1) / row_sum

                    best_val = T.alloc_var(T.float32)
                    best_idx = T.alloc_var(T.int32)
                    for k in T.serial(top_k):
                        best_val = -T.infinity("float32")
                        best_idx = T.int32(-1)
                        for j in T.serial(elems):
                            if scores[j] > best_val:
                                best_val = scores[j]
                                best_idx = j * T.int32(WARP) + lane
                        for i in T.serial(log_warp):
                            mask = T.int32(WARP // 2) >> i
                            other_val = T.shfl_xor(best_val, mask)
                            other_idx = T.shfl_xor(best_idx, mask)
                            best_idx = T.if_then_else(
                                other_val > best_val, other_idx,
                                T.if_then_else(other_val == best_val,
                                               T.if_then_else(other_idx < best_idx, other_idx, best_idx), best_idx))
                            best_val = T.max(best_val, other_val)
                        if lane == 0:
                            topk_weights[token, k] = best_val * inv_sum
                            topk_ids[token, k] = best_idx
                        for j in T.serial(elems):
                            if j * T.int32(WARP) + lane == best_idx:
                                scores[j] = -T.infinity("float32")

        return main

    return _func


@functools.lru_cache(maxsize=8)
def align_builder(numel, num_experts, block_size):
    """Counts, padded prefix sum and the expert of every block; the scatter is a second kernel."""
    max_padded = numel + (num_experts + 1) * (block_size - 1)
    max_num_blocks = math.ceil(max_padded / block_size)

    @tilelang.jit(out_idx=[])
    def _align(threads: int):
        num_warps = threads // WARP

        @T.prim_func
        def main(
            flat: T.Tensor([numel], "int32"),
            sorted_token_ids: T.Tensor([max_padded], "int32"),
            expert_ids: T.Tensor([max_num_blocks], "int32"),
            num_tokens_post_pad: T.Tensor([1], "int32"),
            cumsum: T.Tensor([num_experts + 1], "int32"),
        ):
            with T.Kernel(1, threads=threads) as (_,):
                tx = T.get_thread_binding()
                counts = T.alloc_shared([num_experts], "int32")
                vals = T.alloc_shared([threads], "int32")
                warp_sum = T.alloc_shared([num_warps], "int32")
                warp_excl = T.alloc_shared([num_warps], "int32")
                running = T.alloc_shared([1], "int32")
                offsets = T.alloc_shared([num_experts + 1], "int32")

                for i in T.serial(T.ceildiv(num_experts, threads)):
                    if i * threads + tx < num_experts:
                        counts[i * threads + tx] = T.int32(0)
                T.sync_threads()
                for i in T.serial(T.ceildiv(numel, threads)):
                    if i * threads + tx < numel:
                        T.atomic_add(counts[flat[i * threads + tx]], 1)
                T.sync_threads()

                lane = tx % WARP
                warp_id = tx // WARP
                vals[tx] = T.ceildiv(counts[tx], block_size) * block_size if tx < num_experts else T.int32(0)
                T.sync_threads()
                for d in T.serial(5):
                    stride = 1 << d
                    up = T.tvm_warp_shuffle_up(T.uint32(0xFFFFFFFF), vals[tx], stride, 32, 32)
                    if lane >= stride:
                        vals[tx] = vals[tx] + up
                T.sync_threads()
                if lane == 31:
                    warp_sum[warp_id] = vals[tx]
                T.sync_threads()
                for w in T.serial(num_warps):
                    if tx == 0:
                        if w == 0:
                            running[0] = T.int32(0)
                        warp_excl[w] = running[0]
                        running[0] = running[0] + warp_sum[w]
                T.sync_threads()

                own = T.ceildiv(counts[tx], block_size) * block_size if tx < num_experts else T.int32(0)
                excl = vals[tx] - own + warp_excl[warp_id]
                if tx < num_experts:
                    offsets[tx] = excl
                    cumsum[tx] = excl
                if tx == num_experts - 1:
                    total = vals[tx] + warp_excl[warp_id]
                    offsets[num_experts] = total
                    cumsum[num_experts] = total
                    num_tokens_post_pad[0] = total
                T.sync_threads()

                if tx < num_experts:
                    first = offsets[tx] // block_size
                    last = offsets[tx + 1] // block_size
                    for b in T.serial(max_num_blocks):
                        if first + b < last:
                            expert_ids[first + b] = tx
                for i in T.serial(T.ceildiv(max_padded, threads)):
                    if i * threads + tx < max_padded:
                        sorted_token_ids[i * threads + tx] = numel

        return main

    return _align


@functools.lru_cache(maxsize=8)
def unpermute_builder(num_tokens, top_k, hidden_size, padded_batch_sum, dtype):
    threads = min(256, hidden_size // 8)
    numel = num_tokens * top_k

    @tilelang.jit(out_idx=[])
    def _unpermute():
        @T.prim_func
        def main(
            mm2_pad: T.Tensor([padded_batch_sum, hidden_size], dtype),
            fwd_idx: T.Tensor([numel], "int32"),
            topk_weights: T.Tensor([num_tokens, top_k], "float32"),
            output: T.Tensor([num_tokens, hidden_size], dtype),
        ):
            with T.Kernel(num_tokens, threads=threads) as (token_idx,):
                acc = T.alloc_fragment([hidden_size], "float32")
                src = T.alloc_fragment([hidden_size], dtype)
                T.fill(acc, 0.0)
                for k in T.Pipelined(top_k, num_stages=2):
                    raw_slot = fwd_idx[token_idx * T.int32(top_k) + k]
                    safe_slot = T.if_then_else(raw_slot >= T.int32(0), raw_slot, T.int32(0))
                    weight = topk_weights[token_idx, k] * T.Cast(
                        "float32", T.if_then_else(raw_slot >= T.int32(0), T.int32(1), T.int32(0)))
                    T.copy(mm2_pad[safe_slot, 0:hidden_size], src)
                    for j in T.Parallel(hidden_size):
                        acc[j] = acc[j] + T.Cast("float32", src[j]) * weight
                out_frag = T.alloc_fragment([hidden_size], dtype)
                for j in T.Parallel(hidden_size):
                    out_frag[j] = T.Cast(dtype, acc[j])
                T.copy(out_frag, output[token_idx, 0:hidden_size])

        return main

    return _unpermute


@functools.lru_cache(maxsize=8)
def grouped_gemm_nopad_builder(numel, max_tiles, num_experts, N, K, dtype):
    """Rows of the experts' tokens, tight (no padding), times their expert's weights (NT): a block
    per (M tile, N tile) of a 1-D grid; a block past ``total_tiles[0]`` (the scheduler's count, on
    device) leaves at once; the others find their expert and rows in the scheduler's tables."""

    @tilelang.jit(out_idx=[2])
    def _func(block_m, block_n, block_k, threads):
        num_pid_n = -(-N // block_n)

        @T.prim_func
        def main(A: T.Tensor((numel + block_m, K), dtype), B: T.Tensor((num_experts, N, K), dtype),
                 C: T.Tensor((numel, N), dtype), tile_expert_ids: T.Tensor([max_tiles], "int32"),
                 tile_row_offsets: T.Tensor([max_tiles], "int32"), true_offsets: T.Tensor([num_experts], "int32"),
                 true_sizes: T.Tensor([num_experts], "int32"), total_tiles: T.Tensor([1], "int32")):
            with T.Kernel(max_tiles * num_pid_n, threads=threads) as (pid,):
                A_shared = T.alloc_shared((block_m, block_k), dtype)
                B_shared = T.alloc_shared((block_n, block_k), dtype)
                C_local = T.alloc_fragment((block_m, block_n), "float32")
                bx = pid // T.int32(num_pid_n)
                by = pid % T.int32(num_pid_n)
                if bx < total_tiles[0]:
                    expert_id = tile_expert_ids[bx]
                    row_in_expert = tile_row_offsets[bx]
                    m_start = true_offsets[expert_id] + row_in_expert
                    n_start = by * T.int32(block_n)
                    actual_rows = T.min(T.int32(block_m), true_sizes[expert_id] - row_in_expert)
                    T.clear(C_local)
                    for k in T.Pipelined(T.ceildiv(K, block_k), num_stages=2):
                        T.copy(A[m_start:m_start + block_m, k * block_k:(k + 1) * block_k], A_shared)
                        T.copy(B[expert_id, n_start:n_start + block_n, k * block_k:(k + 1) * block_k], B_shared)
                        T.gemm(A_shared, B_shared, C_local, transpose_B=True)
                    for i, j in T.Parallel(block_m, block_n):
                        if i < actual_rows:
                            C[m_start + i, n_start + j] = C_local[i, j]

        return main

    return _func


@functools.lru_cache(maxsize=8)
def grouped_gemm_masked_builder(num_groups, max_m, N, K, dtype):
    """Each group's slab of ``max_m`` rows, of which ``layout[g]`` hold tokens, times its weights
    (NT): the blocks of a slab's rows past the group's count, all of an empty group's, skip their
    tile; a block stores the rows below the count."""

    @tilelang.jit(out_idx=[3])
    def _func(block_m, block_n, block_k, threads):
        tiles_per_slab = -(-max_m // block_m)

        @T.prim_func
        def main(A: T.Tensor((num_groups, max_m, K), dtype), B: T.Tensor((num_groups, N, K), dtype),
                 layout: T.Tensor((num_groups,), "int32"), C: T.Tensor((num_groups, max_m, N), dtype)):
            with T.Kernel(num_groups * tiles_per_slab, T.ceildiv(N, block_n), threads=threads) as (bx, by):
                A_s = T.alloc_shared((block_m, block_k), dtype)
                B_s = T.alloc_shared((block_n, block_k), dtype)
                C_s = T.alloc_shared((block_m, block_n), dtype)
                acc = T.alloc_fragment((block_m, block_n), "float32")
                g = bx // tiles_per_slab
                r0 = bx % tiles_per_slab * block_m
                row_end = T.min(layout[g], max_m)
                if r0 < row_end:
                    n0 = by * block_n
                    T.clear(acc)
                    for ko in T.Pipelined(T.ceildiv(K, block_k), num_stages=2):
                        T.copy(A[g, r0:r0 + block_m, ko * block_k:(ko + 1) * block_k], A_s)
                        T.copy(B[g, n0:n0 + block_n, ko * block_k:(ko + 1) * block_k], B_s)
                        T.gemm(A_s, B_s, acc, transpose_B=True)
                    T.copy(acc, C_s)
                    for i, j in T.Parallel(block_m, block_n):
                        if r0 + i < row_end:
                            C[g, r0 + i, n0 + j] = C_s[i, j]

        return main

    return _func


@functools.lru_cache(maxsize=8)
def normalize_weight_builder(num_topk):
    num_threads = 128

    @tilelang.jit(pass_configs={tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True})
    def get_normalize_weight_kernel():
        num_tokens = T.dynamic("num_tokens")
        num_blocks = T.ceildiv(num_tokens, 128)

        @T.prim_func
        def normalize_weight_kernel(
            topk_weights: T.Tensor[(num_tokens, num_topk), T.float32],
            denominator: T.Tensor[(num_tokens,), T.float32],
            normalized_weights: T.Tensor[(num_tokens, num_topk), T.float32],
        ):
            with T.Kernel(num_blocks, threads=num_threads) as (pid, ):
                tid = T.get_thread_binding()
                weights_local = T.alloc_local((num_topk,), T.float32)
                row = pid * num_threads + tid
                if row < num_tokens:
                    total = T.alloc_var(T.float32, init=1e-20)
                    for i in T.vectorized(num_topk):
                        weights_local[i] = topk_weights[row, i]
                    for i in T.unroll(num_topk):
                        total += weights_local[i]
                    denominator[row] = total
                    for i in T.vectorized(num_topk):
                        normalized_weights[row, i] = weights_local[i] / total

        return normalize_weight_kernel

    return get_normalize_weight_kernel


@functools.lru_cache(maxsize=8)
def expand_to_fused_builder(hidden, num_topk, dtype):
    """Each token's row copied to its top-k positions of the experts' fused rows: a block per row of
    the larger of the two; a position no token fills (expert -1) is zeroed, a block past the tokens
    leaves, the others copy their row to each position the table gives (-1: none)."""
    num_threads = 64
    hidden_aligned = -(-hidden // num_threads) * num_threads

    @tilelang.jit
    def _func():
        num_tokens = T.dynamic("num_tokens")
        num_expanded_tokens = T.dynamic("num_expanded_tokens")
        num_blocks = T.max(num_tokens, num_expanded_tokens)

        @T.prim_func
        def main(x: T.Tensor[(num_tokens, hidden), dtype], expanded_x: T.Tensor[(num_expanded_tokens, hidden), dtype],
                 token_topk_to_pos: T.Tensor[(num_tokens, num_topk), T.int32],
                 pos_to_expert: T.Tensor[(num_expanded_tokens,), T.int32]):
            with T.Kernel(num_blocks, threads=num_threads) as (pid_token,):
                pos_local = T.alloc_local((num_topk,), "int32")
                if pid_token < num_expanded_tokens:
                    if pos_to_expert[pid_token] < 0:
                        for i in T.Parallel(hidden_aligned):
                            if i < hidden:
                                expanded_x[pid_token, i] = 0
                if pid_token >= num_tokens:
                    T.thread_return()
                x_fragment = T.alloc_fragment((hidden_aligned,), dtype)
                T.copy(token_topk_to_pos[pid_token, 0], pos_local)
                T.copy(x[pid_token, :], x_fragment[0:hidden])
                for k in T.serial(num_topk):
                    if pos_local[k] >= 0:
                        for i in T.Parallel(hidden_aligned):
                            if i < hidden:
                                expanded_x[pos_local[k], i] = x_fragment[i]

        return main

    return _func


TOKENS, EXPERTS, TOP_K = 16, 64, 2


def _topk_inputs():
    return (randn(TOKENS, EXPERTS, seed=61, dtype=torch.float32), torch.zeros(TOKENS, TOP_K),
            torch.zeros(TOKENS, TOP_K, dtype=torch.int32))


def _topk_reference(gating, _w, _i):
    weights, ids = torch.softmax(gating, dim=1).topk(TOP_K, dim=1)
    return weights, ids.to(torch.int32)


ALIGN_NUMEL, ALIGN_EXPERTS, ALIGN_BLOCK = 64, 8, 16
ALIGN_PADDED = ALIGN_NUMEL + (ALIGN_EXPERTS + 1) * (ALIGN_BLOCK - 1)
ALIGN_BLOCKS = math.ceil(ALIGN_PADDED / ALIGN_BLOCK)


def _align_inputs():
    ids = torch.randint(0, ALIGN_EXPERTS, (ALIGN_NUMEL,), generator=torch.Generator().manual_seed(62))
    zeros = [torch.zeros(n, dtype=torch.int32) for n in (ALIGN_PADDED, ALIGN_BLOCKS, 1, ALIGN_EXPERTS + 1)]
    return (ids.to(torch.int32), *zeros)


def _align_reference(flat, sorted_ids, expert_ids, post_pad, cumsum):
    counts = torch.bincount(flat.long(), minlength=ALIGN_EXPERTS)
    padded = (counts + ALIGN_BLOCK - 1) // ALIGN_BLOCK * ALIGN_BLOCK
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), padded.cumsum(0)])
    blocks = expert_ids.clone()
    for e in range(ALIGN_EXPERTS):
        blocks[offsets[e] // ALIGN_BLOCK:offsets[e + 1] // ALIGN_BLOCK] = e
    return (torch.full_like(sorted_ids, ALIGN_NUMEL), blocks, offsets[-1:].to(torch.int32),
            offsets.to(torch.int32))


UNPERM_TOKENS, UNPERM_HIDDEN, UNPERM_SLOTS = 32, 256, 96


def _unpermute_inputs():
    g = torch.Generator().manual_seed(63)
    fwd = torch.randperm(UNPERM_SLOTS, generator=g)[:UNPERM_TOKENS * TOP_K].to(torch.int32)
    weights = torch.rand(UNPERM_TOKENS, TOP_K, generator=g)
    return (randn(UNPERM_SLOTS, UNPERM_HIDDEN, seed=64), fwd, weights,
            torch.zeros(UNPERM_TOKENS, UNPERM_HIDDEN, dtype=torch.bfloat16))


def _unpermute_reference(rows, fwd, weights, _out):
    gathered = rows.float()[fwd.long()].reshape(UNPERM_TOKENS, TOP_K, UNPERM_HIDDEN)
    return (gathered * weights[:, :, None]).sum(dim=1)


NOPAD_SIZES = (40, 0, 24)  # tokens per expert: the middle one has none
NOPAD_NUMEL, NOPAD_N, NOPAD_K, NOPAD_BM = sum(NOPAD_SIZES), 64, 64, 32
NOPAD_MAX_TILES = NOPAD_NUMEL // NOPAD_BM + len(NOPAD_SIZES)


def _nopad_tables():
    """The tile scheduler's tables (``_tile_scheduler_kernel``), computed here: each M tile's expert
    and first row in it, -1 / 0 past the last tile, and the tile count."""
    experts, rows = [], []
    for e, size in enumerate(NOPAD_SIZES):
        for r in range(0, size, NOPAD_BM):
            experts.append(e)
            rows.append(r)
    total = len(experts)
    experts += [-1] * (NOPAD_MAX_TILES - total)
    rows += [0] * (NOPAD_MAX_TILES - total)
    offsets = [sum(NOPAD_SIZES[:e]) for e in range(len(NOPAD_SIZES))]
    return [torch.tensor(v, dtype=torch.int32) for v in (experts, rows, offsets, list(NOPAD_SIZES), [total])]


def _nopad_inputs():
    a = randn(NOPAD_NUMEL + NOPAD_BM, NOPAD_K, seed=65)
    return (a, randn(len(NOPAD_SIZES), NOPAD_N, NOPAD_K, seed=66), *_nopad_tables())


def _nopad_reference(a, b, *_tables):
    parts, start = [], 0
    for e, size in enumerate(NOPAD_SIZES):
        parts.append(a[start:start + size].float() @ b[e].float().T)
        start += size
    return torch.cat(parts)


MASKED_COUNTS = (50, 0, 20)  # tokens of each group's slab of 64 rows: the middle group is empty
MASKED_MAX_M, MASKED_N, MASKED_K = 64, 64, 64


def _masked_inputs():
    g = len(MASKED_COUNTS)
    return (randn(g, MASKED_MAX_M, MASKED_K, seed=67), randn(g, MASKED_N, MASKED_K, seed=68),
            torch.tensor(MASKED_COUNTS, dtype=torch.int32))


def _masked_reference(a, b, layout):
    out = torch.zeros(len(MASKED_COUNTS), MASKED_MAX_M, MASKED_N)
    for g, count in enumerate(MASKED_COUNTS):
        out[g, :count] = a[g, :count].float() @ b[g].float().T
    return out


EXPAND_TOKENS, EXPAND_SLOTS, EXPAND_HIDDEN = 8, 20, 64


def _expand_inputs():
    g = torch.Generator().manual_seed(69)
    slots = torch.randperm(EXPAND_SLOTS, generator=g)[:EXPAND_TOKENS * TOP_K].reshape(EXPAND_TOKENS, TOP_K)
    slots[0, 1] = -1  # a token sent to one expert only
    experts = torch.full((EXPAND_SLOTS,), -1, dtype=torch.int32)
    experts[slots[slots >= 0]] = 1
    return (randn(EXPAND_TOKENS, EXPAND_HIDDEN, seed=70), torch.zeros(EXPAND_SLOTS, EXPAND_HIDDEN, dtype=torch.bfloat16),
            slots.to(torch.int32), experts)


def _expand_reference(x, _expanded, slots, _experts):
    out = torch.zeros(EXPAND_SLOTS, EXPAND_HIDDEN)
    for t in range(EXPAND_TOKENS):
        for k in range(TOP_K):
            if slots[t, k] >= 0:
                out[slots[t, k]] = x[t].float()
    return out


NORM_TOKENS, NORM_TOPK = 256, 8


def _normalize_inputs():
    weights = torch.rand(NORM_TOKENS, NORM_TOPK, generator=torch.Generator().manual_seed(251))
    return weights, torch.zeros(NORM_TOKENS), torch.zeros(NORM_TOKENS, NORM_TOPK)


def _normalize_reference(weights, _denominator, _normalized):
    total = weights.sum(dim=1) + 1e-20
    return total, weights / total[:, None]


@tilelang.jit(pass_configs={tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True})
def get_mask_indices_by_tp_kernel(num_topk: int, dtype: T.dtype):
    """deepseek-ai/TileKernels ``tile_kernels/moe/mask_indices_by_tp_kernel.py`` (commit 36d9e45d), as written."""
    num_threads = 128

    num_tokens = T.dynamic('num_tokens')
    num_blocks = T.ceildiv(num_tokens * num_topk, num_threads)

    @T.prim_func
    def mask_indices_by_tp_kernel(
        indices: T.Tensor[(num_tokens, num_topk), dtype],
        masked_indices: T.Tensor[(num_tokens, num_topk), dtype],
        per_gpu: T.int32,
        per_dp: T.int32,
        num_tp_ranks: T.int32,
        tp_rank: T.int32,
    ):
        with T.Kernel(num_blocks, threads=num_threads) as (pid, ):
            indices_1d = T.reshape(indices, (num_tokens * num_topk, ))
            masked_indices_1d = T.reshape(masked_indices, (num_tokens * num_topk, ))
            thread_idx = T.get_thread_binding()
            index = pid * num_threads + thread_idx

            value = T.alloc_var(dtype)
            if index < num_tokens * num_topk:
                value = indices_1d[index]
                if value < 0 or T.truncmod(T.truncdiv(value, per_gpu), num_tp_ranks) != tp_rank:
                    masked_indices_1d[index] = -1
                else:
                    value -= tp_rank * per_gpu
                    dp_rank = T.truncdiv(value, per_dp)
                    value -= dp_rank * (per_dp - per_gpu)
                    masked_indices_1d[index] = T.Select(value < 0, T.int64(-1), value)

    return mask_indices_by_tp_kernel


TP_TOKENS, TP_EXPERTS, TP_EP_RANKS, TP_RANK, TP_RANKS = 64, 64, 8, 1, 2
TP_PER_GPU = TP_EXPERTS // TP_EP_RANKS
TP_SCALARS = dict(per_gpu=TP_PER_GPU, per_dp=TP_RANKS * TP_PER_GPU, num_tp_ranks=TP_RANKS, tp_rank=TP_RANK)


def _tp_inputs():
    g = torch.Generator().manual_seed(252)
    return (torch.randint(-1, TP_EXPERTS, (TP_TOKENS, TOP_K), generator=g, dtype=torch.int64),
            torch.zeros(TP_TOKENS, TOP_K, dtype=torch.int64))


def _tp_reference(indices, _masked):
    """TileKernels' ``mask_indices_by_tp`` in torch: experts of other TP ranks -1, the rest renumbered."""
    per_gpu, per_dp = TP_PER_GPU, TP_RANKS * TP_PER_GPU
    keep = (indices >= 0) & (torch.div(indices, per_gpu, rounding_mode="trunc") % TP_RANKS == TP_RANK)
    value = indices - TP_RANK * per_gpu
    value = value - torch.div(value, per_dp, rounding_mode="trunc") * (per_dp - per_gpu)
    return torch.where(keep & (value >= 0), value, torch.full_like(indices, -1))


MOE = "tile-ai/TileOPs src/tileops/kernels/moe/"
EXAMPLES = [
    Example("moe/fused_topk_softmax", MOE + "fused_topk.py: _fused_topk_kernel (softmax, no bias)",
            fused_topk_builder(TOKENS, EXPERTS, TOP_K), dict(TOKENS_PER_BLOCK=2), _topk_inputs, _topk_reference,
            checked=("topk_weights", "topk_ids")),
    Example("moe/align_block_size", MOE + "permute_align.py: _make_align_kernel",
            align_builder(ALIGN_NUMEL, ALIGN_EXPERTS, ALIGN_BLOCK), dict(threads=64), _align_inputs,
            _align_reference, checked=("sorted_token_ids", "expert_ids", "num_tokens_post_pad", "cumsum")),
    Example("moe/unpermute", MOE + "unpermute.py: _make_unpermute_kernel",
            unpermute_builder(UNPERM_TOKENS, TOP_K, UNPERM_HIDDEN, UNPERM_SLOTS, "bfloat16"), {},
            _unpermute_inputs, _unpermute_reference, checked=("output",)),
    Example("moe/grouped_gemm_nopad", MOE + "moe_grouped_gemm_nopad.py: _moe_grouped_gemm_kernel (T.copy path, "
            "group_size_m 1)", grouped_gemm_nopad_builder(NOPAD_NUMEL, NOPAD_MAX_TILES, len(NOPAD_SIZES), NOPAD_N,
                                                          NOPAD_K, "bfloat16"),
            dict(block_m=NOPAD_BM, block_n=64, block_k=32, threads=128), _nopad_inputs, _nopad_reference),
    Example("moe/expand_to_fused", "deepseek-ai/TileKernels tile_kernels/moe/expand_to_fused_kernel.py: "
            "get_expand_to_fused_kernel (no scale factors)", expand_to_fused_builder(EXPAND_HIDDEN, TOP_K, "bfloat16"),
            {}, _expand_inputs, _expand_reference, checked=("expanded_x",)),
    Example("moe/grouped_gemm_masked", MOE + "moe_grouped_gemm.py: _moe_grouped_gemm_mma_kernel (masked layout)",
            grouped_gemm_masked_builder(len(MASKED_COUNTS), MASKED_MAX_M, MASKED_N, MASKED_K, "bfloat16"),
            dict(block_m=32, block_n=64, block_k=32, threads=128), _masked_inputs, _masked_reference),
    Example("moe/normalize_weight", "deepseek-ai/TileKernels tile_kernels/moe/normalize_weight_kernel.py: "
            "get_normalize_weight_kernel", normalize_weight_builder(NORM_TOPK), {}, _normalize_inputs,
            _normalize_reference, checked=("denominator", "normalized_weights")),
    Example("moe/mask_indices_by_tp", "deepseek-ai/TileKernels tile_kernels/moe/mask_indices_by_tp_kernel.py: "
            "get_mask_indices_by_tp_kernel (commit 36d9e45d)", get_mask_indices_by_tp_kernel,
            dict(num_topk=TOP_K, dtype="int64"), _tp_inputs, _tp_reference,
            checked=("masked_indices",), scalars=TP_SCALARS),
]
