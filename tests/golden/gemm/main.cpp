// Host program for the TileLang kernel "main" (tt-metal 0.81.1 Mesh API).
// Planned for wormhole_b0, core grid 8x8.
// Usage: main DATA_DIR. Reads <buffer>.bin (row-major) for every input buffer and writes
// <buffer>.out.bin (row-major) for every output buffer; an output's <buffer>.bin, when there, is its
// contents before the call (what the kernel does not write keeps them).
#include <cstddef>
#include <cstdint>
#include <exception>
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

constexpr uint32_t kTile = 32;
constexpr uint32_t kFace = 16;

template <typename T>
std::vector<T> read_elements(const std::filesystem::path& path, std::size_t count) {
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        throw std::runtime_error("cannot open " + path.string());
    }
    std::vector<T> values(count);
    file.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(count * sizeof(T)));
    if (file.gcount() != static_cast<std::streamsize>(count * sizeof(T))) {
        throw std::runtime_error(path.string() + " holds fewer than " + std::to_string(count) + " elements");
    }
    return values;
}

template <typename T>
void write_elements(const std::filesystem::path& path, const std::vector<T>& values) {
    std::ofstream file(path, std::ios::binary);
    file.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(T)));
    if (!file) {
        throw std::runtime_error("cannot write " + path.string());
    }
}

// Offset of element (r, c) of a 32x32 tile in hardware order: four 16x16 faces
// (top-left, top-right, bottom-left, bottom-right), each row-major.
std::size_t offset_in_tile(uint32_t r, uint32_t c) {
    const uint32_t face = (r / kFace) * 2 + (c / kFace);
    return static_cast<std::size_t>(face) * kFace * kFace + (r % kFace) * kFace + (c % kFace);
}

// A row-major [batch][rows][cols] array as 32x32 tiles, tile-row-major per matrix,
// matrices one after another; the padding of partial tiles is zero.
template <typename T>
std::vector<T> tilize(const std::vector<T>& src, uint32_t batch, uint32_t rows, uint32_t cols) {
    const uint32_t tile_rows = (rows + kTile - 1) / kTile;
    const uint32_t tile_cols = (cols + kTile - 1) / kTile;
    std::vector<T> tiled(static_cast<std::size_t>(batch) * tile_rows * tile_cols * kTile * kTile, T{});
    for (uint32_t b = 0; b < batch; ++b) {
        for (uint32_t r = 0; r < rows; ++r) {
            for (uint32_t c = 0; c < cols; ++c) {
                const std::size_t tile = (static_cast<std::size_t>(b) * tile_rows + r / kTile) * tile_cols + c / kTile;
                const std::size_t tile_base = tile * kTile * kTile;
                const std::size_t row_major = (static_cast<std::size_t>(b) * rows + r) * cols + c;
                tiled[tile_base + offset_in_tile(r % kTile, c % kTile)] = src[row_major];
            }
        }
    }
    return tiled;
}

// Inverse of tilize: drops the padding.
template <typename T>
std::vector<T> untilize(const std::vector<T>& tiled, uint32_t batch, uint32_t rows, uint32_t cols) {
    std::vector<T> dst(static_cast<std::size_t>(batch) * rows * cols);
    const uint32_t tile_rows = (rows + kTile - 1) / kTile;
    const uint32_t tile_cols = (cols + kTile - 1) / kTile;
    for (uint32_t b = 0; b < batch; ++b) {
        for (uint32_t r = 0; r < rows; ++r) {
            for (uint32_t c = 0; c < cols; ++c) {
                const std::size_t tile = (static_cast<std::size_t>(b) * tile_rows + r / kTile) * tile_cols + c / kTile;
                const std::size_t tile_base = tile * kTile * kTile;
                const std::size_t row_major = (static_cast<std::size_t>(b) * rows + r) * cols + c;
                dst[row_major] = tiled[tile_base + offset_in_tile(r % kTile, c % kTile)];
            }
        }
    }
    return dst;
}

// An interleaved DRAM buffer of `size` bytes in pages of `page_size` bytes.
std::shared_ptr<distributed::MeshBuffer> create_dram_buffer(distributed::MeshDevice* device, uint64_t size, uint32_t page_size) {
    distributed::DeviceLocalBufferConfig local_config{.page_size = page_size, .buffer_type = BufferType::DRAM};
    distributed::ReplicatedBufferConfig replicated_config{.size = size};
    return distributed::MeshBuffer::create(replicated_config, local_config, device);
}

// Device address of a buffer, as kernels receive it in runtime args.
uint32_t device_address(const std::shared_ptr<distributed::MeshBuffer>& buffer) {
    Buffer* reference = buffer->get_reference_buffer();
    return static_cast<uint32_t>(reference->address());
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: " << argv[0] << " DATA_DIR" << std::endl;
        return 2;
    }
    const std::filesystem::path data_dir = argv[1];
    try {
        std::shared_ptr<distributed::MeshDevice> device = distributed::MeshDevice::create_unit_mesh(0);
        distributed::MeshCommandQueue& command_queue = device->mesh_command_queue();

        // A: bfloat16 [512, 512], read, 256 pages of 2048 B (Float16_b)
        std::shared_ptr<distributed::MeshBuffer> buffer_A = create_dram_buffer(device.get(), 524288, 2048);
        const uint32_t address_A = device_address(buffer_A);
        std::vector<uint16_t> input_A = read_elements<uint16_t>(data_dir / "A.bin", 262144);
        std::vector<uint16_t> tiled_A = tilize(input_A, 1, 512, 512);
        command_queue.enqueue_write_mesh_buffer(buffer_A, tiled_A.data(), false);

        // B: bfloat16 [512, 512], read, 256 pages of 2048 B (Float16_b)
        std::shared_ptr<distributed::MeshBuffer> buffer_B = create_dram_buffer(device.get(), 524288, 2048);
        const uint32_t address_B = device_address(buffer_B);
        std::vector<uint16_t> input_B = read_elements<uint16_t>(data_dir / "B.bin", 262144);
        std::vector<uint16_t> tiled_B = tilize(input_B, 1, 512, 512);
        command_queue.enqueue_write_mesh_buffer(buffer_B, tiled_B.data(), false);

        // C: bfloat16 [512, 512], write, 256 pages of 2048 B (Float16_b)
        std::shared_ptr<distributed::MeshBuffer> buffer_C = create_dram_buffer(device.get(), 524288, 2048);
        const uint32_t address_C = device_address(buffer_C);
        if (std::filesystem::exists(data_dir / "C.bin")) {
            std::vector<uint16_t> input_C = read_elements<uint16_t>(data_dir / "C.bin", 262144);
            std::vector<uint16_t> tiled_C = tilize(input_C, 1, 512, 512);
            command_queue.enqueue_write_mesh_buffer(buffer_C, tiled_C.data(), false);
        }

        Program program = CreateProgram();
        CoreRangeSet cores(std::vector<CoreRange>{CoreRange(CoreCoord{0, 0}, CoreCoord{7, 7})});

        // CB 0 "A_shared": reader -> compute, 8 pages of 2048 B (Float16_b)
        std::map<uint8_t, tt::DataFormat> cb0_formats = {{0, tt::DataFormat::Float16_b}};
        CircularBufferConfig cb0_config(16384, cb0_formats);
        cb0_config.set_page_size(0, 2048);
        CreateCircularBuffer(program, cores, cb0_config);

        // CB 1 "B_shared": writer -> compute, 8 pages of 2048 B (Float16_b)
        std::map<uint8_t, tt::DataFormat> cb1_formats = {{1, tt::DataFormat::Float16_b}};
        CircularBufferConfig cb1_config(16384, cb1_formats);
        cb1_config.set_page_size(1, 2048);
        CreateCircularBuffer(program, cores, cb1_config);

        // CB 16 "C_local": compute -> writer, 8 pages of 2048 B (Float16_b)
        std::map<uint8_t, tt::DataFormat> cb16_formats = {{16, tt::DataFormat::Float16_b}};
        CircularBufferConfig cb16_config(16384, cb16_formats);
        cb16_config.set_page_size(16, 2048);
        CreateCircularBuffer(program, cores, cb16_config);

        if (CreateSemaphore(program, cores, 0) != 0) {
            throw std::runtime_error("semaphore 0 was not allocated as id 0");
        }
        if (CreateSemaphore(program, cores, 0) != 1) {
            throw std::runtime_error("semaphore 1 was not allocated as id 1");
        }
        if (CreateSemaphore(program, cores, 0) != 2) {
            throw std::runtime_error("semaphore 2 was not allocated as id 2");
        }
        if (CreateSemaphore(program, cores, 0) != 3) {
            throw std::runtime_error("semaphore 3 was not allocated as id 3");
        }

        std::vector<uint32_t> reader_compile_args;
        TensorAccessorArgs reader_accessor_A(*buffer_A);
        reader_accessor_A.append_to(reader_compile_args);
        KernelHandle reader_kernel = CreateKernel(program, "reader.cpp", cores, DataMovementConfig{.processor = DataMovementProcessor::RISCV_1, .noc = NOC::RISCV_1_default, .compile_args = reader_compile_args});

        std::vector<uint32_t> compute_compile_args;
        KernelHandle compute_kernel = CreateKernel(program, "compute.cpp", cores, ComputeConfig{.math_fidelity = MathFidelity::HiFi4, .fp32_dest_acc_en = true, .math_approx_mode = false, .compile_args = compute_compile_args});

        std::vector<uint32_t> writer_compile_args;
        TensorAccessorArgs writer_accessor_B(*buffer_B);
        writer_accessor_B.append_to(writer_compile_args);
        TensorAccessorArgs writer_accessor_C(*buffer_C);
        writer_accessor_C.append_to(writer_compile_args);
        KernelHandle writer_kernel = CreateKernel(program, "writer.cpp", cores, DataMovementConfig{.processor = DataMovementProcessor::RISCV_0, .noc = NOC::RISCV_0_default, .compile_args = writer_compile_args});

        // NOC coordinates of the cores multicast arguments name
        CoreCoord noc_0_0 = device->worker_core_from_logical_core(CoreCoord{0, 0});
        CoreCoord noc_1_0 = device->worker_core_from_logical_core(CoreCoord{1, 0});
        CoreCoord noc_2_0 = device->worker_core_from_logical_core(CoreCoord{2, 0});
        CoreCoord noc_3_0 = device->worker_core_from_logical_core(CoreCoord{3, 0});
        CoreCoord noc_4_0 = device->worker_core_from_logical_core(CoreCoord{4, 0});
        CoreCoord noc_5_0 = device->worker_core_from_logical_core(CoreCoord{5, 0});
        CoreCoord noc_6_0 = device->worker_core_from_logical_core(CoreCoord{6, 0});
        CoreCoord noc_7_0 = device->worker_core_from_logical_core(CoreCoord{7, 0});
        CoreCoord noc_0_1 = device->worker_core_from_logical_core(CoreCoord{0, 1});
        CoreCoord noc_7_1 = device->worker_core_from_logical_core(CoreCoord{7, 1});
        CoreCoord noc_0_2 = device->worker_core_from_logical_core(CoreCoord{0, 2});
        CoreCoord noc_7_2 = device->worker_core_from_logical_core(CoreCoord{7, 2});
        CoreCoord noc_0_3 = device->worker_core_from_logical_core(CoreCoord{0, 3});
        CoreCoord noc_7_3 = device->worker_core_from_logical_core(CoreCoord{7, 3});
        CoreCoord noc_0_4 = device->worker_core_from_logical_core(CoreCoord{0, 4});
        CoreCoord noc_7_4 = device->worker_core_from_logical_core(CoreCoord{7, 4});
        CoreCoord noc_0_5 = device->worker_core_from_logical_core(CoreCoord{0, 5});
        CoreCoord noc_7_5 = device->worker_core_from_logical_core(CoreCoord{7, 5});
        CoreCoord noc_0_6 = device->worker_core_from_logical_core(CoreCoord{0, 6});
        CoreCoord noc_7_6 = device->worker_core_from_logical_core(CoreCoord{7, 6});
        CoreCoord noc_0_7 = device->worker_core_from_logical_core(CoreCoord{0, 7});
        CoreCoord noc_1_7 = device->worker_core_from_logical_core(CoreCoord{1, 7});
        CoreCoord noc_2_7 = device->worker_core_from_logical_core(CoreCoord{2, 7});
        CoreCoord noc_3_7 = device->worker_core_from_logical_core(CoreCoord{3, 7});
        CoreCoord noc_4_7 = device->worker_core_from_logical_core(CoreCoord{4, 7});
        CoreCoord noc_5_7 = device->worker_core_from_logical_core(CoreCoord{5, 7});
        CoreCoord noc_6_7 = device->worker_core_from_logical_core(CoreCoord{6, 7});
        CoreCoord noc_7_7 = device->worker_core_from_logical_core(CoreCoord{7, 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{0, 0}, std::vector<uint32_t>{address_A, 0, 1, 1, 1, static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y), static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{0, 0}, std::vector<uint32_t>{0, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{0, 0}, std::vector<uint32_t>{address_B, address_C, 0, 1, 1, 1, static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_0_7.x), static_cast<uint32_t>(noc_0_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{1, 0}, std::vector<uint32_t>{address_A, 1, 1, 1, 0, static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y), static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{1, 0}, std::vector<uint32_t>{1, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{1, 0}, std::vector<uint32_t>{address_B, address_C, 1, 1, 1, 1, static_cast<uint32_t>(noc_1_0.x), static_cast<uint32_t>(noc_1_0.y), static_cast<uint32_t>(noc_1_0.x), static_cast<uint32_t>(noc_1_0.y), static_cast<uint32_t>(noc_1_7.x), static_cast<uint32_t>(noc_1_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{2, 0}, std::vector<uint32_t>{address_A, 2, 1, 1, 0, static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y), static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{2, 0}, std::vector<uint32_t>{2, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{2, 0}, std::vector<uint32_t>{address_B, address_C, 2, 1, 1, 1, static_cast<uint32_t>(noc_2_0.x), static_cast<uint32_t>(noc_2_0.y), static_cast<uint32_t>(noc_2_0.x), static_cast<uint32_t>(noc_2_0.y), static_cast<uint32_t>(noc_2_7.x), static_cast<uint32_t>(noc_2_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{3, 0}, std::vector<uint32_t>{address_A, 3, 1, 1, 0, static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y), static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{3, 0}, std::vector<uint32_t>{3, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{3, 0}, std::vector<uint32_t>{address_B, address_C, 3, 1, 1, 1, static_cast<uint32_t>(noc_3_0.x), static_cast<uint32_t>(noc_3_0.y), static_cast<uint32_t>(noc_3_0.x), static_cast<uint32_t>(noc_3_0.y), static_cast<uint32_t>(noc_3_7.x), static_cast<uint32_t>(noc_3_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{4, 0}, std::vector<uint32_t>{address_A, 4, 1, 1, 0, static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y), static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{4, 0}, std::vector<uint32_t>{4, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{4, 0}, std::vector<uint32_t>{address_B, address_C, 4, 1, 1, 1, static_cast<uint32_t>(noc_4_0.x), static_cast<uint32_t>(noc_4_0.y), static_cast<uint32_t>(noc_4_0.x), static_cast<uint32_t>(noc_4_0.y), static_cast<uint32_t>(noc_4_7.x), static_cast<uint32_t>(noc_4_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{5, 0}, std::vector<uint32_t>{address_A, 5, 1, 1, 0, static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y), static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{5, 0}, std::vector<uint32_t>{5, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{5, 0}, std::vector<uint32_t>{address_B, address_C, 5, 1, 1, 1, static_cast<uint32_t>(noc_5_0.x), static_cast<uint32_t>(noc_5_0.y), static_cast<uint32_t>(noc_5_0.x), static_cast<uint32_t>(noc_5_0.y), static_cast<uint32_t>(noc_5_7.x), static_cast<uint32_t>(noc_5_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{6, 0}, std::vector<uint32_t>{address_A, 6, 1, 1, 0, static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y), static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{6, 0}, std::vector<uint32_t>{6, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{6, 0}, std::vector<uint32_t>{address_B, address_C, 6, 1, 1, 1, static_cast<uint32_t>(noc_6_0.x), static_cast<uint32_t>(noc_6_0.y), static_cast<uint32_t>(noc_6_0.x), static_cast<uint32_t>(noc_6_0.y), static_cast<uint32_t>(noc_6_7.x), static_cast<uint32_t>(noc_6_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{7, 0}, std::vector<uint32_t>{address_A, 7, 1, 1, 0, static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y), static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{7, 0}, std::vector<uint32_t>{7, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{7, 0}, std::vector<uint32_t>{address_B, address_C, 7, 1, 1, 1, static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y), static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y), static_cast<uint32_t>(noc_7_7.x), static_cast<uint32_t>(noc_7_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{0, 1}, std::vector<uint32_t>{address_A, 8, 1, 1, 1, static_cast<uint32_t>(noc_0_1.x), static_cast<uint32_t>(noc_0_1.y), static_cast<uint32_t>(noc_7_1.x), static_cast<uint32_t>(noc_7_1.y), static_cast<uint32_t>(noc_0_1.x), static_cast<uint32_t>(noc_0_1.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{0, 1}, std::vector<uint32_t>{8, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{0, 1}, std::vector<uint32_t>{address_B, address_C, 8, 1, 1, 0, static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_0_7.x), static_cast<uint32_t>(noc_0_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{1, 1}, std::vector<uint32_t>{address_A, 9, 1, 1, 0, static_cast<uint32_t>(noc_0_1.x), static_cast<uint32_t>(noc_0_1.y), static_cast<uint32_t>(noc_7_1.x), static_cast<uint32_t>(noc_7_1.y), static_cast<uint32_t>(noc_0_1.x), static_cast<uint32_t>(noc_0_1.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{1, 1}, std::vector<uint32_t>{9, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{1, 1}, std::vector<uint32_t>{address_B, address_C, 9, 1, 1, 0, static_cast<uint32_t>(noc_1_0.x), static_cast<uint32_t>(noc_1_0.y), static_cast<uint32_t>(noc_1_0.x), static_cast<uint32_t>(noc_1_0.y), static_cast<uint32_t>(noc_1_7.x), static_cast<uint32_t>(noc_1_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{2, 1}, std::vector<uint32_t>{address_A, 10, 1, 1, 0, static_cast<uint32_t>(noc_0_1.x), static_cast<uint32_t>(noc_0_1.y), static_cast<uint32_t>(noc_7_1.x), static_cast<uint32_t>(noc_7_1.y), static_cast<uint32_t>(noc_0_1.x), static_cast<uint32_t>(noc_0_1.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{2, 1}, std::vector<uint32_t>{10, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{2, 1}, std::vector<uint32_t>{address_B, address_C, 10, 1, 1, 0, static_cast<uint32_t>(noc_2_0.x), static_cast<uint32_t>(noc_2_0.y), static_cast<uint32_t>(noc_2_0.x), static_cast<uint32_t>(noc_2_0.y), static_cast<uint32_t>(noc_2_7.x), static_cast<uint32_t>(noc_2_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{3, 1}, std::vector<uint32_t>{address_A, 11, 1, 1, 0, static_cast<uint32_t>(noc_0_1.x), static_cast<uint32_t>(noc_0_1.y), static_cast<uint32_t>(noc_7_1.x), static_cast<uint32_t>(noc_7_1.y), static_cast<uint32_t>(noc_0_1.x), static_cast<uint32_t>(noc_0_1.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{3, 1}, std::vector<uint32_t>{11, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{3, 1}, std::vector<uint32_t>{address_B, address_C, 11, 1, 1, 0, static_cast<uint32_t>(noc_3_0.x), static_cast<uint32_t>(noc_3_0.y), static_cast<uint32_t>(noc_3_0.x), static_cast<uint32_t>(noc_3_0.y), static_cast<uint32_t>(noc_3_7.x), static_cast<uint32_t>(noc_3_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{4, 1}, std::vector<uint32_t>{address_A, 12, 1, 1, 0, static_cast<uint32_t>(noc_0_1.x), static_cast<uint32_t>(noc_0_1.y), static_cast<uint32_t>(noc_7_1.x), static_cast<uint32_t>(noc_7_1.y), static_cast<uint32_t>(noc_0_1.x), static_cast<uint32_t>(noc_0_1.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{4, 1}, std::vector<uint32_t>{12, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{4, 1}, std::vector<uint32_t>{address_B, address_C, 12, 1, 1, 0, static_cast<uint32_t>(noc_4_0.x), static_cast<uint32_t>(noc_4_0.y), static_cast<uint32_t>(noc_4_0.x), static_cast<uint32_t>(noc_4_0.y), static_cast<uint32_t>(noc_4_7.x), static_cast<uint32_t>(noc_4_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{5, 1}, std::vector<uint32_t>{address_A, 13, 1, 1, 0, static_cast<uint32_t>(noc_0_1.x), static_cast<uint32_t>(noc_0_1.y), static_cast<uint32_t>(noc_7_1.x), static_cast<uint32_t>(noc_7_1.y), static_cast<uint32_t>(noc_0_1.x), static_cast<uint32_t>(noc_0_1.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{5, 1}, std::vector<uint32_t>{13, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{5, 1}, std::vector<uint32_t>{address_B, address_C, 13, 1, 1, 0, static_cast<uint32_t>(noc_5_0.x), static_cast<uint32_t>(noc_5_0.y), static_cast<uint32_t>(noc_5_0.x), static_cast<uint32_t>(noc_5_0.y), static_cast<uint32_t>(noc_5_7.x), static_cast<uint32_t>(noc_5_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{6, 1}, std::vector<uint32_t>{address_A, 14, 1, 1, 0, static_cast<uint32_t>(noc_0_1.x), static_cast<uint32_t>(noc_0_1.y), static_cast<uint32_t>(noc_7_1.x), static_cast<uint32_t>(noc_7_1.y), static_cast<uint32_t>(noc_0_1.x), static_cast<uint32_t>(noc_0_1.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{6, 1}, std::vector<uint32_t>{14, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{6, 1}, std::vector<uint32_t>{address_B, address_C, 14, 1, 1, 0, static_cast<uint32_t>(noc_6_0.x), static_cast<uint32_t>(noc_6_0.y), static_cast<uint32_t>(noc_6_0.x), static_cast<uint32_t>(noc_6_0.y), static_cast<uint32_t>(noc_6_7.x), static_cast<uint32_t>(noc_6_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{7, 1}, std::vector<uint32_t>{address_A, 15, 1, 1, 0, static_cast<uint32_t>(noc_0_1.x), static_cast<uint32_t>(noc_0_1.y), static_cast<uint32_t>(noc_7_1.x), static_cast<uint32_t>(noc_7_1.y), static_cast<uint32_t>(noc_0_1.x), static_cast<uint32_t>(noc_0_1.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{7, 1}, std::vector<uint32_t>{15, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{7, 1}, std::vector<uint32_t>{address_B, address_C, 15, 1, 1, 0, static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y), static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y), static_cast<uint32_t>(noc_7_7.x), static_cast<uint32_t>(noc_7_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{0, 2}, std::vector<uint32_t>{address_A, 16, 1, 1, 1, static_cast<uint32_t>(noc_0_2.x), static_cast<uint32_t>(noc_0_2.y), static_cast<uint32_t>(noc_7_2.x), static_cast<uint32_t>(noc_7_2.y), static_cast<uint32_t>(noc_0_2.x), static_cast<uint32_t>(noc_0_2.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{0, 2}, std::vector<uint32_t>{16, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{0, 2}, std::vector<uint32_t>{address_B, address_C, 16, 1, 1, 0, static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_0_7.x), static_cast<uint32_t>(noc_0_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{1, 2}, std::vector<uint32_t>{address_A, 17, 1, 1, 0, static_cast<uint32_t>(noc_0_2.x), static_cast<uint32_t>(noc_0_2.y), static_cast<uint32_t>(noc_7_2.x), static_cast<uint32_t>(noc_7_2.y), static_cast<uint32_t>(noc_0_2.x), static_cast<uint32_t>(noc_0_2.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{1, 2}, std::vector<uint32_t>{17, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{1, 2}, std::vector<uint32_t>{address_B, address_C, 17, 1, 1, 0, static_cast<uint32_t>(noc_1_0.x), static_cast<uint32_t>(noc_1_0.y), static_cast<uint32_t>(noc_1_0.x), static_cast<uint32_t>(noc_1_0.y), static_cast<uint32_t>(noc_1_7.x), static_cast<uint32_t>(noc_1_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{2, 2}, std::vector<uint32_t>{address_A, 18, 1, 1, 0, static_cast<uint32_t>(noc_0_2.x), static_cast<uint32_t>(noc_0_2.y), static_cast<uint32_t>(noc_7_2.x), static_cast<uint32_t>(noc_7_2.y), static_cast<uint32_t>(noc_0_2.x), static_cast<uint32_t>(noc_0_2.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{2, 2}, std::vector<uint32_t>{18, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{2, 2}, std::vector<uint32_t>{address_B, address_C, 18, 1, 1, 0, static_cast<uint32_t>(noc_2_0.x), static_cast<uint32_t>(noc_2_0.y), static_cast<uint32_t>(noc_2_0.x), static_cast<uint32_t>(noc_2_0.y), static_cast<uint32_t>(noc_2_7.x), static_cast<uint32_t>(noc_2_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{3, 2}, std::vector<uint32_t>{address_A, 19, 1, 1, 0, static_cast<uint32_t>(noc_0_2.x), static_cast<uint32_t>(noc_0_2.y), static_cast<uint32_t>(noc_7_2.x), static_cast<uint32_t>(noc_7_2.y), static_cast<uint32_t>(noc_0_2.x), static_cast<uint32_t>(noc_0_2.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{3, 2}, std::vector<uint32_t>{19, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{3, 2}, std::vector<uint32_t>{address_B, address_C, 19, 1, 1, 0, static_cast<uint32_t>(noc_3_0.x), static_cast<uint32_t>(noc_3_0.y), static_cast<uint32_t>(noc_3_0.x), static_cast<uint32_t>(noc_3_0.y), static_cast<uint32_t>(noc_3_7.x), static_cast<uint32_t>(noc_3_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{4, 2}, std::vector<uint32_t>{address_A, 20, 1, 1, 0, static_cast<uint32_t>(noc_0_2.x), static_cast<uint32_t>(noc_0_2.y), static_cast<uint32_t>(noc_7_2.x), static_cast<uint32_t>(noc_7_2.y), static_cast<uint32_t>(noc_0_2.x), static_cast<uint32_t>(noc_0_2.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{4, 2}, std::vector<uint32_t>{20, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{4, 2}, std::vector<uint32_t>{address_B, address_C, 20, 1, 1, 0, static_cast<uint32_t>(noc_4_0.x), static_cast<uint32_t>(noc_4_0.y), static_cast<uint32_t>(noc_4_0.x), static_cast<uint32_t>(noc_4_0.y), static_cast<uint32_t>(noc_4_7.x), static_cast<uint32_t>(noc_4_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{5, 2}, std::vector<uint32_t>{address_A, 21, 1, 1, 0, static_cast<uint32_t>(noc_0_2.x), static_cast<uint32_t>(noc_0_2.y), static_cast<uint32_t>(noc_7_2.x), static_cast<uint32_t>(noc_7_2.y), static_cast<uint32_t>(noc_0_2.x), static_cast<uint32_t>(noc_0_2.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{5, 2}, std::vector<uint32_t>{21, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{5, 2}, std::vector<uint32_t>{address_B, address_C, 21, 1, 1, 0, static_cast<uint32_t>(noc_5_0.x), static_cast<uint32_t>(noc_5_0.y), static_cast<uint32_t>(noc_5_0.x), static_cast<uint32_t>(noc_5_0.y), static_cast<uint32_t>(noc_5_7.x), static_cast<uint32_t>(noc_5_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{6, 2}, std::vector<uint32_t>{address_A, 22, 1, 1, 0, static_cast<uint32_t>(noc_0_2.x), static_cast<uint32_t>(noc_0_2.y), static_cast<uint32_t>(noc_7_2.x), static_cast<uint32_t>(noc_7_2.y), static_cast<uint32_t>(noc_0_2.x), static_cast<uint32_t>(noc_0_2.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{6, 2}, std::vector<uint32_t>{22, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{6, 2}, std::vector<uint32_t>{address_B, address_C, 22, 1, 1, 0, static_cast<uint32_t>(noc_6_0.x), static_cast<uint32_t>(noc_6_0.y), static_cast<uint32_t>(noc_6_0.x), static_cast<uint32_t>(noc_6_0.y), static_cast<uint32_t>(noc_6_7.x), static_cast<uint32_t>(noc_6_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{7, 2}, std::vector<uint32_t>{address_A, 23, 1, 1, 0, static_cast<uint32_t>(noc_0_2.x), static_cast<uint32_t>(noc_0_2.y), static_cast<uint32_t>(noc_7_2.x), static_cast<uint32_t>(noc_7_2.y), static_cast<uint32_t>(noc_0_2.x), static_cast<uint32_t>(noc_0_2.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{7, 2}, std::vector<uint32_t>{23, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{7, 2}, std::vector<uint32_t>{address_B, address_C, 23, 1, 1, 0, static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y), static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y), static_cast<uint32_t>(noc_7_7.x), static_cast<uint32_t>(noc_7_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{0, 3}, std::vector<uint32_t>{address_A, 24, 1, 1, 1, static_cast<uint32_t>(noc_0_3.x), static_cast<uint32_t>(noc_0_3.y), static_cast<uint32_t>(noc_7_3.x), static_cast<uint32_t>(noc_7_3.y), static_cast<uint32_t>(noc_0_3.x), static_cast<uint32_t>(noc_0_3.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{0, 3}, std::vector<uint32_t>{24, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{0, 3}, std::vector<uint32_t>{address_B, address_C, 24, 1, 1, 0, static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_0_7.x), static_cast<uint32_t>(noc_0_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{1, 3}, std::vector<uint32_t>{address_A, 25, 1, 1, 0, static_cast<uint32_t>(noc_0_3.x), static_cast<uint32_t>(noc_0_3.y), static_cast<uint32_t>(noc_7_3.x), static_cast<uint32_t>(noc_7_3.y), static_cast<uint32_t>(noc_0_3.x), static_cast<uint32_t>(noc_0_3.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{1, 3}, std::vector<uint32_t>{25, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{1, 3}, std::vector<uint32_t>{address_B, address_C, 25, 1, 1, 0, static_cast<uint32_t>(noc_1_0.x), static_cast<uint32_t>(noc_1_0.y), static_cast<uint32_t>(noc_1_0.x), static_cast<uint32_t>(noc_1_0.y), static_cast<uint32_t>(noc_1_7.x), static_cast<uint32_t>(noc_1_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{2, 3}, std::vector<uint32_t>{address_A, 26, 1, 1, 0, static_cast<uint32_t>(noc_0_3.x), static_cast<uint32_t>(noc_0_3.y), static_cast<uint32_t>(noc_7_3.x), static_cast<uint32_t>(noc_7_3.y), static_cast<uint32_t>(noc_0_3.x), static_cast<uint32_t>(noc_0_3.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{2, 3}, std::vector<uint32_t>{26, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{2, 3}, std::vector<uint32_t>{address_B, address_C, 26, 1, 1, 0, static_cast<uint32_t>(noc_2_0.x), static_cast<uint32_t>(noc_2_0.y), static_cast<uint32_t>(noc_2_0.x), static_cast<uint32_t>(noc_2_0.y), static_cast<uint32_t>(noc_2_7.x), static_cast<uint32_t>(noc_2_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{3, 3}, std::vector<uint32_t>{address_A, 27, 1, 1, 0, static_cast<uint32_t>(noc_0_3.x), static_cast<uint32_t>(noc_0_3.y), static_cast<uint32_t>(noc_7_3.x), static_cast<uint32_t>(noc_7_3.y), static_cast<uint32_t>(noc_0_3.x), static_cast<uint32_t>(noc_0_3.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{3, 3}, std::vector<uint32_t>{27, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{3, 3}, std::vector<uint32_t>{address_B, address_C, 27, 1, 1, 0, static_cast<uint32_t>(noc_3_0.x), static_cast<uint32_t>(noc_3_0.y), static_cast<uint32_t>(noc_3_0.x), static_cast<uint32_t>(noc_3_0.y), static_cast<uint32_t>(noc_3_7.x), static_cast<uint32_t>(noc_3_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{4, 3}, std::vector<uint32_t>{address_A, 28, 1, 1, 0, static_cast<uint32_t>(noc_0_3.x), static_cast<uint32_t>(noc_0_3.y), static_cast<uint32_t>(noc_7_3.x), static_cast<uint32_t>(noc_7_3.y), static_cast<uint32_t>(noc_0_3.x), static_cast<uint32_t>(noc_0_3.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{4, 3}, std::vector<uint32_t>{28, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{4, 3}, std::vector<uint32_t>{address_B, address_C, 28, 1, 1, 0, static_cast<uint32_t>(noc_4_0.x), static_cast<uint32_t>(noc_4_0.y), static_cast<uint32_t>(noc_4_0.x), static_cast<uint32_t>(noc_4_0.y), static_cast<uint32_t>(noc_4_7.x), static_cast<uint32_t>(noc_4_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{5, 3}, std::vector<uint32_t>{address_A, 29, 1, 1, 0, static_cast<uint32_t>(noc_0_3.x), static_cast<uint32_t>(noc_0_3.y), static_cast<uint32_t>(noc_7_3.x), static_cast<uint32_t>(noc_7_3.y), static_cast<uint32_t>(noc_0_3.x), static_cast<uint32_t>(noc_0_3.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{5, 3}, std::vector<uint32_t>{29, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{5, 3}, std::vector<uint32_t>{address_B, address_C, 29, 1, 1, 0, static_cast<uint32_t>(noc_5_0.x), static_cast<uint32_t>(noc_5_0.y), static_cast<uint32_t>(noc_5_0.x), static_cast<uint32_t>(noc_5_0.y), static_cast<uint32_t>(noc_5_7.x), static_cast<uint32_t>(noc_5_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{6, 3}, std::vector<uint32_t>{address_A, 30, 1, 1, 0, static_cast<uint32_t>(noc_0_3.x), static_cast<uint32_t>(noc_0_3.y), static_cast<uint32_t>(noc_7_3.x), static_cast<uint32_t>(noc_7_3.y), static_cast<uint32_t>(noc_0_3.x), static_cast<uint32_t>(noc_0_3.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{6, 3}, std::vector<uint32_t>{30, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{6, 3}, std::vector<uint32_t>{address_B, address_C, 30, 1, 1, 0, static_cast<uint32_t>(noc_6_0.x), static_cast<uint32_t>(noc_6_0.y), static_cast<uint32_t>(noc_6_0.x), static_cast<uint32_t>(noc_6_0.y), static_cast<uint32_t>(noc_6_7.x), static_cast<uint32_t>(noc_6_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{7, 3}, std::vector<uint32_t>{address_A, 31, 1, 1, 0, static_cast<uint32_t>(noc_0_3.x), static_cast<uint32_t>(noc_0_3.y), static_cast<uint32_t>(noc_7_3.x), static_cast<uint32_t>(noc_7_3.y), static_cast<uint32_t>(noc_0_3.x), static_cast<uint32_t>(noc_0_3.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{7, 3}, std::vector<uint32_t>{31, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{7, 3}, std::vector<uint32_t>{address_B, address_C, 31, 1, 1, 0, static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y), static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y), static_cast<uint32_t>(noc_7_7.x), static_cast<uint32_t>(noc_7_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{0, 4}, std::vector<uint32_t>{address_A, 32, 1, 1, 1, static_cast<uint32_t>(noc_0_4.x), static_cast<uint32_t>(noc_0_4.y), static_cast<uint32_t>(noc_7_4.x), static_cast<uint32_t>(noc_7_4.y), static_cast<uint32_t>(noc_0_4.x), static_cast<uint32_t>(noc_0_4.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{0, 4}, std::vector<uint32_t>{32, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{0, 4}, std::vector<uint32_t>{address_B, address_C, 32, 1, 1, 0, static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_0_7.x), static_cast<uint32_t>(noc_0_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{1, 4}, std::vector<uint32_t>{address_A, 33, 1, 1, 0, static_cast<uint32_t>(noc_0_4.x), static_cast<uint32_t>(noc_0_4.y), static_cast<uint32_t>(noc_7_4.x), static_cast<uint32_t>(noc_7_4.y), static_cast<uint32_t>(noc_0_4.x), static_cast<uint32_t>(noc_0_4.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{1, 4}, std::vector<uint32_t>{33, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{1, 4}, std::vector<uint32_t>{address_B, address_C, 33, 1, 1, 0, static_cast<uint32_t>(noc_1_0.x), static_cast<uint32_t>(noc_1_0.y), static_cast<uint32_t>(noc_1_0.x), static_cast<uint32_t>(noc_1_0.y), static_cast<uint32_t>(noc_1_7.x), static_cast<uint32_t>(noc_1_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{2, 4}, std::vector<uint32_t>{address_A, 34, 1, 1, 0, static_cast<uint32_t>(noc_0_4.x), static_cast<uint32_t>(noc_0_4.y), static_cast<uint32_t>(noc_7_4.x), static_cast<uint32_t>(noc_7_4.y), static_cast<uint32_t>(noc_0_4.x), static_cast<uint32_t>(noc_0_4.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{2, 4}, std::vector<uint32_t>{34, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{2, 4}, std::vector<uint32_t>{address_B, address_C, 34, 1, 1, 0, static_cast<uint32_t>(noc_2_0.x), static_cast<uint32_t>(noc_2_0.y), static_cast<uint32_t>(noc_2_0.x), static_cast<uint32_t>(noc_2_0.y), static_cast<uint32_t>(noc_2_7.x), static_cast<uint32_t>(noc_2_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{3, 4}, std::vector<uint32_t>{address_A, 35, 1, 1, 0, static_cast<uint32_t>(noc_0_4.x), static_cast<uint32_t>(noc_0_4.y), static_cast<uint32_t>(noc_7_4.x), static_cast<uint32_t>(noc_7_4.y), static_cast<uint32_t>(noc_0_4.x), static_cast<uint32_t>(noc_0_4.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{3, 4}, std::vector<uint32_t>{35, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{3, 4}, std::vector<uint32_t>{address_B, address_C, 35, 1, 1, 0, static_cast<uint32_t>(noc_3_0.x), static_cast<uint32_t>(noc_3_0.y), static_cast<uint32_t>(noc_3_0.x), static_cast<uint32_t>(noc_3_0.y), static_cast<uint32_t>(noc_3_7.x), static_cast<uint32_t>(noc_3_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{4, 4}, std::vector<uint32_t>{address_A, 36, 1, 1, 0, static_cast<uint32_t>(noc_0_4.x), static_cast<uint32_t>(noc_0_4.y), static_cast<uint32_t>(noc_7_4.x), static_cast<uint32_t>(noc_7_4.y), static_cast<uint32_t>(noc_0_4.x), static_cast<uint32_t>(noc_0_4.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{4, 4}, std::vector<uint32_t>{36, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{4, 4}, std::vector<uint32_t>{address_B, address_C, 36, 1, 1, 0, static_cast<uint32_t>(noc_4_0.x), static_cast<uint32_t>(noc_4_0.y), static_cast<uint32_t>(noc_4_0.x), static_cast<uint32_t>(noc_4_0.y), static_cast<uint32_t>(noc_4_7.x), static_cast<uint32_t>(noc_4_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{5, 4}, std::vector<uint32_t>{address_A, 37, 1, 1, 0, static_cast<uint32_t>(noc_0_4.x), static_cast<uint32_t>(noc_0_4.y), static_cast<uint32_t>(noc_7_4.x), static_cast<uint32_t>(noc_7_4.y), static_cast<uint32_t>(noc_0_4.x), static_cast<uint32_t>(noc_0_4.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{5, 4}, std::vector<uint32_t>{37, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{5, 4}, std::vector<uint32_t>{address_B, address_C, 37, 1, 1, 0, static_cast<uint32_t>(noc_5_0.x), static_cast<uint32_t>(noc_5_0.y), static_cast<uint32_t>(noc_5_0.x), static_cast<uint32_t>(noc_5_0.y), static_cast<uint32_t>(noc_5_7.x), static_cast<uint32_t>(noc_5_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{6, 4}, std::vector<uint32_t>{address_A, 38, 1, 1, 0, static_cast<uint32_t>(noc_0_4.x), static_cast<uint32_t>(noc_0_4.y), static_cast<uint32_t>(noc_7_4.x), static_cast<uint32_t>(noc_7_4.y), static_cast<uint32_t>(noc_0_4.x), static_cast<uint32_t>(noc_0_4.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{6, 4}, std::vector<uint32_t>{38, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{6, 4}, std::vector<uint32_t>{address_B, address_C, 38, 1, 1, 0, static_cast<uint32_t>(noc_6_0.x), static_cast<uint32_t>(noc_6_0.y), static_cast<uint32_t>(noc_6_0.x), static_cast<uint32_t>(noc_6_0.y), static_cast<uint32_t>(noc_6_7.x), static_cast<uint32_t>(noc_6_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{7, 4}, std::vector<uint32_t>{address_A, 39, 1, 1, 0, static_cast<uint32_t>(noc_0_4.x), static_cast<uint32_t>(noc_0_4.y), static_cast<uint32_t>(noc_7_4.x), static_cast<uint32_t>(noc_7_4.y), static_cast<uint32_t>(noc_0_4.x), static_cast<uint32_t>(noc_0_4.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{7, 4}, std::vector<uint32_t>{39, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{7, 4}, std::vector<uint32_t>{address_B, address_C, 39, 1, 1, 0, static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y), static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y), static_cast<uint32_t>(noc_7_7.x), static_cast<uint32_t>(noc_7_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{0, 5}, std::vector<uint32_t>{address_A, 40, 1, 1, 1, static_cast<uint32_t>(noc_0_5.x), static_cast<uint32_t>(noc_0_5.y), static_cast<uint32_t>(noc_7_5.x), static_cast<uint32_t>(noc_7_5.y), static_cast<uint32_t>(noc_0_5.x), static_cast<uint32_t>(noc_0_5.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{0, 5}, std::vector<uint32_t>{40, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{0, 5}, std::vector<uint32_t>{address_B, address_C, 40, 1, 1, 0, static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_0_7.x), static_cast<uint32_t>(noc_0_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{1, 5}, std::vector<uint32_t>{address_A, 41, 1, 1, 0, static_cast<uint32_t>(noc_0_5.x), static_cast<uint32_t>(noc_0_5.y), static_cast<uint32_t>(noc_7_5.x), static_cast<uint32_t>(noc_7_5.y), static_cast<uint32_t>(noc_0_5.x), static_cast<uint32_t>(noc_0_5.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{1, 5}, std::vector<uint32_t>{41, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{1, 5}, std::vector<uint32_t>{address_B, address_C, 41, 1, 1, 0, static_cast<uint32_t>(noc_1_0.x), static_cast<uint32_t>(noc_1_0.y), static_cast<uint32_t>(noc_1_0.x), static_cast<uint32_t>(noc_1_0.y), static_cast<uint32_t>(noc_1_7.x), static_cast<uint32_t>(noc_1_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{2, 5}, std::vector<uint32_t>{address_A, 42, 1, 1, 0, static_cast<uint32_t>(noc_0_5.x), static_cast<uint32_t>(noc_0_5.y), static_cast<uint32_t>(noc_7_5.x), static_cast<uint32_t>(noc_7_5.y), static_cast<uint32_t>(noc_0_5.x), static_cast<uint32_t>(noc_0_5.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{2, 5}, std::vector<uint32_t>{42, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{2, 5}, std::vector<uint32_t>{address_B, address_C, 42, 1, 1, 0, static_cast<uint32_t>(noc_2_0.x), static_cast<uint32_t>(noc_2_0.y), static_cast<uint32_t>(noc_2_0.x), static_cast<uint32_t>(noc_2_0.y), static_cast<uint32_t>(noc_2_7.x), static_cast<uint32_t>(noc_2_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{3, 5}, std::vector<uint32_t>{address_A, 43, 1, 1, 0, static_cast<uint32_t>(noc_0_5.x), static_cast<uint32_t>(noc_0_5.y), static_cast<uint32_t>(noc_7_5.x), static_cast<uint32_t>(noc_7_5.y), static_cast<uint32_t>(noc_0_5.x), static_cast<uint32_t>(noc_0_5.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{3, 5}, std::vector<uint32_t>{43, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{3, 5}, std::vector<uint32_t>{address_B, address_C, 43, 1, 1, 0, static_cast<uint32_t>(noc_3_0.x), static_cast<uint32_t>(noc_3_0.y), static_cast<uint32_t>(noc_3_0.x), static_cast<uint32_t>(noc_3_0.y), static_cast<uint32_t>(noc_3_7.x), static_cast<uint32_t>(noc_3_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{4, 5}, std::vector<uint32_t>{address_A, 44, 1, 1, 0, static_cast<uint32_t>(noc_0_5.x), static_cast<uint32_t>(noc_0_5.y), static_cast<uint32_t>(noc_7_5.x), static_cast<uint32_t>(noc_7_5.y), static_cast<uint32_t>(noc_0_5.x), static_cast<uint32_t>(noc_0_5.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{4, 5}, std::vector<uint32_t>{44, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{4, 5}, std::vector<uint32_t>{address_B, address_C, 44, 1, 1, 0, static_cast<uint32_t>(noc_4_0.x), static_cast<uint32_t>(noc_4_0.y), static_cast<uint32_t>(noc_4_0.x), static_cast<uint32_t>(noc_4_0.y), static_cast<uint32_t>(noc_4_7.x), static_cast<uint32_t>(noc_4_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{5, 5}, std::vector<uint32_t>{address_A, 45, 1, 1, 0, static_cast<uint32_t>(noc_0_5.x), static_cast<uint32_t>(noc_0_5.y), static_cast<uint32_t>(noc_7_5.x), static_cast<uint32_t>(noc_7_5.y), static_cast<uint32_t>(noc_0_5.x), static_cast<uint32_t>(noc_0_5.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{5, 5}, std::vector<uint32_t>{45, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{5, 5}, std::vector<uint32_t>{address_B, address_C, 45, 1, 1, 0, static_cast<uint32_t>(noc_5_0.x), static_cast<uint32_t>(noc_5_0.y), static_cast<uint32_t>(noc_5_0.x), static_cast<uint32_t>(noc_5_0.y), static_cast<uint32_t>(noc_5_7.x), static_cast<uint32_t>(noc_5_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{6, 5}, std::vector<uint32_t>{address_A, 46, 1, 1, 0, static_cast<uint32_t>(noc_0_5.x), static_cast<uint32_t>(noc_0_5.y), static_cast<uint32_t>(noc_7_5.x), static_cast<uint32_t>(noc_7_5.y), static_cast<uint32_t>(noc_0_5.x), static_cast<uint32_t>(noc_0_5.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{6, 5}, std::vector<uint32_t>{46, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{6, 5}, std::vector<uint32_t>{address_B, address_C, 46, 1, 1, 0, static_cast<uint32_t>(noc_6_0.x), static_cast<uint32_t>(noc_6_0.y), static_cast<uint32_t>(noc_6_0.x), static_cast<uint32_t>(noc_6_0.y), static_cast<uint32_t>(noc_6_7.x), static_cast<uint32_t>(noc_6_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{7, 5}, std::vector<uint32_t>{address_A, 47, 1, 1, 0, static_cast<uint32_t>(noc_0_5.x), static_cast<uint32_t>(noc_0_5.y), static_cast<uint32_t>(noc_7_5.x), static_cast<uint32_t>(noc_7_5.y), static_cast<uint32_t>(noc_0_5.x), static_cast<uint32_t>(noc_0_5.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{7, 5}, std::vector<uint32_t>{47, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{7, 5}, std::vector<uint32_t>{address_B, address_C, 47, 1, 1, 0, static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y), static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y), static_cast<uint32_t>(noc_7_7.x), static_cast<uint32_t>(noc_7_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{0, 6}, std::vector<uint32_t>{address_A, 48, 1, 1, 1, static_cast<uint32_t>(noc_0_6.x), static_cast<uint32_t>(noc_0_6.y), static_cast<uint32_t>(noc_7_6.x), static_cast<uint32_t>(noc_7_6.y), static_cast<uint32_t>(noc_0_6.x), static_cast<uint32_t>(noc_0_6.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{0, 6}, std::vector<uint32_t>{48, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{0, 6}, std::vector<uint32_t>{address_B, address_C, 48, 1, 1, 0, static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_0_7.x), static_cast<uint32_t>(noc_0_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{1, 6}, std::vector<uint32_t>{address_A, 49, 1, 1, 0, static_cast<uint32_t>(noc_0_6.x), static_cast<uint32_t>(noc_0_6.y), static_cast<uint32_t>(noc_7_6.x), static_cast<uint32_t>(noc_7_6.y), static_cast<uint32_t>(noc_0_6.x), static_cast<uint32_t>(noc_0_6.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{1, 6}, std::vector<uint32_t>{49, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{1, 6}, std::vector<uint32_t>{address_B, address_C, 49, 1, 1, 0, static_cast<uint32_t>(noc_1_0.x), static_cast<uint32_t>(noc_1_0.y), static_cast<uint32_t>(noc_1_0.x), static_cast<uint32_t>(noc_1_0.y), static_cast<uint32_t>(noc_1_7.x), static_cast<uint32_t>(noc_1_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{2, 6}, std::vector<uint32_t>{address_A, 50, 1, 1, 0, static_cast<uint32_t>(noc_0_6.x), static_cast<uint32_t>(noc_0_6.y), static_cast<uint32_t>(noc_7_6.x), static_cast<uint32_t>(noc_7_6.y), static_cast<uint32_t>(noc_0_6.x), static_cast<uint32_t>(noc_0_6.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{2, 6}, std::vector<uint32_t>{50, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{2, 6}, std::vector<uint32_t>{address_B, address_C, 50, 1, 1, 0, static_cast<uint32_t>(noc_2_0.x), static_cast<uint32_t>(noc_2_0.y), static_cast<uint32_t>(noc_2_0.x), static_cast<uint32_t>(noc_2_0.y), static_cast<uint32_t>(noc_2_7.x), static_cast<uint32_t>(noc_2_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{3, 6}, std::vector<uint32_t>{address_A, 51, 1, 1, 0, static_cast<uint32_t>(noc_0_6.x), static_cast<uint32_t>(noc_0_6.y), static_cast<uint32_t>(noc_7_6.x), static_cast<uint32_t>(noc_7_6.y), static_cast<uint32_t>(noc_0_6.x), static_cast<uint32_t>(noc_0_6.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{3, 6}, std::vector<uint32_t>{51, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{3, 6}, std::vector<uint32_t>{address_B, address_C, 51, 1, 1, 0, static_cast<uint32_t>(noc_3_0.x), static_cast<uint32_t>(noc_3_0.y), static_cast<uint32_t>(noc_3_0.x), static_cast<uint32_t>(noc_3_0.y), static_cast<uint32_t>(noc_3_7.x), static_cast<uint32_t>(noc_3_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{4, 6}, std::vector<uint32_t>{address_A, 52, 1, 1, 0, static_cast<uint32_t>(noc_0_6.x), static_cast<uint32_t>(noc_0_6.y), static_cast<uint32_t>(noc_7_6.x), static_cast<uint32_t>(noc_7_6.y), static_cast<uint32_t>(noc_0_6.x), static_cast<uint32_t>(noc_0_6.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{4, 6}, std::vector<uint32_t>{52, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{4, 6}, std::vector<uint32_t>{address_B, address_C, 52, 1, 1, 0, static_cast<uint32_t>(noc_4_0.x), static_cast<uint32_t>(noc_4_0.y), static_cast<uint32_t>(noc_4_0.x), static_cast<uint32_t>(noc_4_0.y), static_cast<uint32_t>(noc_4_7.x), static_cast<uint32_t>(noc_4_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{5, 6}, std::vector<uint32_t>{address_A, 53, 1, 1, 0, static_cast<uint32_t>(noc_0_6.x), static_cast<uint32_t>(noc_0_6.y), static_cast<uint32_t>(noc_7_6.x), static_cast<uint32_t>(noc_7_6.y), static_cast<uint32_t>(noc_0_6.x), static_cast<uint32_t>(noc_0_6.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{5, 6}, std::vector<uint32_t>{53, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{5, 6}, std::vector<uint32_t>{address_B, address_C, 53, 1, 1, 0, static_cast<uint32_t>(noc_5_0.x), static_cast<uint32_t>(noc_5_0.y), static_cast<uint32_t>(noc_5_0.x), static_cast<uint32_t>(noc_5_0.y), static_cast<uint32_t>(noc_5_7.x), static_cast<uint32_t>(noc_5_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{6, 6}, std::vector<uint32_t>{address_A, 54, 1, 1, 0, static_cast<uint32_t>(noc_0_6.x), static_cast<uint32_t>(noc_0_6.y), static_cast<uint32_t>(noc_7_6.x), static_cast<uint32_t>(noc_7_6.y), static_cast<uint32_t>(noc_0_6.x), static_cast<uint32_t>(noc_0_6.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{6, 6}, std::vector<uint32_t>{54, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{6, 6}, std::vector<uint32_t>{address_B, address_C, 54, 1, 1, 0, static_cast<uint32_t>(noc_6_0.x), static_cast<uint32_t>(noc_6_0.y), static_cast<uint32_t>(noc_6_0.x), static_cast<uint32_t>(noc_6_0.y), static_cast<uint32_t>(noc_6_7.x), static_cast<uint32_t>(noc_6_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{7, 6}, std::vector<uint32_t>{address_A, 55, 1, 1, 0, static_cast<uint32_t>(noc_0_6.x), static_cast<uint32_t>(noc_0_6.y), static_cast<uint32_t>(noc_7_6.x), static_cast<uint32_t>(noc_7_6.y), static_cast<uint32_t>(noc_0_6.x), static_cast<uint32_t>(noc_0_6.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{7, 6}, std::vector<uint32_t>{55, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{7, 6}, std::vector<uint32_t>{address_B, address_C, 55, 1, 1, 0, static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y), static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y), static_cast<uint32_t>(noc_7_7.x), static_cast<uint32_t>(noc_7_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{0, 7}, std::vector<uint32_t>{address_A, 56, 1, 1, 1, static_cast<uint32_t>(noc_0_7.x), static_cast<uint32_t>(noc_0_7.y), static_cast<uint32_t>(noc_7_7.x), static_cast<uint32_t>(noc_7_7.y), static_cast<uint32_t>(noc_0_7.x), static_cast<uint32_t>(noc_0_7.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{0, 7}, std::vector<uint32_t>{56, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{0, 7}, std::vector<uint32_t>{address_B, address_C, 56, 1, 1, 0, static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_0_7.x), static_cast<uint32_t>(noc_0_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{1, 7}, std::vector<uint32_t>{address_A, 57, 1, 1, 0, static_cast<uint32_t>(noc_0_7.x), static_cast<uint32_t>(noc_0_7.y), static_cast<uint32_t>(noc_7_7.x), static_cast<uint32_t>(noc_7_7.y), static_cast<uint32_t>(noc_0_7.x), static_cast<uint32_t>(noc_0_7.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{1, 7}, std::vector<uint32_t>{57, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{1, 7}, std::vector<uint32_t>{address_B, address_C, 57, 1, 1, 0, static_cast<uint32_t>(noc_1_0.x), static_cast<uint32_t>(noc_1_0.y), static_cast<uint32_t>(noc_1_0.x), static_cast<uint32_t>(noc_1_0.y), static_cast<uint32_t>(noc_1_7.x), static_cast<uint32_t>(noc_1_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{2, 7}, std::vector<uint32_t>{address_A, 58, 1, 1, 0, static_cast<uint32_t>(noc_0_7.x), static_cast<uint32_t>(noc_0_7.y), static_cast<uint32_t>(noc_7_7.x), static_cast<uint32_t>(noc_7_7.y), static_cast<uint32_t>(noc_0_7.x), static_cast<uint32_t>(noc_0_7.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{2, 7}, std::vector<uint32_t>{58, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{2, 7}, std::vector<uint32_t>{address_B, address_C, 58, 1, 1, 0, static_cast<uint32_t>(noc_2_0.x), static_cast<uint32_t>(noc_2_0.y), static_cast<uint32_t>(noc_2_0.x), static_cast<uint32_t>(noc_2_0.y), static_cast<uint32_t>(noc_2_7.x), static_cast<uint32_t>(noc_2_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{3, 7}, std::vector<uint32_t>{address_A, 59, 1, 1, 0, static_cast<uint32_t>(noc_0_7.x), static_cast<uint32_t>(noc_0_7.y), static_cast<uint32_t>(noc_7_7.x), static_cast<uint32_t>(noc_7_7.y), static_cast<uint32_t>(noc_0_7.x), static_cast<uint32_t>(noc_0_7.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{3, 7}, std::vector<uint32_t>{59, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{3, 7}, std::vector<uint32_t>{address_B, address_C, 59, 1, 1, 0, static_cast<uint32_t>(noc_3_0.x), static_cast<uint32_t>(noc_3_0.y), static_cast<uint32_t>(noc_3_0.x), static_cast<uint32_t>(noc_3_0.y), static_cast<uint32_t>(noc_3_7.x), static_cast<uint32_t>(noc_3_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{4, 7}, std::vector<uint32_t>{address_A, 60, 1, 1, 0, static_cast<uint32_t>(noc_0_7.x), static_cast<uint32_t>(noc_0_7.y), static_cast<uint32_t>(noc_7_7.x), static_cast<uint32_t>(noc_7_7.y), static_cast<uint32_t>(noc_0_7.x), static_cast<uint32_t>(noc_0_7.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{4, 7}, std::vector<uint32_t>{60, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{4, 7}, std::vector<uint32_t>{address_B, address_C, 60, 1, 1, 0, static_cast<uint32_t>(noc_4_0.x), static_cast<uint32_t>(noc_4_0.y), static_cast<uint32_t>(noc_4_0.x), static_cast<uint32_t>(noc_4_0.y), static_cast<uint32_t>(noc_4_7.x), static_cast<uint32_t>(noc_4_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{5, 7}, std::vector<uint32_t>{address_A, 61, 1, 1, 0, static_cast<uint32_t>(noc_0_7.x), static_cast<uint32_t>(noc_0_7.y), static_cast<uint32_t>(noc_7_7.x), static_cast<uint32_t>(noc_7_7.y), static_cast<uint32_t>(noc_0_7.x), static_cast<uint32_t>(noc_0_7.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{5, 7}, std::vector<uint32_t>{61, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{5, 7}, std::vector<uint32_t>{address_B, address_C, 61, 1, 1, 0, static_cast<uint32_t>(noc_5_0.x), static_cast<uint32_t>(noc_5_0.y), static_cast<uint32_t>(noc_5_0.x), static_cast<uint32_t>(noc_5_0.y), static_cast<uint32_t>(noc_5_7.x), static_cast<uint32_t>(noc_5_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{6, 7}, std::vector<uint32_t>{address_A, 62, 1, 1, 0, static_cast<uint32_t>(noc_0_7.x), static_cast<uint32_t>(noc_0_7.y), static_cast<uint32_t>(noc_7_7.x), static_cast<uint32_t>(noc_7_7.y), static_cast<uint32_t>(noc_0_7.x), static_cast<uint32_t>(noc_0_7.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{6, 7}, std::vector<uint32_t>{62, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{6, 7}, std::vector<uint32_t>{address_B, address_C, 62, 1, 1, 0, static_cast<uint32_t>(noc_6_0.x), static_cast<uint32_t>(noc_6_0.y), static_cast<uint32_t>(noc_6_0.x), static_cast<uint32_t>(noc_6_0.y), static_cast<uint32_t>(noc_6_7.x), static_cast<uint32_t>(noc_6_7.y), 7});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{7, 7}, std::vector<uint32_t>{address_A, 63, 1, 1, 0, static_cast<uint32_t>(noc_0_7.x), static_cast<uint32_t>(noc_0_7.y), static_cast<uint32_t>(noc_7_7.x), static_cast<uint32_t>(noc_7_7.y), static_cast<uint32_t>(noc_0_7.x), static_cast<uint32_t>(noc_0_7.y), 7});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{7, 7}, std::vector<uint32_t>{63, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{7, 7}, std::vector<uint32_t>{address_B, address_C, 63, 1, 1, 0, static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y), static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y), static_cast<uint32_t>(noc_7_7.x), static_cast<uint32_t>(noc_7_7.y), 7});

        distributed::MeshWorkload workload;
        distributed::MeshCoordinateRange device_range(device->shape());
        workload.add_program(device_range, std::move(program));
        distributed::EnqueueMeshWorkload(command_queue, workload, false);
        distributed::Finish(command_queue);

        std::vector<uint16_t> result_C(262144);
        command_queue.enqueue_read_mesh_buffer(result_C.data(), buffer_C, true);
        write_elements(data_dir / "C.out.bin", untilize(result_C, 1, 512, 512));

        device->close();
    } catch (const std::exception& error) {
        std::cerr << "error: " << error.what() << std::endl;
        return 1;
    }
    return 0;
}
