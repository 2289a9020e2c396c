"""SplitMeshTT alone: with a mesh of more than one chip the split grid dimension shrinks to one
device's panel, the tensors its coordinate indexes are one device's shard (same indices), the
others stay whole, and ``tt.mesh`` records the split; a 1x1 mesh leaves the kernel as it is."""

import tilelang  # noqa: F401
import tvm

from tests.kernels import bmm, lower_until, run_pass
from tests.passes.helpers import loop, nodes
from tilelang_tt.ir.attrs import Attr, MeshSplit, MeshTensor, get
from tilelang_tt.options import CompileOptions
from tilelang_tt.passes.split_mesh_tt import SplitMeshTT

PASS = "SplitMeshTT"
MESH = CompileOptions(mesh=(2, 2))


def test_registered_under_its_name():
    assert SplitMeshTT().info.name == PASS


def test_a_one_by_one_mesh_changes_nothing():
    before = lower_until(bmm(4, 64, 64, 64, 32, 32, 32, shared_b=True), PASS)
    after = run_pass(before, PASS)
    tvm.ir.assert_structural_equal(after, before)
    assert get(after["main"], Attr.MESH) is None


def test_the_split_dimension_and_the_sharded_tensors_become_one_devices():
    before = lower_until(bmm(8, 64, 64, 96, 32, 32, 32, shared_b=True), PASS, MESH)
    after = run_pass(before, PASS, MESH)["main"]
    assert int(loop(after, "bz").extent) == 2 and int(loop(before["main"], "bz").extent) == 8
    shapes = {b.name: [int(s) for s in b.shape] for b in after.buffer_map.values()}
    assert shapes == {"A": [2, 64, 96], "B": [96, 64], "C": [2, 64, 64]}
    # the parameters' new buffers are the ones the body uses (identity by object), indices unchanged
    params = {b.name: b for b in after.buffer_map.values()}
    loads = nodes(after.body, lambda n: isinstance(n, tvm.tirx.BufferLoad) and n.buffer.name in params)
    assert loads and all(n.buffer.same_as(params[n.buffer.name]) for n in loads)
    assert MeshSplit.from_attr(get(after, Attr.MESH)) == MeshSplit((2, 2), "blockIdx.z", 16, (
        MeshTensor("A", "sharded", 0, (8, 64, 96)), MeshTensor("B", "replicated", -1, (96, 64)),
        MeshTensor("C", "sharded", 0, (8, 64, 64))))
