"""A mesh of chips (compile option ``mesh=(rows, cols)``, SplitMeshTT): the block grid's rows split
into one contiguous panel per device, each tensor sharded across the devices along the dimension the
split coordinate indexes, or replicated; the plan's ``mesh`` records it per device. main.cpp opens
the mesh (MeshDevice::create), distributes the tensors (sharded / replicated MeshBuffers) and runs
one MeshWorkload over it; the emulator runs a device model per chip, compared with torch."""

import json
from pathlib import Path

import jsonschema
import pytest
import tilelang
import tilelang.language as T
import torch
import tvm

import tilelang_tt
from tests.compiler.test_ops import assert_close
from tests.compiler.test_split_k import two_summing_axes
from tests.kernels import bmm, gemm
from tests.op_kernels import flash_attention, layernorm
from tilelang_tt import TTCompileError
from tilelang_tt.contract.plan import SCHEMA_PATH, Plan
from tilelang_tt.contract.reading import PlanError
from tilelang_tt.options import OptionError
from tilelang_tt.plan_view import summary
from tilelang_tt.tools.host_symbols import check_main_cpp

SOURCE = Path(__file__).read_text()


def line_of(marker: str) -> int:
    return next(i for i, text in enumerate(SOURCE.splitlines(), 1) if text.rstrip().endswith(f"# LINE: {marker}"))


def bf16(*shape, seed):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(torch.bfloat16)


def covered_once(plan: Plan) -> None:
    """Every block of the whole grid is computed by exactly one core of one device (and the plan
    is one the schema admits)."""
    jsonschema.validate(plan.to_json(), json.loads(SCHEMA_PATH.read_text()))
    mesh = plan.mesh
    rows, cols = plan.block_grid
    blocks = [b for device in mesh.devices for b in device.blocks(plan.work_policy, (rows, cols), mesh.columns)]
    whole = (rows, mesh.blocks) if mesh.columns else (mesh.blocks, cols)
    assert sorted(blocks) == [(r, c) for r in range(whole[0]) for c in range(whole[1])]


@pytest.mark.parametrize("mesh", [(1, 2), (2, 4)])
def test_batched_gemm_is_split_by_batch_across_the_mesh(mesh):
    batch, M, N, K = 8, 64, 64, 64
    artifacts = tilelang_tt.compile(bmm(batch, M, N, K, 32, 32, 32), mesh=mesh)
    plan = artifacts.plan
    devices = mesh[0] * mesh[1]
    assert plan.mesh.shape == mesh and plan.mesh.axis == "blockIdx.z"
    assert [d.coord for d in plan.mesh.devices] == [(r, c) for r in range(mesh[0]) for c in range(mesh[1])]
    assert plan.block_grid == (batch // devices * 2, 2) and plan.mesh.blocks == batch * 2
    assert [(t.distribution, t.dim) for t in plan.mesh.tensors] == [("sharded", 0)] * 3
    assert [b.shape for b in plan.buffers] == [(batch // devices, 64, 64)] * 3
    covered_once(plan)
    a, b = bf16(batch, M, K, seed=1), bf16(batch, K, N, seed=2)
    c = artifacts.run(a, b)
    assert_close(c.float(), torch.bmm(a.float(), b.float()), 2.0 ** -7)
    counters = artifacts.last_counters
    assert len(counters["devices"]) == devices
    # each device reads its shards of A and B once and writes its shard of C: the whole once in total
    shard_bytes = a.numel() * 2 // devices
    assert all(d["total"]["dram_bytes_written"] == shard_bytes for d in counters["devices"])
    assert counters["total"]["dram_bytes_written"] == c.numel() * 2
    assert counters["timing"]["cycles"] == max(d["timing"]["cycles"] for d in counters["devices"])


def test_a_weight_every_block_row_reads_is_replicated():
    batch, M, N, K = 4, 64, 64, 96
    artifacts = tilelang_tt.compile(bmm(batch, M, N, K, 32, 32, 32, shared_b=True), mesh=(1, 2))
    tensors = {t.buffer: t for t in artifacts.plan.mesh.tensors}
    assert (tensors["A"].distribution, tensors["A"].dim) == ("sharded", 0)
    assert (tensors["B"].distribution, tensors["B"].dim, tensors["B"].shape) == ("replicated", -1, (K, N))
    covered_once(artifacts.plan)
    a, b = bf16(batch, M, K, seed=3), bf16(K, N, seed=4)
    c = artifacts.run(a, b)
    assert_close(c.float(), a.float() @ b.float(), 2.0 ** -7)


@pytest.mark.parametrize("mesh", [(1, 2), (2, 4)])
def test_multi_head_attention_is_split_by_head_across_the_mesh(mesh):
    heads, seq, dim = 8, 128, 64
    artifacts = tilelang_tt.compile(flash_attention(seq, dim, batch=1, heads=heads), mesh=mesh)
    plan = artifacts.plan
    devices = mesh[0] * mesh[1]
    # batch 1: the heads (blockIdx.y) are split; Q, K, V and O sharded along their head dimension
    assert plan.mesh.axis == "blockIdx.y"
    assert [(t.distribution, t.dim) for t in plan.mesh.tensors] == [("sharded", 1)] * 4
    assert plan.buffers[0].shape == (1, heads // devices, seq, dim)
    covered_once(plan)
    q, k, v = (bf16(1, heads, seq, dim, seed=s) for s in (5, 6, 7))
    o = artifacts.run(q, k, v)
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float())
    assert_close(o.float(), ref, 2.0 ** -6)


def test_tvm_and_tilelang_entry_points_take_whole_tensors():
    batch, M, N, K = 4, 32, 32, 64
    func = bmm(batch, M, N, K, 32, 32, 32)
    a, b = bf16(batch, M, K, seed=15), bf16(batch, K, N, seed=16)
    ref = torch.bmm(a.float(), b.float())
    with tvm.transform.PassContext(config={"tt.mesh": (1, 2)}):
        module = tvm.tirx.build(tvm.IRModule({"main": func}), target="tenstorrent")
    c = torch.empty(batch, M, N, dtype=torch.bfloat16)
    module["main"](a, b, c)
    assert_close(c.float(), ref, 2.0 ** -7)
    kernel = tilelang.compile(func, out_idx=[-1], target="tenstorrent", pass_configs={"tt.mesh": (1, 2)})
    assert_close(kernel(a, b).float(), ref, 2.0 ** -7)


def test_main_cpp_opens_the_mesh_and_distributes_the_tensors_through_tt_metals_api():
    main = tilelang_tt.compile(bmm(4, 32, 32, 32, 32, 32, 32, shared_b=True), mesh=(2, 2)).sources["main.cpp"]
    assert "distributed::MeshDevice::create(mesh_config)" in main and "MeshShape(2, 2)" in main
    # A sharded over the mesh (one block of pages per device), B replicated; one workload over the mesh
    assert main.count("create_mesh_sharded_buffer(device.get()") == 2 and "buffer_B = create_dram_buffer" in main
    assert main.count("workload.add_program(device_range") == 1
    assert check_main_cpp(main) == []


@pytest.mark.parametrize("mesh", [(1, 2), (2, 4)])
def test_tensor_parallel_gemm_splits_the_weight_by_columns(mesh):
    # one block row (a decode-sized M): the block columns are split; each device holds A whole, its
    # column panel of B and computes its column panel of C
    M, N, K = 32, 512, 128
    devices = mesh[0] * mesh[1]
    # A multicast along a chip's core row (on 1x2, 4 cores a chip; 2x4 has one): every device reads it once
    options = {"multicast": "on"} if N // 64 // devices > 1 else {}
    artifacts = tilelang_tt.compile(gemm(M, N, K, 32, 64, 32), mesh=mesh, **options)
    plan = artifacts.plan
    assert plan.mesh.axis == "blockIdx.x" and plan.mesh.blocks == N // 64
    tensors = {t.buffer: (t.distribution, t.dim) for t in plan.mesh.tensors}
    assert tensors == {"A": ("replicated", -1), "B": ("sharded", 1), "C": ("sharded", 1)}
    assert plan.block_grid == (1, N // 64 // devices)
    covered_once(plan)
    a, b = bf16(M, K, seed=10), bf16(K, N, seed=11)
    c = artifacts.run(a, b)
    assert_close(c.float(), a.float() @ b.float(), 2.0 ** -7)
    # every device reads A whole and its share of B
    reads = [d["total"]["dram_bytes_read"] for d in artifacts.last_counters["devices"]]
    assert reads == [(a.numel() + b.numel() // devices) * 2] * devices


def test_plan_show_draws_each_devices_work():
    text = summary(tilelang_tt.compile(bmm(4, 64, 64, 64, 32, 32, 32, shared_b=True), mesh=(1, 2)).plan)
    assert ("mesh 1x2 of 2 devices: the 8 block rows (blockIdx.z) in panels of 4; every device runs the program "
            "below over its own panel") in text
    assert "  device (0,0): block rows 0..3, 8 blocks of the whole grid (0,0) (0,1) (1,0) ... (3,0) (3,1)" in text
    assert "  device (0,1): block rows 4..7, 8 blocks of the whole grid (4,0) (4,1) (5,0) ... (7,0) (7,1)" in text
    assert "  B: replicated, [64, 64] whole, [64, 64] per device" in text
    assert "  C: sharded along dim 0, [4, 64, 64] whole, [2, 64, 64] per device" in text


def test_a_one_by_one_mesh_changes_nothing():
    kernel = bmm(2, 64, 64, 64, 32, 32, 32)
    assert tilelang_tt.compile(kernel, mesh=(1, 1)).sources == tilelang_tt.compile(kernel).sources


@pytest.mark.parametrize("mesh", [(0, 2), (2,), (1, 2, 1), "1x2", (1.0, 2), (True, 2)])
def test_a_mesh_that_is_not_two_positive_integers_is_an_option_error(mesh):
    with pytest.raises(OptionError, match=r"mesh=.* is not two positive integers") as err:
        tilelang_tt.compile(bmm(2, 32, 32, 32, 32, 32, 32), mesh=mesh)
    assert "mesh=(1, 2)" in err.value.hint


def test_devices_that_do_not_divide_the_split_dimension():
    with pytest.raises(TTCompileError, match=r"mesh=\(1, 4\) has 4 devices, which do not divide the 6 blocks of "
                                             r"`bz` \(blockIdx.z\)") as err:
        tilelang_tt.compile(bmm(6, 32, 32, 32, 32, 32, 32), mesh=(1, 4))
    assert err.value.pass_name == "ChooseMeshAxisTT" and "divides 6" in err.value.hint


def test_a_tensor_sharded_over_the_mesh_in_another_layout():
    with pytest.raises(TTCompileError, match=r"`A` is sharded over the mesh's 2 devices .* not DRAM-interleaved in its "
                                             "own dtype") as err:
        tilelang_tt.compile(bmm(4, 64, 64, 64, 32, 32, 32), mesh=(1, 2), storage={"A": "bfloat8_b"})
    assert "drop `A` from layouts= and storage=" in err.value.hint


def test_row_vectors_every_block_reads_are_replicated():
    M, N = 128, 64
    artifacts = tilelang_tt.compile(layernorm(M, N, 32), mesh=(1, 2))
    tensors = {t.buffer: t.distribution for t in artifacts.plan.mesh.tensors}
    assert tensors == {"X": "sharded", "G": "replicated", "Bt": "replicated", "Y": "sharded"}
    x, g, b = bf16(M, N, seed=12), bf16(N, seed=13), bf16(N, seed=14)
    y = artifacts.run(x, g, b)
    ref = torch.nn.functional.layer_norm(x.float(), (N,), g.float(), b.float(), eps=1e-5)
    assert_close(y.float(), ref, 2.0 ** -5)


def test_a_grid_of_one_block_has_nothing_to_split():
    with pytest.raises(TTCompileError, match="the grid has one block") as err:
        tilelang_tt.compile(bmm(1, 32, 32, 32, 32, 32, 32), mesh=(1, 2))
    assert "mesh=(1, 1)" in err.value.hint


def test_blocks_summing_along_the_split_dimension_are_summed_across_the_devices():
    # one column of blocks: every grid dimension sums into Out (LowerAtomicAddTT makes them the rows); the
    # mesh splits them and, no mesh_reduce asked, the devices' partial sums are all-reduced
    plan = tilelang_tt.compile(two_summing_axes(2, 64, 32), mesh=(1, 2)).plan
    assert plan.mesh.axis == "blockIdx.y"
    assert {t.buffer: t.distribution for t in plan.mesh.tensors} == {"A": "sharded", "Out": "partial"}
    assert (plan.mesh.collective.kind, plan.mesh.collective.buffer) == ("all_reduce", "Out")


def test_blocks_summing_along_a_dimension_the_mesh_does_not_split():
    # the destination's columns (bx) are split; each device sums its own columns over by and bz
    artifacts = tilelang_tt.compile(two_summing_axes(2, 64, 64), mesh=(1, 2))
    tensors = {t.buffer: (t.distribution, t.dim) for t in artifacts.plan.mesh.tensors}
    assert tensors == {"A": ("sharded", 2), "Out": ("sharded", 1)}
    a = torch.randn(2, 64, 64, generator=torch.Generator().manual_seed(9))
    out = artifacts.run(a, torch.zeros(32, 64))
    assert_close(out, a.reshape(4, 32, 64).sum(0), 1e-5)


def written_whole(rows):
    @T.prim_func
    def main(A: T.Tensor((rows * 32, 32), "float32"), Out: T.Tensor((32, 32), "float32")):
        with T.Kernel(1, rows, threads=128) as (bx, by):
            s = T.alloc_shared((32, 32), "float32")
            T.copy(A[by * 32, 0], s)
            T.copy(s, Out[0, 0])  # LINE: written_whole
    return main


def test_an_output_every_device_would_write_whole():
    with pytest.raises(TTCompileError, match="every one of the mesh's 2 devices would write it") as err:
        tilelang_tt.compile(written_whole(4), mesh=(2, 1))
    assert err.value.location[1] == line_of("written_whole")


def bound_by_row(rows):
    @T.prim_func
    def main(A: T.Tensor((rows * 32, 32), "float32"), Out: T.Tensor((rows * 32, 32), "float32")):
        with T.Kernel(1, rows, threads=128) as (bx, by):
            s = T.alloc_shared((32, 32), "float32")
            acc = T.alloc_shared((32, 32), "float32")
            T.clear(acc)
            for k in T.serial(by + 1):  # LINE: bound_by_row
                T.copy(A[k * 32, 0], s)
                for i, j in T.Parallel(32, 32):
                    acc[i, j] += s[i, j]
            T.copy(acc, Out[by * 32, 0])
    return main


def test_the_split_coordinate_used_other_than_as_an_index():
    with pytest.raises(TTCompileError, match="the split block coordinate `by` is used here other than as a tensor "
                                             "index") as err:
        tilelang_tt.compile(bound_by_row(4), mesh=(1, 2))
    assert err.value.location[1] == line_of("bound_by_row")


def test_a_plan_whose_mesh_does_not_match_its_buffers_is_refused():
    plan = tilelang_tt.compile(bmm(4, 32, 32, 32, 32, 32, 32), mesh=(1, 2)).plan.to_json()
    Plan.from_json(plan)
    mesh = dict(plan["mesh"], tensors=[dict(t, shape=[5, 32, 32]) for t in plan["mesh"]["tensors"]])
    with pytest.raises(PlanError, match=r"mesh.tensors\[0\]: a sharded \[5, 32, 32\] tensor on 2 devices"):
        Plan.from_json(dict(plan, mesh=mesh))
    devices = list(reversed(plan["mesh"]["devices"]))
    with pytest.raises(PlanError, match=r"mesh.devices\[0\]: device 0 of the 1x2 mesh is at \[0, 0\] with the "
                                        r"panel \[0, 2\] of block rows, got \[0, 1\] and \[2, 2\]"):
        Plan.from_json(dict(plan, mesh=dict(plan["mesh"], devices=devices)))


def test_replicate_runs_the_whole_kernel_on_every_device_of_the_mesh():
    """``mesh_axis="replicate"``: one mesh program, every device over the whole grid on its own copy of
    each tensor (replicated inputs), every device's copy of the output read back and checked equal."""
    M, N = 128, 64
    artifacts = tilelang_tt.compile(layernorm(M, N, 32), mesh=(1, 2), mesh_axis="replicate")
    plan = artifacts.plan
    assert plan.mesh.axis == "replicate" and [d.panel for d in plan.mesh.devices] == [(0, 4), (0, 4)]
    assert {t.distribution for t in plan.mesh.tensors} == {"replicated"}
    x, g, b = bf16(M, N, seed=15), bf16(N, seed=16), bf16(N, seed=17)
    y = artifacts.run(x, g, b)
    ref = torch.nn.functional.layer_norm(x.float(), (N,), g.float(), b.float(), eps=1e-5)
    assert_close(y.float(), ref, 2.0 ** -5)
    assert len(artifacts.last_counters["devices"]) == 2  # both chips ran it
    main = tilelang_tt.compile(layernorm(M, N, 32), mesh=(2, 4), mesh_axis="replicate").sources["main.cpp"]
    assert check_main_cpp(main) == []
    assert "MeshShape(2, 4)" in main and main.count("workload.add_program(device_range") == 1
    assert "buffer_X = create_dram_buffer" in main and "buffer_Y = create_mesh_sharded_buffer(device.get(), " \
        "16384, 2048, 2, 4)" in main  # the input replicated, the output a copy per device
    assert "replicated Y: device \" + std::to_string(d)" in main and "SetFabricConfig" not in main
