"""A2 PropagateTTLayout alone: TIR unchanged, tt.cb_desc geometry per shared/fragment buffer."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import eltwise, gemm, lower_until, run_pass
from tests.passes.helpers import alloc_source, tl, tt_attrs
from tilelang_tt.ir.attrs import Attr, CBDesc
from tilelang_tt.options import CompileOptions
from tilelang_tt.passes.propagate_tt_layout import PropagateTTLayout

PASS = "PropagateTTLayout"


def _cb(name, page, pages, fmt, block, tiles, source, vector=""):
    return CBDesc(name, index=-1, page_size=page, num_pages=pages, data_format=fmt, block_pages=block,
                  block_tiles=tiles, vector=vector, source=source)


def test_registered_under_spec_name():
    assert PropagateTTLayout().info.name == PASS


def test_gemm_cb_desc_uses_num_stages():
    before = lower_until(gemm(128, 128, 128, 64, 64, 32, stages=3), PASS)
    after = run_pass(before, PASS)
    tvm.ir.assert_structural_equal(after["main"].body, before["main"].body)
    assert Attr.CB_DESC.read(after["main"]) == {
        "A_s": _cb("A_s", 2048, 6, "Float16_b", 2, (2, 1), alloc_source(gemm, "A_s")),
        "B_s": _cb("B_s", 2048, 6, "Float16_b", 2, (1, 2), alloc_source(gemm, "B_s")),
        "C_l": _cb("C_l", 4096, 8, "Float32", 4, (2, 2), alloc_source(gemm, "C_l")),  # not pipelined: cb_depth
    }


def test_eltwise_cb_desc_uses_cb_depth_option():
    opts = CompileOptions(cb_depth=3)
    before = lower_until(eltwise("add", 64, 128, 32, 64), PASS, opts)
    after = run_pass(before, PASS, opts)
    tvm.ir.assert_structural_equal(after["main"].body, before["main"].body)
    assert Attr.CB_DESC.read(after["main"]) == {
        name: _cb(name, 2048, 6, "Float16_b", 2, (1, 2), alloc_source(eltwise, name)) for name in ("A_s", "B_s", "C_s")}


def test_hand_written_stages_and_default_depth():
    """Hand-written TIR: A_s, filled in a loop of num_stages=3, holds 3 blocks of its 2 bfloat16
    tiles; the float32 fragment C_l the default 2 (the option). TVMScript buffers have no source line."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "bfloat16"), C: T.Buffer((64, 32), "float32")):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                A_s = T.sblock_alloc_buffer((64, 32), "bfloat16", scope="shared.dyn")
                C_l = T.sblock_alloc_buffer((64, 32), "float32", scope="local.fragment")
                for k in T.serial(2, annotations={"num_stages": 3}):
                    tl.tileop.copy(tl.region(A[0, k * 32], 1, 64, 32), tl.region(A_s[0, 0], 2, 64, 32))
                tl.tileop.copy(tl.region(C_l[0, 0], 1, 64, 32), tl.region(C[0, 0], 2, 64, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "bfloat16"), C: T.Buffer((64, 32), "float32")):
            T.func_attr(tt_attrs({"tt.cb_desc": {
                "A_s": {"index": -1, "page_size": 2048, "num_pages": 6, "data_format": "Float16_b", "block_pages": 2,
                        "block_tiles": [2, 1], "vector": "", "producer": "", "consumer": "", "buffer": "",
                        "source": ""},
                "C_l": {"index": -1, "page_size": 4096, "num_pages": 4, "data_format": "Float32", "block_pages": 2,
                        "block_tiles": [2, 1], "vector": "", "producer": "", "consumer": "", "buffer": "",
                        "source": ""}}}))
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                A_s = T.sblock_alloc_buffer((64, 32), "bfloat16", scope="shared.dyn")
                C_l = T.sblock_alloc_buffer((64, 32), "float32", scope="local.fragment")
                for k in T.serial(2, annotations={"num_stages": 3}):
                    tl.tileop.copy(tl.region(A[0, k * 32], 1, 64, 32), tl.region(A_s[0, 0], 2, 64, 32))
                tl.tileop.copy(tl.region(C_l[0, 0], 1, 64, 32), tl.region(C[0, 0], 2, 64, 32))

    tvm.ir.assert_structural_equal(PropagateTTLayout()(Before), Expected)


def _vector_cbs() -> dict:
    def cb(page, pages, fmt, block, tiles, vector=""):
        return {"index": -1, "page_size": page, "num_pages": pages, "data_format": fmt, "block_pages": block,
                "block_tiles": list(tiles), "vector": vector, "producer": "", "consumer": "", "buffer": "",
                "source": ""}

    return {"ss": cb(4096, 2, "Float32", 1, (1, 1), "col"), "w": cb(2048, 4, "Float16_b", 2, (1, 2), "row"),
            "x": cb(2048, 4, "Float16_b", 2, (1, 2)), "y": cb(2048, 4, "Float16_b", 2, (1, 2))}


def test_hand_written_vectors_take_their_kind_from_their_use():
    """Hand-written TIR (rms_norm's shape): ``ss``, the per-row sum (a T.reduce along dimension 1,
    read ``ss[i]`` by the row loop), is a column vector: one tile column of 32 rows; ``w``, read
    ``w[j]`` by the column loop, a row vector: one tile row of 64 columns, 2 tiles."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((32, 64), "bfloat16"), W: T.Buffer((64,), "bfloat16"), Y: T.Buffer((32, 64), "bfloat16")):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                x = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="shared.dyn")
                w = T.sblock_alloc_buffer((64,), "bfloat16", scope="shared.dyn")
                ss = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                y = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="local.fragment")
                tl.tileop.copy(tl.region(X[0, 0], 1, 32, 64), tl.region(x[0, 0], 2, 32, 64))
                tl.tileop.copy(tl.region(W[0], 1, 64), tl.region(w[0], 2, 64))
                tl.tileop.reduce(tl.region(x[0, 0], 1, 32, 64), tl.region(ss[0], 2, 32), "sum", 1, True)
                for i in T.parallel(32):
                    for j in T.parallel(64):
                        y[i, j] = x[i, j] * w[j] * T.Cast("bfloat16", ss[i])
                tl.tileop.copy(tl.region(y[0, 0], 1, 32, 64), tl.region(Y[0, 0], 2, 32, 64))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(X: T.Buffer((32, 64), "bfloat16"), W: T.Buffer((64,), "bfloat16"), Y: T.Buffer((32, 64), "bfloat16")):
            T.func_attr(tt_attrs({"tt.cb_desc": _vector_cbs()}))
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                x = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="shared.dyn")
                w = T.sblock_alloc_buffer((64,), "bfloat16", scope="shared.dyn")
                ss = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                y = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="local.fragment")
                tl.tileop.copy(tl.region(X[0, 0], 1, 32, 64), tl.region(x[0, 0], 2, 32, 64))
                tl.tileop.copy(tl.region(W[0], 1, 64), tl.region(w[0], 2, 64))
                tl.tileop.reduce(tl.region(x[0, 0], 1, 32, 64), tl.region(ss[0], 2, 32), "sum", 1, True)
                for i in T.parallel(32):
                    for j in T.parallel(64):
                        y[i, j] = x[i, j] * w[j] * T.Cast("bfloat16", ss[i])
                tl.tileop.copy(tl.region(y[0, 0], 1, 32, 64), tl.region(Y[0, 0], 2, 32, 64))

    tvm.ir.assert_structural_equal(PropagateTTLayout()(Before), Expected)
