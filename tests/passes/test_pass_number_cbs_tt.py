"""C3d NumberCBsTT alone: CB ids from the dataflow graph (c_0 inputs, c_16 outputs, c_24 intermediates)."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import gemm, lower_until, run_pass
from tests.passes.helpers import cb_entry, tt_attrs
from tilelang_tt.ir.attrs import Attr, DFGNode
from tilelang_tt.passes.number_cbs_tt import NumberCBsTT, cb_indices

PASS = "NumberCBsTT"


def node(producer: str, consumer: str) -> dict:
    return {"producer": producer, "consumers": [consumer], "buffer": ""}


def test_registered_under_its_name():
    assert NumberCBsTT().info.name == PASS


def test_hand_written_ids_by_role_in_dataflow_order():
    """The graph lists Y_out, X_s, T_l, W_s, R_l: the reader's X_s and W_s are 0 and 1 in that order,
    the writer's Y_out 16, compute's own T_l and R_l 24 and 25."""
    dfg = {"Y_out": node("compute", "writer"), "X_s": node("reader", "compute"), "T_l": node("compute", "compute"),
           "W_s": node("reader", "compute"), "R_l": node("compute", "compute")}
    unnumbered = {name: cb_entry() for name in ("R_l", "T_l", "W_s", "X_s", "Y_out")}

    @I.ir_module
    class Before:
        @T.prim_func
        def main():
            T.func_attr(tt_attrs({"tt.arch": "wormhole_b0", "tt.tile_dfg": dfg, "tt.cb_desc": unnumbered}))
            T.evaluate(0)

    @I.ir_module
    class Expected:
        @T.prim_func
        def main():
            T.func_attr(tt_attrs({"tt.arch": "wormhole_b0", "tt.tile_dfg": dfg, "tt.cb_desc": {
                "X_s": cb_entry(0), "W_s": cb_entry(1), "Y_out": cb_entry(16), "T_l": cb_entry(24),
                "R_l": cb_entry(25)}}))
            T.evaluate(0)

    tvm.ir.assert_structural_equal(NumberCBsTT()(Before), Expected)


def test_more_inputs_than_a_range_holds_numbers_every_cb_in_order():
    """17 reader CBs overflow c_0..c_15: every CB is numbered from 0, inputs, then outputs, then the rest."""
    dfg = {"out": node("compute", "writer"), "mid": node("compute", "compute")}
    dfg |= {f"in{k}": node("reader", "compute") for k in range(17)}
    index = cb_indices({cb: DFGNode.from_dict(cb, d) for cb, d in dfg.items()}, num_cbs=32)
    assert [index[f"in{k}"] for k in range(17)] == list(range(17))
    assert (index["out"], index["mid"]) == (17, 18)
    fits = {"in0": DFGNode("in0", "reader", ("compute",)), "out": DFGNode("out", "compute", ("writer",))}
    assert cb_indices(fits, 32) == {"in0": 0, "out": 16}


def test_gemm_cb_ids():
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    assert {cb.index for cb in Attr.CB_DESC.read(before["main"]).values()} == {-1}
    after = run_pass(before, PASS)
    tvm.ir.assert_structural_equal(after["main"].body, before["main"].body)
    assert {n: cb.index for n, cb in Attr.CB_DESC.read(after["main"]).items()} == {"A_s": 0, "B_s": 1, "C_l": 16}


def test_softmax_ids_of_the_cbs_the_graph_adds():
    """The scaler CB fed by the reader follows x (1); the hand-off xf_out is the writer's (16);
    compute-internal CBs start at 24 in the order the graph meets them: mx, then xf (first written by the exp, its
    copy of x forwarded: Eltwise.forward_copies), the exp pass's row partials ``xf_rowsum``, sm."""
    from tests.op_kernels import softmax

    after = run_pass(lower_until(softmax(64, 128, 32), PASS), PASS)
    assert {n: cb.index for n, cb in Attr.CB_DESC.read(after["main"]).items()} == {
        "x": 0, "reduce_scaler": 1, "xf_out": 16, "mx": 24, "xf": 25, "xf_rowsum": 26, "sm": 27}
