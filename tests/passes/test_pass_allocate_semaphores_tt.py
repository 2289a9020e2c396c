"""C5 AllocateSemaphoresTT alone: the program's semaphores (tt.semaphores) and their ids in
tt.multicast and tt.reduction, decided once."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import gemm, lower_until, run_pass, split_k_gemm
from tests.passes.helpers import tt_attrs
from tilelang_tt.contract.plan import Semaphore
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.options import CompileOptions
from tilelang_tt.passes.allocate_semaphores_tt import AllocateSemaphoresTT

PASS = "AllocateSemaphoresTT"
GROUPS = [{"cores": [[0, 0], [1, 0]], "near": [0, 0], "far": [1, 0]}]


def multicast(axis: str, sender: int = -1, receiver: int = -1) -> dict:
    return {"axis": axis, "sender_semaphore": sender, "receiver_semaphore": receiver, "groups": GROUPS}


def test_registered_under_its_name():
    assert AllocateSemaphoresTT().info.name == PASS


def test_hand_written_two_per_multicast_cb_in_name_order():
    """B_s and A_s are multicast: A_s (first by name) takes semaphores 0 and 1, B_s 2 and 3; the table
    names each after its CB and role."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main():
            T.func_attr(tt_attrs({"tt.multicast": {"B_s": multicast("y"), "A_s": multicast("x")}}))
            T.evaluate(0)

    @I.ir_module
    class Expected:
        @T.prim_func
        def main():
            T.func_attr(tt_attrs({
                "tt.multicast": {"A_s": multicast("x", 0, 1), "B_s": multicast("y", 2, 3)},
                "tt.semaphores": [{"id": 0, "name": "A_s_sender", "initial_value": 0},
                                  {"id": 1, "name": "A_s_receiver", "initial_value": 0},
                                  {"id": 2, "name": "B_s_sender", "initial_value": 0},
                                  {"id": 3, "name": "B_s_receiver", "initial_value": 0}],
            }))
            T.evaluate(0)

    tvm.ir.assert_structural_equal(AllocateSemaphoresTT()(Before), Expected)


def test_hand_written_no_multicast_no_semaphores():
    @I.ir_module
    class Before:
        @T.prim_func
        def main():
            T.func_attr(tt_attrs({"tt.multicast": {}}))
            T.evaluate(0)

    @I.ir_module
    class Expected:
        @T.prim_func
        def main():
            T.func_attr(tt_attrs({"tt.multicast": {}, "tt.semaphores": []}))
            T.evaluate(0)

    tvm.ir.assert_structural_equal(AllocateSemaphoresTT()(Before), Expected)


def test_gemm_multicast_semaphores():
    on = CompileOptions(multicast="on")
    before = lower_until(gemm(256, 128, 64, 64, 64, 32), PASS, on)
    assert {(mc.sender_semaphore, mc.receiver_semaphore) for mc in Attr.MULTICAST.read(before["main"]).values()} == {
        (-1, -1)}
    after = run_pass(before, PASS, on)["main"]
    assert {cb: (mc.sender_semaphore, mc.receiver_semaphore) for cb, mc in Attr.MULTICAST.read(after).items()} == {
        "A_s": (0, 1), "B_s": (2, 3)}
    assert [s.name for s in Attr.SEMAPHORES.read(after)] == ["A_s_sender", "A_s_receiver", "B_s_sender", "B_s_receiver"]


def test_blocks_taking_turns_get_the_reduction_semaphore():
    """Split-K in 2 slices: the blocks adding into one region of C take turns on semaphore 0."""
    before = lower_until(split_k_gemm(64, 64, 128, 32, 32, 32, 2), PASS)
    assert Attr.REDUCTION.read(before["main"]).semaphore == -1
    after = run_pass(before, PASS)["main"]
    assert Attr.REDUCTION.read(after).semaphore == 0
    assert Attr.SEMAPHORES.read(after) == (Semaphore(0, "reduction"),)


def test_one_block_per_region_takes_no_turns():
    """Split-K in 1 slice: each region has one block, no reduction semaphore (the cores share A and B
    blocks instead: their semaphores only)."""
    on = CompileOptions(multicast="on")
    after = run_pass(lower_until(split_k_gemm(64, 64, 128, 32, 32, 32, 1), PASS, on), PASS, on)["main"]
    assert Attr.REDUCTION.read(after).semaphore == -1
    assert [s.name for s in Attr.SEMAPHORES.read(after)] == ["A_s_sender", "A_s_receiver", "B_s_sender", "B_s_receiver"]
