"""main.cpp generation from a plan (Contract 2)."""

from __future__ import annotations

import subprocess

import pytest

from tests.emulator.eltwise_add import make_plan, plan_json
from tilelang_tt.codegen.host import emit_main_cpp
from tilelang_tt.contract.plan import Plan
from tilelang_tt.contract.reading import PlanError
from tilelang_tt.emulator.driver import INCLUDE_DIR


def test_main_cpp_is_deterministic():
    assert emit_main_cpp(make_plan()) == emit_main_cpp(make_plan())
    assert emit_main_cpp(make_plan()) != emit_main_cpp(make_plan(cores=3))


def test_main_cpp_follows_the_plan():
    text = emit_main_cpp(make_plan(rows=64, cols=96, cores=2))
    assert 'read_elements<uint16_t>(data_dir / "A.bin", 6144)' in text
    assert "tilize(input_B, 1, 64, 96)" in text
    assert 'data_dir / "C.out.bin"' in text
    # the output's contents before the call, uploaded only when the caller gave them (its C.bin is there)
    when_given = text.split('if (std::filesystem::exists(data_dir / "C.bin")) {')[1].split("}")[0]
    assert 'read_elements<uint16_t>(data_dir / "C.bin", 6144)' in when_given
    assert "CircularBufferConfig cb16_config(4096, cb16_formats);" in text
    assert "cb16_config.set_page_size(16, 2048);" in text
    assert "TensorAccessorArgs reader_accessor_B(*buffer_B);" in text
    assert "DataMovementProcessor::RISCV_1, .noc = NOC::RISCV_1_default" in text
    assert "ComputeConfig{.math_fidelity = MathFidelity::HiFi4, .fp32_dest_acc_en = false" in text
    assert "CoreCoord{1, 0}, std::vector<uint32_t>{address_A, address_B, 3, 3}" in text
    assert "create_unit_mesh(0)" in text and "wormhole_b0\"" not in text
    assert "TODO" not in text


def test_literal_compile_args_interleave_with_accessors():
    plan = plan_json()
    reader = plan["kernels"][0]
    reader["compile_time_args"] = [7, *reader["compile_time_args"], 9]
    for accessor in plan["tensor_accessors"]:
        if accessor["kernel"] == "reader":
            accessor["cta_offset"] += 1
    text = emit_main_cpp(Plan.from_json(plan))
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
        (lambda p: p["buffers"][0].update(memory="L1"),
         r"^buffer 'A': main.cpp places interleaved buffers in DRAM only, not in L1$"),
        (lambda p: p["buffers"][0].update(tile_shape=[16, 32], page_size=1024, num_pages=12),
         r"^buffer 'A': only 32x32 tiles are supported, got \[16, 32\]$"),
    ],
)
def test_plans_main_cpp_cannot_serve_are_rejected(mutate, message):
    """Valid plans (the contract's checks: tests/contract/test_plan_reader.py) asking for what the
    host program does not do."""
    plan = plan_json()
    mutate(plan)
    with pytest.raises(PlanError, match=message):
        emit_main_cpp(Plan.from_json(plan))


def test_main_cpp_compiles_against_the_emulated_host_api(tmp_path):
    source = tmp_path / "main.cpp"
    source.write_text(emit_main_cpp(make_plan()))
    done = subprocess.run(
        ["g++", "-std=c++20", "-fsyntax-only", "-Wall", "-Werror", f"-I{INCLUDE_DIR}", str(source)],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr


def test_semaphores_are_created_with_the_planned_ids(tmp_path):
    plan = plan_json()
    plan["semaphores"] = [{"id": 0, "name": "go", "initial_value": 0}, {"id": 1, "name": "done", "initial_value": 5}]
    text = emit_main_cpp(Plan.from_json(plan))
    assert "if (CreateSemaphore(program, cores, 5) != 1) {" in text
