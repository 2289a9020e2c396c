"""Row-major tensors (ttnn's ROW_MAJOR_LAYOUT: a page is one row of the last dimension): asked for
with ``BufferLayout(layout="row_major")``, or chosen by InferTTLayout for a tensor sliced across its
matrices (a head of a (batch, seq, heads, dim) tensor). The reader reads rows into a staging CB and
compute tilizes them; compute untilizes results for the writer, which writes rows. Every kernel
runs on the emulator and is matched against torch; bfloat16 results to half an ulp of their range
(2^-8) plus the rounding the kernel's own math does (stated per test)."""

import pytest
import tilelang.language as T
import torch

import tilelang_tt
from tests.examples.flash_attention import (
    gqa_fwd_bshd,
    gqa_fwd_bshd_ref_program,
    mha_fwd_bhsd,
    mha_fwd_bshd,
    mha_fwd_bshd_ref_program,
)
from tilelang_tt import BufferLayout
from tilelang_tt.layout import LayoutError

ROWS = BufferLayout(layout="row_major")


def add(M, N, bm, bn):
    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), B: T.Tensor((M, N), "bfloat16"), C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            a = T.alloc_shared((bm, bn), "bfloat16")
            b = T.alloc_shared((bm, bn), "bfloat16")
            c = T.alloc_fragment((bm, bn), "float32")
            T.copy(A[by * bm, bx * bn], a)
            T.copy(B[by * bm, bx * bn], b)
            for i, j in T.Parallel(bm, bn):
                c[i, j] = a[i, j] + b[i, j]
            T.copy(c, C[by * bm, bx * bn])

    return main


def data(*shape, seed):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(torch.bfloat16)


def assert_close(out, ref, rel):
    out = torch.as_tensor(out).float()
    scale = max(ref.abs().max().item(), 1.0)
    err = (out - ref).abs().max().item()
    assert err <= rel * scale, f"max |error| {err} > {rel} * {scale}"


@pytest.mark.parametrize("names", [("A",), ("C",), ("A", "B", "C")])
@pytest.mark.parametrize("M", [64, 80])
def test_add_with_row_major_tensors(names, M):
    """80 rows: the last block reaches past the tensor (the reader reads zeros there, the writer
    drops those rows); float32 sum rounded once to bfloat16."""
    a, b = data(M, 128, seed=1), data(M, 128, seed=2)
    artifacts = tilelang_tt.compile(add(M, 128, 32, 64), layouts=dict.fromkeys(names, ROWS))
    for buf in artifacts.plan.buffers:
        row_major = buf.name in names
        assert (buf.layout == "row_major") == row_major
        if row_major:
            assert (buf.page_size, buf.num_pages) == (128 * 2, M)
    assert_close(artifacts.run(a, b), a.float() + b.float(), 2.0 ** -8)


def test_row_major_staging_cbs_and_calls():
    """A block read from a row-major tensor arrives in a staging CB the reader fills row by row
    and compute tilizes; a block written to one is untilized by compute for the writer."""
    artifacts = tilelang_tt.compile(add(64, 128, 32, 64), layouts={"A": ROWS, "C": ROWS})
    cbs = {cb.name: cb for cb in artifacts.plan.cbs}
    assert (cbs["a_rm"].producer, cbs["a_rm"].consumer) == ("reader", "compute")
    assert (cbs["a"].producer, cbs["a"].consumer) == ("compute", "compute")
    assert (cbs["c_rm"].producer, cbs["c_rm"].consumer) == ("compute", "writer")
    reader, compute, writer = (artifacts.sources[f"{k}.cpp"] for k in ("reader", "compute", "writer"))
    assert "noc_async_read(" in reader and ".get_noc_addr(" in reader
    assert "noc_async_write(" in writer
    for call in ("tilize_init(", "tilize_block(", "tilize_uninit(", "pack_untilize_init<2, 2>(",
                 "pack_untilize_block<2, 2>(", "pack_untilize_uninit("):
        assert call in compute, call
    a, b = data(64, 128, seed=7), data(64, 128, seed=8)
    assert_close(artifacts.run(a, b), a.float() + b.float(), 2.0 ** -8)


@pytest.mark.parametrize("grid", [(2, 2), (4, 1)])
def test_row_major_multicore(grid):
    a, b = data(128, 128, seed=3), data(128, 128, seed=4)
    artifacts = tilelang_tt.compile(add(128, 128, 32, 64), grid=grid, layouts={"A": ROWS, "B": ROWS, "C": ROWS})
    assert len(artifacts.plan.work_partition) > 1
    assert_close(artifacts.run(a, b), a.float() + b.float(), 2.0 ** -8)


def test_row_major_reads_the_bytes_tiles_would():
    a, b = data(64, 128, seed=5), data(64, 128, seed=6)
    tiles, rows = (tilelang_tt.compile(add(64, 128, 32, 64), layouts=lay) for lay in ({}, {"A": ROWS, "B": ROWS}))
    for artifacts in (tiles, rows):
        artifacts.run(a, b)
    assert rows.last_counters["total"]["dram_bytes_read"] == tiles.last_counters["total"]["dram_bytes_read"] == 2 * 64 * 128 * 2


def _heads(batch, seq, heads, dim, seed):
    return tuple(data(batch, seq, heads, dim, seed=seed + k) for k in range(3))


@pytest.mark.parametrize("is_causal", [False, True])
def test_mha_fwd_bshd(is_causal):
    """TileLang's example_mha_fwd_bshd.py: Q[bz, bx * bm:(bx + 1) * bm, by, :] per head; Q, K, V and
    Output laid out in rows by the compiler. Tolerance: exp2 in fp32, P and O rounded to bfloat16."""
    q, k, v = _heads(1, 128, 2, 64, seed=10)
    artifacts = tilelang_tt.compile(mha_fwd_bshd.get_tir(batch=1, heads=2, seq_len=128, dim=64, is_causal=is_causal))
    assert {b.name: b.layout for b in artifacts.plan.buffers} == dict.fromkeys(("Q", "K", "V", "Output"),
                                                                                        "row_major")
    out = artifacts.run(q, k, v)
    assert_close(out, mha_fwd_bshd_ref_program(q.float(), k.float(), v.float(), is_causal), 2.0 ** -6)


def test_mha_bshd_reads_as_many_bytes_as_bhsd():
    """Rows cost no traffic over tiles: the (B, S, H, D) kernel reads what the (B, H, S, D) one
    does (the alternative, a transpose by the host program, would move every tensor twice more)."""
    q, k, v = _heads(1, 128, 2, 64, seed=20)
    bshd = tilelang_tt.compile(mha_fwd_bshd.get_tir(batch=1, heads=2, seq_len=128, dim=64, is_causal=False))
    bhsd = tilelang_tt.compile(mha_fwd_bhsd.get_tir(batch=1, heads=2, seq_q=128, seq_kv=128, dim=64,
                                                    is_causal=False))
    bshd.run(q, k, v)
    bhsd.run(*(t.transpose(1, 2).contiguous() for t in (q, k, v)))
    assert bshd.last_counters["total"]["dram_bytes_read"] == bhsd.last_counters["total"]["dram_bytes_read"]


@pytest.mark.parametrize("is_causal", [False, True])
def test_gqa_fwd_bshd(is_causal):
    """example_gqa_fwd_bshd.py: 4 query heads share 2 key/value heads (groups of 2)."""
    q = data(1, 128, 4, 64, seed=30)
    k, v = data(1, 128, 2, 64, seed=31), data(1, 128, 2, 64, seed=32)
    func = gqa_fwd_bshd.get_tir(batch=1, heads=4, seq_len=128, dim=64, is_causal=is_causal, groups=2)
    out = tilelang_tt.compile(func).run(q, k, v)
    assert_close(out, gqa_fwd_bshd_ref_program(q.float(), k.float(), v.float(), is_causal, groups=2), 2.0 ** -6)


def copy_through_shared(M, N, in_dtype, out_dtype):
    @T.prim_func
    def main(A: T.Tensor((M, N), in_dtype), B: T.Tensor((M, N), out_dtype)):
        with T.Kernel(N // 32, M // 32) as (bx, by):
            s = T.alloc_shared((32, 32), in_dtype)
            T.copy(A[by * 32, bx * 32], s)
            T.copy(s, B[by * 32, bx * 32])

    return main


@pytest.mark.parametrize("rows", ["A", "B"])
def test_a_copy_between_a_row_major_and_a_tiled_tensor(rows):
    """A block read from one tensor and written to the other: the CB the writer drains has the
    written tensor's pages (a tile for tiled B, not a 64-element row of row-major A)."""
    art = tilelang_tt.compile(copy_through_shared(64, 64, "bfloat16", "bfloat16"), layouts={rows: ROWS})
    to_writer = [cb for cb in art.plan.cbs if cb.consumer == "writer"]
    assert [cb.page_size for cb in to_writer] == [2048]  # a tile, or a tile's worth of rows
    x = torch.randn(64, 64).to(torch.bfloat16)
    assert torch.equal(art.run(x), x)


def test_row_major_column_start_inside_a_tile():
    """Each row of the slice is one run of its page's bytes, from any column."""
    @T.prim_func
    def main(A: T.Tensor((64, 96), "bfloat16"), C: T.Tensor((64, 32), "bfloat16")):
        with T.Kernel(1, 2, threads=128) as (bx, by):
            a = T.alloc_shared((32, 32), "bfloat16")
            T.copy(A[by * 32, 16], a)
            T.copy(a, C[by * 32, 0])

    x = torch.randn(64, 96).to(torch.bfloat16)
    assert torch.equal(tilelang_tt.compile(main, layouts={"A": ROWS}).run(x), x[:, 16:48])


def test_row_major_in_l1_is_refused():
    with pytest.raises(LayoutError, match="row-major tensor is interleaved in DRAM"):
        BufferLayout(memory="L1", layout="row_major")


@pytest.mark.parametrize("M, N", [(80, 100), (77, 96), (64, 70)])
def test_row_major_rows_and_columns_past_the_end(M, N):
    """The last blocks reach past the tensor along both axes: the reader reads the part of each row
    inside it and zero-fills the rest of the block row (and whole rows past the end), the writer
    writes only the part inside. Row pages of N bfloat16 elements sit in their banks at multiples
    of the page size aligned to the DRAM alignment (200 -> 224 bytes on Wormhole)."""
    a, b = data(M, N, seed=M + N), data(M, N, seed=M * N)
    artifacts = tilelang_tt.compile(add(M, N, 32, 64), layouts={"A": ROWS, "B": ROWS, "C": ROWS})
    assert_close(artifacts.run(a, b), a.float() + b.float(), 2.0 ** -8)


@pytest.mark.parametrize("multicast", ["on", "off"])
def test_gemm_with_row_major_operand_and_result(multicast):
    """A K loop reading a row-major A: compute tilizes A's rows between K steps, so C's partial sums
    round-trip through its CB (DST holds nothing across a tilize); A's row block is multicast along
    a core row like a tiled one (the reads halve). fp32 accumulation, C rounded to bfloat16."""
    from tests.kernels import gemm

    a, b = data(128, 128, seed=40), data(128, 128, seed=41)
    artifacts = tilelang_tt.compile(gemm(128, 128, 128, 64, 64, 32), grid=(2, 2), multicast=multicast,
                                    layouts={"A": ROWS, "C": ROWS})
    assert_close(artifacts.run(a, b), a.float() @ b.float(), 2.0 ** -7)
    reads = artifacts.last_counters["total"]["dram_bytes_read"]
    assert reads == (2 if multicast == "on" else 4) * 128 * 128 * 2


def test_slice_across_matrices_is_read_in_rows():
    """A (M, batch, N) tensor sliced along M for one batch index (rows batch * N elements apart: no
    block of tiles) was refused; the compiler now lays it out in rows, and the output sliced the same
    way too."""
    M, batch, N = 32, 4, 64

    @T.prim_func
    def main(A: T.Tensor((M, batch, N), "bfloat16"), C: T.Tensor((M, batch, N), "bfloat16")):
        with T.Kernel(1, batch, threads=128) as (bx, by):
            A_s = T.alloc_shared((M, N), "bfloat16")
            T.copy(A[0:M, by, 0:N], A_s)
            T.copy(A_s, C[0:M, by, 0:N])

    artifacts = tilelang_tt.compile(main)
    assert {b.name: b.layout for b in artifacts.plan.buffers} == {"A": "row_major", "C": "row_major"}
    a = data(M, batch, N, seed=50)
    assert torch.equal(torch.as_tensor(artifacts.run(a)), a)


def test_heads_indexed_element_wise_gpu_style_are_read_and_written_in_rows():
    """Linear attention's ``q[t, d] = Q[b, c * 64 + t, head, d0 + d] * scale``, and the store the same
    way: each access becomes the copy of its head slice, the tensors are laid out in rows."""
    B, S, H, D, bs = 2, 64, 3, 64, 32

    @T.prim_func
    def main(Q: T.Tensor((B, S, H, D), "bfloat16"), O: T.Tensor((B, S, H, D), "bfloat16")):
        with T.Kernel(T.ceildiv(S, bs), B * H, threads=128) as (bx, bh):
            for t, d in T.Parallel(bs, D):
                O[bh // H, bx * bs + t, bh % H, d] = Q[bh // H, bx * bs + t, bh % H, d] * 0.5

    artifacts = tilelang_tt.compile(main, grid=(2, 3))
    assert {b.name: b.layout for b in artifacts.plan.buffers} == {"Q": "row_major", "O": "row_major"}
    q = data(B, S, H, D, seed=51)
    assert torch.equal(torch.as_tensor(artifacts.run(q)), (q.float() * 0.5).to(torch.bfloat16))
