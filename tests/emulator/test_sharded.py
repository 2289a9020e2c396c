"""Sharded buffers (L1 and DRAM) and the sharded TensorAccessor on the emulator.

Host programs are written here by hand in the tt-metal 0.81.1 API and run through the emulator
driver. The expected page placement, buffer addresses and TensorAccessorArgs come from the small
model below, written from tt-metal's definitions independently of the emulator: pages are placed
by slicing a numpy array of page ids shard by shard (tt-metal's BufferDistributionSpec page
mapping), the accessor args follow tensor_accessor_args.h, and shapes are squeezed as tt-metal's
detail::squeeze_shape_ranks does (checked against tt-metal's own test table).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from tests.emulator.plans import host_program_plan, host_program_sources
from tilelang_tt.emulator import EmulatorError, run
from tilelang_tt.tools.header_check import HeaderCheckError, syntax_check_dataflow
from tilelang_tt.tools.host_symbols import api_uses, check_main_cpp

# wormhole_b0 facts the model needs: L1 size (buffers are allocated top-down from its end), the
# translated NOC coordinates of logical worker (0, 0), and the L1 / DRAM alignments.
L1_SIZE = 1464 * 1024
WORKER_NOC_ORIGIN = 18
L1_ALIGNMENT = 16
DRAM_ALIGNMENT = 32
# tensor_accessor::ArgConfig bits and the shard-contiguous flag of the num_banks word.
SHARDED, IS_DRAM, RUNTIME_BANK_COORDS = 1, 2, 64
SHARD_CONTIGUOUS = 1 << 31


def _align(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def squeeze(tensor: tuple[int, ...], shard: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """tt-metal's squeeze_shape_ranks: fold dimensions that shard the same way into one."""
    outer, inner = tensor[: len(tensor) - len(shard)], tensor[len(tensor) - len(shard) :]
    groups: list[list[int]] = []  # [tensor size, shard size], innermost first
    whole = divides = False
    for i in range(len(shard) - 1, -1, -1):
        if groups and set(inner[: i + 1]) == {1} and set(shard[: i + 1]) == {1}:
            break
        t, s = inner[i], shard[i]
        if groups and (whole or (s == 1 and divides)):
            groups[-1] = [groups[-1][0] * t, groups[-1][1] * s]
        else:
            groups.append([t, s])
            whole = True
        whole, divides = whole and t == s, t % s == 0
    groups[-1][0] *= math.prod(outer)
    return tuple(g[0] for g in reversed(groups)), tuple(g[1] for g in reversed(groups))


@dataclass(frozen=True)
class Sharded:
    """A sharded buffer: shapes in pages, an inclusive core range (DRAM: banks as (bank, 0))."""

    name: str
    memory: str
    tensor: tuple[int, ...]
    shard: tuple[int, ...]
    first: tuple[int, int]
    last: tuple[int, int]
    orientation: str = "ROW_MAJOR"
    strategy: str = "ROUND_ROBIN_1D"
    runtime_bank_coords: bool = False
    page_size: int = 64

    @property
    def num_pages(self) -> int:
        return math.prod(self.tensor)

    @property
    def aligned_page_size(self) -> int:
        return _align(self.page_size, DRAM_ALIGNMENT if self.memory == "DRAM" else L1_ALIGNMENT)

    def cores(self) -> list[tuple[int, int]]:
        across, down = self.last[0] - self.first[0] + 1, self.last[1] - self.first[1] + 1
        if self.strategy == "GRID_2D":  # the core range trimmed to the shard grid (transposed for COL_MAJOR)
            down, across = self.shard_grid() if self.orientation == "ROW_MAJOR" else self.shard_grid()[::-1]
        xs, ys = range(self.first[0], self.first[0] + across), range(self.first[1], self.first[1] + down)
        if self.orientation == "ROW_MAJOR":
            return [(x, y) for y in ys for x in xs]
        return [(x, y) for x in xs for y in ys]

    def shard_grid(self) -> list[int]:
        return [-(-t // s) for t, s in zip(self.tensor, self.shard)]

    def bytes_per_bank(self) -> int:
        shards_per_bank = -(-math.prod(self.shard_grid()) // len(self.cores()))
        return shards_per_bank * math.prod(self.shard) * self.aligned_page_size

    def placement(self) -> dict[int, tuple[tuple[int, int], int]]:
        """page id -> (core, page slot in that core's part of the buffer)."""
        pages = np.arange(self.num_pages).reshape(self.tensor)
        cores = self.cores()
        num_shards = math.prod(self.shard_grid())
        placed = {}
        for shard_id, shard_coord in enumerate(np.ndindex(*self.shard_grid())):
            if self.strategy == "CONTIGUOUS_1D":
                bank, slot = divmod(shard_id, num_shards // len(cores))
            else:
                slot, bank = divmod(shard_id, len(cores))
            block = pages[tuple(slice(c * s, (c + 1) * s) for c, s in zip(shard_coord, self.shard))]
            for local in np.ndindex(*block.shape):
                in_shard = int(np.ravel_multi_index(local, self.shard))
                placed[int(block[local])] = (cores[bank], slot * math.prod(self.shard) + in_shard)
        return placed

    def noc_xy(self, core: tuple[int, int]) -> tuple[int, int]:
        """The bank coordinates kernels address: NOC coordinates of a worker, or (bank id, 0)."""
        return core if self.memory == "DRAM" else (core[0] + WORKER_NOC_ORIGIN, core[1] + WORKER_NOC_ORIGIN)

    def accessor_args(self) -> tuple[list[int], list[int]]:
        """(compile-time args, common runtime args) of TensorAccessorArgs(buffer, config)."""
        tensor, shard = squeeze(self.tensor, self.shard)
        config = SHARDED | (IS_DRAM if self.memory == "DRAM" else 0)
        config |= RUNTIME_BANK_COORDS if self.runtime_bank_coords else 0
        banks = [self.noc_xy(core) for core in self.cores()]
        packed = [(x << 8) | y for x, y in banks] + [0]
        words = [packed[i] | packed[i + 1] << 16 for i in range(0, len(banks), 2)]
        num_banks = len(banks) | (SHARD_CONTIGUOUS if self.strategy == "CONTIGUOUS_1D" else 0)
        cta = [config, self.aligned_page_size, len(tensor), num_banks, *tensor, *shard]
        return (cta, words) if self.runtime_bank_coords else (cta + words, [])


# ---------------------------------------------------------------- host program text

PRELUDE = r"""
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
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

template <typename T>
std::vector<T> read_elements(const std::filesystem::path& path, std::size_t count) {
    std::ifstream file(path, std::ios::binary);
    std::vector<T> values(count);
    file.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(count * sizeof(T)));
    if (file.gcount() != static_cast<std::streamsize>(count * sizeof(T))) {
        throw std::runtime_error("cannot read " + path.string());
    }
    return values;
}

template <typename T>
void write_elements(const std::filesystem::path& path, const std::vector<T>& values) {
    std::ofstream file(path, std::ios::binary);
    file.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(T)));
}

uint32_t device_address(const std::shared_ptr<distributed::MeshBuffer>& buffer) {
    Buffer* reference = buffer->get_reference_buffer();
    return static_cast<uint32_t>(reference->address());
}

void run_program(distributed::MeshDevice* device, distributed::MeshCommandQueue& command_queue, Program&& program) {
    distributed::MeshWorkload workload;
    distributed::MeshCoordinateRange device_range(device->shape());
    workload.add_program(device_range, std::move(program));
    distributed::EnqueueMeshWorkload(command_queue, workload, false);
    distributed::Finish(command_queue);
}

}  // namespace

int main(int argc, char** argv) {
    const std::filesystem::path data_dir = argv[1];
    std::shared_ptr<distributed::MeshDevice> device = distributed::MeshDevice::create_unit_mesh(0);
    distributed::MeshCommandQueue& command_queue = device->mesh_command_queue();
"""

EPILOGUE = r"""
    device->close();
    return 0;
}
"""


def _create_sharded(b: Sharded, config: str) -> str:
    """Host code creating, filling and describing sharded buffer ``b`` (the generated main.cpp's shape)."""
    n = b.name
    return f"""
    std::vector<CoreRange> {n}_shard_ranges{{CoreRange(CoreCoord{{{b.first[0]}, {b.first[1]}}}, CoreCoord{{{b.last[0]}, {b.last[1]}}})}};
    CoreRangeSet {n}_shard_cores({n}_shard_ranges);
    BufferDistributionSpec {n}_spec(Shape({{{", ".join(map(str, b.tensor))}}}), Shape({{{", ".join(map(str, b.shard))}}}), {n}_shard_cores, ShardOrientation::{b.orientation}, ShardDistributionStrategy::{b.strategy});
    distributed::DeviceLocalBufferConfig {n}_local{{.page_size = {b.page_size}, .buffer_type = BufferType::{b.memory}, .sharding_args = BufferShardingArgs({n}_spec)}};
    distributed::ReplicatedBufferConfig {n}_replicated{{.size = {b.num_pages * b.page_size}}};
    std::shared_ptr<distributed::MeshBuffer> buffer_{n} = distributed::MeshBuffer::create({n}_replicated, {n}_local, device.get());
    std::vector<uint32_t> input_{n} = read_elements<uint32_t>(data_dir / "{n}.bin", {b.num_pages * b.page_size // 4});
    command_queue.enqueue_write_mesh_buffer(buffer_{n}, input_{n}.data(), false);
    TensorAccessorArgs reader_accessor_{n}(*buffer_{n}, {config});
    reader_accessor_{n}.append_to(reader_compile_args, reader_common_args);
    addresses.push_back(device_address(buffer_{n}));
"""


def _read_back(b: Sharded) -> str:
    n = b.name
    return f"""
    std::vector<uint32_t> result_{n}({b.num_pages * b.page_size // 4});
    command_queue.enqueue_read_mesh_buffer(result_{n}.data(), buffer_{n}, true);
    write_elements(data_dir / "{n}.out.bin", result_{n});
"""


def _words(b: Sharded) -> np.ndarray:
    """Buffer contents as uint32 words: word w of page p of buffer k is k << 24 | p << 8 | w."""
    k = int(b.name[1:])
    pages = np.arange(b.num_pages, dtype=np.uint32)[:, None] << 8
    return ((k << 24) | pages | np.arange(b.page_size // 4, dtype=np.uint32)).astype(np.uint32)


def _buffer(name: str, access: str, shape: list[int], dtype: str = "uint32") -> dict:
    return {"name": name, "access": access, "shape": shape, "dtype": dtype}


# ---------------------------------------------------------------- the squeeze model


@pytest.mark.parametrize(
    "tensor, shard, expected",
    [  # from tt-metal's NDShardingSqueezeRankTests
        ((5,), (3,), ((5,), (3,))),
        ((1, 3, 6), (2, 2), ((3, 6), (2, 2))),
        ((5, 3, 6), (2, 2), ((15, 6), (2, 2))),
        ((1, 1, 3, 6), (1, 1, 2, 2), ((3, 6), (2, 2))),
        ((2, 3, 6), (1, 2, 2), ((2, 3, 6), (1, 2, 2))),
        ((4, 4, 6), (1, 2, 2), ((16, 6), (2, 2))),
        ((4, 4, 5, 5, 4, 6), (4, 3, 5, 5, 2, 2), ((4, 100, 4, 6), (4, 75, 2, 2))),
        ((4, 4, 5, 5, 4, 6), (4, 3, 1, 1, 2, 2), ((4, 4, 100, 6), (4, 3, 2, 2))),
        ((4, 4, 5, 5, 4, 6), (4, 3, 1, 1, 3, 2), ((4, 4, 25, 4, 6), (4, 3, 1, 3, 2))),
        ((5, 1, 11, 11), (5, 1, 1), ((5, 121), (5, 1))),
    ],
)
def test_the_squeeze_model_matches_tt_metal(tensor, shard, expected):
    assert squeeze(tensor, shard) == expected


SQUEEZE_CASES = [((4, 8), (1, 8)), ((5, 3, 6), (2, 2)), ((4, 4, 6), (1, 2, 2)), ((4, 4, 5, 5, 4, 6), (4, 3, 1, 1, 3, 2))]


def test_buffer_distribution_spec_squeezes_like_tt_metal():
    body = ""
    for i, (tensor, shard) in enumerate(SQUEEZE_CASES):
        body += f"""
    BufferDistributionSpec spec_{i}(Shape({{{", ".join(map(str, tensor))}}}), Shape({{{", ".join(map(str, shard))}}}), CoreRangeSet(CoreRange(CoreCoord{{0, 0}}, CoreCoord{{3, 0}})), ShardOrientation::ROW_MAJOR);
    shapes.push_back(spec_{i}.tensor_shape_in_pages().rank());
    shapes.insert(shapes.end(), spec_{i}.tensor_shape_in_pages().cbegin(), spec_{i}.tensor_shape_in_pages().cend());
    shapes.insert(shapes.end(), spec_{i}.shard_shape_in_pages().cbegin(), spec_{i}.shard_shape_in_pages().cend());
"""
    expected = []
    for tensor, shard in SQUEEZE_CASES:
        t, s = squeeze(tensor, shard)
        expected += [len(t), *t, *s]
    main = PRELUDE + "    std::vector<uint32_t> shapes;\n" + body + '    write_elements(data_dir / "SHAPES.out.bin", shapes);\n' + EPILOGUE
    plan = host_program_plan("wormhole_b0", [_buffer("SHAPES", "write", [len(expected)])])
    result = run(host_program_sources(main), plan, {})
    assert result.outputs["SHAPES"].tolist() == expected


# ---------------------------------------------------------------- page placement

PLACEMENT_CASES = [
    # height sharding of 4 x 8 pages, one row per core over 8 cores (4 of them get no shard)
    Sharded("B0", "L1", (4, 8), (1, 8), (0, 0), (7, 0), runtime_bank_coords=True),
    # width sharding, two columns per core
    Sharded("B1", "L1", (4, 6), (4, 2), (0, 1), (2, 1)),
    # block sharding with partial shards at the bottom and right, cores column by column
    Sharded("B2", "L1", (5, 6), (2, 4), (1, 2), (2, 4), orientation="COL_MAJOR", runtime_bank_coords=True),
    # more shards than cores: round robin gives cores a second slot
    Sharded("B3", "L1", (6, 4), (1, 4), (4, 4), (5, 5)),
    # shard-contiguous: two consecutive shards per core
    Sharded("B4", "L1", (8, 2), (1, 2), (6, 6), (7, 7), strategy="CONTIGUOUS_1D", runtime_bank_coords=True),
    # DRAM-sharded blocks over six banks
    Sharded("B5", "DRAM", (4, 6), (2, 2), (0, 0), (5, 0), runtime_bank_coords=True),
    Sharded("B6", "DRAM", (3, 5), (2, 2), (2, 0), (7, 0)),
    # one shard per core of the 4 x 3 range trimmed to the 3 x 2 shard grid, transposed
    Sharded("B7", "L1", (4, 6), (2, 2), (3, 5), (6, 7), orientation="COL_MAJOR", strategy="GRID_2D"),
]

RECORD_KERNEL = r"""
#include <cstdint>
#include "api/dataflow/dataflow_api.h"

// Per page: the NOC x, y and local address get_noc_addr gives, and the page's first word read
// through noc_async_read_page. Records go to an interleaved DRAM buffer of 16-byte pages.
template <typename Source, typename Records>
void record_pages(const Source& source, uint32_t num_pages, const Records& records, uint32_t& record) {
    const uint32_t page_l1 = get_write_ptr(tt::CBIndex::c_0);
    const uint32_t record_l1 = get_write_ptr(tt::CBIndex::c_1);
    volatile uint32_t* fields = reinterpret_cast<volatile uint32_t*>(record_l1);
    for (uint32_t page = 0; page < num_pages; ++page) {
        const uint64_t noc_addr = source.get_noc_addr(page);
        noc_async_read_page(page, source, page_l1);
        noc_async_read_barrier();
        fields[0] = static_cast<uint32_t>(noc_addr >> 36) & 0x3f;
        fields[1] = static_cast<uint32_t>(noc_addr >> 42) & 0x3f;
        fields[2] = static_cast<uint32_t>(noc_addr & 0xfffffffffull);
        fields[3] = *reinterpret_cast<volatile uint32_t*>(page_l1);
        noc_async_write_page(record++, records, record_l1);
        noc_async_write_barrier();
    }
}

void kernel_main() {
    cb_reserve_back(tt::CBIndex::c_0, 1);
    cb_reserve_back(tt::CBIndex::c_1, 1);
    constexpr auto args_0 = TensorAccessorArgs<0, 0>();
ACCESSOR_ARGS
    const auto records = TensorAccessor(records_args, get_arg_val<uint32_t>(0), 16);
    uint32_t record = 0;
RECORD_CALLS
}
"""


def _record_kernel(buffers: list[Sharded]) -> str:
    chain = "".join(
        f"    constexpr auto args_{i} = TensorAccessorArgs<args_{i - 1}.next_compile_time_args_offset(), "
        f"args_{i - 1}.next_common_runtime_args_offset()>();\n"
        for i in range(1, len(buffers))
    )
    chain += f"    constexpr auto records_args = TensorAccessorArgs<args_{len(buffers) - 1}.next_compile_time_args_offset()>();"
    calls = "".join(
        f"    record_pages(TensorAccessor(args_{i}, get_arg_val<uint32_t>({i + 1})), {b.num_pages}, records, record);\n"
        for i, b in enumerate(buffers)
    )
    return RECORD_KERNEL.replace("ACCESSOR_ARGS", chain).replace("RECORD_CALLS", calls)


def _placement_program(buffers: list[Sharded]) -> str:
    num_records = sum(b.num_pages for b in buffers)
    body = "    std::vector<uint32_t> reader_compile_args;\n    std::vector<uint32_t> reader_common_args;\n"
    body += "    std::vector<uint32_t> addresses;\n"
    for b in buffers:
        config = "tensor_accessor::ArgConfig::RuntimeBankCoords" if b.runtime_bank_coords else "tensor_accessor::ArgConfig::None"
        body += _create_sharded(b, config)
    body += f"""
    distributed::DeviceLocalBufferConfig records_local{{.page_size = 16, .buffer_type = BufferType::DRAM}};
    distributed::ReplicatedBufferConfig records_replicated{{.size = {num_records * 16}}};
    std::shared_ptr<distributed::MeshBuffer> buffer_records = distributed::MeshBuffer::create(records_replicated, records_local, device.get());
    TensorAccessorArgs reader_accessor_records(*buffer_records);
    reader_accessor_records.append_to(reader_compile_args);

    Program program = CreateProgram();
    CoreCoord core{{0, 0}};
    std::map<uint8_t, tt::DataFormat> page_formats = {{{{0, tt::DataFormat::UInt32}}}};
    CircularBufferConfig page_config(64, page_formats);
    page_config.set_page_size(0, 64);
    CreateCircularBuffer(program, core, page_config);
    std::map<uint8_t, tt::DataFormat> record_formats = {{{{1, tt::DataFormat::UInt32}}}};
    CircularBufferConfig record_config(16, record_formats);
    record_config.set_page_size(1, 16);
    CreateCircularBuffer(program, core, record_config);
    KernelHandle reader_kernel = CreateKernel(program, "reader.cpp", core, DataMovementConfig{{.processor = DataMovementProcessor::RISCV_1, .noc = NOC::RISCV_1_default, .compile_args = reader_compile_args}});
    std::vector<uint32_t> reader_args{{device_address(buffer_records)}};
    reader_args.insert(reader_args.end(), addresses.begin(), addresses.end());
    SetRuntimeArgs(program, reader_kernel, core, reader_args);
    SetCommonRuntimeArgs(program, reader_kernel, reader_common_args);
    run_program(device.get(), command_queue, std::move(program));

    std::vector<uint32_t> records({num_records * 4});
    command_queue.enqueue_read_mesh_buffer(records.data(), buffer_records, true);
    write_elements(data_dir / "RECORDS.out.bin", records);
    write_elements(data_dir / "ADDRESSES.out.bin", addresses);
    write_elements(data_dir / "CRTA.out.bin", reader_common_args);
"""
    body += "".join(_read_back(b) for b in buffers)
    return PRELUDE + body + EPILOGUE


def _placement_cta() -> list[int]:
    return [arg for b in PLACEMENT_CASES for arg in b.accessor_args()[0]] + [IS_DRAM, _align(16, DRAM_ALIGNMENT)]


@pytest.fixture(scope="module")
def placement():
    buffers = PLACEMENT_CASES
    cta = _placement_cta()
    crta = [arg for b in buffers for arg in b.accessor_args()[1]]
    plan = host_program_plan("wormhole_b0", [_buffer(b.name, "readwrite", [b.num_pages, b.page_size // 4])
                                             for b in buffers] + [
        _buffer("RECORDS", "write", [sum(b.num_pages for b in buffers), 4]),
        _buffer("ADDRESSES", "write", [len(buffers)]),
        _buffer("CRTA", "write", [len(crta)]),
    ], reader_compile_args=cta)
    sources = host_program_sources(_placement_program(buffers), _record_kernel(buffers))
    # The program passes the compile-time args TensorAccessorArgs produced; the emulator checks
    # they equal the model's `cta` the kernel was compiled with.
    result = run(sources, plan, {b.name: _words(b) for b in buffers})
    return result, crta


def test_accessor_common_runtime_args_hold_the_bank_coordinates(placement):
    result, crta = placement
    assert result.outputs["CRTA"].tolist() == crta


def test_l1_buffers_are_allocated_top_down_at_one_address_on_every_core(placement):
    result, _ = placement
    addresses = result.outputs["ADDRESSES"].tolist()
    top = L1_SIZE
    for b, address in zip(PLACEMENT_CASES, addresses):
        if b.memory == "L1":
            top -= _align(b.bytes_per_bank(), L1_ALIGNMENT)
            assert address == top, b.name


@pytest.mark.parametrize("index", range(len(PLACEMENT_CASES)), ids=[b.name for b in PLACEMENT_CASES])
def test_pages_are_where_tt_metal_puts_them(placement, index):
    result, _ = placement
    b = PLACEMENT_CASES[index]
    first = sum(c.num_pages for c in PLACEMENT_CASES[:index])
    records = result.outputs["RECORDS"][first : first + b.num_pages]
    address = result.outputs["ADDRESSES"][index]
    words = _words(b)
    for page, (core, slot) in b.placement().items():
        x, y = b.noc_xy(core)
        expected = [x, y, address + slot * b.aligned_page_size, words[page, 0]]
        assert records[page].tolist() == expected, f"{b.name} page {page}"


@pytest.mark.parametrize("index", range(len(PLACEMENT_CASES)), ids=[b.name for b in PLACEMENT_CASES])
def test_sharded_buffers_read_back_what_was_written(placement, index):
    b = PLACEMENT_CASES[index]
    np.testing.assert_array_equal(placement[0].outputs[b.name], _words(b))


# ---------------------------------------------------------------- a reader over a sharded buffer

# 4 x 8 bfloat16 tiles block-sharded in 2 x 4 tiles over 2 x 2 cores; each core copies one tile
# row (8 tiles, half of them in its own shard) to an interleaved DRAM buffer C and to D, the same
# tiles height-sharded over cores (0, 0) .. (3, 0) (bank coordinates as compile-time args).
COPY_SOURCE = Sharded("A", "L1", (4, 8), (2, 4), (0, 0), (1, 1), runtime_bank_coords=True, page_size=2048)
COPY_SHARDED_DESTINATION = Sharded("D", "L1", (4, 8), (1, 8), (0, 0), (3, 0), page_size=2048)
COPY_CORES = [(0, 0), (1, 0), (0, 1), (1, 1)]

COPY_MAIN = r"""
    std::vector<uint16_t> tiled_A = read_elements<uint16_t>(data_dir / "A.bin", 32768);
    std::vector<CoreRange> A_shard_ranges{CoreRange(CoreCoord{0, 0}, CoreCoord{1, 1})};
    CoreRangeSet A_shard_cores(A_shard_ranges);
    BufferDistributionSpec A_spec(Shape({4, 8}), Shape({2, 4}), A_shard_cores, ShardOrientation::ROW_MAJOR, ShardDistributionStrategy::ROUND_ROBIN_1D);
    distributed::DeviceLocalBufferConfig A_local{.page_size = 2048, .buffer_type = BufferType::L1, .sharding_args = BufferShardingArgs(A_spec)};
    distributed::ReplicatedBufferConfig A_replicated{.size = 65536};
    std::shared_ptr<distributed::MeshBuffer> buffer_A = distributed::MeshBuffer::create(A_replicated, A_local, device.get());
    command_queue.enqueue_write_mesh_buffer(buffer_A, tiled_A.data(), false);
    const uint32_t address_A = device_address(buffer_A);

    distributed::DeviceLocalBufferConfig C_local{.page_size = 2048, .buffer_type = BufferType::DRAM};
    distributed::ReplicatedBufferConfig C_replicated{.size = 65536};
    std::shared_ptr<distributed::MeshBuffer> buffer_C = distributed::MeshBuffer::create(C_replicated, C_local, device.get());
    const uint32_t address_C = device_address(buffer_C);

    std::vector<CoreRange> D_shard_ranges{CoreRange(CoreCoord{0, 0}, CoreCoord{3, 0})};
    CoreRangeSet D_shard_cores(D_shard_ranges);
    BufferDistributionSpec D_spec(Shape({4, 8}), Shape({1, 8}), D_shard_cores, ShardOrientation::ROW_MAJOR, ShardDistributionStrategy::ROUND_ROBIN_1D);
    distributed::DeviceLocalBufferConfig D_local{.page_size = 2048, .buffer_type = BufferType::L1, .sharding_args = BufferShardingArgs(D_spec)};
    distributed::ReplicatedBufferConfig D_replicated{.size = 65536};
    std::shared_ptr<distributed::MeshBuffer> buffer_D = distributed::MeshBuffer::create(D_replicated, D_local, device.get());
    const uint32_t address_D = device_address(buffer_D);

    Program program = CreateProgram();
    CoreRangeSet cores(std::vector<CoreRange>{CoreRange(CoreCoord{0, 0}, CoreCoord{1, 1})});
    std::map<uint8_t, tt::DataFormat> cb0_formats = {{0, tt::DataFormat::Float16_b}};
    CircularBufferConfig cb0_config(2048, cb0_formats);
    cb0_config.set_page_size(0, 2048);
    CreateCircularBuffer(program, cores, cb0_config);

    std::vector<uint32_t> reader_compile_args;
    std::vector<uint32_t> reader_common_args;
    TensorAccessorArgs reader_accessor_A(*buffer_A, tensor_accessor::ArgConfig::RuntimeBankCoords);
    reader_accessor_A.append_to(reader_compile_args, reader_common_args);
    TensorAccessorArgs reader_accessor_C(*buffer_C);
    reader_accessor_C.append_to(reader_compile_args);
    TensorAccessorArgs reader_accessor_D(*buffer_D);
    reader_accessor_D.append_to(reader_compile_args);
    KernelHandle reader_kernel = CreateKernel(program, "reader.cpp", cores, DataMovementConfig{.processor = DataMovementProcessor::RISCV_1, .noc = NOC::RISCV_1_default, .compile_args = reader_compile_args});
    SetCommonRuntimeArgs(program, reader_kernel, reader_common_args);
    SetRuntimeArgs(program, reader_kernel, CoreCoord{0, 0}, std::vector<uint32_t>{address_A, address_C, address_D, 0, 8});
    SetRuntimeArgs(program, reader_kernel, CoreCoord{1, 0}, std::vector<uint32_t>{address_A, address_C, address_D, 8, 8});
    SetRuntimeArgs(program, reader_kernel, CoreCoord{0, 1}, std::vector<uint32_t>{address_A, address_C, address_D, 16, 8});
    SetRuntimeArgs(program, reader_kernel, CoreCoord{1, 1}, std::vector<uint32_t>{address_A, address_C, address_D, 24, 8});
    run_program(device.get(), command_queue, std::move(program));

    CoreCoord A_noc = device->worker_core_from_logical_core(CoreCoord{1, 1});
    std::vector<uint32_t> noc_coords{static_cast<uint32_t>(A_noc.x), static_cast<uint32_t>(A_noc.y)};
    write_elements(data_dir / "NOC.out.bin", noc_coords);
    std::vector<uint16_t> result_C(32768);
    command_queue.enqueue_read_mesh_buffer(result_C.data(), buffer_C, true);
    write_elements(data_dir / "C.out.bin", result_C);
    std::vector<uint16_t> result_D(32768);
    command_queue.enqueue_read_mesh_buffer(result_D.data(), buffer_D, true);
    write_elements(data_dir / "D.out.bin", result_D);
"""

COPY_KERNEL = r"""
#include <cstdint>
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t src_addr = get_arg_val<uint32_t>(0);
    const uint32_t dst_addr = get_arg_val<uint32_t>(1);
    const uint32_t sharded_dst_addr = get_arg_val<uint32_t>(2);
    const uint32_t start = get_arg_val<uint32_t>(3);
    const uint32_t count = get_arg_val<uint32_t>(4);
    constexpr uint32_t cb = tt::CBIndex::c_0;
    constexpr auto src_args = TensorAccessorArgs<0, 0>();
    constexpr auto dst_args = TensorAccessorArgs<src_args.next_compile_time_args_offset()>();
    constexpr auto sharded_dst_args = TensorAccessorArgs<dst_args.next_compile_time_args_offset()>();
    const auto src = TensorAccessor(src_args, src_addr, get_tile_size(cb));
    const auto dst = TensorAccessor(dst_args, dst_addr, get_tile_size(cb));
    const auto sharded_dst = TensorAccessor(sharded_dst_args, sharded_dst_addr);
    cb_reserve_back(cb, 1);
    const uint32_t l1 = get_write_ptr(cb);
    for (uint32_t page = start; page < start + count; ++page) {
        noc_async_read_page(page, src, l1);
        noc_async_read_barrier();
        noc_async_write_page(page, dst, l1);
        noc_async_write(l1, sharded_dst.get_noc_addr(page), get_tile_size(cb));
        noc_async_write_barrier();
    }
}
"""


def _copy_cta() -> list[int]:
    return COPY_SOURCE.accessor_args()[0] + [IS_DRAM, 2048] + COPY_SHARDED_DESTINATION.accessor_args()[0]


def test_copy_host_program_uses_only_exported_host_api():
    source = PRELUDE + COPY_MAIN + EPILOGUE
    assert check_main_cpp(source) == []
    resolved = {(use.written, use.symbol) for use in api_uses(source)}
    for written, symbol in [
        ("A_spec", "tt::tt_metal::BufferDistributionSpec::BufferDistributionSpec"),
        ("BufferShardingArgs", "tt::tt_metal::BufferShardingArgs::BufferShardingArgs"),
        ("Shape", "tt::tt_metal::Shape (header-only value type)"),
        ("reader_accessor_A.append_to", "tt::tt_metal::TensorAccessorArgs::append_to"),
        ("SetCommonRuntimeArgs", "tt::tt_metal::SetCommonRuntimeArgs"),
        ("device->worker_core_from_logical_core", "tt::tt_metal::distributed::MeshDevice::worker_core_from_logical_core"),
    ]:
        assert (written, symbol) in resolved


def test_the_kernels_compile_against_the_tt_metal_headers():
    syntax_check_dataflow(COPY_KERNEL, "reader", compile_time_args=_copy_cta())
    syntax_check_dataflow(_record_kernel(PLACEMENT_CASES), "reader", compile_time_args=_placement_cta())


def test_get_noc_addr_of_a_sharded_accessor_is_rejected_as_in_tt_metal():
    kernel = COPY_KERNEL.replace("sharded_dst.get_noc_addr(page)", "get_noc_addr(page, sharded_dst)")
    with pytest.raises(HeaderCheckError, match="no matching function for call to .get_noc_addr"):
        syntax_check_dataflow(kernel, "reader", compile_time_args=_copy_cta())
    plan = host_program_plan("wormhole_b0", [], reader_compile_args=_copy_cta())
    with pytest.raises(EmulatorError, match="use accessor.get_noc_addr"):
        run(host_program_sources(PRELUDE + EPILOGUE, kernel), plan, {})


def test_reader_copies_a_sharded_buffer_through_the_accessor():
    rng = np.random.default_rng(7)
    tiles = rng.integers(0, 1 << 16, size=(32, 1024), dtype=np.uint16)
    plan = host_program_plan("wormhole_b0", [
        _buffer("A", "read", [32, 1024], "uint16"),
        _buffer("C", "write", [32, 1024], "uint16"),
        _buffer("D", "write", [32, 1024], "uint16"),
        _buffer("NOC", "write", [2]),
    ], reader_compile_args=_copy_cta())
    result = run(host_program_sources(PRELUDE + COPY_MAIN + EPILOGUE, COPY_KERNEL), plan, {"A": tiles})
    np.testing.assert_array_equal(result.outputs["C"], tiles)
    np.testing.assert_array_equal(result.outputs["D"], tiles)
    assert result.outputs["NOC"].tolist() == [1 + WORKER_NOC_ORIGIN, 1 + WORKER_NOC_ORIGIN]

    source, destination = COPY_SOURCE.placement(), COPY_SHARDED_DESTINATION.placement()
    by_core = {tuple(c["core"]): c for c in result.counters["cores"]}
    remote_writes = []
    for index, core in enumerate(COPY_CORES):
        pages = range(8 * index, 8 * index + 8)
        remote_reads = sum(source[page][0] != core for page in pages)
        remote_writes.append(sum(destination[page][0] != core for page in pages))
        counters = by_core[core]
        assert remote_reads == 4
        assert counters["l1_bytes_read_remote"] == remote_reads * 2048
        assert counters["l1_bytes_written_remote"] == remote_writes[-1] * 2048
        assert counters["dram_bytes_read"] == 0
        assert counters["dram_bytes_written"] == 8 * 2048
    assert remote_writes == [0, 0, 8, 8]
    assert result.counters["total"]["l1_bytes_read_remote"] == 4 * 4 * 2048


# ---------------------------------------------------------------- L1 capacity


def test_circular_buffers_reaching_an_l1_buffer_are_an_overflow():
    big = Sharded("B0", "L1", (4, 160), (1, 160), (0, 0), (3, 0), page_size=2048)  # 320 KiB per core
    main = PRELUDE + "    std::vector<uint32_t> reader_compile_args;\n    std::vector<uint32_t> reader_common_args;\n"
    main += "    std::vector<uint32_t> addresses;\n" + _create_sharded(big, "tensor_accessor::ArgConfig::None")
    main += r"""
    Program program = CreateProgram();
    std::map<uint8_t, tt::DataFormat> cb0_formats = {{0, tt::DataFormat::Float16_b}};
    CircularBufferConfig cb0_config(600 * 2048, cb0_formats);
    cb0_config.set_page_size(0, 2048);
    CreateCircularBuffer(program, CoreCoord{2, 0}, cb0_config);
    CreateKernel(program, "reader.cpp", CoreCoord{2, 0}, DataMovementConfig{.processor = DataMovementProcessor::RISCV_1, .noc = NOC::RISCV_1_default});
    run_program(device.get(), command_queue, std::move(program));
""" + EPILOGUE
    plan = host_program_plan("wormhole_b0", [_buffer("B0", "read", [big.num_pages, big.page_size // 4])])
    sources = host_program_sources(main)
    with pytest.raises(EmulatorError, match=r"core \(2,0\) CB 0: L1 overflow: .* reach the L1 buffers") as caught:
        run(sources, plan, {"B0": _words(big)})
    assert caught.value.returncode == 3
