"""Blocks of any shape (PadBlocksTT, ParallelizeRowLoopsTT, LocalBlocksTT): blocks whose rows or
columns are not multiples of 32, [1], rank 3 and 4, T.alloc_local arrays, rows walked by a serial
loop, written as TileLang kernels write them, compiled and run on the emulator against torch.

Each block is padded to whole 32x32 tiles; a reduction along a padded axis and a contraction over
a padded K read the block with its padding set to the neutral value (the ``<X>_masked`` blocks),
unless it is the reader's zeros already. Tolerances: bfloat16 outputs to 2^-7 of their range (an
output rounding and sums in float32), through SFPU exponentials 2^-6 (tests/compiler/test_ops.py);
float32 outputs summed by reduce_tile, which reads float32 truncated to TF32, to 2^-9."""

import pytest
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler import bad_kernels
from tests.compiler.test_negative import assert_diagnostic, compile_error
from tests.examples.norm import rms_norm_rows, rms_reference
from tilelang_tt.plan_view import summary

BF16, SFPU, TF32_SUM = 2.0**-7, 2.0**-6, 2.0**-9
LOG2E = 1.44269504


def data(*shape, seed, dtype=torch.bfloat16):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def assert_close(out, ref, rel):
    out, ref = out.double(), ref.double()
    err, scale = (out - ref).abs().max().item(), max(ref.abs().max().item(), 1.0)
    assert err <= rel * scale, f"max |error| {err} > {rel} * {scale}"


def cbs(artifacts) -> dict:
    return {cb.name: cb for cb in artifacts.plan.cbs}


def valid(artifacts) -> dict[str, list[int]]:
    """The padded blocks' valid values, by CB name."""
    return {name: list(cb.valid) for name, cb in cbs(artifacts).items() if cb.valid is not None}


# -- blocks of fewer than 32 rows ---------------------------------------------------------------------
def test_rms_norm_of_16_rows_pads_its_block():
    """TileLang's rms_norm with blk_m = 16 on 16 rows: one program, no blocks to group; its [16, 256]
    blocks are padded to 32 rows and its per-row vector to one tile."""
    x = data(16, 256, seed=1, dtype=torch.float32)
    artifacts = tilelang_tt.compile(rms_norm_rows.get_tir(M=16, N=256, blk_m=16))
    assert valid(artifacts) == {"rows": [16, 256], "squared": [16, 256], "inv_rms": [1, 16]}
    assert_close(artifacts.run(x), rms_reference(x), TF32_SUM)


def test_rms_norm_of_16_row_blocks_groups_them():
    """blk_m = 16 over 64 rows: two blocks of 16 rows are one block of 32 (CoarsenRowBlocksTT), no padding."""
    x = data(64, 256, seed=2, dtype=torch.float32)
    artifacts = tilelang_tt.compile(rms_norm_rows.get_tir(M=64, N=256, blk_m=16))
    assert valid(artifacts) == {} and artifacts.plan.block_grid == (1, 2)
    assert_close(artifacts.run(x), rms_reference(x), TF32_SUM)


def gqa_decode(batch, heads, groups, seqlen, dim, block_N):
    """Grouped-query attention for one new token, the way TileLang's decode examples write it: each
    program takes the ``heads // groups`` query heads of a key/value group ([4, 64] blocks with 16
    heads in 4 groups), keys and values block by block with the base-2 online softmax."""
    rows = heads // groups
    scale = dim**-0.5 * LOG2E
    bf16, f32 = "bfloat16", "float32"

    @T.prim_func
    def main(Q: T.Tensor([batch, heads, dim], bf16), K: T.Tensor([batch, seqlen, groups, dim], bf16),
             V: T.Tensor([batch, seqlen, groups, dim], bf16), Output: T.Tensor([batch, heads, dim], bf16)):
        with T.Kernel(groups, batch, threads=128) as (g, b):
            q_s = T.alloc_shared([rows, dim], bf16)
            k_s = T.alloc_shared([block_N, dim], bf16)
            v_s = T.alloc_shared([block_N, dim], bf16)
            o_s = T.alloc_shared([rows, dim], bf16)
            s = T.alloc_fragment([rows, block_N], f32)
            p = T.alloc_fragment([rows, block_N], bf16)
            o = T.alloc_fragment([rows, dim], f32)
            m_new = T.alloc_fragment([rows], f32)
            m_old = T.alloc_fragment([rows], f32)
            alpha = T.alloc_fragment([rows], f32)
            p_sum = T.alloc_fragment([rows], f32)
            l = T.alloc_fragment([rows], f32)  # noqa: E741 - the examples' name
            T.copy(Q[b, g * rows:(g + 1) * rows, :], q_s)
            T.fill(o, 0)
            T.fill(l, 0)
            T.fill(m_new, -T.infinity(f32))
            for kb in T.Pipelined(T.ceildiv(seqlen, block_N), num_stages=2):
                T.copy(K[b, kb * block_N:(kb + 1) * block_N, g, :], k_s)
                T.clear(s)
                T.gemm(q_s, k_s, s, transpose_B=True)
                T.copy(m_new, m_old)
                T.reduce_max(s, m_new, dim=1, clear=False)
                for i in T.Parallel(rows):
                    alpha[i] = T.exp2(m_old[i] * scale - m_new[i] * scale)
                for i, j in T.Parallel(rows, block_N):
                    s[i, j] = T.exp2(s[i, j] * scale - m_new[i] * scale)
                T.reduce_sum(s, p_sum, dim=1)
                for i in T.Parallel(rows):
                    l[i] = l[i] * alpha[i] + p_sum[i]
                T.copy(s, p)
                for i, d in T.Parallel(rows, dim):
                    o[i, d] *= alpha[i]
                T.copy(V[b, kb * block_N:(kb + 1) * block_N, g, :], v_s)
                T.gemm(p, v_s, o)
            for i, d in T.Parallel(rows, dim):
                o[i, d] /= l[i]
            T.copy(o, o_s)
            T.copy(o_s, Output[b, g * rows:(g + 1) * rows, :])

    return main


def gqa_reference(q, k, v):
    """q [b, heads, d], k and v [b, s, groups, d] -> [b, heads, d]; head h reads group h // (heads // groups)."""
    per = q.shape[1] // k.shape[2]
    k, v = (t.float().repeat_interleave(per, dim=2).permute(0, 2, 1, 3) for t in (k, v))
    scores = torch.matmul(k, q.float()[..., None])[..., 0] / q.shape[-1] ** 0.5
    return torch.matmul(torch.softmax(scores, dim=-1)[:, :, None, :], v)[:, :, 0]


def test_decode_with_four_head_blocks():
    """[4, 64] blocks of a (1, 16, 64) query: the reader reads the group's 4 rows of Q (laid out in
    rows: the slice starts inside a tile) and zero-fills the rest of the tile; the writer writes 4."""
    q, k, v = data(1, 16, 64, seed=3), data(1, 256, 4, 64, seed=4), data(1, 256, 4, 64, seed=5)
    artifacts = tilelang_tt.compile(gqa_decode(1, 16, 4, 256, 64, 64))
    layouts = {b.name: b.layout.value for b in artifacts.plan.buffers}
    assert layouts["Q"] == layouts["Output"] == "row_major"
    assert valid(artifacts)["q_s"] == valid(artifacts)["o_s"] == [4, 64]
    assert_close(artifacts.run(q, k, v), gqa_reference(q, k, v), SFPU)


def test_gemm_of_48_row_blocks():
    """bm = 48: blocks of 48 rows, 64 rows of tiles each; A and C in rows (a block starts at row 48);
    the last block reaches past M = 128 (rows past the end read as zeros and are not written)."""
    from tests.kernels import gemm

    a, b = data(128, 96, seed=6), data(96, 128, seed=7)
    artifacts = tilelang_tt.compile(gemm(128, 128, 96, 48, 64, 32))
    assert artifacts.plan.block_tiles == (2, 2) and valid(artifacts)["A_s"] == [48, 32]
    c = artifacts.run(a, b)
    ref = a.float() @ b.float()
    tol = ref.abs() * 2.0**-8 + 96 * 2.0**-24 * (a.float().abs() @ b.float().abs())
    assert ((c.float() - ref).abs() <= tol).all()


# -- columns that are not multiples of 32 --------------------------------------------------------------
def softmax_rows(M, N, bm):
    """Row softmax of [bm, N] blocks."""
    @T.prim_func
    def main(X: T.Tensor((M, N), "bfloat16"), Y: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            x = T.alloc_shared((bm, N), "bfloat16")
            f = T.alloc_fragment((bm, N), "float32")
            mx = T.alloc_fragment((bm,), "float32")
            sm = T.alloc_fragment((bm,), "float32")
            T.copy(X[bx * bm, 0], x)
            T.copy(x, f)
            T.reduce_max(f, mx, dim=1)
            for i, j in T.Parallel(bm, N):
                f[i, j] = T.exp(f[i, j] - mx[i])
            T.reduce_sum(f, sm, dim=1)
            for i, j in T.Parallel(bm, N):
                f[i, j] = f[i, j] / sm[i]
            T.copy(f, Y[bx * bm, 0])

    return main


def test_softmax_over_136_columns_masks_the_padding():
    """[64, 136] blocks: the max reads the padding as -inf and the sum of the exponentials as 0 (the
    exponentials of the padding are 1)."""
    x = data(64, 136, seed=8) - 4  # all negative: a zero in the padding would win the max
    artifacts = tilelang_tt.compile(softmax_rows(64, 136, 64))
    assert valid(artifacts)["f_masked"] == valid(artifacts)["f_masked1"] == [64, 136]
    assert_close(artifacts.run(x), torch.softmax(x.float(), 1), SFPU)


def small_gemm(M, N, K, bn, exp_a):
    """C = A @ B (``exp_a``: exp(A) @ B) for a batch of M < 32 rows and a K of any size."""
    @T.prim_func
    def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), threads=128) as bx:
            a = T.alloc_shared((M, K), "bfloat16")
            h = T.alloc_fragment((M, K), "bfloat16")
            b = T.alloc_shared((K, bn), "bfloat16")
            c = T.alloc_fragment((M, bn), "float32")
            T.copy(A[0, 0], a)
            T.copy(B[0, bx * bn], b)
            for i, k in T.Parallel(M, K):
                h[i, k] = T.exp(a[i, k]) if exp_a else a[i, k]
            T.clear(c)
            T.gemm(h, b, c)
            T.copy(c, C[0, bx * bn])

    return main


@pytest.mark.parametrize("exp_a", [False, True])
def test_gemm_of_8_rows_over_a_padded_k(exp_a):
    """[8, 40] x [40, 64]: K = 40 is padded to 64. The copy of A keeps the reader's zeros in the
    padding (no mask); exp(A) is 1 there, masked to 0 before the contraction."""
    a, b = data(8, 40, seed=9), data(40, 64, seed=10)
    artifacts = tilelang_tt.compile(small_gemm(8, 64, 40, 64, exp_a))
    assert ("h_masked" in cbs(artifacts)) == exp_a
    h = a.float().exp().to(torch.bfloat16).float() if exp_a else a.float()
    assert_close(artifacts.run(a, b), h @ b.float(), 2.0**-8)


# -- [1] -----------------------------------------------------------------------------------------------
def normalize_rows(M, N, bk):
    """Each row divided by its sum, the rows walked one by one and the sum kept in a [1] block, over
    column blocks of bk (clear=False adds each block's sum)."""
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            a = T.alloc_shared((1, bk), "float32")
            b = T.alloc_fragment((1, bk), "float32")
            total = T.alloc_fragment((1,), "float32")
            for r in T.serial(M):
                T.clear(total)
                for k in T.serial(N // bk):
                    T.copy(A[bx * M + r, k * bk], a)
                    T.reduce_sum(a, total, dim=1, clear=False)
                for k in T.serial(N // bk):
                    T.copy(A[bx * M + r, k * bk], a)
                    for i, j in T.Parallel(1, bk):
                        b[i, j] = a[i, j] / total[0]
                    T.copy(b, B[bx * M + r, k * bk])

    return main


def test_sum_in_a_one_value_block():
    a = data(8, 128, seed=11, dtype=torch.float32).abs() + 0.5
    artifacts = tilelang_tt.compile(normalize_rows(8, 128, 64))
    assert valid(artifacts)["total"] == [1, 1]
    assert_close(artifacts.run(a), a / a.sum(1, keepdim=True), TF32_SUM)


# -- rank 3 and 4 --------------------------------------------------------------------------------------
def stacked(B, M, N, e):
    """Y[b] = X[b] * 2 + bias with e matrices of a (B, M, N) tensor per block: a [e, M, N] block."""
    @T.prim_func
    def main(X: T.Tensor((B, M, N), "bfloat16"), bias: T.Tensor((N,), "bfloat16"),
             Y: T.Tensor((B, M, N), "bfloat16")):
        with T.Kernel(B // e, threads=128) as bx:
            x = T.alloc_shared((e, M, N), "bfloat16")
            w = T.alloc_shared((N,), "bfloat16")
            y = T.alloc_fragment((e, M, N), "float32")
            T.copy(X[bx * e:(bx + 1) * e, :, :], x)
            T.copy(bias, w)
            for b, i, j in T.Parallel(e, M, N):
                y[b, i, j] = T.Cast("float32", x[b, i, j]) * 2.0 + T.Cast("float32", w[j])
            T.copy(y, Y[bx * e:(bx + 1) * e, :, :])

    return main


@pytest.mark.parametrize("M, N", [(64, 32), (32, 40)])
def test_rank3_block_stacks_its_matrices(M, N):
    """[2, M, N]: two matrices of M x N, the 2M x N matrix of tiles (columns padded when N is not
    whole tiles); the nest over (b, i, j) is one over the stacked rows."""
    x, bias = data(4, M, N, seed=12), data(N, seed=13)
    artifacts = tilelang_tt.compile(stacked(4, M, N, 2))
    assert artifacts.plan.block_tiles == (2 * M // 32, -(-N // 32))
    assert_close(artifacts.run(x, bias), x.float() * 2 + bias.float(), BF16)


def heads_block(B, H, S, D, hb):
    """exp of [1, hb, 1, D] blocks of a (B, H, S, D) tensor: hb heads of one position."""
    @T.prim_func
    def main(X: T.Tensor((B, H, S, D), "float32"), Y: T.Tensor((B, H, S, D), "float32")):
        with T.Kernel(S, H // hb, B, threads=128) as (s, h, b):
            x = T.alloc_shared((1, hb, 1, D), "float32")
            y = T.alloc_fragment((1, hb, 1, D), "float32")
            T.copy(X[b, h * hb:(h + 1) * hb, s, :], x)
            for p, q, r, d in T.Parallel(1, hb, 1, D):
                y[p, q, r, d] = T.exp(x[p, q, r, d])
            T.copy(y, Y[b, h * hb:(h + 1) * hb, s, :])

    return main


def test_rank4_block_of_unit_dimensions_is_one_matrix():
    """[1, 16, 1, 16]: the 16 x 16 matrix of one tile; the heads are rows of X laid out in rows."""
    x = data(2, 32, 4, 16, seed=14, dtype=torch.float32)
    artifacts = tilelang_tt.compile(heads_block(2, 32, 4, 16, 16))
    assert valid(artifacts) == {"x": [16, 16], "y": [16, 16]}
    assert_close(artifacts.run(x), x.exp(), SFPU)


# -- rows walked by a serial loop ------------------------------------------------------------------------
def row_walk(M, N, bm, form):
    """Y = X * S and the column sums of each block of bm rows, a GPU thread per column: the rows
    walked by a serial loop around (``form`` "around") or inside ("inside") a T.Parallel."""
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), S: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float32"),
             C: T.Tensor((M // bm, N), "float32")):
        with T.Kernel(M // bm, threads=128) as bx:
            x = T.alloc_shared((bm, N), "float32")
            s = T.alloc_shared((bm, N), "float32")
            y = T.alloc_fragment((bm, N), "float32")
            col = T.alloc_fragment((N,), "float32")
            T.copy(X[bx * bm, 0], x)
            T.copy(S[bx * bm, 0], s)
            T.clear(col)
            if form == "around":
                for i in T.serial(bm):
                    for j in T.Parallel(N):
                        y[i, j] = x[i, j] * s[i, j]
                        col[j] += x[i, j]
            else:
                for j in T.Parallel(N):
                    for i in T.serial(bm):
                        y[i, j] = x[i, j] * s[i, j]
                        col[j] += x[i, j]
            T.copy(y, Y[bx * bm, 0])
            T.copy(col, C[bx, 0])

    return main


@pytest.mark.parametrize("form", ["around", "inside"])
@pytest.mark.parametrize("bm", [32, 8])
def test_serial_row_loop(form, bm):
    x, s = data(64, 64, seed=15, dtype=torch.float32), data(64, 64, seed=16, dtype=torch.float32)
    y, c = tilelang_tt.compile(row_walk(64, 64, bm, form)).run(x, s)
    assert torch.equal(y, x * s)
    assert_close(c, x.reshape(64 // bm, bm, 64).sum(1), TF32_SUM)


# -- T.alloc_local ---------------------------------------------------------------------------------------
def scale_local(M, N, bm):
    """TileLang's elementwise examples with per-thread registers: the block in a T.alloc_local array."""
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            a_local = T.alloc_local((bm, N), "float32")
            for i, j in T.Parallel(bm, N):
                a_local[i, j] = A[bx * bm + i, j]
            for i, j in T.Parallel(bm, N):
                B[bx * bm + i, j] = a_local[i, j] * 3.0 - 1.0

    return main


@pytest.mark.parametrize("M, bm", [(64, 32), (8, 8)])
def test_alloc_local_block(M, bm):
    a = data(M, 96, seed=17, dtype=torch.float32)
    assert torch.equal(tilelang_tt.compile(scale_local(M, 96, bm)).run(a), a * 3.0 - 1.0)


# -- the cost, and what stays refused ------------------------------------------------------------------------
def test_plan_show_accounts_for_the_padding():
    artifacts = tilelang_tt.compile(gqa_decode(1, 16, 4, 256, 64, 64))
    text = summary(artifacts.plan)
    assert "blocks padded to whole 32x32 tiles" in text
    # [4, 64] bfloat16 in 2 tiles: 12.5% of their values, 3.5 KiB of padding in a block
    assert "q_s          block of 4x64 values in 2 tiles: 12.5% used, 3.5 KiB of padding a block" in text
    assert "m_new        vector of 1x4 values in 1 tile: 12.5% used" in text


def test_stacked_matrices_of_partial_rows_are_refused_at_the_copy():
    err = compile_error(bad_kernels.stacked_partial_rows())
    assert_diagnostic(err, "PadBlocksTT", "it stacks 2 matrices of 40 x 32", "stacked_partial_rows")
    assert "multiples of 32" in err.hint


def test_reduction_of_stacked_matrices_is_refused():
    err = compile_error(bad_kernels.stacked_reduction())
    assert_diagnostic(err, "PadBlocksTT", "which stacks 2 matrices: a reduction runs over one matrix",
                      "stacked_reduction")
