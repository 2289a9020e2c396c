"""The ttnn path: the two examples compiled here (Python 3.11), their ProgramDescriptors built by
the real ttnn 0.81.1 classes in the Python 3.12 venv (`make test` creates `.venv312`), and the
device calls reached: open_device with no chips, and generic_op with the real descriptor, each
ending in a clear TTDeviceError. Here (3.11, where no ttnn wheel exists) device="tt" must say
what is missing and how to get it."""

import importlib.util
import json
import subprocess
from pathlib import Path

import pytest
import tilelang
import torch

import tilelang_tt
from tests.kernels import bmm, gemm
from tilelang_tt.contract.vocabulary import BufferAddress, NocCoord, runtime_value
from tilelang_tt.host.ttnn_program import (NO_DEVICE_MESSAGE, TTDeviceError, mesh_composer, mesh_mapper, run_on_device,
                                           whole_output)

NO_TTNN = importlib.util.find_spec("ttnn") is None

ROOT = Path(__file__).resolve().parents[2]
PY312 = ROOT / ".venv312" / "bin" / "python"
SCRIPT = Path(__file__).with_name("describe_program.py")
DEVICE_TENSORS = Path(__file__).with_name("device_tensors.py")
FLOAT16_B = 5  # tt::DataFormat::Float16_b, as ttnn reports it


def _example(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build()


def _run_312(script: Path, directory: Path, *args: str) -> dict:
    """The JSON summary ``script`` (run by the Python 3.12 venv) writes for an artifacts directory."""
    if not PY312.exists():
        pytest.skip("no .venv312 (Python 3.12 + ttnn==0.81.1); `make test` creates it")
    out = directory.parent / f"{directory.name}.{script.stem}.json"
    done = subprocess.run([str(PY312), str(script), str(directory), str(out), *args], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text())


def _describe(directory: Path, shapes: dict | None = None) -> dict:
    return _run_312(SCRIPT, directory, *([json.dumps(shapes)] if shapes is not None else []))


@pytest.fixture(scope="module", params=["eltwise_add", "gemm"])
def described(request, tmp_path_factory):
    artifacts = _example(request.param)
    directory = artifacts.save(tmp_path_factory.mktemp("ttnn") / request.param)
    return artifacts, _describe(directory)


def test_kernels_carry_sources_cores_args_and_configs(described):
    artifacts, summary = described
    plan, desc = artifacts.plan.to_json(), summary["descriptor"]
    assert desc["type"] == "ProgramDescriptor"
    assert len(desc["kernels"]) == 3
    ranges = [[r["start"], r["end"]] for r in plan["core_ranges"]]
    addresses = summary["descriptor"]["addresses"]
    index = {cb["name"]: cb["index"] for cb in plan["cbs"]}
    for planned, kernel in zip(plan["kernels"], desc["kernels"]):
        role = planned["role"]
        assert kernel["source_type"] == "SOURCE_CODE"
        assert kernel["kernel_source"] == artifacts.sources[f"{role}.cpp"]
        assert kernel["core_ranges"] == ranges
        assert kernel["compile_time_args"] == planned["compile_time_args"]
        assert len(kernel["runtime_args"]) == len(plan["work_partition"])
        for entry in plan["runtime_args"]:
            expected = [_expected_arg(v, addresses) for v in entry[role]]
            assert kernel["runtime_args"]["{},{}".format(*entry["core"])] == expected
        if role == "compute":
            assert kernel["config"] == {"type": "ComputeConfigDescriptor", "math_fidelity": planned["math_fidelity"],
                                        "fp32_dest_acc_en": planned["fp32_dest_acc_en"],
                                        "math_approx_mode": planned["math_approx_mode"],
                                        "unpack_to_dest": [index[name] for name in planned["unpack_to_dest"]]}
        else:
            assert kernel["config"] == {"type": "DataMovementConfigDescriptor",
                                        "processor": planned["processor"], "noc": planned["noc"]}
    # start_id/count per core really are the partition's
    position = [k["role"] for k in plan["kernels"]].index("reader")
    kinds = [arg["kind"] for arg in plan["kernels"][position]["runtime_args"]]
    reader = desc["kernels"][position]
    for work in plan["work_partition"]:
        values = reader["runtime_args"]["{},{}".format(*work["core"])]
        assert [values[kinds.index("start_id")], values[kinds.index("count")]] == [work["start_id"], work["count"]]


def _expected_arg(value, addresses):
    value = runtime_value(value, list(addresses), "runtime arg")
    if isinstance(value, BufferAddress):
        return addresses[value.buffer]
    if isinstance(value, NocCoord):  # describe_program's stand-in NOC placement
        return value.core[0] + 100 if value.axis == "x" else value.core[1] + 200
    return value


def test_circular_buffers_and_semaphores(described):
    artifacts, summary = described
    plan, desc = artifacts.plan.to_json(), summary["descriptor"]
    ranges = [[r["start"], r["end"]] for r in plan["core_ranges"]]
    assert len(desc["cbs"]) == len(plan["cbs"]) > 0
    for planned, cb in zip(plan["cbs"], desc["cbs"]):
        assert cb["total_size"] == planned["page_size"] * planned["num_pages"]
        assert cb["core_ranges"] == ranges
        assert cb["formats"] == [{"buffer_index": planned["index"], "data_format": FLOAT16_B,
                                  "page_size": planned["page_size"]}]
    assert desc["semaphores"] == [{"id": s["id"], "initial_value": s["initial_value"], "core_ranges": ranges}
                                  for s in plan["semaphores"]]


def test_device_call_without_chips_is_a_clear_error(described):
    _, summary = described
    assert summary["device"] == {"error": "TTDeviceError", "message": NO_DEVICE_MESSAGE}


def test_a_mesh_program_opens_a_mesh_device_without_chips_a_clear_error(tmp_path):
    artifacts = tilelang_tt.compile(bmm(4, 64, 64, 64, 32, 32, 32, shared_b=True), mesh=(1, 2))
    summary = _describe(artifacts.save(tmp_path / "mesh"))
    assert summary["device"] == {"error": "TTDeviceError", "message": NO_DEVICE_MESSAGE}


def test_generic_op_is_reached_with_the_real_descriptor(described):
    # Without chips no tensor can live on a device; host tensors take generic_op as far as it goes.
    artifacts, summary = described
    assert summary["launch"] == {"error": "TTDeviceError", "message": (
        f"ttnn.generic_op could not run kernel `{artifacts.kernel_name}`: Tensor must be on a device")}


def test_ttnn_program_loads_without_tilelang_tvm_torch_or_ttnn(described):
    _, summary = described
    assert summary["not_imported_by_ttnn_program"] == ["tilelang", "tilelang_tt", "torch", "ttnn", "tvm"]


def test_semaphores_become_descriptors(tmp_path):
    artifacts = _example("eltwise_add")
    directory = artifacts.save(tmp_path / "eltwise_add")
    plan = dict(artifacts.plan.to_json(), semaphores=[{"id": 0, "name": "go", "initial_value": 0},
                                            {"id": 1, "name": "done", "initial_value": 3}])
    (directory / "tt.plan.json").write_text(json.dumps(plan))
    ranges = [[r["start"], r["end"]] for r in plan["core_ranges"]]
    assert _describe(directory)["descriptor"]["semaphores"] == [
        {"id": 0, "initial_value": 0, "core_ranges": ranges}, {"id": 1, "initial_value": 3, "core_ranges": ranges}]


MISSING_TTNN = r"needs the ttnn package \(ttnn==0\.81\.1\), which this Python \(3\.11.*Python 3\.12.*\.venv312.*emulator"


@pytest.mark.skipif(not NO_TTNN, reason="ttnn is installed here")
def test_without_ttnn_run_on_device_says_what_to_do():
    with pytest.raises(TTDeviceError, match=MISSING_TTNN):
        run_on_device(_example("eltwise_add"))


@pytest.mark.skipif(not NO_TTNN, reason="ttnn is installed here")
def test_device_tt_from_artifacts_and_tilelang_compile_says_what_is_missing():
    artifacts = _example("eltwise_add")
    a = torch.randn(256, 512).to(torch.bfloat16)
    with pytest.raises(TTDeviceError, match=MISSING_TTNN):
        artifacts.run(a, a, device="tt")
    from examples.eltwise_add import eltwise_add

    kernel = tilelang.compile(eltwise_add(64, 64, 32, 32), out_idx=[-1], target="tenstorrent")
    with pytest.raises(TTDeviceError, match=MISSING_TTNN):
        kernel(a[:64, :64], a[:64, :64], device="tt")


def test_a_program_with_dynamic_sizes_is_described_for_the_tensors_given(tmp_path):
    """ttnn_program plans a T.dynamic program for the tensors it is given: the runtime args carry
    the sizes and each core's share of the blocks for them; the device call is reached."""
    from tests.compiler.test_dynamic_shapes import matmul

    artifacts = tilelang_tt.compile(matmul(64, 64, 32), grid=(2, 1))
    summary = _describe(artifacts.save(tmp_path / "dynamic"), {"A": [100, 40], "B": [40, 70]})
    reader = summary["descriptor"]["kernels"][0]
    a, b = summary["descriptor"]["addresses"]["A"], summary["descriptor"]["addresses"]["B"]
    # 2 x 2 blocks of 64 x 64 over two cores: two each; then m, k, n
    assert reader["runtime_args"] == {"0,0": [a, b, 0, 2, 100, 40, 70], "1,0": [a, b, 2, 2, 100, 40, 70]}
    assert summary["device"]["error"] == "TTDeviceError" and summary["launch"]["error"] == "TTDeviceError"


def test_a_reduction_and_a_mask_are_described(tmp_path):
    """Split-K's writer gets the NOC coordinates of its core and of the next (chain args) and every
    core the reduction semaphore; a uint8 mask tensor is a buffer the reader reads. The device call
    is reached for both."""
    from tests.compiler.test_block_sparse import masked_gemm
    from tests.kernels import split_k_gemm

    artifacts = tilelang_tt.compile(split_k_gemm(64, 64, 128, 32, 32, 32, 2), grid=(4, 1))
    summary = _describe(artifacts.save(tmp_path / "split_k"))
    writer = summary["descriptor"]["kernels"][2]
    names = [a.name for a in artifacts.plan.kernel("writer").runtime_args]
    chain = [names.index(f"sum_{what}") for what in ("self_x", "self_y", "next_x", "next_y")]
    cores = [w.core for w in artifacts.plan.work_partition]
    for position, (x, y) in enumerate(cores):
        nx, ny = cores[min(position + 1, len(cores) - 1)]  # the last core's next is itself (never signalled)
        # describe_program's stand-in places logical core (x, y) at NOC (x + 100, y + 200)
        assert [writer["runtime_args"][f"{x},{y}"][i] for i in chain] == [x + 100, y + 200, nx + 100, ny + 200]
    assert [s["id"] for s in summary["descriptor"]["semaphores"]] == [artifacts.plan.reduction.semaphore]
    assert summary["launch"]["error"] == "TTDeviceError"
    artifacts = tilelang_tt.compile(masked_gemm(64, 64, 64, mask_dtype="uint8"), grid=(1, 1))
    summary = _describe(artifacts.save(tmp_path / "masked"))
    assert summary["device"]["error"] == "TTDeviceError" and summary["launch"]["error"] == "TTDeviceError"


@pytest.fixture(scope="module")
def device_tensors(tmp_path_factory):
    """device_tensors.py's run of eltwise_add (A, B -> C, 256 x 512 bf16) on ttnn tensors."""
    directory = tmp_path_factory.mktemp("device")
    artifacts = _example("eltwise_add")
    mesh = tilelang_tt.compile(bmm(4, 64, 64, 64, 32, 32, 32, shared_b=True), mesh=(1, 2))
    return artifacts, _run_312(DEVICE_TENSORS, artifacts.save(directory / "eltwise_add"),
                               str(mesh.save(directory / "mesh")))


A, B, C = 0xA000, 0xB000, 0xC000  # device_tensors.py's buffer addresses of A, B and the allocated C


def test_device_tensors_are_used_in_place_and_the_output_stays_on_the_device(device_tensors):
    _, summary = device_tensors
    # no from_torch/to_torch: the inputs are not copied, only C is allocated, on the inputs' device
    assert [call[0] for call in summary["calls"]] == ["allocate", "generic_op"]
    assert summary["calls"][0] == ["allocate", [256, 512], "BFLOAT16", "TILE", 0]
    assert summary["calls"][1][1] == [A, B, C]
    assert summary["output"] == {"type": "DeviceTensor", "address": C, "device": 0, "shape": [256, 512],
                                 "layout": "TILE", "dtype": "BFLOAT16"}


def test_the_descriptor_carries_the_given_tensors_addresses(device_tensors):
    artifacts, summary = device_tensors
    entry, addresses = artifacts.plan.to_json()["runtime_args"][0], {"A": A, "B": B, "C": C}
    assert summary["reader_args"] == [_expected_arg(v, addresses) for v in entry["reader"]]
    assert summary["writer_args"] == [_expected_arg(v, addresses) for v in entry["writer"]]
    assert summary["reader_args"][:2] == [A, B] and summary["writer_args"][0] == C


def test_a_host_input_is_uploaded_and_then_the_outputs_are_read_back(device_tensors):
    _, summary = device_tensors
    assert [call[0] for call in summary["mixed"]["calls"]] == ["from_torch", "allocate", "generic_op", "to_torch"]
    assert summary["mixed"]["output"] == "HostTensor"


def test_programs_are_cached_per_device_plan_and_addresses(device_tensors):
    _, summary = device_tensors
    assert summary["launched_descriptor_is_cached"] and summary["same_key_same_object"]
    assert summary["other_addresses_other_object"] and summary["other_device_other_object"]
    launches = [call for call in summary["shared"]["calls"] if call[0] == "generic_op"]
    assert len(launches) == 2 and launches[0][2] == launches[1][2]  # the second run reused the descriptor


def test_one_shared_device_opened_once_and_closed(device_tensors):
    _, summary = device_tensors
    shared = summary["shared"]
    assert [call for call in shared["calls"] if call[0] == "open_device"] == [["open_device", 0]]
    assert {call[-1] for call in shared["calls"] if call[0] in ("from_torch", "allocate")} == {7}
    assert shared["device"] == 7
    assert shared["closed"] == [["close_device", 7]] and shared["programs_after_close"] == 0


def test_a_ttnn_tensor_not_as_the_plan_lays_it_out_is_a_clear_error(device_tensors):
    _, summary = device_tensors
    what = "of kernel `main` is a ttnn tensor"
    assert summary["errors"] == {
        "host_dtype": f"parameter 'A' {what} of dtype FLOAT32; the plan expects BFLOAT16: convert it with "
                      "ttnn.typecast(tensor, ttnn.bfloat16)",
        "host_layout": f"parameter 'B' {what} in ROW_MAJOR layout; the plan expects TILE: convert it with "
                       "ttnn.to_layout(tensor, ttnn.TILE_LAYOUT)",
        "shape": f"parameter 'B' {what} of shape (256, 256); the plan expects (256, 512): "
                 "ttnn.reshape(tensor, [256, 512])",
        "memory": f"parameter 'A' {what} in L1 INTERLEAVED memory; the plan expects DRAM INTERLEAVED: "
                  "ttnn.to_memory_config(tensor, ttnn.DRAM_MEMORY_CONFIG)",
        "on_host": f"parameter 'B' {what} on the host; the plan expects it on the device: "
                   "ttnn.to_device(tensor, device, memory_config=ttnn.DRAM_MEMORY_CONFIG)",
        "other_device": f"parameter 'B' {what} on device 1; the kernel runs on device 0: "
                        "ttnn.to_device(ttnn.from_device(tensor), device)",
        "given_device": f"parameter 'A' {what} on device 0; the kernel runs on device 1: "
                        "ttnn.to_device(ttnn.from_device(tensor), device)",
        "mesh": "kernel `main` runs on a 1x2 mesh: give its inputs as whole torch tensors "
                "(ttnn.to_torch(tensor, mesh_composer=...)); mesh tensors are not taken in place",
    }


class _MeshTtnn:
    """ttnn's mesh mappers and composers as far as the ttnn path calls them: each returns what it was asked."""

    @staticmethod
    def shard_tensor_to_mesh_mapper(device, dim):
        return ("shard", dim)

    @staticmethod
    def replicate_tensor_to_mesh_mapper(device):
        return ("replicate",)

    @staticmethod
    def concat_mesh_to_tensor_composer(device, dim):
        return ("concat", dim)


def _placements(artifacts):
    mesh = artifacts.plan.mesh
    return {b.name: (mesh_mapper(_MeshTtnn, None, mesh, b).get("mesh_mapper"),
                     mesh_composer(_MeshTtnn, None, mesh, b)["mesh_composer"] if b.is_output else None)
            for b in artifacts.plan.buffers}


def test_the_ttnn_path_shards_a_column_split_by_columns():
    """mesh_axis="blockIdx.x" (a column-parallel product): the input replicated, the weight and the output
    sharded along dimension 1 and the output's panels concatenated back along it, whole."""
    artifacts = tilelang_tt.compile(gemm(64, 256, 64, 32, 64, 32), mesh=(2, 2), mesh_axis="blockIdx.x")
    assert _placements(artifacts) == {"A": (("replicate",), None), "B": (("shard", 1), None),
                                      "C": (("shard", 1), ("concat", 1))}
    C = artifacts.plan.outputs[0]
    panels = torch.arange(64 * 256, dtype=torch.float32).reshape(64, 256)
    assert whole_output(panels, artifacts.plan.mesh, C) is panels


def test_the_ttnn_path_replicates_every_tensor_of_a_replicated_kernel():
    """mesh_axis="replicate": every tensor replicated on the devices (ReplicateTensorToMesh's mapper), the
    output read back as the devices' copies along dimension 0, device 0's kept once they are checked equal."""
    artifacts = tilelang_tt.compile(gemm(64, 64, 64, 32, 32, 32), mesh=(2, 4), mesh_axis="replicate")
    assert _placements(artifacts) == {"A": (("replicate",), None), "B": (("replicate",), None),
                                      "C": (("replicate",), ("concat", 0))}
    C = artifacts.plan.outputs[0]
    copy = torch.randn(64, 64)
    assert torch.equal(whole_output(torch.cat([copy] * 8), artifacts.plan.mesh, C), copy)
    differing = torch.cat([copy] * 7 + [copy + 1])
    with pytest.raises(TTDeviceError, match="replicated C: the devices' copies differ"):
        whole_output(differing, artifacts.plan.mesh, C)
