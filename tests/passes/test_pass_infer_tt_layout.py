"""A1 InferTTLayout alone: TIR unchanged, tt.layout_desc for every global parameter."""

import inspect

import pytest
import tilelang  # noqa: F401
import tilelang.language as TL
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.compiler.test_rank1_columns import line_of, row_and_column
from tests.kernels import gemm, lower_until, run_pass
from tests.passes.helpers import attrs_without, tl, tt_attrs
from tilelang_tt import TTCompileError
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.contract.buffers import LayoutDesc, MemoryLayout
from tilelang_tt.options import CompileOptions
from tilelang_tt.passes.infer_tt_layout import InferTTLayout

PASS = "InferTTLayout"
ROW_MAJOR, INTERLEAVED = MemoryLayout.ROW_MAJOR, MemoryLayout.INTERLEAVED


def _layout(name, shape, dtype="bfloat16", column=False):
    """An interleaved DRAM tensor of tiles in its own dtype."""
    return LayoutDesc(name, tuple(shape), dtype, column=column)


def _stored_layout(shape, dtype="bfloat16", fmt="Float16_b", page=2048):
    """The stored form of :func:`_layout`'s layout, spelled out (a hand-written test's ``T.func_attr``)."""
    return {"memory": "DRAM", "layout": "interleaved", "dtype": dtype, "shape": list(shape),
            "tile_shape": [32, 32], "data_format": fmt, "page_size": page}


def test_registered_under_spec_name():
    assert InferTTLayout().info.name == PASS


def test_gemm_layouts():
    before = lower_until(gemm(64, 128, 96, 32, 64, 32), PASS)
    after = run_pass(before, PASS)
    tvm.ir.assert_structural_equal(after["main"].body, before["main"].body)
    layouts = Attr.LAYOUT_DESC.read(after["main"])
    assert layouts == {"A": _layout("A", (64, 96)), "B": _layout("B", (96, 128)), "C": _layout("C", (64, 128))}
    assert (layouts["A"].data_format, layouts["A"].page_size) == ("Float16_b", 2048)
    assert Attr.ARCH.read(after["main"]).name == "wormhole_b0"
    assert attrs_without(after["main"], Attr.LAYOUT_DESC, Attr.ARCH) == attrs_without(before["main"])


def test_records_the_arch_once():
    """A1 records the target's arch; the passes after it take no arch argument and read this."""
    after = run_pass(lower_until(gemm(64, 128, 96, 32, 64, 32), PASS), PASS, CompileOptions(arch="blackhole"))
    assert Attr.ARCH.read(after["main"]).name == "blackhole"


def test_float32_tensor_layout():
    before = lower_until(gemm(64, 64, 64, 32, 32, 32, dtype="float32"), PASS)
    after = run_pass(before, PASS)
    tvm.ir.assert_structural_equal(after["main"].body, before["main"].body)
    layout = Attr.LAYOUT_DESC.read(after["main"])["A"]
    assert layout == _layout("A", (64, 64), "float32")
    assert (layout.data_format, layout.page_size) == ("Float32", 4096)


def test_hand_written_user_layout_is_resolved_and_the_rest_defaulted():
    """Hand-written TIR: A carries a user layout (``annotate_layouts``' form), resolved to whole-row
    shards of 32x64 on the 2 cores; the rank-1 float32 S defaults to interleaved DRAM."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "bfloat16"), S: T.Buffer((64,), "float32")):
            T.func_attr(tt_attrs({"tt.layout_desc": {
                "A": {"memory": "L1", "layout": "height_sharded", "shard_grid": [2, 1]}}}))
            T.evaluate(0)

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "bfloat16"), S: T.Buffer((64,), "float32")):
            T.func_attr(tt_attrs({"tt.arch": "wormhole_b0", "tt.layout_desc": {
                "A": {"memory": "L1", "layout": "height_sharded", "dtype": "bfloat16", "shape": [64, 64],
                      "tile_shape": [32, 32], "data_format": "Float16_b", "page_size": 2048,
                      "shard_grid": [2, 1], "shard_shape": [32, 64]},
                "S": {"memory": "DRAM", "layout": "interleaved", "dtype": "float32", "shape": [64],
                      "tile_shape": [32, 32], "data_format": "Float32", "page_size": 4096}}}))
            T.evaluate(0)

    tvm.ir.assert_structural_equal(InferTTLayout()(Before), Expected)


def _row_sums_plus_bias(M, N, bm):
    """Per-row sums plus a per-column bias: O (M,) is written one value per row, B (N,) is read one
    value per column."""
    @TL.prim_func
    def main(X: TL.Tensor((M, N), "bfloat16"), B: TL.Tensor((N,), "bfloat16"), O: TL.Tensor((M,), "float32")):
        with TL.Kernel(TL.ceildiv(M, bm), threads=128) as bx:
            x = TL.alloc_shared((bm, N), "bfloat16")
            b = TL.alloc_shared((N,), "bfloat16")
            y = TL.alloc_fragment((bm, N), "float32")
            s = TL.alloc_fragment((bm,), "float32")
            TL.copy(X[bx * bm, 0], x)
            TL.copy(B[0], b)
            for i, j in TL.Parallel(bm, N):
                y[i, j] = x[i, j] + b[j]
            TL.reduce_sum(y, s, dim=1)
            for i in TL.Parallel(bm):
                O[bx * bm + i] = s[i]

    return main


def test_rank1_tensor_used_as_a_column_is_laid_out_as_one():
    """O, written per row (the legalized copy of a per-row block), is the column (64, 1): 2 x 1
    tiles; B, read per column, stays the row (1, 64) and its layout has no "column" key."""
    before = lower_until(_row_sums_plus_bias(64, 64, 32), PASS)
    after = run_pass(before, PASS)
    tvm.ir.assert_structural_equal(after["main"].body, before["main"].body)
    layouts = Attr.LAYOUT_DESC.read(after["main"])
    assert layouts["O"] == _layout("O", (64,), "float32", column=True)
    assert layouts["B"] == _layout("B", (64,))
    assert layouts["O"].tile_grid == (2, 1)
    assert layouts["B"].tile_grid == (1, 2)


def test_rank1_tensor_used_as_row_and_column_is_an_error_at_the_second_use():
    """S scales the columns (copied into r, read r[j]), then the rows (c, read c[i]) of A."""
    before = lower_until(row_and_column(64, 32), PASS)
    with pytest.raises(TTCompileError) as info:
        run_pass(before, PASS)
    err = info.value
    assert err.pass_name == PASS
    assert "the rank-1 tensor `S` is used as a row (one value per column) and here as a column" in err.message
    assert err.location[:2] == (inspect.getsourcefile(row_and_column), line_of("second_view"))


def test_tensors_sliced_at_rows_read_from_tensors_or_written_some_rows_at_a_time_are_in_rows():
    from tests.compiler.test_grouped_gemm import grouped_gemm, guarded_rows

    f = run_pass(lower_until(grouped_gemm((40, 24), 64, 64, 64, 64, 32), PASS), PASS)["main"]
    layouts = Attr.LAYOUT_DESC.read(f)
    assert [layouts[n].layout for n in ("A", "B", "C")] == [ROW_MAJOR, INTERLEAVED, ROW_MAJOR]
    f = run_pass(lower_until(guarded_rows(100, 64, 64, "lt"), PASS), PASS)["main"]
    assert [Attr.LAYOUT_DESC.read(f)[n].layout for n in ("A", "C")] == [INTERLEAVED, ROW_MAJOR]


def test_hand_written_rank1_tensor_written_per_row_is_a_column():
    """Hand-written TIR: O (64,) takes the per-row sums ``s`` (a T.reduce along dimension 1) of
    each 32-row block: it is laid out as the column (64, 1), "column" in its layout; X is the
    default interleaved DRAM tensor."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((64, 64), "bfloat16"), O: T.Buffer((64,), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="shared.dyn")
                    s = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(X[bx * 32, 0], 1, 32, 64), tl.region(x[0, 0], 2, 32, 64))
                    tl.tileop.reduce(tl.region(x[0, 0], 1, 32, 64), tl.region(s[0], 2, 32), "sum", 1, True)
                    tl.tileop.copy(tl.region(s[0], 1, 32), tl.region(O[bx * 32], 2, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(X: T.Buffer((64, 64), "bfloat16"), O: T.Buffer((64,), "float32")):
            T.func_attr(tt_attrs({"tt.arch": "wormhole_b0", "tt.layout_desc": {
                "X": _stored_layout((64, 64)),
                "O": _stored_layout((64,), "float32", "Float32", 4096) | {"column": True}}}))
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    x = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="shared.dyn")
                    s = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                    tl.tileop.copy(tl.region(X[bx * 32, 0], 1, 32, 64), tl.region(x[0, 0], 2, 32, 64))
                    tl.tileop.reduce(tl.region(x[0, 0], 1, 32, 64), tl.region(s[0], 2, 32), "sum", 1, True)
                    tl.tileop.copy(tl.region(s[0], 1, 32), tl.region(O[bx * 32], 2, 32))

    tvm.ir.assert_structural_equal(InferTTLayout()(Before), Expected)
