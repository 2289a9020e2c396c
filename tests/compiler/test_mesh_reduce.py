"""Sums across the chips of a mesh (compile options ``mesh`` and ``mesh_reduce``; SplitMeshTT,
tilelang_tt.contract.mesh.MeshCollective): blocks adding into one tensor along the grid dimension the
mesh splits leave a partial sum on each chip, and a combine program adds them over the fabric along a
line of neighbouring chips, in a fixed order.

Pinned here: the plan's collective (its line, links, owners, semaphores, cores) and the partial tensor
for split-K GEMM and a row-parallel linear layer on (1, 2) and (2, 4) meshes, all-reduce and
reduce-scatter; main.cpp sets the fabric config before it opens the MeshDevice and calls only what
libtt_metal.so 0.81.1 exports; generated code is the same bytes on every compile; the refusals at the
user's line; and, on an emulator with the fabric API, the runs against torch, the same bytes on every
run and whichever cores the combine is spread over.
"""

import dataclasses
import json
from pathlib import Path

import jsonschema
import pytest
import tilelang  # noqa: F401
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_ops import assert_close
from tests.kernels import row_parallel_linear, split_k_gemm
from tilelang_tt import TTCompileError
from tilelang_tt.artifacts import Artifacts
from tilelang_tt.codegen.collective import COMBINE_SOURCES
from tilelang_tt.codegen.host import emit_main_cpp
from tilelang_tt.contract.mesh import COMBINE_CORES, CombineCore
from tilelang_tt.codegen.plan import dumps_plan
from tilelang_tt.contract.plan import SCHEMA_PATH, Plan
from tilelang_tt.contract.reading import PlanError
from tilelang_tt.emulator.driver import INCLUDE_DIR, EmulatorError
from tilelang_tt.options import OptionError
from tilelang_tt.tools.host_symbols import check_main_cpp

SOURCE = Path(__file__).read_text()
# The emulator runs the combine once it implements the fabric device API the combine writer includes.
FABRIC = (INCLUDE_DIR / "tt_metal" / "fabric" / "hw" / "inc" / "edm_fabric" / "edm_fabric_worker_adapters.hpp").is_file()
needs_fabric = pytest.mark.skipif(not FABRIC, reason="the emulator has no fabric device API (edm_fabric_worker_adapters.hpp) yet")


def line_of(marker: str) -> int:
    return next(i for i, text in enumerate(SOURCE.splitlines(), 1) if text.rstrip().endswith(f"# LINE: {marker}"))


KERNELS = {
    "split_k": lambda chips: (split_k_gemm(256, 64, 64 * chips, 32, 64, 32, 2 * chips), (256, 64 * chips, 64)),
    "row_parallel": lambda chips: (row_parallel_linear(256, 128, 128 * chips, chips), (256, 128 * chips, 128)),
}


def compiled(kind, mesh, reduce):
    chips = mesh[0] * mesh[1]
    kernel, shape = KERNELS[kind](chips)
    return tilelang_tt.compile(kernel, mesh=mesh, mesh_reduce=reduce), shape


def bf16(*shape, seed):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(torch.bfloat16)


@pytest.mark.parametrize("reduce", ["all_reduce", "reduce_scatter"])
@pytest.mark.parametrize("mesh", [(1, 2), (2, 4)])
@pytest.mark.parametrize("kind", sorted(KERNELS))
def test_the_plan_records_the_sum_across_the_chips(kind, mesh, reduce):
    artifacts, (M, K, N) = compiled(kind, mesh, reduce)
    plan = artifacts.plan
    chips = mesh[0] * mesh[1]
    jsonschema.validate(plan.to_json(), json.loads(SCHEMA_PATH.read_text()))
    assert Plan.from_json(plan.to_json()).to_json() == plan.to_json()
    out = plan.outputs[0].name
    assert plan.mesh.axis == "blockIdx.x"
    tensors = [(t.distribution, t.dim) for t in plan.mesh.tensors]
    assert tensors == [("sharded", 1), ("sharded", 0), ("partial", -1)]  # K's panels, the sum's copies
    assert [b.shape for b in plan.buffers] == [(M, K // chips), (K // chips, N), (M, N)]
    collective = plan.mesh.collective
    assert (collective.kind, collective.buffer) == (reduce, out)
    assert len(collective.line) == chips and sorted(collective.line) == [d.coord for d in plan.mesh.devices]
    assert all(abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1 for a, b in collective.links)  # neighbours only
    assert sorted(collective.owners) == list(range(chips))
    # each chip sums its own share of the blocks adding into one region: two K slices of split-K, one
    # panel of the row-parallel layer (nothing to take turns over on the chip)
    if kind == "split_k":
        assert plan.to_json()["reduction"]["blocks"] == 2
    else:
        assert "reduction" not in plan.to_json()
    assert set(COMBINE_SOURCES) <= set(artifacts.sources)
    assert plan.to_json()["mesh"]["collective"]["semaphores"] == [
        {"name": name, "kind": "global", "initial_value": 0}
        for name in ("partial_from_prev", "partial_from_next", "total_from_prev", "total_from_next", "total_written")]
    # one core sends forward along the line (and adds the tiles its chip sums), another backward
    assert plan.to_json()["mesh"]["collective"]["cores"] == [
        {"core": [0, 0], "directions": ["forward"]}, {"core": [1, 0], "directions": ["backward"]}]
    assert collective.cores == COMBINE_CORES


@pytest.mark.parametrize("mesh", [(1, 2), (2, 4)])
def test_main_cpp_sets_up_the_fabric_as_a_tt_metal_host_program_does(mesh):
    artifacts, _ = compiled("split_k", mesh, "all_reduce")
    main = artifacts.sources["main.cpp"]
    assert check_main_cpp(main) == []
    config = "FABRIC_1D"  # every packet goes one hop, to a neighbour on the line
    assert main.index(f"SetFabricConfig(tt::tt_fabric::FabricConfig::{config})") < main.index("MeshDevice::create(")
    # the cross-chip semaphores are global, made (0) before the combine programs, their addresses runtime args
    assert "CreateSemaphore(program, combine_cores" not in main
    assert main.count("CreateGlobalSemaphore(*device, combine_cores, 0, BufferType::L1)") == 5
    assert main.index("CreateGlobalSemaphore(") < main.index("distributed::MeshWorkload combine;")
    for role in ("reader", "writer"):
        assert "get_semaphore(" not in artifacts.sources[f"combine_{role}.cpp"]
    assert main.index("EnqueueMeshWorkload(command_queue, workload") < main.index("EnqueueMeshWorkload(command_queue, combine")
    # the backward core's connection to the previous chip, the forward core's to the next
    assert main.count("append_fabric_connection_rt_args(") == 2
    assert "CoreRange(combine_core_0, combine_core_0), CoreRange(combine_core_1, combine_core_1)" in main
    writer = artifacts.sources["combine_writer.cpp"]
    assert "to_noc_fused_unicast_write_atomic_inc(" in writer and "to_chip_unicast(1)" in writer
    assert "build_from_args" in writer


def test_generated_code_is_the_same_bytes_on_every_compile():
    first, _ = compiled("row_parallel", (2, 4), "reduce_scatter")
    second, _ = compiled("row_parallel", (2, 4), "reduce_scatter")
    assert first.sources == second.sources


def test_without_a_sum_across_chips_nothing_of_the_fabric_is_emitted():
    # mesh_reduce unset: the mesh splits the block rows, each chip sums its own rows' K slices
    artifacts = tilelang_tt.compile(split_k_gemm(128, 64, 128, 32, 64, 32, 2), mesh=(1, 2))
    assert artifacts.plan.mesh.collective is None and artifacts.plan.mesh.axis == "blockIdx.z"
    assert "tt_fabric" not in artifacts.sources["main.cpp"] and "combine_writer.cpp" not in artifacts.sources


@needs_fabric
@pytest.mark.parametrize("reduce", ["all_reduce", "reduce_scatter"])
@pytest.mark.parametrize("mesh", [(1, 2), (2, 4)])
@pytest.mark.parametrize("kind", sorted(KERNELS))
def test_the_sum_across_the_chips_matches_torch_with_the_same_bytes_every_run(kind, mesh, reduce):
    artifacts, (M, K, N) = compiled(kind, mesh, reduce)
    a, b = bf16(M, K, seed=1), bf16(K, N, seed=2)
    c = torch.randn(M, N, generator=torch.Generator().manual_seed(3))
    first = artifacts.run(a, b, c)
    assert_close(first, c + a.float() @ b.float(), 2.0 ** -10)
    again = artifacts.run(a, b, c)
    assert torch.equal(first.view(torch.int32), again.view(torch.int32))


# -- refusals -----------------------------------------------------------------------------------------


def test_devices_that_do_not_divide_the_summing_dimension():
    with pytest.raises(TTCompileError, match=r"mesh=\(1, 3\) has 3 devices, which do not divide the 4 blocks of `bz`"):
        tilelang_tt.compile(split_k_gemm(64, 64, 128, 32, 64, 32, 4), mesh=(1, 3), mesh_reduce="all_reduce")


def test_reduce_scatter_of_rows_the_chips_cannot_share_in_whole_tiles():
    with pytest.raises(TTCompileError, match=r"its 64 rows \(\[64, 64\]\) do not divide into 8 panels") as err:
        tilelang_tt.compile(split_k_gemm(64, 64, 256, 32, 64, 32, 8), mesh=(2, 4), mesh_reduce="reduce_scatter")
    assert "mesh_reduce='all_reduce'" in err.value.hint


def stored_and_summed(chips):
    """Out's first row block is stored whole by block 0 and its second summed into by every block:
    the store cannot be ordered with a sum the fabric makes after every chip's program."""

    @T.prim_func
    def main(A: T.Tensor((32, 32 * chips), "float32"), Out: T.Tensor((64, 32), "float32")):
        with T.Kernel(chips, threads=128) as bx:
            s = T.alloc_shared((32, 32), "float32")
            T.copy(A[0, bx * 32], s)
            T.atomic_add(Out[32, 0], s)
            if bx == 0:
                T.copy(s, Out[0, 0])  # LINE: stored_and_summed

    return main


def test_a_summed_tensor_also_stored_is_an_order_the_fabric_cannot_keep():
    with pytest.raises(TTCompileError, match="`Out` is written here besides the T.atomic_add sums .* cannot be "
                                             "ordered with the sum") as err:
        tilelang_tt.compile(stored_and_summed(2), mesh=(1, 2), mesh_reduce="all_reduce")
    assert err.value.location[1] == line_of("stored_and_summed")


def combined_by_max(rows):
    @T.prim_func
    def main(A: T.Tensor((rows * 32, 64), "float32"), C: T.Tensor((32, 64), "float32")):
        with T.Kernel(1, rows, threads=128) as (bx, by):
            s = T.alloc_shared((32, 64), "float32")
            T.copy(A[by * 32, 0], s)
            T.atomic_max(C[0, 0], s)  # LINE: combined_by_max

    return main


def test_blocks_combining_by_max_across_chips_are_refused():
    with pytest.raises(TTCompileError, match="T.atomic_max on the mesh's 2 devices: across chips the fabric's "
                                             "combine sums") as err:
        tilelang_tt.compile(combined_by_max(4), mesh=(1, 2))
    assert err.value.location[1] == line_of("combined_by_max")


def summed_ints(blocks):
    @T.prim_func
    def main(A: T.Tensor((32, 32 * blocks), "int32"), Out: T.Tensor((32, 32), "int32")):
        with T.Kernel(blocks, threads=128) as bx:
            s = T.alloc_shared((32, 32), "int32")
            T.copy(A[0, bx * 32], s)
            T.atomic_add(Out[0, 0], s)

    return main


def test_a_summed_integer_tensor_is_refused():
    with pytest.raises(TTCompileError, match="sum into `Out` of int32: the devices' partial sums are added"):
        tilelang_tt.compile(summed_ints(4), mesh=(1, 2))


def test_mesh_reduce_is_an_option_with_a_hint():
    with pytest.raises(OptionError, match="mesh_reduce='all' is not a collective") as err:
        tilelang_tt.compile(split_k_gemm(64, 64, 128, 32, 64, 32, 2), mesh=(1, 2), mesh_reduce="all")
    assert "all_reduce" in err.value.hint


def summed_twice(blocks):
    @T.prim_func
    def main(A: T.Tensor((32, 32 * blocks), "float32"), Out: T.Tensor((32, 32), "float32"),
             Sq: T.Tensor((32, 32), "float32")):
        with T.Kernel(blocks, threads=128) as bx:
            s = T.alloc_shared((32, 32), "float32")
            q = T.alloc_fragment((32, 32), "float32")
            T.copy(A[0, bx * 32], s)
            for i, j in T.Parallel(32, 32):
                q[i, j] = s[i, j] * s[i, j]
            T.atomic_add(Out[0, 0], s)
            T.atomic_add(Sq[0, 0], q)

    return main


def test_two_summed_tensors_are_refused():
    with pytest.raises(TTCompileError, match="sum into `Out`, `Sq` with T.atomic_add: a mesh sums one tensor") as err:
        tilelang_tt.compile(summed_twice(4), mesh=(1, 2))
    assert "one tensor per kernel" in err.value.hint


@needs_fabric
def test_panels_of_uneven_tiles_and_a_bfloat16_sum():
    # 6 tiles of C over 4 chips (tile t in panel t * 4 // 6: panels of 1 or 2 tiles), C in bfloat16:
    # each chip's partial rounded to bfloat16, the partials added in float32 DST and rounded once more
    M, N, K = 96, 64, 256
    artifacts = tilelang_tt.compile(split_k_gemm(M, N, K, 32, 64, 32, 8, out_dtype="bfloat16"), mesh=(1, 4),
                                    mesh_reduce="all_reduce")
    a, b = bf16(M, K, seed=4), bf16(K, N, seed=5)
    c = bf16(M, N, seed=6)
    first = artifacts.run(a, b, c)
    assert_close(first.float(), c.float() + a.float() @ b.float(), 2.0 ** -6)
    assert torch.equal(first.view(torch.int16), artifacts.run(a, b, c).view(torch.int16))


def test_a_saved_program_keeps_its_combine_kernels(tmp_path):
    artifacts, _ = compiled("split_k", (1, 2), "all_reduce")
    artifacts.save(tmp_path / "program")
    loaded = Artifacts.load(tmp_path / "program")
    assert {name: loaded.sources[name] for name in COMBINE_SOURCES} == COMBINE_SOURCES
    assert loaded.plan == artifacts.plan


# -- the combine's cores ----------------------------------------------------------------------------------


def with_combine_cores(artifacts: Artifacts, cores: tuple[CombineCore, ...]) -> Artifacts:
    """The same program with its combine on ``cores``: the plan's collective and main.cpp, which reads it."""
    mesh = artifacts.plan.mesh
    plan = dataclasses.replace(artifacts.plan, mesh=dataclasses.replace(
        mesh, collective=dataclasses.replace(mesh.collective, cores=cores)))
    sources = artifacts.sources | {"main.cpp": emit_main_cpp(plan), "tt.plan.json": dumps_plan(plan)}
    return dataclasses.replace(artifacts, sources=sources, plan=plan)


ONE_CORE = (CombineCore((0, 0), ("forward", "backward")),)
ELSEWHERE = (CombineCore((3, 2), ("backward",)), CombineCore((2, 5), ("forward",)))


@needs_fabric
@pytest.mark.parametrize("reduce", ["all_reduce", "reduce_scatter"])
def test_the_sum_is_the_same_bits_whichever_cores_combine(reduce):
    # each tile is added in the line's order by whichever core sums it: one core sending both ways, the
    # default two, or two others listed the other way round give the same bits, and match torch
    artifacts, (M, K, N) = compiled("split_k", (2, 4), reduce)
    a, b = bf16(M, K, seed=7), bf16(K, N, seed=8)
    c = torch.randn(M, N, generator=torch.Generator().manual_seed(9))
    spread = artifacts.run(a, b, c)
    assert_close(spread, c + a.float() @ b.float(), 2.0 ** -10)
    for cores in (ONE_CORE, ELSEWHERE):
        other = with_combine_cores(artifacts, cores)
        assert Plan.from_json(other.plan.to_json()) == other.plan
        assert torch.equal(other.run(a, b, c).view(torch.int32), spread.view(torch.int32)), cores


@needs_fabric
def test_two_cores_on_one_router_channel_are_refused_by_the_emulator():
    # a router's sender channel takes one worker at a time (fabric_erisc_router.cpp): two cores both sending
    # forward connect to the same router
    artifacts, (M, K, N) = compiled("row_parallel", (1, 2), "all_reduce")
    both_forward = (CombineCore((0, 0), ("forward",)), CombineCore((1, 0), ("forward", "backward")))
    with pytest.raises(EmulatorError, match="takes one worker at a time"):
        with_combine_cores(artifacts, both_forward).run(bf16(M, K, seed=1), bf16(K, N, seed=2), torch.zeros(M, N))


@pytest.mark.parametrize("cores", [
    [{"core": [0, 0], "directions": ["forward"]}],
    [{"core": [0, 0], "directions": ["forward"]}, {"core": [0, 0], "directions": ["backward"]}],
    [{"core": [0, 0], "directions": ["forward", "backward"]}, {"core": [1, 0], "directions": ["backward"]}],
])
def test_the_plan_reader_wants_each_direction_on_one_core(cores):
    artifacts, _ = compiled("row_parallel", (1, 2), "all_reduce")
    raw = artifacts.plan.to_json()
    raw["mesh"]["collective"]["cores"] = cores
    with pytest.raises(PlanError, match="mesh.collective.cores: distinct cores sending each of"):
        Plan.from_json(raw)
