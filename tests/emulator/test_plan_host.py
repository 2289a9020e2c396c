"""The plan host (tilelang_tt/emulator/plan_host.py, plan_host.cpp): a run sets the program up from the plan
without compiling main.cpp, and computes and predicts what the run of main.cpp does: every output equal bit for bit
and every counter equal, for programs using each part of the host's work (multicast NOC coordinates, data the
timing depends on, block floating point and sharded buffers with their common runtime args, a chain of atomic adds
and its semaphores, sizes given at run time, several launches and a scratch tensor, an output's contents given
before the call) and for every golden program; a mesh of chips runs its main.cpp."""

from __future__ import annotations

import pytest
import torch

import tilelang_tt
from tests.compiler.test_block_sparse import masked_gemm, random_mask
from tests.compiler.test_dynamic_shapes import matmul as dynamic_matmul
from tests.compiler.test_golden import GOLDEN, OP_RUNS
from tests.compiler.test_launches import chain
from tests.kernels import bmm, gemm, split_k_gemm
from tilelang_tt.arguments import bind
from tilelang_tt.artifacts import Artifacts
from tilelang_tt.emulator import driver, plan_host
from tilelang_tt.layout import BufferLayout


def bf16(*shape, seed):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(torch.bfloat16)


CASES = {  # name: (artifacts, inputs by buffer name)
    "multicast": lambda: (tilelang_tt.compile(gemm(128, 128, 256, 32, 32, 64)),
                          {"A": bf16(128, 256, seed=1), "B": bf16(256, 128, seed=2)}),
    "sparse": lambda: (tilelang_tt.compile(masked_gemm(64, 96, 128, mask_dtype="uint8"), grid=(2, 2)),
                       {"A": bf16(64, 128, seed=4), "B": bf16(128, 96, seed=5),
                        "Mask": random_mask(64, 96, 128, seed=3, dtype=torch.uint8)}),
    "bfp8-sharded": lambda: (tilelang_tt.compile(
        gemm(64, 64, 128, 32, 32, 32), grid=(2, 1),
        layouts={"A": BufferLayout(dtype="bfloat8_b"),
                 "B": BufferLayout(memory="L1", layout="height_sharded", shard_grid=(2, 1))}),
        {"A": bf16(64, 128, seed=6), "B": bf16(128, 64, seed=7)}),
    "split-k": lambda: (tilelang_tt.compile(split_k_gemm(64, 64, 256, 32, 32, 32, 4), grid=(4, 2)),
                        {"A": bf16(64, 256, seed=8), "B": bf16(256, 64, seed=9), "C": torch.randn(64, 64)}),
    "dynamic": lambda: (tilelang_tt.compile(dynamic_matmul(64, 64, 32), grid=(3, 2)),
                        {"A": bf16(100, 50, seed=10), "B": bf16(50, 130, seed=11)}),
    "launches": lambda: (tilelang_tt.compile(chain()), {"A": torch.randn(64, 96)}),
}


@pytest.mark.parametrize("case", CASES)
def test_a_timing_run_predicts_what_main_cpp_predicts(case):
    artifacts, inputs = CASES[case]()
    plan = artifacts.plan
    assert plan_host.replaces_main(artifacts.sources, plan)
    full = driver.run(artifacts.sources, plan, inputs, main_cpp=True)
    assert full.outputs
    kernels_only = {file: text for file, text in artifacts.sources.items() if file != "main.cpp"}
    timed = driver.run(kernels_only, plan, inputs, timing_only=True)  # no main.cpp: the plan host ran it
    assert timed.outputs == {}
    assert timed.counters == full.counters


def assert_same_run(ran: driver.EmulatorResult, main: driver.EmulatorResult) -> None:
    """The same outputs, bit for bit (NaNs too), and the same counters."""
    assert main.outputs and ran.outputs.keys() == main.outputs.keys()
    for name, expected in main.outputs.items():
        got = ran.outputs[name]
        assert got.dtype == expected.dtype and got.shape == expected.shape, name
        assert got.tobytes() == expected.tobytes(), f"{name} differs from main.cpp's"
    assert ran.counters == main.counters


@pytest.mark.parametrize("case", CASES)
def test_a_run_computes_what_main_cpp_computes(case):
    artifacts, inputs = CASES[case]()
    ran = driver.run(artifacts.sources, artifacts.plan, inputs)  # the plan host: main.cpp is the compiler's
    assert_same_run(ran, driver.run(artifacts.sources, artifacts.plan, inputs, main_cpp=True))


# the golden programs of one device (a mesh runs its main.cpp), their inputs those test_golden runs them on
GOLDEN_RUNS = {"eltwise_add": lambda: [bf16(256, 512, seed=1), bf16(256, 512, seed=2)],
               **{name: make for name, (make, _, _) in OP_RUNS.items() if name != "gemm_split_k_mesh"}}


@pytest.mark.parametrize("name", sorted(GOLDEN_RUNS))
def test_a_run_of_a_golden_program_computes_what_its_main_cpp_computes(name):
    artifacts = Artifacts.load(GOLDEN / name)
    assert plan_host.replaces_main(artifacts.sources, artifacts.plan)
    inputs = bind(artifacts.plan, GOLDEN_RUNS[name]())
    ran = driver.run(artifacts.sources, artifacts.plan, inputs)
    assert_same_run(ran, driver.run(artifacts.sources, artifacts.plan, inputs, main_cpp=True))


def test_a_run_given_its_data_folder_runs_main_cpp(tmp_path):
    """The data folder holds main.cpp's files (<buffer>.bin, <buffer>.out.bin: Contract 2)."""
    artifacts, inputs = CASES["multicast"]()
    driver.run(artifacts.sources, artifacts.plan, inputs, data_dir=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["A.bin", "B.bin", "C.out.bin", "counters.json"]


def test_the_timing_of_data_it_depends_on_follows_the_data():
    """The pages the plan host uploads are main.cpp's: another mask, other DRAM reads, each main.cpp's."""
    artifacts = tilelang_tt.compile(masked_gemm(64, 96, 128, mask_dtype="uint8"), grid=(2, 2))
    a, b = bf16(64, 128, seed=4), bf16(128, 96, seed=5)
    read = []
    for seed in (3, 13):
        inputs = {"A": a, "B": b, "Mask": random_mask(64, 96, 128, seed=seed, dtype=torch.uint8)}
        full = driver.run(artifacts.sources, artifacts.plan, inputs, main_cpp=True).counters
        assert driver.run(artifacts.sources, artifacts.plan, inputs, timing_only=True).counters == full
        read.append(full["total"]["dram_bytes_read"])
    assert read[0] != read[1]


def test_a_mesh_runs_its_main_cpp():
    artifacts = tilelang_tt.compile(bmm(2, 64, 64, 64, 32, 32, 32), mesh=(1, 2))
    assert not plan_host.replaces_main(artifacts.sources, artifacts.plan)
    inputs = {"A": bf16(2, 64, 64, seed=1), "B": bf16(2, 64, 64, seed=2)}
    full = driver.run(artifacts.sources, artifacts.plan, inputs)
    assert driver.run(artifacts.sources, artifacts.plan, inputs, timing_only=True).counters == full.counters


def test_the_script_gives_accessors_addresses_and_noc_coordinates_by_name(tmp_path):
    artifacts = tilelang_tt.compile(gemm(128, 128, 256, 32, 32, 64), multicast="on")  # multicast coordinates
    script = plan_host.write_script(artifacts.plan, {}, tmp_path).read_text().splitlines()
    assert script[:3] == [f"buffer {name} {128 * 256 * 2 if name != 'C' else 128 * 128 * 2} 2048 0" for name in "ABC"]
    args = [line for line in script if line.startswith("args ")]
    assert any("@A" in line.split() for line in args) and any("@C" in line.split() for line in args)
    runtime = [line.split() for line in script if line.startswith("runtime ")]
    assert any(token.startswith("noc_x:") for line in runtime for token in line)
    assert script[-1] == "enqueue"


def test_a_main_cpp_other_than_the_compilers_runs_itself():
    """A host program written otherwise (a vendor program's, an edited one) makes calls of its own: it runs."""
    artifacts = tilelang_tt.compile(gemm(64, 64, 64, 32, 32, 32))
    edited = {**artifacts.sources, "main.cpp": artifacts.sources["main.cpp"] + "// edited\n"}
    assert plan_host.replaces_main(artifacts.sources, artifacts.plan)
    assert not plan_host.replaces_main(edited, artifacts.plan)
    broken = {**artifacts.sources, "main.cpp": "int main() { return 7; }\n"}
    with pytest.raises(driver.EmulatorError, match="exited with code 7"):
        driver.run(broken, artifacts.plan, {"A": bf16(64, 64, seed=1), "B": bf16(64, 64, seed=2)}, timing_only=True)
