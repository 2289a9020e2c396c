"""Control flow on tensor values around tile work (issue 29, item 6): an ``if`` whose condition reads
a tensor (``if counts[by] > 0:``), with or without ``else``, and a block's early exit
(``if cond: T.thread_return()``). The reader reads the element once (64 bytes of its tile page) and
hands the condition to compute (``read_tile_value``) and the writer through one-word CBs, so all
three kernels take the same branch and the CB protocol stays balanced. Run on the emulator against
torch, with what the reader reads and the CBs the plan gets."""

import pytest
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_negative import assert_diagnostic, compile_error
from tests.compiler.test_ops import assert_close

M, N = 96, 64  # three row blocks of two column blocks
BLOCK = 32
TILE_BYTES = BLOCK * BLOCK * 2  # a bfloat16 tile
ELEMENT_READ = 64  # bytes the reader reads per element (tilelang_tt.ir.dataflow.ELEMENT_CHUNK)


def row_blocks(form: str):
    """C's row block ``by`` is 2 * A's where ``counts[by]`` says so; ``form``: "skip" (no else: C keeps
    its values), "else" (ones otherwise), "exit" (``if counts[by] == 0: T.thread_return()``)."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), counts: T.Tensor((M // BLOCK,), "int32"),
             C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(N // BLOCK, M // BLOCK, threads=128) as (bx, by):
            a = T.alloc_shared((BLOCK, BLOCK), "bfloat16")
            c = T.alloc_fragment((BLOCK, BLOCK), "bfloat16")
            if form == "exit":
                if counts[by] == 0:
                    T.thread_return()
                T.copy(A[by * BLOCK, bx * BLOCK], a)
                for i, j in T.Parallel(BLOCK, BLOCK):
                    c[i, j] = a[i, j] * 2.0
                T.copy(c, C[by * BLOCK, bx * BLOCK])
            elif form == "skip":
                if counts[by] > 0:
                    T.copy(A[by * BLOCK, bx * BLOCK], a)
                    for i, j in T.Parallel(BLOCK, BLOCK):
                        c[i, j] = a[i, j] * 2.0
                    T.copy(c, C[by * BLOCK, bx * BLOCK])
            else:
                if counts[by] > 0:
                    T.copy(A[by * BLOCK, bx * BLOCK], a)
                    for i, j in T.Parallel(BLOCK, BLOCK):
                        c[i, j] = a[i, j] * 2.0
                else:
                    T.fill(c, 1.0)
                T.copy(c, C[by * BLOCK, bx * BLOCK])

    return main


def _inputs():
    a = torch.randn(M, N).to(torch.bfloat16)
    counts = torch.tensor([3, 0, 5], dtype=torch.int32)
    return a, counts


@pytest.mark.parametrize("form", ["skip", "exit"])
@pytest.mark.parametrize("grid", [None, (2, 1)], ids=["grid", "2-cores"])
def test_blocks_whose_count_is_zero_are_skipped_and_keep_the_output(form, grid):
    a, counts = _inputs()
    art = tilelang_tt.compile(row_blocks(form), **({"grid": grid} if grid else {}))
    before = torch.full((M, N), -7.0, dtype=torch.bfloat16)
    out = torch.as_tensor(art.run(a, counts, before))
    ref = before.clone()
    for r in range(M // BLOCK):
        if counts[r] > 0:
            ref[r * BLOCK:(r + 1) * BLOCK] = a[r * BLOCK:(r + 1) * BLOCK] * 2
    assert torch.equal(out, ref)
    total = art.last_counters["total"]
    blocks, kept = (M // BLOCK) * (N // BLOCK), 2 * (N // BLOCK)
    # the reader reads the kept blocks of A and one element per block; the writer writes the kept blocks
    assert total["dram_bytes_read"] == kept * TILE_BYTES + blocks * ELEMENT_READ
    assert total["dram_bytes_written"] == kept * TILE_BYTES


def test_an_if_with_else_runs_one_branch_per_block():
    a, counts = _inputs()
    art = tilelang_tt.compile(row_blocks("else"))
    out = torch.as_tensor(art.run(a, counts))
    ref = torch.ones(M, N, dtype=torch.bfloat16)
    ref[:BLOCK], ref[2 * BLOCK:] = a[:BLOCK] * 2, a[2 * BLOCK:] * 2
    assert torch.equal(out, ref)
    assert art.last_counters["total"]["tile_ops"]["fill_tile"] == N // BLOCK  # the one block row of ones


def test_the_reader_hands_the_condition_to_compute_and_the_writer():
    """One value CB each, of one-word pages, from the reader; compute reads it with read_tile_value
    (tt-metal api/compute/cb_api.h), the writer from its read pointer; the reader reads the element
    into its scratch CB."""
    art = tilelang_tt.compile(row_blocks("skip"))
    values = {cb.name: (cb.producer, cb.consumer, cb.page_size, cb.data_format) for cb in art.plan.cbs
              if cb.name.endswith("_values")}
    assert values == {"compute_values": ("reader", "compute", 16, "UInt32"),
                      "writer_values": ("reader", "writer", 16, "UInt32")}
    reader, compute, writer = (art.sources[k] for k in ("reader.cpp", "compute.cpp", "writer.cpp"))
    assert "send_value(cb_compute_values, counts_taken);" in reader
    assert "send_value(cb_writer_values, counts_taken);" in reader
    assert "read_tile_value(cb, 0, 0)" in compute and "receive_value(cb_compute_values) != 0" in compute
    assert "receive_value(cb_writer_values) != 0" in writer
    assert reader.count("noc_async_read(counts.get_noc_addr(") == 1


def test_the_timing_model_charges_the_element_reads_and_the_hand_off():
    """Skipping blocks saves their time; the element reads and the hand-off still cost cycles."""
    a, counts = _inputs()
    art = tilelang_tt.compile(row_blocks("skip"), grid=(1, 1))
    art.run(a, torch.full_like(counts, 1))
    every = art.last_counters["timing"]["cycles"]
    art.run(a, torch.zeros_like(counts))
    none = art.last_counters["timing"]["cycles"]
    assert 0 < none < every
    reader = art.last_counters["timing"]["cores"][0]["reader"]
    assert reader["busy"] > 0


def gated_gemm(G: int, K: int, Nn: int, bm: int = 32, bk: int = 32):
    """Tokens routed to experts: row block ``by`` of A (tokens of expert ``by``) times expert ``by``'s
    matrix only where the expert has tokens (``sizes[by] > 0``, a K loop inside the branch), zeros
    otherwise (an else branch with a T.clear)."""

    @T.prim_func
    def main(A: T.Tensor((G * bm, K), "bfloat16"), W: T.Tensor((G, K, Nn), "bfloat16"),
             sizes: T.Tensor((G,), "int32"), C: T.Tensor((G * bm, Nn), "float32")):
        with T.Kernel(Nn // 32, G, threads=128) as (bx, by):
            a = T.alloc_shared((bm, bk), "bfloat16")
            w = T.alloc_shared((bk, 32), "bfloat16")
            acc = T.alloc_fragment((bm, 32), "float32")
            if sizes[by] > 0:
                T.clear(acc)
                for k in T.Pipelined(K // bk, num_stages=2):
                    T.copy(A[by * bm, k * bk], a)
                    T.copy(W[by, k * bk, bx * 32], w)
                    T.gemm(a, w, acc)
            else:
                T.clear(acc)
            T.copy(acc, C[by * bm, bx * 32])

    return main


def test_experts_without_tokens_skip_their_gemm():
    G, K, Nn = 3, 64, 64
    a = torch.randn(G * 32, K).to(torch.bfloat16)
    w = torch.randn(G, K, Nn).to(torch.bfloat16)
    sizes = torch.tensor([4, 0, 9], dtype=torch.int32)
    art = tilelang_tt.compile(gated_gemm(G, K, Nn))
    out = torch.as_tensor(art.run(a, w, sizes)).float()
    ref = torch.cat([a[g * 32:(g + 1) * 32].float() @ w[g].float() * (sizes[g] > 0) for g in range(G)])
    assert_close(out, ref, 2.0 ** -7)
    assert torch.equal(out[32:64], torch.zeros(32, Nn))
    assert art.last_counters["total"]["tile_ops"]["matmul_block"] < G * (Nn // 32) * (K // 32)


def copy_through(form: str, M: int = 128):
    """A block copied through ``a`` from A to C: where ``Mask[by] != 0`` ("mask": C keeps its values
    elsewhere), or from row block ``by`` for ``by < 2`` and from row block 0 otherwise ("else", on the
    block coordinates: each kernel decides itself)."""

    @T.prim_func
    def main(A: T.Tensor((M, 32), "float32"), Mask: T.Tensor((M // 32,), "int32"), C: T.Tensor((M, 32), "float32")):
        with T.Kernel(1, M // 32, threads=128) as (bx, by):
            a = T.alloc_shared((32, 32), "float32")
            if form == "mask":
                if Mask[by] != 0:
                    T.copy(A[by * 32, 0], a)
                    T.copy(a, C[by * 32, 0])
            else:
                if by < 2:
                    T.copy(A[by * 32, 0], a)
                else:
                    T.copy(A[0, 0], a)
                T.copy(a, C[by * 32, 0])

    return main


def test_blocks_copied_through_where_a_mask_holds():
    a, mask = torch.randn(128, 32), torch.tensor([1, 0, 0, 7], dtype=torch.int32)
    art = tilelang_tt.compile(copy_through("mask"))
    out = torch.as_tensor(art.run(a, mask, torch.full((128, 32), 5.0)))
    ref = torch.full((128, 32), 5.0)
    ref[:32], ref[96:] = a[:32], a[96:]
    assert torch.equal(out, ref)


def test_an_if_else_on_block_coordinates_reads_one_block_per_branch():
    a = torch.randn(128, 32)
    art = tilelang_tt.compile(copy_through("else"))
    out = torch.as_tensor(art.run(a, torch.zeros(4, dtype=torch.int32)))
    assert torch.equal(out, torch.cat([a[:64], a[:32], a[:32]]))
    assert not any(cb.name.endswith("_values") for cb in art.plan.cbs)  # nothing read from tensors to hand on


def test_a_branch_deciding_on_an_on_chip_block_is_refused_at_the_if():
    """Only compute holds an on-chip block; the reader and writer take the branch too."""
    @T.prim_func
    def main(A: T.Tensor((64, 32), "float32"), C: T.Tensor((64, 32), "float32")):
        with T.Kernel(1, 2, threads=128) as (bx, by):
            a = T.alloc_shared((32, 32), "float32")
            s = T.alloc_fragment((32,), "float32")
            T.copy(A[by * 32, 0], a)
            T.reduce_sum(a, s, dim=1)
            if s[0] > 0:  # LINE: on_chip_condition
                T.copy(a, C[by * 32, 0])

    err = compile_error(main)
    assert_diagnostic(err, "CheckKernelFormsTT", "decides on the on-chip buffer `s`: the reader and writer, which "
                      "take the branch too, cannot read on-chip blocks", "on_chip_condition", path=__file__,
                      source=open(__file__).read())
    assert "T.if_then_else(cond, x, y)" in err.hint and "IfThenElse" not in str(err)  # named as the user wrote it


def test_an_exit_inside_a_loop_is_refused_at_the_return():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "bfloat16"), counts: T.Tensor((2,), "int32"), C: T.Tensor((64, 64), "bfloat16")):
        with T.Kernel(1, 2, threads=128) as (bx, by):
            a = T.alloc_shared((32, 32), "bfloat16")
            for k in T.serial(2):
                if counts[k] == 0:
                    T.thread_return()  # LINE: exit_in_loop
                T.copy(A[by * 32, k * 32], a)
                T.copy(a, C[by * 32, k * 32])

    err = compile_error(main)
    assert_diagnostic(err, "LowerEarlyExitTT", "T.thread_return() inside a loop, where it would end the block's "
                      "remaining iterations too", "exit_in_loop", path=__file__, source=open(__file__).read())


def nested_branches():
    """An outer branch on ``counts[by]`` around reads and writes, an inner one on ``scale[bx]`` around
    compute only (the reader reads and sends its value though it has no work in it), and a third
    branch after them: the values reach compute in the order the reader reads them."""

    @T.prim_func
    def main(A: T.Tensor((64, 64), "bfloat16"), counts: T.Tensor((2,), "int32"), scale: T.Tensor((2,), "int32"),
             C: T.Tensor((64, 64), "bfloat16"), D: T.Tensor((64, 64), "bfloat16")):
        with T.Kernel(2, 2, threads=128) as (bx, by):
            a = T.alloc_shared((32, 32), "bfloat16")
            c = T.alloc_fragment((32, 32), "bfloat16")
            d = T.alloc_fragment((32, 32), "bfloat16")
            if counts[by] > 0:
                T.copy(A[by * 32, bx * 32], a)
                if scale[bx] > 0:
                    for i, j in T.Parallel(32, 32):
                        c[i, j] = a[i, j] * 2.0
                else:
                    for i, j in T.Parallel(32, 32):
                        c[i, j] = a[i, j] * 3.0
                T.copy(c, C[by * 32, bx * 32])
            if scale[bx] + counts[by] == 1:
                T.fill(d, 4.0)
                T.copy(d, D[by * 32, bx * 32])

    return main


def test_nested_and_successive_branches_on_values_take_each_value_in_order():
    a = torch.randn(64, 64).to(torch.bfloat16)
    counts, scale = torch.tensor([1, 0], dtype=torch.int32), torch.tensor([0, 1], dtype=torch.int32)
    art = tilelang_tt.compile(nested_branches())
    c, d = (torch.as_tensor(t) for t in art.run(a, counts, scale))
    ref_c, ref_d = torch.zeros(64, 64, dtype=torch.bfloat16), torch.zeros(64, 64, dtype=torch.bfloat16)
    for by in range(2):
        for bx in range(2):
            rows, cols = slice(by * 32, by * 32 + 32), slice(bx * 32, bx * 32 + 32)
            if counts[by] > 0:
                ref_c[rows, cols] = a[rows, cols] * (2.0 if scale[bx] > 0 else 3.0)
            if scale[bx] + counts[by] == 1:
                ref_d[rows, cols] = 4.0
    assert torch.equal(c, ref_c) and torch.equal(d, ref_d)
    assert art.sources["reader.cpp"].count("send_value(cb_compute_values") == 3
