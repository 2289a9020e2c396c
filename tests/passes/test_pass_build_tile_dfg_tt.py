"""C3c BuildTileDFGTT alone: TIR unchanged, tt.tile_dfg in dataflow order and CB roles in tt.cb_desc (ids: NumberCBsTT)."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import gemm, lower_until, run_pass
from tests.passes.helpers import alloc_source, cb_entry, tl, tt, tt_attrs
from tilelang_tt.ir.attrs import Attr, CBDesc, DFGNode
from tilelang_tt.options import CompileOptions
from tilelang_tt.passes.build_tile_dfg_tt import BuildTileDFGTT

PASS = "BuildTileDFGTT"


def test_registered_under_spec_name():
    assert BuildTileDFGTT().info.name == PASS


def test_gemm_dfg_and_cb_roles():
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    after = run_pass(before, PASS)
    tvm.ir.assert_structural_equal(after["main"].body, before["main"].body)
    assert Attr.TILE_DFG.read(after["main"]) == {
        "A_s": DFGNode("A_s", "reader", ("compute",), "A"),
        "B_s": DFGNode("B_s", "reader", ("compute",), "B"),
        "C_l": DFGNode("C_l", "compute", ("writer",), "C"),
    }
    assert Attr.BUFFER_ACCESS.read(after["main"]) == {"A": "read", "B": "read", "C": "write"}
    assert Attr.CB_DESC.read(after["main"]) == {
        "A_s": CBDesc("A_s", index=-1, page_size=2048, num_pages=4, data_format="Float16_b", block_pages=2,
                      block_tiles=(2, 1), producer="reader", consumer="compute", buffer="A",
                      source=alloc_source(gemm, "A_s")),
        "B_s": CBDesc("B_s", index=-1, page_size=2048, num_pages=4, data_format="Float16_b", block_pages=2,
                      block_tiles=(1, 2), producer="reader", consumer="compute", buffer="B",
                      source=alloc_source(gemm, "B_s")),
        # packed into C's format: the fp32 accumulator never lives in L1
        "C_l": CBDesc("C_l", index=-1, page_size=2048, num_pages=8, data_format="Float16_b", block_pages=4,
                      block_tiles=(2, 2), producer="compute", consumer="writer", buffer="C",
                      source=alloc_source(gemm, "C_l")),
    }


def test_softmax_hand_off_and_scaler_cbs():
    """A block updated in place and then written out gets its own hand-off CB for the writer;
    reductions get a one-tile scaler CB fed by the reader. The graph lists the blocks where a
    statement first touches them, then the CBs it adds (the order NumberCBsTT numbers them in)."""
    from tests.op_kernels import softmax

    after = run_pass(lower_until(softmax(64, 128, 32), PASS), PASS)
    dfg = Attr.TILE_DFG.read(after["main"])
    assert dfg["xf"] == DFGNode("xf", "compute", ("compute",), "Y", handoff="xf_out")
    assert dfg["xf_out"] == DFGNode("xf_out", "compute", ("writer",), "Y")
    assert dfg["reduce_scaler"] == DFGNode("reduce_scaler", "reader", ("compute",), "", kind="scaler")
    # xf first written by the exp, after the row maximum (its copy of x forwarded: Eltwise.forward_copies)
    assert list(dfg) == ["x", "mx", "xf", "xf_rowsum", "sm", "xf_out", "reduce_scaler"]
    cbs = Attr.CB_DESC.read(after["main"])
    assert (cbs["xf"].data_format, cbs["xf_out"].data_format) == ("Float32", "Float16_b")


C_LAYOUT = {"C": {"memory": "DRAM", "layout": "interleaved", "dtype": "bfloat16", "shape": [32, 32],
                  "tile_shape": [32, 32], "data_format": "Float16_b", "page_size": 2048}}


def test_hand_written_gemm_graph():
    """Hand-written TIR: A_s and B_s are filled by the reader and read by the gemm; C_l, accumulated
    by compute and drained by the writer, takes C's format (pack converts)."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "bfloat16"), B: T.Buffer((64, 32), "bfloat16"),
                 C: T.Buffer((32, 32), "bfloat16")):
            T.func_attr(tt_attrs({"tt.arch": "wormhole_b0", "tt.layout_desc": C_LAYOUT, "tt.cb_desc": {
                "A_s": cb_entry(), "B_s": cb_entry(), "C_l": cb_entry(page_size=4096, data_format="Float32")}}))
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                A_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                B_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                C_l = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                with T.attr(C_l.data, "tt.accumulate", 0):
                    for k in range(2):
                        tt.read_to_cb(tl.region(A[0, k * 32], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))
                        tt.read_to_cb(tl.region(B[k * 32, 0], 1, 32, 32), tl.region(B_s[0, 0], 2, 32, 32))
                        tt.mm.mma(A_s.data, B_s.data, C_l.data, 0, 0, 1, 1, False, k == 0)
                    tt.pack_block(C_l.data, 0, 0, 1, 1)
                tt.write_from_cb(tl.region(C_l[0, 0], 1, 32, 32), tl.region(C[0, 0], 2, 32, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "bfloat16"), B: T.Buffer((64, 32), "bfloat16"),
                 C: T.Buffer((32, 32), "bfloat16")):
            T.func_attr(tt_attrs({"tt.arch": "wormhole_b0", "tt.layout_desc": C_LAYOUT, "tt.cb_desc": {
                "A_s": cb_entry(producer="reader", consumer="compute", buffer="A"),
                "B_s": cb_entry(producer="reader", consumer="compute", buffer="B"),
                "C_l": cb_entry(producer="compute", consumer="writer", buffer="C"),
    }, "tt.tile_dfg": {
                "A_s": {"producer": "reader", "consumers": ["compute"], "buffer": "A"},
                "B_s": {"producer": "reader", "consumers": ["compute"], "buffer": "B"},
                "C_l": {"producer": "compute", "consumers": ["writer"], "buffer": "C"},
            }, "tt.buffer_access": {"A": "read", "B": "read", "C": "write"}}))
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                A_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                B_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                C_l = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                with T.attr(C_l.data, "tt.accumulate", 0):
                    for k in range(2):
                        tt.read_to_cb(tl.region(A[0, k * 32], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))
                        tt.read_to_cb(tl.region(B[k * 32, 0], 1, 32, 32), tl.region(B_s[0, 0], 2, 32, 32))
                        tt.mm.mma(A_s.data, B_s.data, C_l.data, 0, 0, 1, 1, False, k == 0)
                    tt.pack_block(C_l.data, 0, 0, 1, 1)
                tt.write_from_cb(tl.region(C_l[0, 0], 1, 32, 32), tl.region(C[0, 0], 2, 32, 32))

    tvm.ir.assert_structural_equal(BuildTileDFGTT()(Before), Expected)


X_LAYOUT = {"X": {"memory": "DRAM", "layout": "interleaved", "dtype": "bfloat16", "shape": [32, 32],
                  "tile_shape": [32, 32], "data_format": "Float16_b", "page_size": 2048}}


def test_hand_written_buffer_access_from_the_dataflow():
    """Hand-written TIR: X is read into X_s and X_s written back to X (readwrite); U is a parameter
    the kernel never moves (read: the host uploads it, nothing reads it back)."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((32, 32), "bfloat16"), U: T.Buffer((32, 32), "bfloat16")):
            T.func_attr(tt_attrs({"tt.arch": "wormhole_b0", "tt.layout_desc": X_LAYOUT, "tt.cb_desc": {"X_s": cb_entry()}}))
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                X_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                tt.read_to_cb(tl.region(X[0, 0], 1, 32, 32), tl.region(X_s[0, 0], 2, 32, 32))
                tt.write_from_cb(tl.region(X_s[0, 0], 1, 32, 32), tl.region(X[0, 0], 2, 32, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(X: T.Buffer((32, 32), "bfloat16"), U: T.Buffer((32, 32), "bfloat16")):
            T.func_attr(tt_attrs({"tt.arch": "wormhole_b0", "tt.layout_desc": X_LAYOUT, "tt.cb_desc": {
                "X_s": cb_entry(producer="reader", consumer="writer", buffer="X"),
    }, "tt.tile_dfg": {
                "X_s": {"producer": "reader", "consumers": ["writer"], "buffer": "X"},
            }, "tt.buffer_access": {"X": "readwrite", "U": "read"}}))
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                X_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                tt.read_to_cb(tl.region(X[0, 0], 1, 32, 32), tl.region(X_s[0, 0], 2, 32, 32))
                tt.write_from_cb(tl.region(X_s[0, 0], 1, 32, 32), tl.region(X[0, 0], 2, 32, 32))

    tvm.ir.assert_structural_equal(BuildTileDFGTT()(Before), Expected)


def test_row_major_tensors_get_staging_cbs():
    """A block read from a row-major tensor gets a staging CB `<block>_rm` the reader fills and
    compute tilizes; a block written to one, a staging CB compute untilizes into for the writer
    (pages: tiles' worth of rows in the tensor's format)."""
    from tests.compiler.test_row_major import ROWS, add
    from tilelang_tt.options import CompileOptions

    opts = CompileOptions(layouts={"A": ROWS, "C": ROWS})
    after = run_pass(lower_until(add(64, 128, 32, 64), PASS, opts), PASS, opts)
    dfg, cbs = Attr.TILE_DFG.read(after["main"]), Attr.CB_DESC.read(after["main"])
    assert dfg["a"] == DFGNode("a", "compute", ("compute",), "A", tilize_from="a_rm")
    assert dfg["a_rm"] == DFGNode("a_rm", "reader", ("compute",), "A")
    assert dfg["c"] == DFGNode("c", "compute", ("compute",), "C", untilize_to="c_rm")
    assert dfg["c_rm"] == DFGNode("c_rm", "compute", ("writer",), "C")
    assert not dfg["b"].tilize_from and dfg["b"].producer == "reader"  # B stays tiled
    assert (cbs["a_rm"].page_size, cbs["a_rm"].data_format, cbs["a_rm"].block_pages) == (2048, "Float16_b", 2)
    assert (cbs["c_rm"].data_format, cbs["c"].data_format) == ("Float16_b", "Float32")


def test_readers_and_writers_of_offsets_from_tensors_get_scratch_cbs():
    """The grouped GEMM reads its group offsets in the reader (A's rows, B's matrix) and the writer
    (C's rows, the valid rows): each gets a 64-byte scratch CB of its own, and only they."""
    from tests.compiler.test_grouped_gemm import grouped_gemm

    mod = run_pass(lower_until(grouped_gemm((40, 24), 64, 64, 64, 64, 32), PASS), PASS)
    f = mod["main"]
    dfg, cbs = Attr.TILE_DFG.read(f), Attr.CB_DESC.read(f)
    scratch = {name: node for name, node in dfg.items() if node.kind == "scratch"}
    assert scratch == {"reader_scalars": DFGNode("reader_scalars", "reader", ("reader",), kind="scratch"),
                       "writer_scalars": DFGNode("writer_scalars", "writer", ("writer",), kind="scratch")}
    assert [cbs[n].page_size * cbs[n].num_pages for n in scratch] == [64, 64]
    plain = run_pass(lower_until(gemm(64, 64, 64, 32, 32, 32), PASS), PASS)["main"]
    assert not any(node.kind == "scratch" for node in Attr.TILE_DFG.read(plain).values())


F32_LAYOUTS = {name: {"memory": "DRAM", "layout": "interleaved", "dtype": "float32", "shape": [32, 64],
                      "tile_shape": [32, 32], "data_format": "Float32", "page_size": 4096} for name in "ACDE"}
F32_CBS = {name: cb_entry(page_size=4096, data_format="Float32") for name in ("A_s", "F", "G")}


# F copied into C, D and C, G computed from it between the copies, then F's next value copied into E
@I.ir_module(check_well_formed=False)  # the element indices i, j are free (C2 made the nests tile ops)
class CopiedTwice:
    @T.prim_func
    def main(A: T.Buffer((32, 64), "float32"), C: T.Buffer((32, 64), "float32"),
             D: T.Buffer((32, 64), "float32"), E: T.Buffer((32, 64), "float32")):
        T.func_attr(tt_attrs({"tt.arch": "wormhole_b0", "tt.layout_desc": F32_LAYOUTS, "tt.cb_desc": F32_CBS}))
        i = T.int32()
        j = T.int32()
        with T.sblock("tilelang_root"):
            T.reads()
            T.writes()
            A_s = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
            F = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
            G = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
            tt.read_to_cb(tl.region(A[0, 0], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))
            tt.tile.eltwise(F.data, i, j, A_s[i, j] * T.float32(2))
            tt.write_from_cb(tl.region(F[0, 0], 1, 32, 32), tl.region(C[0, 0], 2, 32, 32))
            tt.tile.eltwise(G.data, i, j, F[i, j] + A_s[i, j])
            tt.write_from_cb(tl.region(F[0, 0], 1, 32, 32), tl.region(D[0, 32], 2, 32, 32))
            tt.write_from_cb(tl.region(F[0, 0], 1, 32, 32), tl.region(C[0, 32], 2, 32, 32))
            tt.write_from_cb(tl.region(G[0, 0], 1, 32, 32), tl.region(D[0, 0], 2, 32, 32))
            tt.tile.eltwise(F.data, i, j, G[i, j] * T.float32(3))
            tt.write_from_cb(tl.region(F[0, 0], 1, 32, 32), tl.region(E[0, 0], 2, 32, 32))


def test_hand_written_copies_of_one_value_into_several_tensors_share_one_cb():
    """F is copied into C, then (after other work, which reads F and writes G) into D, and after it is written again
    into E: one CB the writer drains (F_out), the TIR unchanged (MarkMultiStoresTT marks the copies)."""
    written = tt_attrs({"tt.cb_desc": {
        "A_s": cb_entry(page_size=4096, data_format="Float32", producer="reader", consumer="compute",
                        buffer="A"),
        "F": cb_entry(page_size=4096, data_format="Float32", producer="compute", consumer="compute",
                      buffer="C"),
        "F_out": cb_entry(page_size=4096, data_format="Float32", producer="compute", consumer="writer",
                          buffer="C"),
        "G": cb_entry(page_size=4096, data_format="Float32", producer="compute", consumer="compute",
                      buffer="D"),
        "G_out": cb_entry(page_size=4096, data_format="Float32", producer="compute", consumer="writer",
                          buffer="D"),
    }, "tt.tile_dfg": {
        "A_s": {"producer": "reader", "consumers": ["compute"], "buffer": "A"},
        "F": {"producer": "compute", "consumers": ["compute"], "buffer": "C", "handoff": "F_out"},
        "G": {"producer": "compute", "consumers": ["compute"], "buffer": "D", "handoff": "G_out"},
        "F_out": {"producer": "compute", "consumers": ["writer"], "buffer": "C"},
        "G_out": {"producer": "compute", "consumers": ["writer"], "buffer": "D"},
    }, "tt.buffer_access": {"A": "read", "C": "write", "D": "write", "E": "write"}})
    expected = CopiedTwice["main"]
    for key, value in written.items():
        expected = expected.with_attr(key, value)
    tvm.ir.assert_structural_equal(BuildTileDFGTT()(CopiedTwice)["main"], expected, map_free_vars=True)


def test_a_block_copied_into_tensors_stored_differently_is_refused():
    """The writer writes F's pages unchanged: into a float32 tensor and a bfloat16 one they cannot both go."""
    from tests.compiler import bad_kernels
    from tests.compiler.test_negative import assert_diagnostic, compile_error

    err = compile_error(bad_kernels.copied_into_two_dtypes())
    assert_diagnostic(err, PASS, "the block `F` is copied into `C` (float32 in tiles) and here into `D` (bfloat16 in "
                      "tiles)", "copied_into_two_dtypes")
    assert "copy `F` into a block of `D`'s dtype first" in err.hint


def test_kernels_moving_misaligned_runs_get_scratch_cbs():
    """A[12:20] of a float32 vector: its runs sit 16 bytes off Wormhole's 32-byte DRAM alignment in the tensor
    and the block (tile_runs.needs_scratch), so the reader and the writer each get a 64-byte scratch CB to stage
    them through; A[8:24] is aligned on Wormhole (no scratch) and not on Blackhole (64 bytes: both get one)."""
    from tests.compiler.test_partial_tiles import one_slice

    def scratch_cbs(kernel, arch="wormhole_b0"):
        func = run_pass(lower_until(kernel, PASS, CompileOptions(arch=arch)), PASS)["main"]
        return {name: node.producer for name, node in Attr.TILE_DFG.read(func).items() if node.kind == "scratch"}

    both = {"reader_scalars": "reader", "writer_scalars": "writer"}
    assert scratch_cbs(one_slice(12, 8)) == both
    assert scratch_cbs(one_slice(8, 16)) == {}
    assert scratch_cbs(one_slice(8, 16), arch="blackhole") == both
