"""C4 BalanceDataMovementTT alone: which data-movement RISC reads each block; TIR unchanged."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import eltwise, gemm, lower_until, run_pass, split_k_gemm
from tests.passes.helpers import cb_entry, tl, tt, tt_attrs
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.ir.dataflow import movers
from tilelang_tt.options import CompileOptions
from tilelang_tt.passes.balance_data_movement_tt import BalanceDataMovementTT

PASS = "BalanceDataMovementTT"


def test_registered_under_spec_name():
    assert BalanceDataMovementTT().info.name == PASS


def _graph(b_reader: str) -> dict:
    return tt_attrs({
        "tt.cb_desc": {"A_s": cb_entry(0, producer="reader", consumer="compute", buffer="A"),
                       "B_s": cb_entry(1, producer=b_reader, consumer="compute", buffer="B"),
                       "C_l": cb_entry(16, producer="compute", consumer="writer", buffer="C")},
        "tt.tile_dfg": {"A_s": {"producer": "reader", "consumers": ["compute"], "buffer": "A"},
                        "B_s": {"producer": b_reader, "consumers": ["compute"], "buffer": "B"},
                        "C_l": {"producer": "compute", "consumers": ["writer"], "buffer": "C"}},
    })


def _gemm(b_reader: str) -> tvm.IRModule:
    """A K loop of two steps reading A and B and gemming into C, C written after it; B_s read by
    ``b_reader``."""
    @I.ir_module
    class Module:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "bfloat16"), B: T.Buffer((64, 64), "bfloat16"),
                 C: T.Buffer((32, 64), "bfloat16")):
            T.func_attr(_graph(b_reader))
            bx = T.launch_thread("coreIdx.x", 2)
            A_s = T.alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
            B_s = T.alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
            C_l = T.alloc_buffer((32, 32), "float32", scope="local.fragment")
            for k in range(2):
                tt.read_to_cb(tl.region(A[0, k * 32], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))
                tt.read_to_cb(tl.region(B[k * 32, bx * 32], 1, 32, 32), tl.region(B_s[0, 0], 2, 32, 32))
                tt.mm.mma(A_s.data, B_s.data, C_l.data, 0, 0, 1, 1, False, k == 0)
            tt.write_from_cb(tl.region(C_l[0, 0], 1, 32, 32), tl.region(C[0, bx * 32], 2, 32, 32))

    return Module


def test_hand_written_gemm_gives_b_to_the_writer():
    """A K loop reads A and B (a tile each, twice: 4 KiB each) and the writer writes C after it (2
    KiB): A, the first of the two equal reads, stays on the reader; B goes to the writer, whose write
    is outside the K loop (4 + 2 KiB against 4)."""
    Before, Expected = _gemm("reader"), _gemm("writer")

    after = BalanceDataMovementTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert movers(after["main"]) == {"A_s": "reader", "B_s": "writer"}
    assert movers(after["main"])["a block the graph does not list"] == "reader"


def test_hand_written_reads_in_the_loop_of_the_write_stay_on_the_reader():
    """The write is inside the loop of the reads (an element-wise kernel): the writer would read the
    next block only after writing this one, so nothing moves."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "bfloat16"), B: T.Buffer((64, 64), "bfloat16"),
                 C: T.Buffer((32, 64), "bfloat16")):
            T.func_attr(_graph("reader"))
            A_s = T.alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
            B_s = T.alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
            C_l = T.alloc_buffer((32, 32), "float32", scope="local.fragment")
            for k in range(2):
                tt.read_to_cb(tl.region(A[0, k * 32], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))
                tt.read_to_cb(tl.region(B[k * 32, 0], 1, 32, 32), tl.region(B_s[0, 0], 2, 32, 32))
                tt.write_from_cb(tl.region(C_l[0, 0], 1, 32, 32), tl.region(C[0, k * 32], 2, 32, 32))

    tvm.ir.assert_structural_equal(BalanceDataMovementTT()(Before), Before)


def test_hand_written_unknown_trip_count_keeps_every_read_on_the_reader():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "bfloat16"), B: T.Buffer((64, 64), "bfloat16"),
                 C: T.Buffer((32, 64), "bfloat16"), n: T.int32):
            T.func_attr(_graph("reader"))
            A_s = T.alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
            B_s = T.alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
            C_l = T.alloc_buffer((32, 32), "float32", scope="local.fragment")
            for k in range(n):
                tt.read_to_cb(tl.region(A[0, k * 32], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))
                tt.read_to_cb(tl.region(B[k * 32, 0], 1, 32, 32), tl.region(B_s[0, 0], 2, 32, 32))
            tt.write_from_cb(tl.region(C_l[0, 0], 1, 32, 32), tl.region(C[0, 0], 2, 32, 32))

    tvm.ir.assert_structural_equal(BalanceDataMovementTT()(Before), Before)


def test_multicast_gemm_gives_b_to_the_writer():
    on = CompileOptions(multicast="on")
    after = run_pass(lower_until(gemm(128, 128, 128, 64, 64, 32), PASS, on), PASS, on)["main"]
    graph, cbs = Attr.TILE_DFG.read(after), Attr.CB_DESC.read(after)
    assert (graph["A_s"].producer, graph["B_s"].producer) == ("reader", "writer")
    assert (cbs["A_s"].producer, cbs["B_s"].producer) == ("reader", "writer")


def test_flash_attention_gives_v_to_the_writer_beside_its_reduction_scaler():
    """The reductions' scaler tile (a CB of kind "scaler", the reader's) does not keep K and V on one
    RISC: K (read first, as heavy) stays the reader's, V goes to the writer; Q, read once outside
    the K/V loop, stays."""
    from tests.op_kernels import flash_attention

    on = CompileOptions(multicast="on")  # K and V multicast to the core row
    after = run_pass(lower_until(flash_attention(512, 64, bn=128), PASS, on), PASS, on)["main"]
    graph = Attr.TILE_DFG.read(after)
    assert graph["reduce_scaler"].kind == "scaler"
    assert [graph[b].producer for b in ("Q_s", "K_s", "V_s", "reduce_scaler")] == [
        "reader", "reader", "writer", "reader"]


def test_element_wise_and_split_k_keep_their_reads_on_the_reader():
    """Element-wise: the reads share the loop of the write. Split-K: the blocks take turns summing
    into C (tt.reduction), so the writer's order is OrderReductionTT's to decide."""
    for func in (eltwise("add", 64, 64, 32, 32), split_k_gemm(128, 128, 256, 64, 64, 64, 2)):
        before = lower_until(func, PASS)
        tvm.ir.assert_structural_equal(run_pass(before, PASS), before)
