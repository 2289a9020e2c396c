"""E1 FinalizePersistentSignatureTT alone: tt.runtime_args per kernel; TIR unchanged."""

import tilelang  # noqa: F401
import tvm
from tvm import tirx
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import gemm, lower_until, run_pass
from tests.passes.helpers import accessor_entry, tt_attrs
from tilelang_tt.contract.vocabulary import MCAST_ARGS
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.layout import BufferLayout
from tilelang_tt.options import CompileOptions
from tilelang_tt.passes.finalize_persistent_signature_tt import (
    FinalizePersistentSignatureTT,
)

PASS = "FinalizePersistentSignatureTT"
TAIL = [{"name": "start_id", "kind": "start_id"}, {"name": "count", "kind": "count"}]


def args_of(func) -> list[dict]:
    """The kernel's runtime args in the plan's form; each has a variable of its own, named like it."""
    args = Attr.RUNTIME_ARGS.read(func)
    assert all(a.var.name == a.name and str(a.var.dtype) == "uint32" for a in args)
    assert len({a.var for a in args}) == len(args)
    return [a.to_json() for a in args]


def test_registered_under_spec_name():
    assert FinalizePersistentSignatureTT().info.name == PASS


def test_gemm_runtime_args():
    opts = CompileOptions(partition="contiguous")
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS, opts)
    after = run_pass(before, PASS, opts)
    for name in ("main_reader", "main_compute", "main_writer"):
        tvm.ir.assert_structural_equal(after[name].body, before[name].body)
    assert args_of(after["main_reader"]) == [{"name": "A_addr", "kind": "buffer_address", "buffer": "A"}, *TAIL]
    assert args_of(after["main_writer"]) == [  # the writer RISC reads B (BalanceDataMovementTT)
        {"name": "B_addr", "kind": "buffer_address", "buffer": "B"},
        {"name": "C_addr", "kind": "buffer_address", "buffer": "C"}, *TAIL]
    assert args_of(after["main_compute"]) == TAIL


def test_block_partition_and_multicast_args():
    """block: start_id, count, width; each data-movement kernel adds the multicast arguments of the
    block it reads: the reader those of A (shared along a core row), the writer those of B (along a
    column)."""
    on = CompileOptions(multicast="on")
    after = run_pass(lower_until(gemm(128, 128, 128, 64, 64, 32), PASS, on), PASS, on)
    work = [{"name": n, "kind": n} for n in ("start_id", "count", "width")]

    def mcast(cb):
        return [{"name": f"{cb}_mcast_{w}", "kind": "mcast", "cb": cb, "what": w} for w in MCAST_ARGS]

    assert args_of(after["main_reader"])[1:] == work + mcast("A_s")
    assert args_of(after["main_compute"]) == work
    assert args_of(after["main_writer"])[2:] == work + mcast("B_s")


def test_local_shard_extras():
    opts = CompileOptions(layouts={"C": BufferLayout(memory="L1", layout="height_sharded", shard_grid=(2, 1))})
    after = run_pass(lower_until(gemm(128, 128, 128, 64, 64, 32), PASS, opts), PASS, opts)
    extras = [{"name": n, "kind": n} for n in ("shard_y", "shard_x", "count", "width")]
    assert args_of(after["main_compute"]) == extras
    assert args_of(after["main_writer"]) == [
        {"name": "B_addr", "kind": "buffer_address", "buffer": "B"},
        {"name": "C_addr", "kind": "buffer_address", "buffer": "C"}, *extras]


def _arg(name, kind, **fields):
    """An argument as E1 records it: its plan form and the uint32 variable standing for it."""
    return {"name": name, "kind": kind, **fields, "var": tirx.Var(name, "uint32")}


def test_hand_written_reader_and_compute_signatures():
    """Hand-written TIR: the reader's address arguments follow its accessor slots (B's slot first),
    then its block of work, then the multicast arguments of A_s; compute gets the work only."""
    common = {"tt.work_policy": {"policy": "block", "stride": 1, "shard_blocks": [0, 0]},
              "tt.multicast": {"A_s": {"axis": "x", "sender_semaphore": 0, "receiver_semaphore": 1, "groups": [
                  {"cores": [[0, 0], [1, 0]], "near": [0, 0], "far": [1, 0]}]}}}
    reader = {**common, "tt.kernel_role": "reader", "tt.tensor_accessor": {
        "A": accessor_entry(kernel="reader", cta_offset=2, compile_time_args=[2, 2048]),
        "B": accessor_entry(kernel="reader", cta_offset=0, compile_time_args=[2, 2048])}}
    compute = {**common, "tt.kernel_role": "compute", "tt.tensor_accessor": {}}
    work = [_arg("start_id", "start_id"), _arg("count", "count"), _arg("width", "width")]
    mcast = [_arg(f"A_s_mcast_{what}", "mcast", cb="A_s", what=what) for what in (
        "sender", "sender_x", "sender_y", "start_x", "start_y", "end_x", "end_y", "receivers")]
    reader_args = [_arg("B_addr", "buffer_address", buffer="B"), _arg("A_addr", "buffer_address", buffer="A"),
                   *work, *mcast]
    compute_args = [_arg("start_id", "start_id"), _arg("count", "count"), _arg("width", "width")]

    @I.ir_module
    class Before:
        @T.prim_func
        def main_reader(A: T.Buffer((64, 64), "bfloat16"), B: T.Buffer((64, 64), "bfloat16")):
            T.func_attr(tt_attrs(reader))
            T.evaluate(0)

        @T.prim_func
        def main_compute(A: T.Buffer((64, 64), "bfloat16"), B: T.Buffer((64, 64), "bfloat16")):
            T.func_attr(tt_attrs(compute))
            T.evaluate(0)

    @I.ir_module
    class Expected:
        @T.prim_func
        def main_reader(A: T.Buffer((64, 64), "bfloat16"), B: T.Buffer((64, 64), "bfloat16")):
            T.func_attr(tt_attrs(reader | {"tt.runtime_args": reader_args}))
            T.evaluate(0)

        @T.prim_func
        def main_compute(A: T.Buffer((64, 64), "bfloat16"), B: T.Buffer((64, 64), "bfloat16")):
            T.func_attr(tt_attrs(compute | {"tt.runtime_args": compute_args}))
            T.evaluate(0)

    # every argument's variable is new: free in its function, mapped one to one
    tvm.ir.assert_structural_equal(FinalizePersistentSignatureTT()(Before), Expected, map_free_vars=True)


def test_hand_written_writer_of_a_reduction_gets_the_chain_arguments():
    """Split-K under the contiguous policy: the writer's address argument, start_id and count,
    then the NOC coordinates of its core and of the next (the blocks of a group signal them in
    turn, OrderReductionTT). ``tt.reduction`` holds the summed tensor and the summing axis, the
    core launch's variable (free where the attribute is compared: the comparison maps it)."""
    writer = {"tt.work_policy": {"policy": "contiguous", "stride": 1, "shard_blocks": [0, 0]},
              "tt.kernel_role": "writer",
              "tt.tensor_accessor": {"C": accessor_entry(kernel="writer", cta_offset=0, compile_time_args=[2, 2048])}}
    reduction = {"blocks": 2, "semaphore": 0}  # with the summed tensor and the summing axis, named below
    writer_args = [_arg("C_addr", "buffer_address", buffer="C"), _arg("start_id", "start_id"),
                   _arg("count", "count"), *[_arg(f"sum_{what}", "chain", what=what)
                                             for what in ("self_x", "self_y", "next_x", "next_y")]]

    @I.ir_module
    class Before:
        @T.prim_func
        def main_writer(C: T.Buffer((64, 64), "float32")):
            bz = T.env_thread("coreIdx.x")
            T.func_attr(tt_attrs(writer | {"tt.reduction": reduction | {"buffers": [C], "axes": [bz]}}))
            T.launch_thread(bz, 2)
            T.evaluate(0)

    @I.ir_module
    class Expected:
        @T.prim_func
        def main_writer(C: T.Buffer((64, 64), "float32")):
            bz = T.env_thread("coreIdx.x")
            T.func_attr(tt_attrs(writer | {"tt.reduction": reduction | {"buffers": [C], "axes": [bz]},
                                           "tt.runtime_args": writer_args}))
            T.launch_thread(bz, 2)
            T.evaluate(0)

    tvm.ir.assert_structural_equal(FinalizePersistentSignatureTT()(Before), Expected, map_free_vars=True)


def test_hand_written_local_shard_work_is_the_core_shard_and_its_extent():
    """local_shard: a core's work is its shard (row, column), the count of its blocks and the
    width of its shard in blocks; compute takes nothing else."""
    compute = {"tt.work_policy": {"policy": "local_shard", "stride": 1, "shard_blocks": [2, 1]},
               "tt.kernel_role": "compute", "tt.tensor_accessor": {}}
    compute_args = [_arg(kind, kind) for kind in ("shard_y", "shard_x", "count", "width")]

    @I.ir_module
    class Before:
        @T.prim_func
        def main_compute(C: T.Buffer((64, 64), "float32")):
            T.func_attr(tt_attrs(compute))
            T.evaluate(0)

    @I.ir_module
    class Expected:
        @T.prim_func
        def main_compute(C: T.Buffer((64, 64), "float32")):
            T.func_attr(tt_attrs(compute | {"tt.runtime_args": compute_args}))
            T.evaluate(0)

    tvm.ir.assert_structural_equal(FinalizePersistentSignatureTT()(Before), Expected, map_free_vars=True)
