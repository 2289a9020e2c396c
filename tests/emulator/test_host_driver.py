"""The emulator driver and the emulated host API, with kernels that do nothing.

Every buffer is uploaded tilized, kept in the emulated DRAM and read back untilized, so a
readwrite buffer must come back unchanged (after rounding to its dtype).
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from tests.emulator.eltwise_add import make_plan
from tilelang_tt.emulator import EmulatorError, EmulatorResult, run
from tilelang_tt.emulator.driver import bfloat16_bits_to_float32

IDLE = {name: "void kernel_main() {}\n" for name in ("reader.cpp", "compute.cpp", "writer.cpp")}


def _bfloat16(values: np.ndarray) -> np.ndarray:
    return torch.from_numpy(values).to(torch.bfloat16).to(torch.float32).numpy()


def _readwrite_plan(rows: int, cols: int, cores: int = 2) -> dict:
    plan = make_plan(rows=rows, cols=cols, cores=cores)
    plan["buffers"][2]["access"] = "readwrite"
    return plan


@pytest.mark.parametrize("rows, cols", [(64, 96), (40, 70)])
def test_buffers_round_trip_through_device_dram(rows, cols):
    plan = _readwrite_plan(rows, cols)
    values = np.random.default_rng(rows).standard_normal((rows, cols)).astype(np.float32)
    result = run(IDLE, plan, {"A": values, "B": values, "C": values * 3})
    assert isinstance(result, EmulatorResult)
    assert list(result.outputs) == ["C"]
    assert result.outputs["C"].dtype == np.float32
    np.testing.assert_array_equal(result.outputs["C"], _bfloat16(values * 3))


def test_torch_bfloat16_inputs_are_passed_bit_exactly():
    plan = _readwrite_plan(32, 64)
    tensor = torch.randn(32, 64, dtype=torch.bfloat16)
    result = run(IDLE, plan, {"A": tensor, "B": tensor, "C": tensor})
    expected = bfloat16_bits_to_float32(tensor.view(torch.int16).numpy().view(np.uint16))
    np.testing.assert_array_equal(result.outputs["C"], expected)


def test_float32_buffers():
    plan = _readwrite_plan(32, 32, cores=1)
    for buffer in plan["buffers"]:
        buffer.update(dtype="float32", data_format="Float32", page_size=4096)
    for cb in plan["cbs"]:
        cb.update(data_format="Float32", page_size=4096)
    for accessor in plan["tensor_accessors"]:
        accessor["compile_time_args"] = [2, 4096]
    plan["kernels"][0]["compile_time_args"] = [2, 4096, 2, 4096]
    plan["kernels"][2]["compile_time_args"] = [2, 4096]
    values = np.arange(32 * 32, dtype=np.float32).reshape(32, 32) / 7
    result = run(IDLE, plan, {"A": values, "B": values, "C": values})
    np.testing.assert_array_equal(result.outputs["C"], values)


def test_counters_cover_the_active_cores():
    plan = _readwrite_plan(32, 64, cores=2)
    values = np.ones((32, 64), dtype=np.float32)
    counters = run(IDLE, plan, {"A": values, "B": values, "C": values}).counters
    assert sorted(tuple(c["core"]) for c in counters["cores"]) == [(0, 0), (1, 0)]
    assert "total" in counters


def test_emulator_errors_carry_the_message_and_exit_code():
    plan = copy.deepcopy(_readwrite_plan(32, 32, cores=1))
    plan["arch"] = "grayskull"
    values = np.ones((32, 32), dtype=np.float32)
    with pytest.raises(EmulatorError, match="grayskull") as caught:
        run(IDLE, plan, {"A": values, "B": values, "C": values})
    assert caught.value.returncode == 3


def test_compile_args_must_agree_with_the_host_program():
    plan = _readwrite_plan(32, 32, cores=1)
    sources = dict(IDLE)
    # The kernels are built with the plan's args, the host derives them from the buffers: a plan
    # that lies about the accessor's page size is caught when the kernel is created.
    plan["kernels"][2]["compile_time_args"] = [2, 1024]
    plan["tensor_accessors"][2]["compile_time_args"] = [2, 1024]
    values = np.ones((32, 32), dtype=np.float32)
    with pytest.raises(EmulatorError) as caught:
        run(sources, plan, {"A": values, "B": values, "C": values})
    assert caught.value.returncode == 3
    assert "writer.cpp" in str(caught.value)


def test_inputs_are_checked():
    plan = _readwrite_plan(32, 32, cores=1)
    values = np.ones((32, 32), dtype=np.float32)
    with pytest.raises(EmulatorError, match="missing"):
        run(IDLE, plan, {"A": values, "B": values})
    with pytest.raises(EmulatorError, match="shape"):
        run(IDLE, plan, {"A": values, "B": values, "C": np.ones((32, 33), dtype=np.float32)})
