"""C3e FitCBDepthsTT alone: CBs of one block where two blocks of every CB overflow L1, never one that needs two."""

import pytest
import tilelang.language as TL
import torch
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

import tilelang_tt
from tests.kernels import gemm, lower_until, run_pass
from tests.op_kernels import online_softmax, softmax
from tests.passes.helpers import cb_entry, tt_attrs
from tilelang_tt.errors import TTCompileError
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.passes.fit_cb_depths_tt import FitCBDepthsTT

PASS = "FitCBDepthsTT"
ROW = (1, 128)  # one tile row of a 4096-wide row: 128 tiles


def node(producer: str, consumer: str) -> dict:
    return {"producer": producer, "consumers": [consumer], "buffer": ""}


def test_registered_under_its_name():
    assert FitCBDepthsTT().info.name == PASS


def cb(index: int, fmt: str, blocks: int, producer: str, consumer: str, tiles=ROW) -> dict:
    page = 4096 if fmt == "Float32" else 2048
    return cb_entry(index, page, fmt, blocks * tiles[0] * tiles[1], tiles, producer, consumer)


def fit(cbs: dict, dfg: dict) -> dict:
    """The pass on a one-core kernel of CBs ``cbs``: the CBs' pages after it."""

    @I.ir_module
    class Before:
        @T.prim_func
        def main():
            T.func_attr(tt_attrs({"tt.arch": "wormhole_b0", "tt.core_ranges": [[[0, 0], [0, 0]]],
                                  "tt.layout_desc": {}, "tt.tile_dfg": dfg, "tt.cb_desc": cbs}))
            T.evaluate(0)

    after = FitCBDepthsTT()(Before)
    return {name: desc.num_pages for name, desc in Attr.CB_DESC.read(after["main"]).items()}


def test_compute_own_cbs_then_the_writers_single_buffered_until_l1_fits():
    """x (512 KiB), e (1 MiB), y (512 KiB), s (8 KiB) at two blocks: 2 MiB > 1360 KiB. e goes first (compute fills
    and drains it), then y (the writer's); s, picked before y, gets its two blocks back; x, the reader's, keeps two."""
    dfg = {"x": node("reader", "compute"), "s": node("compute", "compute"), "e": node("compute", "compute"),
           "y": node("compute", "writer")}
    cbs = {"x": cb(0, "Float16_b", 2, "reader", "compute"), "y": cb(16, "Float16_b", 2, "compute", "writer"),
           "s": cb(24, "Float32", 2, "compute", "compute", tiles=(1, 1)),
           "e": cb(25, "Float32", 2, "compute", "compute")}
    assert fit(cbs, dfg) == {"x": 256, "y": 128, "s": 2, "e": 128}


def test_a_kernel_that_fits_is_left_as_it_is():
    dfg = {"x": node("reader", "compute"), "y": node("compute", "writer")}
    cbs = {"x": cb(0, "Float16_b", 2, "reader", "compute", tiles=(1, 32)),
           "y": cb(16, "Float16_b", 2, "compute", "writer", tiles=(1, 32))}
    assert fit(cbs, dfg) == {"x": 64, "y": 64}
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    assert run_pass(before, PASS)["main"].same_as(before["main"])


def test_a_kernel_one_block_each_does_not_fit_is_left_for_verify_to_refuse():
    """Four 1 MiB float32 CBs: one block each is still 2 MiB; the depths stay as asked."""
    dfg = {f"e{k}": node("compute", "compute") for k in range(4)}
    cbs = {f"e{k}": cb(24 + k, "Float32", 2, "compute", "compute", tiles=(2, 128)) for k in range(4)}
    assert fit(cbs, dfg) == {f"e{k}": 512 for k in range(4)}


def test_long_row_softmax_single_buffers_its_exps_and_output():
    """8192 x 4096, 32 rows a block: exps (float32) and output (bfloat16) one block each, the input two (the reader
    reads the next rows while compute works); the small vectors keep two."""
    before = lower_until(softmax(8192, 4096, 32, separate_exps=True), PASS)
    after = run_pass(before, PASS)
    pages = {name: desc.num_pages for name, desc in Attr.CB_DESC.read(after["main"]).items()}
    assert pages == {"x": 256, "exp_x": 128, "y": 128, "mx": 2, "sm": 2, "exp_x_rowsum": 2, "reduce_scaler": 1}
    tvm.ir.assert_structural_equal(after["main"].body, before["main"].body)


def test_a_block_updated_in_place_keeps_two_blocks_and_the_kernel_is_refused():
    """The float32 copy softmax updates in place (xf = exp(xf - mx)) needs its second block: at 8192 x 4096 the
    kernel still overflows L1 (no program that would wait forever), with the error at the biggest block."""
    before = lower_until(softmax(8192, 4096, 32), PASS)
    after = run_pass(before, PASS)
    assert after["main"].same_as(before["main"])
    with pytest.raises(TTCompileError) as info:
        tilelang_tt.compile(softmax(8192, 4096, 32))
    err = info.value
    assert err.pass_name == "VerifyTTIR" and "L1 overflow" in err.message, err.message
    assert "`xf` 1024 KiB (256 pages of 4096 B)" in err.message
    assert 'xf = T.alloc_fragment((bm, N), "float32")' in str(err)


def test_blocks_read_in_a_pipelined_loop_keep_the_users_stages():
    """A K step of 8192: A_s and B_s, read in T.Pipelined(num_stages=2), are 1 MiB each; one block each would fit,
    but the stages are the user's: the kernel is left as it is (VerifyTTIR refuses it)."""
    before = lower_until(gemm(64, 64, 8192, 32, 32, 8192), PASS)
    assert run_pass(before, PASS)["main"].same_as(before["main"])


def test_a_block_compute_fills_in_a_pipelined_loop_may_have_one():
    """online_softmax with a column block of 4096: x, read in the pipelined loops, keeps its two stages; xf, which
    compute fills there (exp(x - m), not in place), goes to one block, and the kernel fits."""
    before = lower_until(online_softmax(256, 4096, 32, 4096), PASS)
    pages = {name: desc.num_pages for name, desc in Attr.CB_DESC.read(run_pass(before, PASS)["main"]).items()}
    assert (pages["x"], pages["xf"]) == (256, 128)


def column_scan(n: int):
    """A reverse column scan of an n x n float32 block read transposed (TileLang's T.cumsum of a fragment)."""

    @TL.prim_func
    def main(A: TL.Tensor((2 * n, n), "float32"), C: TL.Tensor((2 * n, n), "bfloat16")):
        with TL.Kernel(2, 1, threads=128) as (bx, by):
            F = TL.alloc_fragment((n, n), "float32")
            for i, j in TL.Parallel(n, n):
                F[i, j] = A[bx * n + j, by * n + i]
            TL.cumsum(F, dim=0, reverse=True)
            for i, j in TL.Parallel(n, n):
                C[bx * n + j, by * n + i] = F[i, j]

    return main


def test_a_scan_too_big_for_two_blocks_runs_with_one_and_matches_torch():
    """136 x 136 (5 x 5 tiles): the block, its staging, the scan's blocks and the output's take about 2 MiB at two
    blocks each (refused before this pass); with one block for all but the reader's it fits and runs."""
    artifacts = tilelang_tt.compile(column_scan(136))
    pages = {cb.name: cb.num_pages for cb in artifacts.plan.cbs}
    assert pages["scan_smem"] == pages["A_s"] == 25 and pages["scan_smem_masked_gen"] == 50
    a = torch.randn(272, 136, generator=torch.Generator().manual_seed(3))
    f = a.reshape(2, 136, 136).transpose(1, 2)  # block b: F[i, j] = A[b * 136 + j, i]
    scanned = f.flip(1).cumsum(1).flip(1)  # T.cumsum(F, dim=0, reverse=True)
    out = torch.as_tensor(artifacts.run(a)).float()
    torch.testing.assert_close(out, scanned.transpose(1, 2).reshape(272, 136), rtol=2.0**-8, atol=2.0**-6)


def test_long_row_softmax_matches_torch():
    """256 x 4096 (the 8192 x 4096 form's blocks: a tile row of 4096 columns, one block of exps and output) on the
    emulator, against torch's softmax of the same bfloat16 input."""
    artifacts = tilelang_tt.compile(softmax(256, 4096, 32, separate_exps=True), grid=(8, 8))
    assert {cb.name: cb.num_pages for cb in artifacts.plan.cbs}["exp_x"] == 128
    x = torch.randn(256, 4096, generator=torch.Generator().manual_seed(7)).to(torch.bfloat16) * 4
    y = torch.as_tensor(artifacts.run(x)).float()
    torch.testing.assert_close(y, torch.softmax(x.float(), dim=1), rtol=2.0**-6, atol=2.0**-10)


def test_an_output_drained_as_pushed_may_have_one_block_and_matches_torch():
    """Softmax of rows of 4096 (separate_exps): the output y, which the writer drains 4 tiles at a time as compute
    pushes them (``push_pages``, eltwise.drain_steps), goes to one block like any hand-off CB, the input keeping its
    two; the program runs and matches torch."""
    artifacts = tilelang_tt.compile(softmax(64, 4096, 32, separate_exps=True))
    pages = {cb.name: cb.num_pages for cb in artifacts.plan.cbs}
    assert (pages["x"], pages["exp_x"], pages["y"]) == (256, 128, 128)
    assert "cb_wait_front(cb_y, 4);" in artifacts.sources["writer.cpp"]
    x = (torch.randn(64, 4096, generator=torch.Generator().manual_seed(3)) * 4).bfloat16()
    torch.testing.assert_close(artifacts.run(x).float(), torch.softmax(x.float(), 1), rtol=2.0**-7, atol=2.0**-12)
