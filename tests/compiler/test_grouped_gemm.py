"""Offsets read from tensors (issue 12, item 3): TileLang's grouped GEMM finds each row block's group
by scanning a tensor of offsets (a T.alloc_var updated in a loop of constant trip count, unrolled),
reads the group's rows of A at a row read from tensors, the group's matrix B[g], and stores only the
rows its group has (``if i < valid``). A and C are laid out in rows (any row), the reader and writer
read the offsets into their scratch CBs, and the writer writes the valid rows only. Groups of sizes
that are no multiple of 32 (rows start anywhere), on one and several cores, with B transposed too."""

import pytest
import tilelang
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_ops import assert_close, bf16
from tests.examples.blocksparse_grouped_gemm import grouped_matmul


def grouped_gemm(sizes, K, N, block_M, block_N, block_K, trans_b=False):
    """The catalogue's grouped GEMM (tests/examples/blocksparse_grouped_gemm.py, the form of
    example_grouped_gemm_fwd.py) for these groups and blocks."""
    return grouped_matmul.get_tir(K=K, N=N, group_sizes_list=sizes, block_M=block_M, block_N=block_N,
                                  block_K=block_K, trans_b=trans_b, num_stages=2, threads=128)


def offsets(sizes, block_M):
    starts, padded = [0], [0]
    for size in sizes[:-1]:
        starts.append(starts[-1] + size)
        padded.append(padded[-1] + -(-size // block_M) * block_M)
    return [torch.tensor(v, dtype=torch.int32) for v in (sizes, starts, padded)]


def reference(a, b, sizes, trans_b):
    parts = torch.split(a.float(), list(sizes))
    return torch.cat([part @ (b[g].float().T if trans_b else b[g].float()) for g, part in enumerate(parts)])


@pytest.mark.parametrize("sizes, grid, trans_b", [
    ((40, 100, 24), None, False),  # rows start at 40, 140: inside tiles
    ((40, 100, 24), (2, 2), False),
    ((64, 128), (4, 1), False),
    ((33, 70), None, True),
], ids=["unaligned", "unaligned-2x2", "aligned-4x1", "unaligned-trans_b"])
def test_each_group_of_rows_is_multiplied_by_its_matrix(sizes, grid, trans_b):
    K, N, block_M = 64, 128, 64
    kernel = grouped_gemm(sizes, K, N, block_M, 64, 32, trans_b=trans_b)
    artifacts = tilelang_tt.compile(kernel, **({"grid": grid} if grid else {}))
    a = bf16(sum(sizes), K, seed=1)
    b = bf16(len(sizes), N, K, seed=2) if trans_b else bf16(len(sizes), K, N, seed=2)
    out = torch.as_tensor(artifacts.run(a, b, *offsets(sizes, block_M))).float()
    ref = reference(a, b, sizes, trans_b)
    assert out.shape == ref.shape
    for g, (start, size) in enumerate(zip(offsets(sizes, block_M)[1].tolist(), sizes)):  # group by group
        assert_close(out[start:start + size], ref[start:start + size], 2.0 ** -7)
    layouts = {b.name: b.layout for b in artifacts.plan.buffers}
    assert layouts["A"] == layouts["C"] == "row_major" and layouts["B"] != "row_major"
    scratch = {cb.name: cb.page_size for cb in artifacts.plan.cbs if cb.consumer == cb.producer != "compute"}
    assert scratch == {"reader_scalars": 64, "writer_scalars": 64}  # each reads the offsets into its scratch CB


def test_the_writer_writes_only_the_valid_rows():
    """Two row blocks of 64 rows for groups of 40 and 24 rows: the writer writes the 64 valid rows, one
    row each, not the 128 rows of the blocks (the rest belong to the next group's block)."""
    sizes, K, N, block_M = (40, 24), 64, 64, 64
    artifacts = tilelang_tt.compile(grouped_gemm(sizes, K, N, block_M, 64, 32))
    a, b = bf16(sum(sizes), K, seed=3), bf16(len(sizes), K, N, seed=4)
    written = artifacts.run(a, b, *offsets(sizes, block_M))
    ref = reference(a, b, sizes, False)
    assert_close(torch.as_tensor(written).float(), ref, 2.0 ** -7)
    total = artifacts.last_counters["total"]
    assert total["dram_bytes_written"] == sum(sizes) * N * 2
    assert total["noc_write_transactions"] == sum(sizes)


def guarded_rows(M, N, bm, form):
    """C = A + 1 stored under TileLang's boundary guard of the last block of rows."""
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, T.ceildiv(M, bm), threads=128) as (bx, by):
            a = T.alloc_shared((bm, N), "float32")
            c = T.alloc_fragment((bm, N), "float32")
            T.copy(A[by * bm, 0], a)
            for i, j in T.Parallel(bm, N):
                c[i, j] = a[i, j] + 1.0
            for i, j in T.Parallel(bm, N):
                if form == "lt":
                    if by * bm + i < M:
                        C[by * bm + i, j] = c[i, j]
                elif form == "gt":
                    if M > by * bm + i:
                        C[by * bm + i, j] = c[i, j]
                else:
                    if i <= M - by * bm - 1:
                        C[by * bm + i, j] = c[i, j]

    return main


@pytest.mark.parametrize("form", ["lt", "gt", "le"])
def test_the_boundary_guard_of_the_last_block_writes_the_rows_inside(form):
    M, N, bm = 100, 64, 64
    a = torch.randn(M, N)
    artifacts = tilelang_tt.compile(guarded_rows(M, N, bm, form), grid=(2, 1))
    out = torch.as_tensor(artifacts.run(a))
    assert torch.equal(out, a + 1.0)
    assert artifacts.last_counters["total"]["dram_bytes_written"] == M * N * 4


def test_some_rows_of_a_block_into_a_tensor_kept_in_tiles_is_refused_at_the_store():
    from tests.compiler.test_negative import compile_error

    err = compile_error(guarded_rows(100, 64, 64, "lt"), layouts={"C": tilelang_tt.BufferLayout()})
    assert "the writer writes some rows of a block into `C`, which is laid out in interleaved tiles" in err.message
    assert err.location is not None and err.location[0] == __file__
    assert "if by * bm + i < M:" in str(err)  # the guard's line
