"""Hand-written host programs that name Tenstorrent's kernels by their files (the emulated CreateKernel
builds them, runtime/jit.hpp): a main.cpp of interleaved DRAM buffers of bfloat16 tiles, circular
buffers and kernels on a row of cores, and the plan the driver needs around it; and the programs of
ttnn's 2-D and 1-D multicast matmuls (Mcast2DMatmul, Mcast1DMatmul, run_mcast). The programs reproduce
ttnn's program factories' arguments; tests/emulator/test_host_kernel_files.py and test_vendor_matmul.py
run them against torch, benchmarks.calibration, benchmarks.ttnn_matmul and benchmarks.vendor time them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilelang_tt.contract.arch import get_arch
from tilelang_tt.emulator import EmulatorResult, run
from tilelang_tt.env import ttnn_kernels_root

from .device_harness import bf16_bits, tilize
from .plans import host_program_plan, host_program_sources

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


# tt-metal ttnn/cpp/ttnn/operations/matmul/device/config/matmul_program_config.cpp: the sub-block choices,
# largest area first, which get_subblock_sizes reads as (out_subblock_w, out_subblock_h)
SUBBLOCK_HW_CHOICES = ((4, 2), (2, 4), (8, 1), (1, 8), (7, 1), (1, 7), (3, 2), (2, 3), (6, 1), (1, 6), (5, 1), (1, 5),
                       (2, 2), (4, 1), (1, 4), (3, 1), (1, 3), (2, 1), (1, 2), (1, 1))


def ttnn_subblock(out_block_h: int, out_block_w: int, per_core_n: int) -> tuple[int, int]:
    """The (out_subblock_h, out_subblock_w) of ttnn's out-of-box 2-D multicast config for an output
    block of out_block_h x out_block_w tiles of a core's per_core_N columns, bfloat16 DST
    (matmul_program_config.cpp, create_matmul_program_config's 2-D branch: get_subblock_sizes takes
    the first choice that divides the block, then ``if (out_subblock_w != n_tiles_per_core)
    out_subblock_h = 1``)."""
    w, h = next((w, h) for w, h in SUBBLOCK_HW_CHOICES if out_block_h % h == 0 and out_block_w % w == 0)
    return (h if w == per_core_n else 1), w


def cbs_bytes(per_core_m: int, per_core_n: int, in0_block_w: int, in_tile: int, out_tile: int = 2048,
              interm_tile: int = 2048) -> int:
    """ttnn's estimate of a matmul's CBs on a core (matmul/device/utilities/matmul_utilities.cpp,
    get_estimated_size_of_cbs, interleaved A, no bias): in0 and in1 blocks MCAST_INPUT_BUFFERING_DEPTH deep,
    the output and the partials (estimate_interm_tile_size: bfloat16 without fp32 DST) per_core_m x
    per_core_n each."""
    inputs = (per_core_m + per_core_n) * in0_block_w * MCAST_INPUT_BUFFERING_DEPTH * in_tile
    return inputs + per_core_m * per_core_n * (out_tile + interm_tile)


def multi_dim_per_core_factor(per_core_m: int, per_core_n: int, in0_block_w: int, in_tile: int,
                              max_l1: int) -> tuple[int, int, int]:
    """(out_block_h, out_block_w, in0_block_w) as matmul_program_config.cpp's get_multi_dim_per_core_factor
    (adjust_in0_block_w false) chooses them: the whole per-core block when its CBs fit in ``max_l1``
    (get_max_l1_space: the L1 above the allocator's base), else, by decreasing product, the most square
    pair of divisors (per_core_m or 1 or a divisor up to per_core_m / 2; the same for n) whose CBs fit."""
    if cbs_bytes(per_core_m, per_core_n, in0_block_w, in_tile) < max_l1:
        return per_core_m, per_core_n, in0_block_w
    m_factors = [per_core_m, 1] + [f for f in range(per_core_m // 2, 1, -1) if per_core_m % f == 0]
    n_factors = [per_core_n, 1] + [f for f in range(per_core_n // 2, 1, -1) if per_core_n % f == 0]
    factors: dict[int, tuple[int, int]] = {}
    for m in m_factors:
        for n in n_factors:
            ratio = max(m, n) / min(m, n)
            if m * n in factors and max(factors[m * n]) / min(factors[m * n]) < ratio:
                continue
            factors[m * n] = (m, n)
    for product in sorted(factors, reverse=True):
        m, n = factors[product]
        if cbs_bytes(m, n, in0_block_w, in_tile) < max_l1:
            return m, n, in0_block_w
    return 1, 1, 1


# The kernels of ttnn 0.81.1's 2-D multicast matmul (MatmulMultiCoreReuseMcast2DProgramFactory), under
# ttnn's include root.
MCAST_KERNELS = "ttnn/operations/matmul/device/kernels"
IN0_SENDER = f"{MCAST_KERNELS}/dataflow/reader_bmm_tile_layout_in0_sender_padding.cpp"
IN0_RECEIVER = f"{MCAST_KERNELS}/dataflow/reader_bmm_tile_layout_in0_receiver.cpp"
IN1_SENDER = f"{MCAST_KERNELS}/dataflow/reader_bmm_tile_layout_in1_sender_writer_padding.cpp"
IN1_RECEIVER = f"{MCAST_KERNELS}/dataflow/reader_bmm_tile_layout_in1_receiver_writer_padding.cpp"
MCAST_COMPUTE = f"{MCAST_KERNELS}/compute/bmm_large_block_zm_fused_bias_activation.cpp"
TILE_BYTES = {"Float16_b": 2048, "Bfp8_b": 1088}  # tt-metal tile_size: 32x32 bfloat16; bfloat8_b 1024 + 64 exponents
MCAST_INPUT_BUFFERING_DEPTH = 2  # ttnn matmul/device/utilities/matmul_utilities.hpp


@dataclass(frozen=True)
class Mcast2DMatmul:
    """C (mt x nt tiles, bfloat16) = A (mt x kt) @ B (kt x nt), one batch, as ttnn 0.81.1's
    MatmulMultiCoreReuseMcast2DProgramFactory builds it (tenstorrent/tt-metal
    ttnn/cpp/ttnn/operations/matmul/device/factory/matmul_multicore_reuse_mcast_2d_program_factory.cpp,
    create_program_mcast_in0_in1; A, B and C interleaved in DRAM, no bias, no fused op, no transpose, no
    fp32 DST): core (x, y) of a grid of nt/per_core_n columns and
    mt/per_core_m rows computes output block (y, x); the left column reads A's rows and multicasts them
    along its row, the top row reads B's columns and multicasts them down its column. ``in_format``: A's
    and B's data format (Float16_b or Bfp8_b). ``packer_l1_acc``: the compute config's packer_l1_acc; the factory
    turns it on only past two K blocks (packer_l1_acc_en = packer_l1_acc && num_blocks > 2, no bias) and then
    defines PACKER_L1_ACC for the compute kernel, which packs each K block's partials onto the ones L1 holds
    instead of reloading them (bmm_large_block_zm_fused_bias_activation.cpp); the partials stay bfloat16
    (interm0 Float16_b without fp32 DST), so c_4 and c_5 still share one block.

    Source: the factories as tt-metal's repository holds them at commits 0000d49e (2-D) and 00629f0f (1-D),
    not at the 0.81.1 tag, whose snapshot could not be had; where the 2-D one disagrees with the wheel's
    kernels, the kernels' own argument reads rule: compact_output (in1 sender compile-time arg 32) and
    num_batch_compute (after the in0 sender's sparsity accessor), which the 1-D factory pushes as 0."""

    mt: int
    kt: int
    nt: int
    per_core_m: int
    per_core_n: int
    in0_block_w: int
    out_subblock_h: int
    out_subblock_w: int
    out_block_h: int = 0  # 0: per_core_m
    out_block_w: int = 0  # 0: per_core_n
    in_format: str = "Float16_b"
    math_fidelity: str = "HiFi4"
    packer_l1_acc: bool = False

    @classmethod
    def out_of_box(cls, mt: int, kt: int, nt: int, grid: tuple[int, int], in_format: str = "Float16_b",
                   math_fidelity: str = "HiFi2", arch: str = "wormhole_b0") -> "Mcast2DMatmul":
        """The program config ttnn 0.81.1 chooses itself for interleaved A, B and C, bfloat16 C and DST, no
        bias (matmul_program_config.cpp, create_matmul_program_config's 2-D branch): per_core_M =
        ceil(Mt / rows), per_core_N = ceil(Nt / columns), in0_block_w 4 or the largest below that divides
        Kt, the output block of :func:`multi_dim_per_core_factor`, the sub-block of :func:`ttnn_subblock`;
        and the default compute config of a matmul, packer L1 accumulation on for an output other than
        float32 (matmul_device_operation.cpp: init_device_compute_kernel_config(..., default_l1_acc =
        !is_float_32))."""
        pm, pn = -(-mt // grid[1]), max(-(-nt // grid[0]), 1)
        w = next(k for k in (4, 3, 2, 1) if kt % k == 0)
        bh, bw, _ = multi_dim_per_core_factor(pm, pn, w, TILE_BYTES[in_format], get_arch(arch).l1_bytes)
        sh, sw = ttnn_subblock(bh, bw, pn)
        return cls(mt, kt, nt, pm, pn, w, sh, sw, bh, bw, in_format, math_fidelity, packer_l1_acc=True)

    @classmethod
    def tuned(cls, mt: int, kt: int, nt: int, grid: tuple[int, int], in0_block_w_div: int, num_out_blocks_h: int,
              num_out_blocks_w: int, in_format: str = "Float16_b", math_fidelity: str = "HiFi2") -> "Mcast2DMatmul":
        """The hand-picked config behind tech_reports/GEMM_FLOPS' "Manually Tuned" rows, as the benchmark
        builds it (tenstorrent/tt-metal tests/ttnn/unit_tests/benchmarks/test_benchmark.py,
        test_matmul_2d_host_perf, at commit 3689826668's version of the file that lists the report's
        shapes): in0_block_w = Kt / columns / in0_block_w_div, per_core_M = Mt / rows, per_core_N = Nt /
        columns, the output block per_core / num_out_blocks, the sub-block get_subblock_sizes gives it
        (the first of its SUBBLOCK_HW_CHOICES, read as (h, w), dividing the block), and
        WormholeComputeKernelConfig(packer_l1_acc=True, fp32_dest_acc_en=False). Interleaved (DRAM) A and
        C only: the rows with in0 or C sharded in L1 run the factory's sharded readers, not reproduced."""
        w = kt // grid[0] // in0_block_w_div
        pm, pn = mt // grid[1], nt // grid[0]
        bh, bw = pm // num_out_blocks_h, pn // num_out_blocks_w
        sh, sw = next((h, w_) for h, w_ in SUBBLOCK_HW_CHOICES if bh % h == 0 and bw % w_ == 0)
        return cls(mt, kt, nt, pm, pn, w, sh, sw, bh, bw, in_format, math_fidelity, packer_l1_acc=True)

    @property
    def packer_l1_acc_en(self) -> bool:
        """Whether the factory defines PACKER_L1_ACC (no bias: more than two K blocks)."""
        return self.packer_l1_acc and self.kt // self.in0_block_w > 2

    @property
    def block_h(self) -> int:
        return self.out_block_h or self.per_core_m

    @property
    def block_w(self) -> int:
        return self.out_block_w or self.per_core_n

    @property
    def grid(self) -> tuple[int, int]:
        """(columns, rows) with work: num_blocks_x, num_blocks_y (factory: (N - 1) / per_core_N + 1)."""
        return (self.nt - 1) // self.per_core_n + 1, (self.mt - 1) // self.per_core_m + 1

    @property
    def in_tile(self) -> int:
        return TILE_BYTES[self.in_format]

    def compile_args(self) -> dict[str, list[int]]:
        """Each kernel's compile-time args before its TensorAccessorArgs (factory: in0_sender_compile_time_args,
        in1_sender_writer_compile_time_args, in0_receiver_compile_time_args, in1_receiver_writer_compile_time_args,
        compute_kernel_args). Semaphores 0-3: in0 sender, in0 receiver, in1 sender, in1 receiver, in creation order."""
        M, K, N, w = self.mt, self.kt, self.nt, self.in0_block_w
        bh, bw, sh, sw = self.block_h, self.block_w, self.out_subblock_h, self.out_subblock_w
        nbx, nby = self.grid
        num_blocks = K // w
        out_num_blocks_x, out_num_blocks_y = self.per_core_n // bw, self.per_core_m // bh
        in0_block_num_tiles = sh * w * (bh // sh)
        in0 = [1, K, w, bh * K, w, bh, in0_block_num_tiles, 0, 0, 0, 0, 0, num_blocks, out_num_blocks_x,
               out_num_blocks_y, 0, 1, nbx - 1, nbx - 1, M * K, 1, 1, 0, 0, 0, 1, 0, 0]
        writer = [1, N, sw, sh * N, bw, bh * N, sw, sh, sw * sh, M * N]
        in1 = [1, N, w * N, bw, bw, w, bw * w, num_blocks, out_num_blocks_x, out_num_blocks_y, 2, 3, nby - 1,
               nby - 1, K * N, 1, 0, 0, 0, *writer, 0, 0, 0, 0]  # bias stride, all-gather, reduce-scatter, compact_output
        in0_receiver = [w * bh, num_blocks, out_num_blocks_x, out_num_blocks_y, 0, 1, 1, 0]
        in1_receiver = [bw * w, num_blocks, out_num_blocks_x, out_num_blocks_y, 2, 3, 1, *writer, 0, 0]
        in1_num_subblocks = bw // sw
        compute = [w, bh // sh, in0_block_num_tiles, sh * w, in1_num_subblocks, sw * w * in1_num_subblocks,
                   sw * in1_num_subblocks, num_blocks, out_num_blocks_x, out_num_blocks_y, sh, sw, sh * sw, 1,
                   bh * bw, 0, 0, 0]
        return {"in0_sender": in0, "in1_sender": in1, "in0_receiver": in0_receiver, "in1_receiver": in1_receiver,
                "compute": compute}

    def runtime_args(self) -> dict[tuple[int, int], dict[str, list[int | str]]]:
        """Per core (x, y): the args of its in0 kernel and its in1 kernel (factory: the loop over ``cores``),
        NOC coordinates as ``nx(x, y)`` / ``ny(x, y)`` of logical cores (worker_core_from_logical_core) and
        buffer addresses by name. in0 on NOC 1 (preferred_noc_for_dram_write), in1 on NOC 0: the multicast
        rectangles start at their far corner on NOC 1."""
        nbx, nby = self.grid
        bh, bw, sh, sw = self.block_h, self.block_w, self.out_subblock_h, self.out_subblock_w
        assert self.mt % self.per_core_m == 0 and self.nt % self.per_core_n == 0, "padding args not reproduced"
        out: dict[tuple[int, int], dict[str, list[int | str]]] = {}
        for y in range(nby):
            for x in range(nbx):
                args: dict[str, list[int | str]] = {}
                out_start = x * self.per_core_n + y * self.per_core_m * self.nt
                if x == 0:  # in0 sender: in0_mcast_start = right core, end = left core + 1 (NOC 1)
                    args["in0"] = ["A_address", self.per_core_m * self.kt * y, f"nx({nbx - 1}, {y})",
                                   f"ny({nbx - 1}, {y})", f"nx(1, {y})", f"ny(1, {y})", bh, 0]
                else:  # in0 receiver: the sender's NOC coordinates
                    args["in0"] = [f"nx(0, {y})", f"ny(0, {y})"]
                if y == 0:  # in1 sender: in1_mcast_start = top core + 1, end = bottom core (NOC 0)
                    args["in1"] = ["B_address", self.per_core_n * x, f"nx({x}, 1)", f"ny({x}, 1)",
                                   f"nx({x}, {nby - 1})", f"ny({x}, {nby - 1})", 0, "C_address", out_start, bw,
                                   bh // sh, sh, 0, bw // sw, bw // sw, sw, 0, 0, 0, 0,
                                   self.per_core_n // bw]
                else:
                    args["in1"] = [f"nx({x}, 0)", f"ny({x}, 0)", "C_address", out_start, bh // sh, bh // sh, sh, 0,
                                   bw // sw, bw // sw, sw, 0, 0, self.per_core_m // bh, self.per_core_n // bw]
                out[(x, y)] = args
        return out

    def cbs(self) -> list[tuple[tuple[int, ...], int, str]]:
        """(indices, bytes, format) per CircularBufferConfig: c_0 in0 and c_1 in1 double-buffered when there
        is more than one K block; c_4 output and c_5 partials share one block (interm0 format = the
        output's: no packer L1 accumulation, no fp32 DST)."""
        blocks = self.kt // self.in0_block_w
        depth = MCAST_INPUT_BUFFERING_DEPTH if blocks > 1 else 1
        return [((0,), depth * self.block_h * self.in0_block_w * self.in_tile, self.in_format),
                ((1,), depth * self.block_w * self.in0_block_w * self.in_tile, self.in_format),
                ((4, 5), self.block_h * self.block_w * 2048, "Float16_b")]


@dataclass(frozen=True)
class Mcast1DMatmul(Mcast2DMatmul):
    """The same product as ttnn 0.81.1's MatmulMultiCoreReuseMcast1DProgramFactory builds it with
    mcast_in0 and interleaved tensors (tenstorrent/tt-metal ttnn/cpp/ttnn/operations/matmul/device/factory/
    matmul_multicore_reuse_mcast_1d_program_factory.cpp, process_mcast_in0_program_and_create_override_variables):
    one block row (per_core_m = mt: the factory requires num_blocks_y == 1), nt / per_core_n cores
    row-major over a grid of ``columns`` columns; the start core (0, 0) reads A and multicasts it to the
    bounding box of the cores with work, every core reads its own columns of B (the in1 reader with
    SKIP_MCAST) and writes its block of C."""

    columns: int = 8

    @property
    def num_cores(self) -> int:
        return (self.nt - 1) // self.per_core_n + 1

    @property
    def grid(self) -> tuple[int, int]:
        """(columns, rows) of the bounding box of the cores with work."""
        return min(self.num_cores, self.columns), -(-self.num_cores // self.columns)

    def cores(self) -> list[tuple[int, int]]:
        return [(i % self.columns, i // self.columns) for i in range(self.num_cores)]

    def compile_args(self) -> dict[str, list[int]]:
        """As the 2-D factory's but: in0's multicast reaches every other core (in0_mcast_num_dests =
        num_cores - 1, in0_mcast_num_cores = the bounding box's cores - 1), in1 is not multicast (its
        semaphore ids and counts 0)."""
        args = super().compile_args()
        box = self.grid[0] * self.grid[1]
        args["in0_sender"][17:19] = [self.num_cores - 1, box - 1]
        args["in1_sender"][10:14] = [0, 0, 0, 0]
        return args

    def runtime_args(self) -> dict[tuple[int, int], dict[str, list[int | str]]]:
        """Per core (the loop over ``cores``): the start core's in0 sender args (the multicast rectangle
        from the box's bottom-right to its top-left: in0 on NOC 1), the others' in0 receiver args (the
        start core's coordinates), and every core's in1 reader/writer args (no multicast)."""
        assert self.nt % self.per_core_n == 0, "padding args not reproduced"
        bh, bw, sh, sw = self.block_h, self.block_w, self.out_subblock_h, self.out_subblock_w
        gx, gy = self.grid
        out: dict[tuple[int, int], dict[str, list[int | str]]] = {}
        for i, (x, y) in enumerate(self.cores()):
            if i == 0:
                in0 = ["A_address", 0, f"nx({gx - 1}, {gy - 1})", f"ny({gx - 1}, {gy - 1})", "nx(0, 0)", "ny(0, 0)",
                       bh, 0]
            else:
                in0 = ["nx(0, 0)", "ny(0, 0)"]
            in1 = ["B_address", self.per_core_n * i, 0, 0, 0, 0, 0, "C_address", i * self.per_core_n, bw, bh // sh, sh,
                   0, bw // sw, bw // sw, sw, 0, 0, 0, 0, self.per_core_n // bw]
            out[(x, y)] = {"in0": in0, "in1": in1}
        return out


def run_mcast(mm: Mcast2DMatmul, a: np.ndarray | None = None, b: np.ndarray | None = None,
              arch: str = "wormhole_b0") -> EmulatorResult:
    """``mm`` (2-D, or 1-D for a Mcast1DMatmul) on the emulator: with ``a`` and ``b`` (bfloat16 values as
    float32, Float16_b inputs) their product, else zero inputs, timing only. Returns the EmulatorResult (C's
    tiles as uint32 words)."""
    words = {"A": (mm.mt * mm.kt, mm.in_tile), "B": (mm.kt * mm.nt, mm.in_tile)}
    plan = host_program_plan(arch, [{"name": n, "access": "read", "shape": [t, page // 4], "dtype": "uint32"}
                                    for n, (t, page) in words.items()] + [buffer_entry("C", mm.mt * mm.nt, "write")])
    if a is None:
        inputs = {n: np.zeros((t, page // 4), dtype=np.uint32) for n, (t, page) in words.items()}
    else:
        assert mm.in_format == "Float16_b", "numerics of bfloat16 inputs only"
        inputs = {"A": tile_words(a), "B": tile_words(b)}
    main = mcast_1d_program(mm) if isinstance(mm, Mcast1DMatmul) else mcast_2d_program(mm)
    return run(host_program_sources(main), plan, inputs, timing_only=a is None)


@dataclass(frozen=True)
class McastKernel:
    var: str  # the KernelHandle's name
    path: str  # under ttnn's include root
    cores: str  # C++ core spec
    config: str  # C++ config expression, its compile args `<var>_ct`
    statements: str  # C++ filling `<var>_ct`


IN0_NAMED = cpp_named({"cb_in0": 0, "cb_in0_sharded": 2, "cb_sparsity": 6, "cb_in0_intermediate": 8, "num_active": 0})
IN1_NAMED = cpp_named({"cb_in1": 1, "cb_bias": 3, "cb_out": 4, "cb_sparsity": 7, "cb_in1_intermediate": 9,
                       "num_active": 0})
IN1_RECEIVER_NAMED = cpp_named({"cb_in1": 1, "cb_bias": 3, "cb_out": 4})
COMPUTE_NAMED = cpp_named({"cb_in0": 0, "cb_in1": 1, "cb_bias": 3, "cb_out": 4, "cb_intermed0": 5,
                           "cb_in0_intermediate": 8, "cb_in1_intermediate": 9, "cb_in0_transposed": 10})


def _cpp_list(values) -> str:
    return "{" + ", ".join(map(str, values)) + "}"


def _ranges(*rects) -> str:
    return "CoreRangeSet(std::vector<CoreRange>{" + ", ".join(
        f"CoreRange(CoreCoord{{{x0}, {y0}}}, CoreCoord{{{x1}, {y1}}})" for x0, y0, x1, y1 in rects) + "})"


def _data_movement(riscv: int, noc: int, var: str, named: str, defines: dict[str, str] | None = None) -> str:
    define_text = "" if not defines else ", .defines = " + cpp_map(defines)
    return (f"DataMovementConfig{{.processor = DataMovementProcessor::RISCV_{riscv}, .noc = NOC::NOC_{noc}, "
            f".compile_args = {var}_ct{define_text}, .named_compile_args = {named}}}")


def _in0_sender(mm: Mcast2DMatmul, cores: str, skip_mcast: bool) -> McastKernel:
    # in0 on RISCV_1 and NOC 1 (preferred_noc_for_dram_write); the placeholder accessor of the absent
    # sparsity tensor and num_batch_compute (unused without sparsity) after A's accessor.
    return McastKernel("in0_sender", IN0_SENDER, cores,
                       _data_movement(1, 1, "in0_sender", IN0_NAMED, {"SKIP_MCAST": "1"} if skip_mcast else None),
                       f"    in0_sender_ct = {_cpp_list(mm.compile_args()['in0_sender'])};\n" + accessor("A", "in0_sender")
                       + "    TensorAccessorArgs(static_cast<const Buffer*>(nullptr)).append_to(in0_sender_ct);\n"
                       "    in0_sender_ct.push_back(0);  // num_batch_compute\n")


def _in1_sender(mm: Mcast2DMatmul, cores: str, skip_mcast: bool) -> McastKernel:
    # in1 on RISCV_0 and NOC 0 (preferred_noc_for_dram_read): B's, the sparsity placeholder's and C's accessors.
    return McastKernel("in1_sender", IN1_SENDER, cores,
                       _data_movement(0, 0, "in1_sender", IN1_NAMED, {"SKIP_MCAST": "1"} if skip_mcast else None),
                       f"    in1_sender_ct = {_cpp_list(mm.compile_args()['in1_sender'])};\n" + accessor("B", "in1_sender")
                       + "    TensorAccessorArgs(static_cast<const Buffer*>(nullptr)).append_to(in1_sender_ct);\n"
                       + accessor("C", "in1_sender"))


def _in0_receiver(mm: Mcast2DMatmul, var: str, cores: str, noc: int) -> McastKernel:
    return McastKernel(var, IN0_RECEIVER, cores, _data_movement(1, noc, var, cpp_named({"cb_in0": 0})),
                       f"    {var}_ct = {_cpp_list(mm.compile_args()['in0_receiver'])};\n")


def _in1_receiver(mm: Mcast2DMatmul, var: str, cores: str, noc: int) -> McastKernel:
    return McastKernel(var, IN1_RECEIVER, cores, _data_movement(0, noc, var, IN1_RECEIVER_NAMED),
                       f"    {var}_ct = {_cpp_list(mm.compile_args()['in1_receiver'])};\n" + accessor("C", var))


def _mcast_program(mm: Mcast2DMatmul, all_cores: str, semaphores: int, kernels: list[McastKernel],
                   kernel_of) -> str:
    """main.cpp: A, B, C interleaved in DRAM, ``semaphores`` semaphores (INVALID) and the CBs on
    ``all_cores``, the kernels and each core's args (``kernel_of(x, y, "in0" | "in1")`` names the kernel
    taking them); NOC coordinates through ``nx`` / ``ny`` (worker_core_from_logical_core)."""
    body = ["    auto nx = [&](uint32_t x, uint32_t y) { return static_cast<uint32_t>("
            "device->worker_core_from_logical_core(CoreCoord{x, y}).x); };",
            "    auto ny = [&](uint32_t x, uint32_t y) { return static_cast<uint32_t>("
            "device->worker_core_from_logical_core(CoreCoord{x, y}).y); };",
            f"    CoreRangeSet all_cores = {all_cores};"]
    tiles = {"A": (mm.mt * mm.kt, mm.in_tile), "B": (mm.kt * mm.nt, mm.in_tile), "C": (mm.mt * mm.nt, 2048)}
    for name, (count, page) in tiles.items():
        body.append(f"    distributed::DeviceLocalBufferConfig {name}_dram{{.page_size = {page}, "
                    ".buffer_type = BufferType::DRAM};")
        body.append(f"    auto {name} = distributed::MeshBuffer::create(distributed::ReplicatedBufferConfig{{.size = "
                    f"{count * page}}}, {name}_dram, device.get());")
        body.append(f"    const uint32_t {name}_address = static_cast<uint32_t>({name}->get_reference_buffer()->address());")
        if name != "C":
            body.append(f"    command_queue.enqueue_write_mesh_buffer({name}, read_words(data_dir / \"{name}.bin\", "
                        f"{count * page // 4}).data(), false);")
    body += ["    CreateSemaphore(program, all_cores, 0);"] * semaphores
    for i, (indices, size, fmt) in enumerate(mm.cbs()):
        formats = ", ".join(f"{{{k}, tt::DataFormat::{fmt}}}" for k in indices)
        body.append(f"    CircularBufferConfig cb{i}({size}, {{{formats}}});")
        body += [f"    cb{i}.set_page_size({k}, {TILE_BYTES[fmt]});" for k in indices]
        body.append(f"    CreateCircularBuffer(program, all_cores, cb{i});")
    kernels = kernels + [McastKernel(
        "compute", MCAST_COMPUTE, "all_cores",
        f"ComputeConfig{{.math_fidelity = MathFidelity::{mm.math_fidelity}, .compile_args = compute_ct, "
        + (f".defines = {cpp_map({'PACKER_L1_ACC': '1'})}, " if mm.packer_l1_acc_en else "")
        + f".named_compile_args = {COMPUTE_NAMED}}}", f"    compute_ct = {_cpp_list(mm.compile_args()['compute'])};\n")]
    for k in kernels:
        body.append(f"    std::vector<uint32_t> {k.var}_ct;\n{k.statements}")
        body.append(f"    KernelHandle {k.var} = CreateKernel(program, \"{wheel_kernel(k.path)}\", {k.cores}, {k.config});")
    for (x, y), args in mm.runtime_args().items():
        for which, values in args.items():
            body.append(f"    SetRuntimeArgs(program, {kernel_of(x, y, which)}, CoreCoord{{{x}, {y}}}, "
                        f"std::vector<uint32_t>{{{', '.join(map(str, values))}}});")
    outputs = (f"    std::vector<uint32_t> C_out({mm.mt * mm.nt} * 2048 / 4);\n"
               "    command_queue.enqueue_read_mesh_buffer(C_out.data(), C, true);\n"
               "    write_words(data_dir / \"C.out.bin\", C_out);")
    return PRELUDE + "\n".join(body) + EPILOGUE.replace("OUTPUTS", outputs)


def mcast_2d_program(mm: Mcast2DMatmul) -> str:
    """main.cpp of the 2-D factory's program: in0 sender on the left column, in1 sender on the top row,
    receivers on the rest, the right half of them on the other NOCs (in0_split_noc = NOC 0,
    in1_split_noc = NOC 1) when the factory splits them (split_half: more than 2 columns and 1 row);
    four semaphores (in0 sender, in0 receiver, in1 sender, in1 receiver)."""
    nbx, nby = mm.grid
    split = nbx > 2 and nby > 1
    half = nbx // 2 if split else nbx - 1
    left_half = (1, 1, half, nby - 1) if nbx > 1 and nby > 1 else None
    in0_receivers = [r for r in ((1, 0, nbx - 1, 0) if nbx > 1 else None, left_half) if r]
    in1_receivers = [r for r in ((0, 1, 0, nby - 1) if nby > 1 else None, left_half) if r]
    kernels = [_in0_sender(mm, _ranges((0, 0, 0, nby - 1)), not in0_receivers),
               _in1_sender(mm, _ranges((0, 0, nbx - 1, 0)), not in1_receivers)]
    if in1_receivers:
        kernels.append(_in1_receiver(mm, "in1_receiver", _ranges(*in1_receivers), 0))
    if in0_receivers:
        kernels.append(_in0_receiver(mm, "in0_receiver", _ranges(*in0_receivers), 1))
    if split:
        other = _ranges((half + 1, 1, nbx - 1, nby - 1))
        kernels.append(_in1_receiver(mm, "in1_receiver_other", other, 1))
        kernels.append(_in0_receiver(mm, "in0_receiver_other", other, 0))

    def kernel_of(x: int, y: int, which: str) -> str:
        right = split and x > half and y > 0
        if which == "in0":
            return "in0_sender" if x == 0 else ("in0_receiver_other" if right else "in0_receiver")
        return "in1_sender" if y == 0 else ("in1_receiver_other" if right else "in1_receiver")

    return _mcast_program(mm, _ranges((0, 0, nbx - 1, nby - 1)), 4, kernels, kernel_of)


def mcast_1d_program(mm: Mcast1DMatmul) -> str:
    """main.cpp of the 1-D factory's mcast_in0 program: the in0 sender on the start core (SKIP_MCAST when it
    is the only core), in0 receivers on the others, the in1 reader/writer (SKIP_MCAST) and compute on every
    core with work; two semaphores (in0 sender, in0 receiver)."""
    cores = mm.cores()
    rows = [(0, y, min(mm.columns, mm.num_cores - y * mm.columns) - 1, y) for y in range(mm.grid[1])]
    receivers = [r for r in ((1, 0, rows[0][2], 0) if rows[0][2] > 0 else None, *[r for r in rows[1:]]) if r]
    kernels = [_in0_sender(mm, _ranges((0, 0, 0, 0)), len(cores) == 1), _in1_sender(mm, _ranges(*rows), True)]
    if receivers:
        kernels.append(_in0_receiver(mm, "in0_receiver", _ranges(*receivers), 1))

    def kernel_of(x: int, y: int, which: str) -> str:
        if which == "in1":
            return "in1_sender"
        return "in0_sender" if (x, y) == (0, 0) else "in0_receiver"

    return _mcast_program(mm, _ranges(*rows), 2, kernels, kernel_of)
