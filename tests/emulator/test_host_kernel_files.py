"""Host programs that name Tenstorrent's kernels by their files: the emulated CreateKernel finds the
file as tt-metal 0.81.1 does (relative to TT_METAL_RUNTIME_ROOT, the pinned wheel's root) and, at
launch, builds it with the config's compile-time args, named compile-time args and defines and the
program's CB formats (runtime/jit.hpp), as tt-metal's JIT build does. The programs reproduce the
program factories' arguments (tests/emulator/test_ttnn_kernels.py states the factories); the data
are bfloat16 tiles the test tilizes, held in uint32 buffers.
"""

from __future__ import annotations

import re
import subprocess

from dataclasses import dataclass

import numpy as np
import pytest
import torch

from tests.emulator.plans import host_program_plan, host_program_sources
from tilelang_tt.contract.plan import Plan
from tilelang_tt.emulator import EmulatorError, run
from tilelang_tt.emulator.driver import build
from tilelang_tt.env import ttnn_kernels_root

from .device_harness import split_work
from .test_ttnn_kernels import (BINARY_COMPUTE, BMM_COMPUTE, BMM_READER, SFPU_COMPUTE, TILE, UNARY_READER,
                                UNARY_WRITER, bf16, from_tiles, matmul_close, sfpu_chain, tiles_of, torch_bf16)

ROOT_PREFIX = "ttnn/cpp/"  # the factories' kernel paths are relative to tt-metal's root dir

PRELUDE = r"""
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <tt-metalium/core_coord.hpp>
#include <tt-metalium/distributed.hpp>
#include <tt-metalium/host_api.hpp>
#include <tt-metalium/mesh_device.hpp>
#include <tt-metalium/tensor_accessor_args.hpp>

using namespace tt;
using namespace tt::tt_metal;

namespace {

std::vector<uint32_t> read_words(const std::filesystem::path& path, std::size_t count) {
    std::ifstream file(path, std::ios::binary);
    std::vector<uint32_t> values(count);
    file.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(count * 4));
    return values;
}

void write_words(const std::filesystem::path& path, const std::vector<uint32_t>& values) {
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * 4));
}

}  // namespace

int main(int argc, char** argv) {
    const std::filesystem::path data_dir = argv[1];
    std::shared_ptr<distributed::MeshDevice> device = distributed::MeshDevice::create_unit_mesh(0);
    distributed::MeshCommandQueue& command_queue = device->mesh_command_queue();
    constexpr uint32_t tile = 2048;
    distributed::DeviceLocalBufferConfig dram{.page_size = tile, .buffer_type = BufferType::DRAM};
    Program program = CreateProgram();
"""

EPILOGUE = r"""
    distributed::MeshWorkload workload;
    workload.add_program(distributed::MeshCoordinateRange(device->shape()), std::move(program));
    distributed::EnqueueMeshWorkload(command_queue, workload, false);
    distributed::Finish(command_queue);
OUTPUTS
    device->close();
    return 0;
}
"""


@dataclass(frozen=True)
class HostKernel:
    path: str  # under ttnn's include root, as test_ttnn_kernels names them
    config: str  # the C++ config expression (its compile_args may name the vector `<var>_ct`)
    compile_args: str = ""  # C++ statements filling `<var>_ct` (TensorAccessorArgs ...)
    runtime_args: tuple[str, ...] = ()  # per core, C++ initializer lists


def host_program(cores: int, buffers: dict[str, tuple[int, bool]], cbs: dict[int, int],
                 kernels: dict[str, HostKernel]) -> str:
    """main.cpp of a program on cores (0..cores-1, 0): ``buffers`` name -> (tiles, is input), interleaved
    DRAM, bfloat16 tiles; ``cbs`` index -> tiles (one CircularBufferConfig each, Float16_b);
    ``kernels`` variable name -> kernel."""
    body = [f"    CoreRange cores(CoreCoord{{0, 0}}, CoreCoord{{{cores - 1}, 0}});"]
    outputs = []
    for name, (tiles, is_input) in buffers.items():
        body.append(f"    auto {name} = distributed::MeshBuffer::create(distributed::ReplicatedBufferConfig{{.size = "
                    f"{tiles} * tile}}, dram, device.get());")
        body.append(f"    const uint32_t {name}_address = static_cast<uint32_t>({name}->get_reference_buffer()->address());")
        if is_input:
            body.append(f"    command_queue.enqueue_write_mesh_buffer({name}, read_words(data_dir / \"{name}.bin\", "
                        f"{tiles} * tile / 4).data(), false);")
        else:
            outputs.append(f"    std::vector<uint32_t> {name}_out({tiles} * tile / 4);\n"
                           f"    command_queue.enqueue_read_mesh_buffer({name}_out.data(), {name}, true);\n"
                           f"    write_words(data_dir / \"{name}.out.bin\", {name}_out);")
    for index, tiles in cbs.items():
        body.append(f"    CircularBufferConfig cb_{index}({tiles} * tile, {{{{{index}, tt::DataFormat::Float16_b}}}});\n"
                    f"    cb_{index}.set_page_size({index}, tile);\n"
                    f"    CreateCircularBuffer(program, cores, cb_{index});")
    for var, k in kernels.items():
        body.append(f"    std::vector<uint32_t> {var}_ct;\n{k.compile_args}")
        body.append(f"    KernelHandle {var} = CreateKernel(program, \"{ROOT_PREFIX}{k.path}\", cores, {k.config});")
        body += [f"    SetRuntimeArgs(program, {var}, CoreCoord{{{x}, 0}}, std::vector<uint32_t>{args});"
                 for x, args in enumerate(k.runtime_args)]
    return PRELUDE + "\n".join(body) + EPILOGUE.replace("OUTPUTS", "\n".join(outputs))


def buffer_entry(name: str, tiles: int, access: str) -> dict:
    return {"name": name, "access": access, "shape": [tiles, TILE // 4], "dtype": "uint32"}


def words(x: np.ndarray) -> np.ndarray:
    """bfloat16 tiles of ``x`` as the uint32 words of a buffer."""
    return np.frombuffer(tiles_of(x), dtype=np.uint32).reshape(-1, TILE // 4)


def reader_config(ct: str = "reader_ct") -> str:
    return f"DataMovementConfig{{.processor = DataMovementProcessor::RISCV_1, .noc = NOC::RISCV_1_default, .compile_args = {ct}"


def writer_config(ct: str = "writer_ct") -> str:
    return f"DataMovementConfig{{.processor = DataMovementProcessor::RISCV_0, .noc = NOC::RISCV_0_default, .compile_args = {ct}"


def cpp_map(entries: dict[str, str]) -> str:
    return "{" + ", ".join(f'{{"{k}", "{v}"}}' for k, v in entries.items()) + "}"


def cpp_named(entries: dict[str, int]) -> str:
    return "{" + ", ".join(f'{{"{k}", {v}}}' for k, v in entries.items()) + "}"


def accessor(buffer: str, var: str) -> str:
    return f"    TensorAccessorArgs(*{buffer}).append_to({var}_ct);\n"


@pytest.fixture(scope="module")
def wheel_kernels():
    if not (ttnn_kernels_root() / "ttnn/operations").is_dir():
        raise FileNotFoundError(f"{ttnn_kernels_root()} is missing; run `make headers` to fetch the ttnn 0.81.1 wheel")


def test_sfpu_chain_defines_through_create_kernel(wheel_kernels):
    # UnaryProgramFactory's kernels and arguments (test_ttnn_kernels.unary_program), the SFPU_OP_CHAIN_0
    # defines in ComputeConfig::defines; the kernels' includes of api/... resolve to the emulator's.
    x = bf16((64, 96), seed=21)
    tiles, cores = 6, 2
    work = split_work(tiles, cores)
    chain = sfpu_chain("relu_tile_init();", "relu_tile(0);", "SFPU_OP_RELU_FAMILY_INCLUDE")
    main = host_program(cores, {"X": (tiles, True), "Y": (tiles, False)}, {0: 2, 2: 2}, {
        "reader": HostKernel(UNARY_READER, reader_config() + "}", accessor("X", "reader"),
                             tuple(f"{{X_address, {n}, {s}}}" for s, n in work)),
        "compute": HostKernel(SFPU_COMPUTE, f"ComputeConfig{{.math_fidelity = MathFidelity::HiFi4, .defines = "
                                            f"{cpp_map(chain)}}}", "", tuple(f"{{{n}}}" for _, n in work)),
        "writer": HostKernel(UNARY_WRITER, writer_config() + "}", "    writer_ct.push_back(2);\n" + accessor("Y", "writer"),
                             tuple(f"{{Y_address, {n}, {s}}}" for s, n in work)),
    })
    plan = host_program_plan("wormhole_b0", [buffer_entry("X", tiles, "read"), buffer_entry("Y", tiles, "write")])
    result = run(host_program_sources(main), plan, {"X": words(x)})
    out = from_tiles(result.outputs["Y"].tobytes(), 64, 96)
    assert torch.equal(out, torch.relu(torch_bf16(x)).float())
    assert result.counters["total"]["tile_ops"]["relu_tile"] == tiles


def test_named_compile_args_through_create_kernel(wheel_kernels):
    # MatmulMultiCoreProgramFactory (test_ttnn_kernels.bmm_program): bmm.cpp and its reader find their
    # CBs by name (named_compile_args {cb_in0, cb_in1, cb_out}); one core group of 2 output tiles each.
    a, b = bf16((64, 96), seed=22), bf16((96, 64), seed=23)
    mt, kt, nt, cores = 2, 3, 2, 2
    work = split_work(mt * nt, cores)
    named = cpp_named({"cb_in0": 0, "cb_in1": 1, "cb_out": 16})
    main = host_program(cores, {"A": (mt * kt, True), "B": (kt * nt, True), "C": (mt * nt, False)},
                        {0: 2, 1: 2, 16: 2}, {
        "reader": HostKernel(BMM_READER, reader_config() + f", .named_compile_args = {named}}}",
                             "    reader_ct = {0, 0};\n" + accessor("A", "reader") + accessor("B", "reader"),
                             tuple(f"{{A_address, B_address, {mt}, {kt}, {nt}, {mt * kt}, {kt * nt}, 1, 0, {s}, {n}, "
                                   f"{mt * nt}}}" for s, n in work)),
        "compute": HostKernel(BMM_COMPUTE, f"ComputeConfig{{.compile_args = {{1, 1, {kt}, {work[0][1]}}}, "
                                           f".named_compile_args = {named}}}", "", ("{}",) * cores),
        "writer": HostKernel(UNARY_WRITER, writer_config() + "}", "    writer_ct.push_back(16);\n" + accessor("C", "writer"),
                             tuple(f"{{C_address, {n}, {s}}}" for s, n in work)),
    })
    plan = host_program_plan("wormhole_b0", [buffer_entry("A", mt * kt, "read"), buffer_entry("B", kt * nt, "read"),
                                             buffer_entry("C", mt * nt, "write")])
    result = run(host_program_sources(main), plan, {"A": words(a), "B": words(b)})
    matmul_close(from_tiles(result.outputs["C"].tobytes(), 64, 64), a, b)


# ---------------------------------------------------------------- errors
# One host program, the case chosen by CASE.bin: each creates one kernel the way the case says.
CASES = {
    # eltwise_binary_kernel.cpp without binary_op_utils::get_defines' ELTWISE_OP_TYPE
    "missing_define": (BINARY_COMPUTE, 'ComputeConfig{.defines = {{"ELTWISE_OP", "add_tiles"}}}'),
    # bmm.cpp without its cb_out
    "missing_named_arg": (BMM_COMPUTE, 'ComputeConfig{.compile_args = {1, 1, 1, 1}, '
                                       '.named_compile_args = {{"cb_in0", 0}, {"cb_in1", 1}}}'),
    "missing_file": ("ttnn/operations/no_such_kernel.cpp", "ComputeConfig{}"),
    # the plan's reader, compiled into the program, given a define
    "compiled_in_with_define": (None, 'DataMovementConfig{.processor = DataMovementProcessor::RISCV_1, '
                                      '.defines = {{"X", "1"}}}'),
}


@pytest.fixture(scope="module")
def error_program(wheel_kernels):
    branches = []
    for i, (path, config) in enumerate(CASES.values()):
        name = "reader.cpp" if path is None else ROOT_PREFIX + path
        branches.append(f"    if (which == {i}) CreateKernel(program, \"{name}\", CoreCoord{{0, 0}}, {config});")
    main = PRELUDE + "    const uint32_t which = read_words(data_dir / \"CASE.bin\", 1)[0];\n" + "\n".join(branches) + \
        "\n    for (uint8_t cb : {0, 1, 16}) {\n" \
        "        CircularBufferConfig config(2 * tile, {{cb, tt::DataFormat::Float16_b}});\n" \
        "        config.set_page_size(cb, tile);\n        CreateCircularBuffer(program, CoreCoord{0, 0}, config);\n    }" + \
        EPILOGUE.replace("OUTPUTS", "")
    plan = host_program_plan("wormhole_b0", [{"name": "CASE", "access": "read", "shape": [1], "dtype": "uint32"}])
    return host_program_sources(main), plan


def run_case(error_program, case: str) -> str:
    sources, plan = error_program
    with pytest.raises(EmulatorError) as err:
        run(sources, plan, {"CASE": np.array([list(CASES).index(case)], dtype=np.uint32)})
    assert err.value.returncode == 3
    return str(err.value)


def test_a_define_the_kernel_needs_and_the_program_did_not_give(error_program):
    message = run_case(error_program, "missing_define")
    assert "building kernel " in message and "eltwise_binary_kernel.cpp failed" in message
    assert "defines { ELTWISE_OP=add_tiles; }" in message  # what the program gave
    assert re.search(r"ELTWISE_OP_TYPE\W* was not declared", message)  # what the kernel needs (g++ quotes it)


def test_a_named_arg_the_kernel_needs_and_the_program_did_not_give(error_program):
    message = run_case(error_program, "missing_named_arg")
    assert "bmm.cpp failed" in message
    assert "named compile-time args { cb_in0=0; cb_in1=1; }" in message
    assert '"cb_out"' in message  # the compiler names the lookup that failed


def test_a_kernel_file_that_is_nowhere(error_program):
    message = run_case(error_program, "missing_file")
    assert "Kernel file ttnn/cpp/ttnn/operations/no_such_kernel.cpp doesn't exist in any of the searched paths" in message
    assert str(ttnn_kernels_root() / "ttnn/operations/no_such_kernel.cpp") in message  # under TT_METAL_RUNTIME_ROOT


def test_a_compiled_in_kernel_takes_no_defines(error_program):
    message = run_case(error_program, "compiled_in_with_define")
    assert "reader.cpp is compiled into the program (a plan's kernel) without defines" in message


def test_a_kernel_file_needs_the_drivers_build_environment(error_program, tmp_path):
    # Run outside the driver (no TT_EMU_KERNEL_BUILD): the program says what it lacks.
    sources, plan = error_program
    exe = build(sources, Plan.from_json(plan))
    np.array([list(CASES).index("missing_define")], dtype=np.uint32).tofile(tmp_path / "CASE.bin")
    env = {"PATH": "/usr/bin:/bin", "TT_EMU_COUNTERS": str(tmp_path / "counters.json"),
           "TT_METAL_RUNTIME_ROOT": str(ttnn_kernels_root().parent.parent)}
    done = subprocess.run([str(exe), str(tmp_path)], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 3
    assert "TT_EMU_KERNEL_BUILD" in done.stderr and "they are not set" in done.stderr
