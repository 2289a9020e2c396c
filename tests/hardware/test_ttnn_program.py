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
from tests.kernels import bmm
from tilelang_tt.contract.vocabulary import BufferAddress, NocCoord, runtime_value
from tilelang_tt.host.ttnn_program import NO_DEVICE_MESSAGE, TTDeviceError, run_on_device

NO_TTNN = importlib.util.find_spec("ttnn") is None

ROOT = Path(__file__).resolve().parents[2]
PY312 = ROOT / ".venv312" / "bin" / "python"
SCRIPT = Path(__file__).with_name("describe_program.py")
FLOAT16_B = 5  # tt::DataFormat::Float16_b, as ttnn reports it


def _example(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build()


def _describe(directory: Path, shapes: dict | None = None) -> dict:
    if not PY312.exists():
        pytest.skip("no .venv312 (Python 3.12 + ttnn==0.81.1); `make test` creates it")
    out = directory.parent / f"{directory.name}.summary.json"
    sizes = [json.dumps(shapes)] if shapes is not None else []
    done = subprocess.run([str(PY312), str(SCRIPT), str(directory), str(out), *sizes], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text())


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
