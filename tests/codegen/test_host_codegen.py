"""main.cpp generation from a plan (Contract 2)."""

from __future__ import annotations

import copy
import subprocess

import pytest

from tests.emulator.eltwise_add import make_plan
from tilelang_tt.codegen.host import emit_main_cpp
from tilelang_tt.contract.plan import PlanError
from tilelang_tt.emulator.driver import INCLUDE_DIR


def test_main_cpp_is_deterministic():
    assert emit_main_cpp(make_plan()) == emit_main_cpp(make_plan())
    assert emit_main_cpp(make_plan()) != emit_main_cpp(make_plan(cores=3))


def test_main_cpp_follows_the_plan():
    text = emit_main_cpp(make_plan(rows=64, cols=96, cores=2))
    assert 'read_elements<uint16_t>(data_dir / "A.bin", 6144)' in text
    assert "tilize(input_B, 1, 64, 96)" in text
    assert 'data_dir / "C.out.bin"' in text and "C.bin" not in text.replace("C.out.bin", "")
    assert "CircularBufferConfig cb16_config(4096, cb16_formats);" in text
    assert "cb16_config.set_page_size(16, 2048);" in text
    assert "TensorAccessorArgs reader_accessor_B(*buffer_B);" in text
    assert "DataMovementProcessor::RISCV_1, .noc = NOC::RISCV_1_default" in text
    assert "ComputeConfig{.math_fidelity = MathFidelity::HiFi4, .fp32_dest_acc_en = false" in text
    assert "CoreCoord{1, 0}, std::vector<uint32_t>{address_A, address_B, 3, 3}" in text
    assert "create_unit_mesh(0)" in text and "wormhole_b0\"" not in text
    assert "TODO" not in text


def test_literal_compile_args_interleave_with_accessors():
    plan = make_plan()
    reader = plan["kernels"][0]
    reader["compile_time_args"] = [7, *reader["compile_time_args"], 9]
    for accessor in plan["tensor_accessors"]:
        if accessor["kernel"] == "reader":
            accessor["cta_offset"] += 1
    text = emit_main_cpp(plan)
    start = text.index("std::vector<uint32_t> reader_compile_args;")
    block = text[start : text.index("KernelHandle reader_kernel")]
    assert block.split("\n")[1:-1] == [
        "        reader_compile_args.push_back(7);",
        "        TensorAccessorArgs reader_accessor_A(*buffer_A);",
        "        reader_accessor_A.append_to(reader_compile_args);",
        "        TensorAccessorArgs reader_accessor_B(*buffer_B);",
        "        reader_accessor_B.append_to(reader_compile_args);",
        "        reader_compile_args.push_back(9);",
    ]


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda p: p["buffers"][0].update(data_format="Float32"), "holds one element per datum"),
        (lambda p: p["buffers"][0].update(num_pages=5), "num_pages"),
        (lambda p: p["tensor_accessors"][0].update(compile_time_args=[0, 2048]), "TensorAccessorArgs"),
        (lambda p: p["runtime_args"][0]["reader"].__setitem__(0, "@Z"), "'@Z'"),
        (lambda p: p["runtime_args"][0]["compute"].__setitem__(0, -1), "unsigned 32-bit"),
        (lambda p: p["kernels"][1].update(math_fidelity="HiFi5"), "math_fidelity"),
        (lambda p: p["buffers"][0].update(memory="L1"),
         r"^buffer 'A': main.cpp places interleaved buffers in DRAM only, not in L1$"),
        (lambda p: p["buffers"][0].update(tile_shape=[16, 32], page_size=1024, num_pages=12),
         r"^buffer 'A': only 32x32 tiles are supported, got \[16, 32\]$"),
    ],
)
def test_inconsistent_plans_are_rejected(mutate, message):
    plan = copy.deepcopy(make_plan())
    mutate(plan)
    with pytest.raises(PlanError, match=message):
        emit_main_cpp(plan)


def test_main_cpp_compiles_against_the_emulated_host_api(tmp_path):
    source = tmp_path / "main.cpp"
    source.write_text(emit_main_cpp(make_plan()))
    done = subprocess.run(
        ["g++", "-std=c++20", "-fsyntax-only", "-Wall", "-Werror", f"-I{INCLUDE_DIR}", str(source)],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr


def test_semaphores_are_created_with_the_planned_ids(tmp_path):
    plan = make_plan()
    plan["semaphores"] = [{"id": 0, "name": "go", "initial_value": 0}, {"id": 1, "name": "done", "initial_value": 5}]
    text = emit_main_cpp(plan)
    assert "if (CreateSemaphore(program, cores, 5) != 1) {" in text
    plan["semaphores"][1]["id"] = 3
    with pytest.raises(ValueError, match="semaphore ids"):
        emit_main_cpp(plan)
