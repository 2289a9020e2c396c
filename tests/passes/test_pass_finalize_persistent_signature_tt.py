"""E1 FinalizePersistentSignatureTT alone: tt.runtime_args per kernel; TIR unchanged."""

import tilelang  # noqa: F401
import tvm

from tests.kernels import gemm, lower_until, run_pass
from tilelang_tt.attrs import MCAST_ARGS, Attr, get
from tilelang_tt.layout import BufferLayout
from tilelang_tt.options import CompileOptions
from tilelang_tt.passes.finalize_persistent_signature_tt import (
    FinalizePersistentSignatureTT,
)

PASS = "FinalizePersistentSignatureTT"
TAIL = [{"name": "start_id", "kind": "start_id"}, {"name": "count", "kind": "count"}]


def test_registered_under_spec_name():
    assert FinalizePersistentSignatureTT().info.name == PASS


def test_gemm_runtime_args():
    opts = CompileOptions(partition="contiguous")
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS, opts)
    after = run_pass(before, PASS, opts)
    for name in ("main_reader", "main_compute", "main_writer"):
        tvm.ir.assert_structural_equal(after[name].body, before[name].body)
    assert get(after["main_reader"], Attr.RUNTIME_ARGS) == [
        {"name": "A_addr", "kind": "buffer_address", "buffer": "A"},
        {"name": "B_addr", "kind": "buffer_address", "buffer": "B"}, *TAIL]
    assert get(after["main_writer"], Attr.RUNTIME_ARGS) == [
        {"name": "C_addr", "kind": "buffer_address", "buffer": "C"}, *TAIL]
    assert get(after["main_compute"], Attr.RUNTIME_ARGS) == TAIL


def test_block_partition_and_multicast_args():
    """block: start_id, count, width; the reader adds the multicast arguments of A (shared along a core
    row) and B (along a column), in CB name order."""
    after = run_pass(lower_until(gemm(128, 128, 128, 64, 64, 32), PASS), PASS)
    work = [{"name": n, "kind": n} for n in ("start_id", "count", "width")]
    mcast = [{"name": f"{cb}_mcast_{w}", "kind": "mcast", "cb": cb, "what": w} for cb in ("A_s", "B_s")
             for w in MCAST_ARGS]
    assert get(after["main_reader"], Attr.RUNTIME_ARGS)[2:] == work + mcast
    assert get(after["main_compute"], Attr.RUNTIME_ARGS) == work
    assert get(after["main_writer"], Attr.RUNTIME_ARGS)[1:] == work


def test_local_shard_extras():
    opts = CompileOptions(layouts={"C": BufferLayout(memory="L1", layout="height_sharded", shard_grid=(2, 1))})
    after = run_pass(lower_until(gemm(128, 128, 128, 64, 64, 32), PASS, opts), PASS, opts)
    extras = [{"name": n, "kind": n} for n in ("shard_y", "shard_x", "count", "width")]
    assert get(after["main_compute"], Attr.RUNTIME_ARGS) == extras
    assert get(after["main_writer"], Attr.RUNTIME_ARGS) == [
        {"name": "C_addr", "kind": "buffer_address", "buffer": "C"}, *extras]
