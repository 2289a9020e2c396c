"""Rows of a global tensor read at indices read from another tensor, inside ``T.Parallel`` (issue 29,
item 4). A page of a paged KV cache picked by a block table (vLLM's and FlashInfer's layout:
``K_cache[block_table[b, p], t, h, d]``) is a block of whole rows at a batch index known on device:
LegalizeGlobalAccessTT makes it a block copy, and the reader checks the index with a run-time
``ASSERT`` (AssertTensorIndicesTT) before it reads, so a table entry past the cache stops the kernel
instead of reading another tensor's memory. Rows picked one by one by an index table (an embedding
lookup ``E[ids[i], j]``) are refused at the statement."""

import inspect

import pytest
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_negative import assert_diagnostic, compile_error
from tests.compiler.test_ops import assert_close
from tilelang_tt.emulator.driver import EmulatorError

PATH = inspect.getsourcefile(inspect.currentframe())


def paged_kv_gather(pages, page, heads, dim, batch, per_seq, dtype):
    """vLLM's paged KV cache read back as a contiguous sequence: ``Out[b, p * page + t, h, d] =
    K_cache[block_table[b, p], t, h, d] * 2``, one page of one head per block."""

    @T.prim_func
    def main(K_cache: T.Tensor((pages, page, heads, dim), dtype), block_table: T.Tensor((batch, per_seq), "int32"),
             Out: T.Tensor((batch, per_seq * page, heads, dim), dtype)):
        with T.Kernel(per_seq, heads, batch) as (p, h, b):
            for t, d in T.Parallel(page, dim):
                Out[b, p * page + t, h, d] = K_cache[block_table[b, p], t, h, d] * T.Cast(dtype, 2)

    return main


@pytest.mark.parametrize("dtype, pages, page, heads, dim", [("bfloat16", 8, 32, 2, 64), ("float32", 5, 64, 1, 32)])
def test_a_paged_kv_cache_read_by_its_block_table_runs(dtype, pages, page, heads, dim):
    batch, per_seq = 2, 3
    cache = torch.randn(pages, page, heads, dim).to(getattr(torch, dtype))
    table = torch.randint(0, pages, (batch, per_seq), generator=torch.Generator().manual_seed(5), dtype=torch.int32)
    out = tilelang_tt.compile(paged_kv_gather(pages, page, heads, dim, batch, per_seq, dtype)).run(cache, table)
    ref = cache[table.long()].reshape(batch, per_seq * page, heads, dim).float() * 2
    assert_close(torch.as_tensor(out).float(), ref, 0)


def flashinfer_pages(pages, page, dim, npages):
    """FlashInfer's flat page list: ``kv_indices[p]`` names the p-th page of a (pages, page, dim) cache;
    each block scales its page by the page's weight ``w[p]`` read per page (a value read from a tensor
    at the block's coordinate)."""

    @T.prim_func
    def main(KV: T.Tensor((pages, page, dim), "float32"), kv_indices: T.Tensor((npages,), "int32"),
             Y: T.Tensor((npages, page, dim), "float32")):
        with T.Kernel(npages) as bx:
            x = T.alloc_shared((page, dim), "float32")
            for t, d in T.Parallel(page, dim):
                x[t, d] = KV[kv_indices[bx], t, d]
            for t, d in T.Parallel(page, dim):
                Y[bx, t, d] = x[t, d] + T.float32(1)

    return main


def test_pages_named_by_a_flat_page_list_run():
    cache, indices = torch.randn(6, 32, 64), torch.tensor([4, 1, 1, 5], dtype=torch.int32)
    out = tilelang_tt.compile(flashinfer_pages(6, 32, 64, 4)).run(cache, indices)
    assert_close(torch.as_tensor(out).float(), cache[indices.long()] + 1, 0)


def test_a_block_table_entry_past_the_cache_stops_the_kernel_at_its_assert():
    artifacts = tilelang_tt.compile(paged_kv_gather(8, 32, 2, 64, 2, 3, "bfloat16"))
    assert "ASSERT(" in artifacts.sources["reader.cpp"]
    cache = torch.randn(8, 32, 2, 64).to(torch.bfloat16)
    table = torch.tensor([[5, 0, 7], [2, 2, 8]], dtype=torch.int32)  # page 8 of 8
    with pytest.raises(EmulatorError, match=r"ASSERT\(\(0 <= static_cast<int32_t>\(K_cache_index\)\)"):
        artifacts.run(cache, table)


def embedding_lookup(vocab, n, dim):
    """An embedding lookup in the GPU idiom, ``E[ids[i], j]``: rows of E gathered at indices read from
    a tensor, one per row of the block (not built: refused at the statement)."""

    @T.prim_func
    def main(E: T.Tensor((vocab, dim), "float32"), ids: T.Tensor((n,), "int32"), Y: T.Tensor((n, dim), "float32")):
        with T.Kernel(n // 32) as bx:
            for i, j in T.Parallel(32, dim):
                Y[bx * 32 + i, j] = E[ids[bx * 32 + i], j]  # LINE: embedding

    return main


def test_rows_gathered_at_indices_read_per_row_are_refused_at_the_statement():
    err = compile_error(embedding_lookup(128, 64, 64))
    assert_diagnostic(err, "LegalizeGlobalAccessTT", "`E[ids[bx * 32 + i], j]` reads the rows of `E` at indices read "
                      "from the tensor `ids` (a gather)", "embedding", path=PATH,
                      source=inspect.getsource(inspect.getmodule(test_pages_named_by_a_flat_page_list_run)))
    assert "torch.index_select" in err.hint
