"""SplitMeshTT after ChooseMeshAxisTT (which chose the grid dimension, ``tt.mesh_axis``): with a mesh of
more than one chip the split grid dimension shrinks to one device's panel, the tensors its coordinate indexes are one device's shard (same indices), the
others stay whole, and ``tt.mesh`` records the split; a 1x1 mesh leaves the kernel as it is."""

import re

import pytest
import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import bmm, lower_until, run_pass
from tests.passes.helpers import loop, nodes, param, tl, tt_attrs
from tilelang_tt.contract.mesh import MeshCollective, MeshSplit, MeshTensor
from tilelang_tt.errors import TTCompileError
from tilelang_tt.ir.attrs import Attr, Reduction
from tilelang_tt.ir.common import replace_buffers
from tilelang_tt.options import CompileOptions
from tilelang_tt.passes.choose_mesh_axis_tt import ChooseMeshAxisTT
from tilelang_tt.passes.split_mesh_tt import SplitMeshTT

PASS = "SplitMeshTT"
MESH = CompileOptions(mesh=(2, 2))


def test_registered_under_its_name():
    assert SplitMeshTT().info.name == PASS


def split(module, mesh, reduce=None):
    """``module`` through ChooseMeshAxisTT (the ``tt.mesh_axis`` SplitMeshTT reads), then SplitMeshTT."""
    return SplitMeshTT(mesh=mesh, reduce=reduce)(ChooseMeshAxisTT(mesh=mesh, reduce=reduce)(module))


def test_the_chosen_axis_is_recorded_in_tt_mesh_and_dropped():
    before = lower_until(bmm(4, 64, 64, 64, 32, 32, 32), PASS, CompileOptions(mesh=(1, 2)))
    assert Attr.MESH_AXIS.read(before["main"]) == "blockIdx.z"
    after = run_pass(before, PASS, CompileOptions(mesh=(1, 2)))["main"]
    assert Attr.MESH.read(after).axis == "blockIdx.z" and not Attr.MESH_AXIS.has(after)


def test_a_one_by_one_mesh_changes_nothing():
    before = lower_until(bmm(4, 64, 64, 64, 32, 32, 32, shared_b=True), PASS)
    after = run_pass(before, PASS)
    tvm.ir.assert_structural_equal(after, before)
    assert not Attr.MESH.has(after["main"])


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
    assert Attr.MESH.read(after) == MeshSplit((2, 2), "blockIdx.z", 16, (
        MeshTensor("A", "sharded", 0, (8, 64, 96)), MeshTensor("B", "replicated", -1, (96, 64)),
        MeshTensor("C", "sharded", 0, (8, 64, 64))))


# -- hand-written TIR -------------------------------------------------------------------------------


def _sharded(name, dim, shape):
    return {"buffer": name, "distribution": "sharded", "dim": dim, "shape": list(shape)}


def _replicated(name, shape):
    return {"buffer": name, "distribution": "replicated", "dim": -1, "shape": list(shape)}


# A and C indexed by bz (blockIdx.z) in dimension 0, B read whole
@I.ir_module
class Batch:
    @T.prim_func
    def main(A: T.Buffer((4, 32, 32), "bfloat16"), B: T.Buffer((32, 32), "bfloat16"),
             C: T.Buffer((4, 32, 32), "bfloat16")):
        for bz in T.thread_binding(4, thread="blockIdx.z"):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                b = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                c = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="local.fragment")
                tl.tileop.copy(tl.region(A[bz, 0, 0], 1, 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                tl.tileop.copy(tl.region(B[0, 0], 1, 32, 32), tl.region(b[0, 0], 2, 32, 32))
                for i in T.parallel(32):
                    for j in T.parallel(32):
                        c[i, j] = a[i, j] + b[i, j]
                tl.tileop.copy(tl.region(c[0, 0], 1, 32, 32), tl.region(C[bz, 0, 0], 2, 1, 32, 32))


def test_hand_written_batch_split_over_two_chips():
    """mesh=(1, 2): ``bz`` (blockIdx.z, 4 blocks, the outermost row dimension) splits into 2
    panels; A and C, indexed by ``bz`` in dimension 0, are one chip's shard (2 of 4 matrices), B,
    read whole, is replicated; the indices stay (``bz`` counts the chip's panel from 0)."""
    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((2, 32, 32), "bfloat16"), B: T.Buffer((32, 32), "bfloat16"),
                 C: T.Buffer((2, 32, 32), "bfloat16")):
            T.func_attr(tt_attrs({"tt.mesh": {"shape": [1, 2], "axis": "blockIdx.z", "blocks": 4, "tensors": [
                _sharded("A", 0, (4, 32, 32)), _replicated("B", (32, 32)), _sharded("C", 0, (4, 32, 32))]}}))
            for bz in T.thread_binding(2, thread="blockIdx.z"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                    b = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                    c = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="local.fragment")
                    tl.tileop.copy(tl.region(A[bz, 0, 0], 1, 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                    tl.tileop.copy(tl.region(B[0, 0], 1, 32, 32), tl.region(b[0, 0], 2, 32, 32))
                    for i in T.parallel(32):
                        for j in T.parallel(32):
                            c[i, j] = a[i, j] + b[i, j]
                    tl.tileop.copy(tl.region(c[0, 0], 1, 32, 32), tl.region(C[bz, 0, 0], 2, 1, 32, 32))

    tvm.ir.assert_structural_equal(split(Batch, (1, 2)), Expected)


def test_tensors_are_told_apart_by_object_not_by_name():
    """B renamed `A` (two tensors of one name): the B read whole is still not the A read by panel: A and C are
    sharded, the other `A` replicated, as before."""
    func = Batch["main"]
    b = func.buffer_map[func.params[1]]
    named_a = tvm.tirx.decl_buffer(b.shape, b.dtype, "A", data=tvm.tirx.Var("A", b.data.type_annotation))
    body = tvm.tirx.stmt_functor.substitute(replace_buffers(func.body, {b: named_a}), {b.data: named_a.data})
    buffer_map = {p: named_a if buf.same_as(b) else buf for p, buf in func.buffer_map.items()}
    renamed = tvm.tirx.PrimFunc(func.params, body, func.ret_type, buffer_map, func.attrs)
    after = split(tvm.IRModule({"main": renamed}), (1, 2))["main"]
    assert [(t.buffer, t.distribution, t.dim) for t in Attr.MESH.read(after).tensors] == [
        ("A", "sharded", 0), ("A", "replicated", -1), ("C", "sharded", 0)]


def test_hand_written_one_block_row_splits_its_columns():
    """A tensor-parallel product: one block row of 4 column blocks (blockIdx.x) on mesh=(2, 1):
    each chip takes 2 column blocks, B and C (indexed ``bx * 32`` in dimension 1) are sharded by
    columns, A replicated."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32, 32), "bfloat16"), B: T.Buffer((32, 128), "bfloat16"),
                 C: T.Buffer((32, 128), "bfloat16")):
            for bx in T.thread_binding(4, thread="blockIdx.x"):
                for by in T.thread_binding(1, thread="blockIdx.y"):
                    with T.sblock("tilelang_root"):
                        T.reads()
                        T.writes()
                        a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                        b = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                        c = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="local.fragment")
                        tl.tileop.copy(tl.region(A[0, 0], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                        tl.tileop.copy(tl.region(B[0, bx * 32], 1, 32, 32), tl.region(b[0, 0], 2, 32, 32))
                        for i in T.parallel(32):
                            for j in T.parallel(32):
                                c[i, j] = a[i, j] * b[i, j]
                        tl.tileop.copy(tl.region(c[0, 0], 1, 32, 32), tl.region(C[0, bx * 32], 2, 32, 32))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((32, 32), "bfloat16"), B: T.Buffer((32, 64), "bfloat16"),
                 C: T.Buffer((32, 64), "bfloat16")):
            T.func_attr(tt_attrs({"tt.mesh": {"shape": [2, 1], "axis": "blockIdx.x", "blocks": 4, "tensors": [
                _replicated("A", (32, 32)), _sharded("B", 1, (32, 128)), _sharded("C", 1, (32, 128))]}}))
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                for by in T.thread_binding(1, thread="blockIdx.y"):
                    with T.sblock("tilelang_root"):
                        T.reads()
                        T.writes()
                        a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                        b = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                        c = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="local.fragment")
                        tl.tileop.copy(tl.region(A[0, 0], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                        tl.tileop.copy(tl.region(B[0, bx * 32], 1, 32, 32), tl.region(b[0, 0], 2, 32, 32))
                        for i in T.parallel(32):
                            for j in T.parallel(32):
                                c[i, j] = a[i, j] * b[i, j]
                        tl.tileop.copy(tl.region(c[0, 0], 1, 32, 32), tl.region(C[0, bx * 32], 2, 32, 32))

    tvm.ir.assert_structural_equal(split(Before, (2, 1)), Expected)


def test_hand_written_split_the_chips_cannot_take_is_an_error():
    """``bz`` as a loop bound would count each chip's panel from 0: refused at its line with a fix."""
    blocks = 4

    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((4, 32, 64), "bfloat16"), C: T.Buffer((4, 32, 32), "bfloat16")):
            for bz in T.thread_binding(blocks, thread="blockIdx.z"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    a = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                    for k in range(bz % 2 + 1):
                        tl.tileop.copy(tl.region(A[bz, 0, k * 32], 1, 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                    tl.tileop.copy(tl.region(a[0, 0], 1, 32, 32), tl.region(C[bz, 0, 0], 2, 1, 32, 32))

    message = "the split block coordinate `bz` is used here other than as a tensor index"
    with pytest.raises(TTCompileError, match=re.escape(message)) as info:
        split(Before, (1, 2))
    assert info.value.pass_name == PASS and info.value.hint


# -- blocks summing across the chips ---------------------------------------------------------------


def _summing(module, blocks: int):
    """``module`` with the ``tt.reduction`` LowerAtomicAddTT records for it: C summed along ``bz``."""
    func = module["main"]
    summed = Reduction((param(func, "C"),), (loop(func, "bz").loop_var,), blocks)
    return tvm.IRModule({"main": Attr.REDUCTION.write(func, summed)})


def _split_k_before():
    """A split-K product as LowerAtomicAddTT leaves it: 4 K slices ``bz`` (blockIdx.x, the summing
    axis) of 2 block rows ``by`` read-modify-write C's row block."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64, 128), "float32"), C: T.Buffer((64, 32), "float32")):
            for by in T.thread_binding(2, thread="blockIdx.z"):
                for bz in T.thread_binding(4, thread="blockIdx.x"):
                    with T.sblock("tilelang_root"):
                        T.reads()
                        T.writes()
                        a = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                        c = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                        s = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                        tl.tileop.copy(tl.region(A[by * 32, bz * 32], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                        tl.tileop.copy(tl.region(C[by * 32, 0], 1, 32, 32), tl.region(c[0, 0], 2, 32, 32))
                        for i in T.parallel(32):
                            for j in T.parallel(32):
                                s[i, j] = c[i, j] + a[i, j]
                        tl.tileop.copy(tl.region(s[0, 0], 1, 32, 32), tl.region(C[by * 32, 0], 2, 32, 32))

    return _summing(Before, 4)


def _partial(name, shape):
    return {"buffer": name, "distribution": "partial", "dim": -1, "shape": list(shape)}


@pytest.mark.parametrize("reduce", ["all_reduce", "reduce_scatter"])
def test_hand_written_split_k_is_summed_across_the_chips(reduce):
    """mesh=(1, 2) with ``reduce``: the summing ``bz`` (blockIdx.x) splits, not the rows ``by``; A (its
    K columns indexed by ``bz``) is sharded, C holds each chip's partial sum (indices unchanged), the
    collective records how the partials are combined, and each chip sums 2 of the 4 blocks."""
    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 32), "float32")):
            T.func_attr(tt_attrs({"tt.mesh": {"shape": [1, 2], "axis": "blockIdx.x", "blocks": 4, "tensors": [
                _sharded("A", 1, (64, 128)), _partial("C", (64, 32))],
                "collective": {"kind": reduce, "buffer": "C"}}}))
            for by in T.thread_binding(2, thread="blockIdx.z"):
                for bz in T.thread_binding(2, thread="blockIdx.x"):
                    with T.sblock("tilelang_root"):
                        T.reads()
                        T.writes()
                        a = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                        c = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                        s = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                        tl.tileop.copy(tl.region(A[by * 32, bz * 32], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                        tl.tileop.copy(tl.region(C[by * 32, 0], 1, 32, 32), tl.region(c[0, 0], 2, 32, 32))
                        for i in T.parallel(32):
                            for j in T.parallel(32):
                                s[i, j] = c[i, j] + a[i, j]
                        tl.tileop.copy(tl.region(s[0, 0], 1, 32, 32), tl.region(C[by * 32, 0], 2, 32, 32))

    after = split(_split_k_before(), (1, 2), reduce)["main"]
    tvm.ir.assert_structural_equal(after.without_attr(Attr.REDUCTION.key), Expected["main"])
    summed = Attr.REDUCTION.read(after)
    assert summed.blocks == 2 and summed.buffers[0].same_as(param(after, "C"))
    assert summed.axes[0].same_as(loop(after, "bz").loop_var)
    collective = Attr.MESH.read(after).collective
    assert collective == MeshCollective.of(reduce, "C", (1, 2))
    assert collective.line == ((0, 0), (0, 1)) and collective.links == (((0, 0), (0, 1)),)


def test_without_mesh_reduce_the_rows_split_and_nothing_is_summed_across_chips():
    after = split(_split_k_before(), (1, 2))["main"]
    mesh = Attr.MESH.read(after)
    assert mesh.axis == "blockIdx.z" and mesh.collective is None
    assert Attr.REDUCTION.read(after).blocks == 4


def test_the_line_of_a_two_by_four_mesh_steps_between_neighbours():
    collective = MeshCollective.of("reduce_scatter", "C", (2, 4))
    assert collective.line == ((0, 0), (0, 1), (0, 2), (0, 3), (1, 3), (1, 2), (1, 1), (1, 0))
    assert all(abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1 for a, b in collective.links)
    # panel p stays on device p (row-major): its owner is that device's position on the line
    assert [collective.line[q] for q in collective.owners] == [(r, c) for r in range(2) for c in range(4)]
    assert MeshCollective.of("all_reduce", "C", (2, 4)).owners == tuple(range(8))


@pytest.mark.parametrize("case", ["rows", "plain store"])
def test_hand_written_sums_the_fabric_cannot_combine_are_errors(case):
    """reduce_scatter of 64 rows over 4 chips (16 rows: no whole tile rows each); C also stored plainly
    (not a read-modify-write), which the combine after every chip's program cannot order with the sum."""
    before = _split_k_before()
    mesh, reduce = ((1, 4), "reduce_scatter") if case == "rows" else ((1, 2), "all_reduce")
    if case == "plain store":
        @I.ir_module
        class Stored:
            @T.prim_func
            def main(A: T.Buffer((64, 128), "float32"), C: T.Buffer((64, 32), "float32")):
                for by in T.thread_binding(2, thread="blockIdx.z"):
                    for bz in T.thread_binding(4, thread="blockIdx.x"):
                        with T.sblock("tilelang_root"):
                            T.reads()
                            T.writes()
                            a = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                            tl.tileop.copy(tl.region(A[by * 32, bz * 32], 1, 32, 32), tl.region(a[0, 0], 2, 32, 32))
                            tl.tileop.copy(tl.region(a[0, 0], 1, 32, 32), tl.region(C[by * 32, 0], 2, 32, 32))

        before = _summing(Stored, 4)
    message = {"rows": "its 64 rows ([64, 32]) do not divide into 4 panels of whole tile rows",
               "plain store": "`C` is written here besides the T.atomic_add sums"}[case]
    with pytest.raises(TTCompileError, match=re.escape(message)) as info:
        split(before, mesh, reduce)
    assert info.value.pass_name == PASS and info.value.hint


def test_replicate_leaves_the_kernel_whole_and_every_tensor_replicated():
    options = CompileOptions(mesh=(2, 4), mesh_axis="replicate")
    before = lower_until(bmm(4, 64, 64, 96, 32, 32, 32, shared_b=True), PASS, options)
    after = run_pass(before, PASS, options)["main"]
    tvm.ir.assert_structural_equal(after.body, before["main"].body)
    assert [b.same_as(a) for b, a in zip(after.buffer_map.values(), before["main"].buffer_map.values(), strict=True)] \
        == [True] * 3
    assert Attr.MESH.read(after) == MeshSplit((2, 4), "replicate", 8, (
        MeshTensor("A", "replicated", -1, (4, 64, 96)), MeshTensor("B", "replicated", -1, (96, 64)),
        MeshTensor("C", "replicated", -1, (4, 64, 64))))
    assert not Attr.MESH_AXIS.has(after)


def test_replicate_refuses_an_output_main_cpp_cannot_read_back_per_device():
    options = CompileOptions(mesh=(1, 2), mesh_axis="replicate", storage={"C": "bfloat8_b"})
    with pytest.raises(TTCompileError, match=r"`C` is written by every one of the mesh's 2 devices "
                                             r"\(mesh_axis='replicate'\)") as info:
        run_pass(lower_until(bmm(4, 64, 64, 96, 32, 32, 32), PASS, options), PASS, options)
    assert info.value.pass_name == PASS and "drop `C` from layouts= and storage=" in info.value.hint
