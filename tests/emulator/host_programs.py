"""Hand-written host programs that name Tenstorrent's kernels by their files (the emulated CreateKernel
builds them, runtime/jit.hpp): a main.cpp of interleaved DRAM buffers of bfloat16 tiles, circular
buffers and kernels on a row of cores, and the plan the driver needs around it. The programs reproduce
ttnn's program factories' arguments; tests/emulator/test_host_kernel_files.py runs them against torch,
benchmarks.calibration times one."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilelang_tt.env import ttnn_kernels_root

from .device_harness import bf16_bits, tilize

TILE = 2048  # bfloat16 tile bytes
ROOT_PREFIX = "ttnn/cpp/"  # the factories' kernel paths are relative to tt-metal's root dir


def wheel_kernel(path: str) -> str:
    """The kernel path a factory gives CreateKernel, relative to tt-metal's root dir (TT_METAL_RUNTIME_ROOT),
    of a kernel under ttnn's include root; the wheel must hold it (`make headers`)."""
    if not (ttnn_kernels_root() / path).is_file():
        raise FileNotFoundError(f"{ttnn_kernels_root() / path} is missing; run `make headers` to fetch the ttnn "
                                "0.81.1 wheel")
    return ROOT_PREFIX + path


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


def host_program(cores: int | tuple[int, int], buffers: dict[str, tuple[int, bool]],
                 cbs: dict[int | tuple[int, ...], int], kernels: dict[str, HostKernel]) -> str:
    """main.cpp of a program on cores (0..cores-1, 0), or a (columns, rows) grid: ``buffers`` name ->
    (tiles, is input), interleaved DRAM, bfloat16 tiles; ``cbs`` index -> tiles, one CircularBufferConfig
    each, Float16_b (a tuple of indices: one config holding them all, in the same L1); ``kernels``
    variable name -> kernel, its runtime args per core row-major over the grid."""
    cols, rows = (cores, 1) if isinstance(cores, int) else cores
    body = [f"    CoreRange cores(CoreCoord{{0, 0}}, CoreCoord{{{cols - 1}, {rows - 1}}});"]
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
    for key, tiles in cbs.items():
        indices = key if isinstance(key, tuple) else (key,)
        name = f"cb_{indices[0]}"
        formats = ", ".join(f"{{{i}, tt::DataFormat::Float16_b}}" for i in indices)
        body.append(f"    CircularBufferConfig {name}({tiles} * tile, {{{formats}}});")
        body += [f"    {name}.set_page_size({i}, tile);" for i in indices]
        body.append(f"    CreateCircularBuffer(program, cores, {name});")
    for var, k in kernels.items():
        body.append(f"    std::vector<uint32_t> {var}_ct;\n{k.compile_args}")
        body.append(f"    KernelHandle {var} = CreateKernel(program, \"{wheel_kernel(k.path)}\", cores, {k.config});")
        body += [f"    SetRuntimeArgs(program, {var}, CoreCoord{{{i % cols}, {i // cols}}}, std::vector<uint32_t>{args});"
                 for i, args in enumerate(k.runtime_args)]
    return PRELUDE + "\n".join(body) + EPILOGUE.replace("OUTPUTS", "\n".join(outputs))


def buffer_entry(name: str, tiles: int, access: str) -> dict:
    return {"name": name, "access": access, "shape": [tiles, TILE // 4], "dtype": "uint32"}


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


def tile_words(x: np.ndarray) -> np.ndarray:
    """bfloat16 tiles of ``x`` as the uint32 words of a buffer, a row per tile."""
    return bf16_bits(tilize(x)).view(np.uint32).reshape(-1, TILE // 4)


@dataclass(frozen=True)
class ReuseMatmul:
    """The arguments matmul_multi_core_reuse's create_program (matmul/device/matmul_op_multi_core_reuse_
    program_factory.cpp) gives bmm_large_block_zm.cpp and its reader_bmm_tile_layout.cpp /
    writer_bmm_tile_layout.cpp for C (mt x nt tiles) = A (mt x kt) @ B (kt x nt), one batch: the
    factory's blocking (it fixes in0_block_w 2, output sub-blocks 4 x 2 and 16 x 16 tiles per core; tests
    take smaller ones), one core per output block, row-major over the blocks (core i: block row
    i // blocks_x, column i % blocks_x)."""

    mt: int
    kt: int
    nt: int
    in0_block_w: int = 2
    out_subblock_h: int = 4
    out_subblock_w: int = 2
    per_core_m: int = 16
    per_core_n: int = 16

    @property
    def grid(self) -> tuple[int, int]:
        """(block columns, block rows)."""
        return self.nt // self.per_core_n, self.mt // self.per_core_m

    @property
    def cbs(self) -> dict[int | tuple[int, ...], int]:
        """c_0 double-buffers an in0 block, c_1 an in1 block; one CircularBufferConfig of an output block
        holds c_16 (output) and c_24 (partials) in the same L1."""
        out_block = self.per_core_m * self.per_core_n
        return {0: 2 * self.per_core_m * self.in0_block_w, 1: 2 * self.per_core_n * self.in0_block_w,
                (16, 24): out_block}

    named_args = {"cb_in0": 0, "cb_in1": 1, "cb_out": 16, "cb_intermed0": 24}

    @property
    def compute_args(self) -> tuple[int, ...]:
        w, sh, sw = self.in0_block_w, self.out_subblock_h, self.out_subblock_w
        in0_subblocks, in1_subblocks = self.per_core_m // sh, self.per_core_n // sw
        return (w, in0_subblocks, sh * w * in0_subblocks, sh * w, in1_subblocks, sw * w * in1_subblocks,
                sw * in1_subblocks, self.kt // w, sh, sw, sh * sw, 1)

    def reader_args(self, a: str, b: str) -> list[list[int | str]]:
        """Per core; ``a``, ``b``: how the program names the buffers' addresses."""
        mt, kt, nt, w, pm, pn = self.mt, self.kt, self.nt, self.in0_block_w, self.per_core_m, self.per_core_n
        return [[a, kt * pm * y, 1, kt, w, w, pm, w * pm, b, pn * x, 1, nt, w * nt, pn, w, pn * w, kt // w,
                 mt * kt, kt * nt, 1, 0] for y in range(self.grid[1]) for x in range(self.grid[0])]

    def writer_args(self, c: str) -> list[list[int | str]]:
        mt, nt, sh, sw, pm, pn = self.mt, self.nt, self.out_subblock_h, self.out_subblock_w, self.per_core_m, self.per_core_n
        return [[c, x * pn + y * pm * nt, 1, nt, sw, sh * nt, sw, sh, sw * sh, pn // sw, pm // sh, mt * nt, 1]
                for y in range(self.grid[1]) for x in range(self.grid[0])]
