"""E1 FinalizePersistentSignatureTT alone: tt.runtime_args per kernel; TIR unchanged."""

import tilelang  # noqa: F401
import tvm

from tests.kernels import gemm, lower_until, run_pass
from tilelang_tt.attrs import MCAST_ARGS, runtime_args
from tilelang_tt.layout import BufferLayout
from tilelang_tt.options import CompileOptions
from tilelang_tt.passes.finalize_persistent_signature_tt import (
    FinalizePersistentSignatureTT,
)

PASS = "FinalizePersistentSignatureTT"
TAIL = [{"name": "start_id", "kind": "start_id"}, {"name": "count", "kind": "count"}]


def args_of(func) -> list[dict]:
    """The kernel's runtime args in the plan's form; each has a variable of its own, named like it."""
    args = runtime_args(func)
    assert all(a.var.name == a.name and str(a.var.dtype) == "uint32" for a in args)
    assert len({a.var for a in args}) == len(args)
    return [a.to_dict() for a in args]


def test_registered_under_spec_name():
    assert FinalizePersistentSignatureTT().info.name == PASS


def test_gemm_runtime_args():
    opts = CompileOptions(partition="contiguous")
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS, opts)
    after = run_pass(before, PASS, opts)
    for name in ("main_reader", "main_compute", "main_writer"):
        tvm.ir.assert_structural_equal(after[name].body, before[name].body)
    assert args_of(after["main_reader"]) == [
        {"name": "A_addr", "kind": "buffer_address", "buffer": "A"},
        {"name": "B_addr", "kind": "buffer_address", "buffer": "B"}, *TAIL]
    assert args_of(after["main_writer"]) == [
        {"name": "C_addr", "kind": "buffer_address", "buffer": "C"}, *TAIL]
    assert args_of(after["main_compute"]) == TAIL


def test_block_partition_and_multicast_args():
    """block: start_id, count, width; the reader adds the multicast arguments of A (shared along a core
    row) and B (along a column), in CB name order."""
    after = run_pass(lower_until(gemm(128, 128, 128, 64, 64, 32), PASS), PASS)
    work = [{"name": n, "kind": n} for n in ("start_id", "count", "width")]
    mcast = [{"name": f"{cb}_mcast_{w}", "kind": "mcast", "cb": cb, "what": w} for cb in ("A_s", "B_s")
             for w in MCAST_ARGS]
    assert args_of(after["main_reader"])[2:] == work + mcast
    assert args_of(after["main_compute"]) == work
    assert args_of(after["main_writer"])[1:] == work


def test_local_shard_extras():
    opts = CompileOptions(layouts={"C": BufferLayout(memory="L1", layout="height_sharded", shard_grid=(2, 1))})
    after = run_pass(lower_until(gemm(128, 128, 128, 64, 64, 32), PASS, opts), PASS, opts)
    extras = [{"name": n, "kind": n} for n in ("shard_y", "shard_x", "count", "width")]
    assert args_of(after["main_compute"]) == extras
    assert args_of(after["main_writer"]) == [
        {"name": "C_addr", "kind": "buffer_address", "buffer": "C"}, *extras]
