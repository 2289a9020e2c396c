"""The emulator driver and the emulated host API, with kernels that do nothing.

Every buffer is uploaded tilized, kept in the emulated DRAM and read back untilized, so a
readwrite buffer must come back unchanged (after rounding to its dtype).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.emulator.eltwise_add import make_plan, plan_json, program_sources
from tilelang_tt.contract.plan import Plan
from tilelang_tt.emulator import EmulatorError, EmulatorResult, driver, run
from tilelang_tt.emulator.driver import bfloat16_bits_to_float32

IDLE = {name: "void kernel_main() {}\n" for name in ("reader.cpp", "compute.cpp", "writer.cpp")}


def idle(plan: Plan) -> dict[str, str]:
    """The plan's host program with kernels that do nothing."""
    return program_sources(plan, IDLE)


def _bfloat16(values: np.ndarray) -> np.ndarray:
    return torch.from_numpy(values).to(torch.bfloat16).to(torch.float32).numpy()


def _readwrite_json(rows: int, cols: int, cores: int = 2) -> dict:
    plan = plan_json(rows=rows, cols=cols, cores=cores)
    plan["buffers"][2]["access"] = "readwrite"
    return plan


def _readwrite_plan(rows: int, cols: int, cores: int = 2) -> Plan:
    return Plan.from_json(_readwrite_json(rows, cols, cores))


@pytest.mark.parametrize("rows, cols", [(64, 96), (40, 70)])
def test_buffers_round_trip_through_device_dram(rows, cols):
    plan = _readwrite_plan(rows, cols)
    values = np.random.default_rng(rows).standard_normal((rows, cols)).astype(np.float32)
    result = run(idle(plan), plan, {"A": values, "B": values, "C": values * 3})
    assert isinstance(result, EmulatorResult)
    assert list(result.outputs) == ["C"]
    assert result.outputs["C"].dtype == np.float32
    np.testing.assert_array_equal(result.outputs["C"], _bfloat16(values * 3))


def test_torch_bfloat16_inputs_are_passed_bit_exactly():
    plan = _readwrite_plan(32, 64)
    tensor = torch.randn(32, 64, dtype=torch.bfloat16)
    result = run(idle(plan), plan, {"A": tensor, "B": tensor, "C": tensor})
    expected = bfloat16_bits_to_float32(tensor.view(torch.int16).numpy().view(np.uint16))
    np.testing.assert_array_equal(result.outputs["C"], expected)


def test_float32_buffers():
    plan = _readwrite_json(32, 32, cores=1)
    for buffer in plan["buffers"]:
        buffer.update(dtype="float32", data_format="Float32", page_size=4096)
    for cb in plan["cbs"]:
        cb.update(data_format="Float32", page_size=4096)
    for accessor in plan["tensor_accessors"]:
        accessor["compile_time_args"] = [2, 4096]
    plan["kernels"][0]["compile_time_args"] = [2, 4096, 2, 4096]
    plan["kernels"][2]["compile_time_args"] = [2, 4096]
    plan = Plan.from_json(plan)
    values = np.arange(32 * 32, dtype=np.float32).reshape(32, 32) / 7
    result = run(idle(plan), plan, {"A": values, "B": values, "C": values})
    np.testing.assert_array_equal(result.outputs["C"], values)


def test_counters_cover_the_active_cores():
    plan = _readwrite_plan(32, 64, cores=2)
    values = np.ones((32, 64), dtype=np.float32)
    counters = run(idle(plan), plan, {"A": values, "B": values, "C": values}).counters
    assert sorted(tuple(c["core"]) for c in counters["cores"]) == [(0, 0), (1, 0)]
    assert "total" in counters


def test_emulator_errors_carry_the_message_and_exit_code():
    plan = _readwrite_plan(32, 32, cores=1)
    popping = '#include "api/dataflow/dataflow_api.h"\nvoid kernel_main() { cb_pop_front(16, 1); }\n'
    values = np.ones((32, 32), dtype=np.float32)
    with pytest.raises(EmulatorError, match=r"core \(0,0\) writer kernel 'writer.cpp': cb_pop_front\(CB 16, 1\) pops "
                                            r"more pages than waited for .* at writer.cpp:2") as caught:
        run(idle(plan) | {"writer.cpp": popping}, plan, {"A": values, "B": values, "C": values})
    assert caught.value.returncode == 3


def test_a_program_without_main_cpp_is_an_error():
    plan = _readwrite_plan(32, 32, cores=1)
    values = np.ones((32, 32), dtype=np.float32)
    with pytest.raises(EmulatorError, match=r"^the program lacks main.cpp \(sources given: \['compute.cpp', "
                                            r"'reader.cpp', 'writer.cpp'\]\); tilelang_tt.compile\(\) writes every "
                                            r"file of a program") as caught:
        run(IDLE, plan, {"A": values, "B": values, "C": values})
    assert caught.value.returncode is None


def test_the_driver_does_not_import_codegen():
    tree = ast.parse(Path(driver.__file__).read_text())
    imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert "tilelang_tt.contract.plan" in imported
    assert [m for m in imported if m.startswith("tilelang_tt.codegen")] == []


def test_compile_args_must_agree_with_the_host_program():
    plan = _readwrite_json(32, 32, cores=1)
    sources = idle(Plan.from_json(plan))
    # The kernels are built with the plan's args, the host derives them from the buffers: a plan
    # that lies about the accessor's page size is caught when the kernel is created.
    plan["kernels"][2]["compile_time_args"] = [2, 1024]
    plan["tensor_accessors"][2]["compile_time_args"] = [2, 1024]
    values = np.ones((32, 32), dtype=np.float32)
    with pytest.raises(EmulatorError) as caught:
        run(sources, Plan.from_json(plan), {"A": values, "B": values, "C": values})
    assert caught.value.returncode == 3
    assert "writer.cpp" in str(caught.value)


def test_inputs_are_checked():
    plan = _readwrite_plan(32, 32, cores=1)
    values = np.ones((32, 32), dtype=np.float32)
    with pytest.raises(EmulatorError, match="missing"):
        run(idle(plan), plan, {"A": values, "B": values})
    with pytest.raises(EmulatorError, match="shape"):
        run(idle(plan), plan, {"A": values, "B": values, "C": np.ones((32, 33), dtype=np.float32)})


def test_emulate_names_a_missing_main_cpp(tmp_path):
    program = Path(__file__).resolve().parents[1] / "golden" / "eltwise_add"
    for name in ("reader.cpp", "compute.cpp", "writer.cpp", "tt.plan.json"):
        (tmp_path / name).write_text((program / name).read_text())
    done = subprocess.run([sys.executable, "-c", "from tilelang_tt.cli import entry; entry()", "emulate", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 2
    assert done.stderr == (f"tilelang-tt: {tmp_path} is not a saved tilelang-tt program: it lacks main.cpp; write one "
                           "with Artifacts.save(DIR) or `tilelang-tt compile KERNEL.py --out DIR`\n")


# ---- progress: what `tilelang-tt emulate` shows on a terminal ----


def test_progress_reports_the_run_core_by_core():
    plan = make_plan(cores=3)
    values = np.ones((64, 96), dtype=np.float32)
    calls = []
    run(idle(plan), plan, {"A": values, "B": values}, progress=lambda *call: calls.append(call))
    running = [call for call in calls if call[0] == driver.RUNNING]
    assert running == [(driver.RUNNING, done, 3) for done in range(4)]  # at the launch, then as each core ends
    compiling = [call for call in calls if call[0] == driver.COMPILING]  # none when the build is cached
    assert compiling == [(driver.COMPILING, done, len(compiling)) for done in range(1, len(compiling) + 1)]


FAKE_CXX = """#!/bin/sh
# answers --version, and writes an empty file where -o points: the build's steps without compiling
if [ "$1" = "--version" ]; then echo "fake-c++ 1.0"; exit 0; fi
while [ $# -gt 0 ]; do
  if [ "$1" = "-o" ]; then : > "$2"; exit 0; fi
  shift
done
exit 1
"""


def test_progress_counts_each_step_of_a_build(tmp_path, monkeypatch):
    cxx = tmp_path / "fake-c++"
    cxx.write_text(FAKE_CXX)
    cxx.chmod(0o755)
    monkeypatch.setenv("TILELANG_TT_CXX", str(cxx))
    monkeypatch.setenv("TILELANG_TT_CACHE_DIR", str(tmp_path / "cache"))
    plan = make_plan()
    sources = idle(plan)
    calls = []
    driver.build(sources, plan, progress=lambda *call: calls.append(call))
    # the runtime's files and its library's link, the precompiled header, main.cpp, the three kernels and the link
    steps = len(list(driver.RUNTIME_DIR.glob("*.cpp"))) + 1 + 1 + 1 + 3 + 1
    assert calls == [(driver.COMPILING, done, steps) for done in range(1, steps + 1)]
    calls.clear()
    driver.build(sources, plan, progress=lambda *call: calls.append(call))
    assert calls == []  # cached: nothing to compile, nothing shown


# A reader that stops on a CB that does not exist (index 31) unless CB 0 and CB 2 are one L1 allocation.
SAME_L1_READER = """
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    if (get_local_cb_interface(0).fifo_limit != get_local_cb_interface(2).fifo_limit) cb_reserve_back(31, 1);
}
"""


@pytest.mark.parametrize("one_config", [True, False])
def test_the_indices_of_one_circular_buffer_config_share_its_l1(one_config):
    plan = _readwrite_plan(32, 64)
    sources = program_sources(plan, {**IDLE, "reader.cpp": SAME_L1_READER})
    main = sources["main.cpp"]
    if one_config:  # CB 2 in CB 0's config, as tt-metal's matmul factories put their output and partials
        edited = main.replace("cb0_formats = {{0, tt::DataFormat::Float16_b}};",
                              "cb0_formats = {{0, tt::DataFormat::Float16_b}, {2, tt::DataFormat::Float16_b}};")
        edited = edited.replace("cb0_config.set_page_size(0, 2048);",
                                "cb0_config.set_page_size(0, 2048);\n        cb0_config.set_page_size(2, 2048);")
    else:  # its own config: its own L1
        edited = main.replace("CreateCircularBuffer(program, cores, cb0_config);",
                              "CreateCircularBuffer(program, cores, cb0_config);\n"
                              "        std::map<uint8_t, tt::DataFormat> cb2_formats = {{2, tt::DataFormat::Float16_b}};\n"
                              "        CircularBufferConfig cb2_config(4096, cb2_formats);\n"
                              "        cb2_config.set_page_size(2, 2048);\n"
                              "        CreateCircularBuffer(program, cores, cb2_config);")
    assert edited != main
    values = np.ones((32, 64), dtype=np.float32)
    inputs = {"A": values, "B": values, "C": values}
    if one_config:
        run({**sources, "main.cpp": edited}, plan, inputs)
    else:
        with pytest.raises(EmulatorError, match="CB 31"):
            run({**sources, "main.cpp": edited}, plan, inputs)


@pytest.mark.parametrize("fp32", [False, True])
def test_a_compute_kernel_is_built_with_its_dst_accum_mode(fp32):
    """DST_ACCUM_MODE, which tt-metal's JIT writes into a compute kernel's descriptors from
    ComputeConfig::fp32_dest_acc_en, is the plan's in the driver's build too (a kernel may branch on
    it at compile time, as ttnn's kernel_lib does)."""
    plan = _readwrite_json(32, 32, cores=1)
    (compute,) = [k for k in plan["kernels"] if k["role"] == "compute"]
    compute["fp32_dest_acc_en"] = fp32
    plan = Plan.from_json(plan)
    check = f'#include "api/compute/common.h"\nstatic_assert({"" if fp32 else "!"}DST_ACCUM_MODE);\n'
    sources = program_sources(plan, IDLE | {"compute.cpp": check + IDLE["compute.cpp"]})
    values = np.ones((32, 32), dtype=np.float32)
    run(sources, plan, {"A": values, "B": values, "C": values})
