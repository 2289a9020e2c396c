// Host program for the TileLang kernel "main" (tt-metal 0.81.1 Mesh API).
// Planned for wormhole_b0, core grid 1x3.
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

        // X: bfloat16 [80, 128], read, 80 pages of 256 B (Float16_b)
        std::shared_ptr<distributed::MeshBuffer> buffer_X = create_dram_buffer(device.get(), 20480, 256);
        const uint32_t address_X = device_address(buffer_X);
        std::vector<uint16_t> input_X = read_elements<uint16_t>(data_dir / "X.bin", 10240);
        command_queue.enqueue_write_mesh_buffer(buffer_X, input_X.data(), false);

        // W: bfloat16 [128], read, 4 pages of 2048 B (Float16_b)
        std::shared_ptr<distributed::MeshBuffer> buffer_W = create_dram_buffer(device.get(), 8192, 2048);
        const uint32_t address_W = device_address(buffer_W);
        std::vector<uint16_t> input_W = read_elements<uint16_t>(data_dir / "W.bin", 128);
        std::vector<uint16_t> tiled_W = tilize(input_W, 1, 1, 128);
        command_queue.enqueue_write_mesh_buffer(buffer_W, tiled_W.data(), false);

        // Y: bfloat16 [80, 128], write, 80 pages of 256 B (Float16_b)
        std::shared_ptr<distributed::MeshBuffer> buffer_Y = create_dram_buffer(device.get(), 20480, 256);
        const uint32_t address_Y = device_address(buffer_Y);
        if (std::filesystem::exists(data_dir / "Y.bin")) {
            std::vector<uint16_t> input_Y = read_elements<uint16_t>(data_dir / "Y.bin", 10240);
            command_queue.enqueue_write_mesh_buffer(buffer_Y, input_Y.data(), false);
        }

        Program program = CreateProgram();
        CoreRangeSet cores(std::vector<CoreRange>{CoreRange(CoreCoord{0, 0}, CoreCoord{0, 2})});

        // CB 0 "w": reader -> compute, 8 pages of 2048 B (Float16_b)
        std::map<uint8_t, tt::DataFormat> cb0_formats = {{0, tt::DataFormat::Float16_b}};
        CircularBufferConfig cb0_config(16384, cb0_formats);
        cb0_config.set_page_size(0, 2048);
        CreateCircularBuffer(program, cores, cb0_config);

        // CB 1 "x_rm": reader -> compute, 8 pages of 2048 B (Float16_b)
        std::map<uint8_t, tt::DataFormat> cb1_formats = {{1, tt::DataFormat::Float16_b}};
        CircularBufferConfig cb1_config(16384, cb1_formats);
        cb1_config.set_page_size(1, 2048);
        CreateCircularBuffer(program, cores, cb1_config);

        // CB 2 "reduce_scaler": reader -> compute, 1 pages of 2048 B (Float16_b)
        std::map<uint8_t, tt::DataFormat> cb2_formats = {{2, tt::DataFormat::Float16_b}};
        CircularBufferConfig cb2_config(2048, cb2_formats);
        cb2_config.set_page_size(2, 2048);
        CreateCircularBuffer(program, cores, cb2_config);

        // CB 16 "y_rm": compute -> writer, 8 pages of 2048 B (Float16_b)
        std::map<uint8_t, tt::DataFormat> cb16_formats = {{16, tt::DataFormat::Float16_b}};
        CircularBufferConfig cb16_config(16384, cb16_formats);
        cb16_config.set_page_size(16, 2048);
        CreateCircularBuffer(program, cores, cb16_config);

        // CB 24 "x": compute -> compute, 8 pages of 2048 B (Float16_b)
        std::map<uint8_t, tt::DataFormat> cb24_formats = {{24, tt::DataFormat::Float16_b}};
        CircularBufferConfig cb24_config(16384, cb24_formats);
        cb24_config.set_page_size(24, 2048);
        CreateCircularBuffer(program, cores, cb24_config);

        // CB 25 "sq": compute -> compute, 8 pages of 4096 B (Float32)
        std::map<uint8_t, tt::DataFormat> cb25_formats = {{25, tt::DataFormat::Float32}};
        CircularBufferConfig cb25_config(32768, cb25_formats);
        cb25_config.set_page_size(25, 4096);
        CreateCircularBuffer(program, cores, cb25_config);

        // CB 26 "ss": compute -> compute, 2 pages of 4096 B (Float32)
        std::map<uint8_t, tt::DataFormat> cb26_formats = {{26, tt::DataFormat::Float32}};
        CircularBufferConfig cb26_config(8192, cb26_formats);
        cb26_config.set_page_size(26, 4096);
        CreateCircularBuffer(program, cores, cb26_config);

        // CB 27 "y": compute -> compute, 8 pages of 2048 B (Float16_b)
        std::map<uint8_t, tt::DataFormat> cb27_formats = {{27, tt::DataFormat::Float16_b}};
        CircularBufferConfig cb27_config(16384, cb27_formats);
        cb27_config.set_page_size(27, 2048);
        CreateCircularBuffer(program, cores, cb27_config);

        if (CreateSemaphore(program, cores, 0) != 0) {
            throw std::runtime_error("semaphore 0 was not allocated as id 0");
        }
        if (CreateSemaphore(program, cores, 0) != 1) {
            throw std::runtime_error("semaphore 1 was not allocated as id 1");
        }

        std::vector<uint32_t> reader_compile_args;
        TensorAccessorArgs reader_accessor_X(*buffer_X);
        reader_accessor_X.append_to(reader_compile_args);
        TensorAccessorArgs reader_accessor_W(*buffer_W);
        reader_accessor_W.append_to(reader_compile_args);
        KernelHandle reader_kernel = CreateKernel(program, "reader.cpp", cores, DataMovementConfig{.processor = DataMovementProcessor::RISCV_1, .noc = NOC::RISCV_1_default, .compile_args = reader_compile_args});

        std::vector<uint32_t> compute_compile_args;
        std::vector<UnpackToDestMode> unpack_to_dest(NUM_CIRCULAR_BUFFERS, UnpackToDestMode::Default);
        unpack_to_dest[26] = UnpackToDestMode::UnpackToDestFp32;
        KernelHandle compute_kernel = CreateKernel(program, "compute.cpp", cores, ComputeConfig{.math_fidelity = MathFidelity::HiFi4, .fp32_dest_acc_en = true, .unpack_to_dest_mode = unpack_to_dest, .math_approx_mode = false, .compile_args = compute_compile_args});

        std::vector<uint32_t> writer_compile_args;
        TensorAccessorArgs writer_accessor_Y(*buffer_Y);
        writer_accessor_Y.append_to(writer_compile_args);
        KernelHandle writer_kernel = CreateKernel(program, "writer.cpp", cores, DataMovementConfig{.processor = DataMovementProcessor::RISCV_0, .noc = NOC::RISCV_0_default, .compile_args = writer_compile_args});

        // NOC coordinates of the cores multicast arguments name
        CoreCoord noc_0_0 = device->worker_core_from_logical_core(CoreCoord{0, 0});
        CoreCoord noc_0_2 = device->worker_core_from_logical_core(CoreCoord{0, 2});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{0, 0}, std::vector<uint32_t>{address_X, address_W, 0, 1, 1, 1, static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_0_2.x), static_cast<uint32_t>(noc_0_2.y), static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), 2});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{0, 0}, std::vector<uint32_t>{0, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{0, 0}, std::vector<uint32_t>{address_Y, 0, 1, 1});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{0, 1}, std::vector<uint32_t>{address_X, address_W, 1, 1, 1, 0, static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_0_2.x), static_cast<uint32_t>(noc_0_2.y), static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), 2});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{0, 1}, std::vector<uint32_t>{1, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{0, 1}, std::vector<uint32_t>{address_Y, 1, 1, 1});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{0, 2}, std::vector<uint32_t>{address_X, address_W, 2, 1, 1, 0, static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_0_2.x), static_cast<uint32_t>(noc_0_2.y), static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), 2});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{0, 2}, std::vector<uint32_t>{2, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{0, 2}, std::vector<uint32_t>{address_Y, 2, 1, 1});

        distributed::MeshWorkload workload;
        distributed::MeshCoordinateRange device_range(device->shape());
        workload.add_program(device_range, std::move(program));
        distributed::EnqueueMeshWorkload(command_queue, workload, false);
        distributed::Finish(command_queue);

        std::vector<uint16_t> result_Y(10240);
        command_queue.enqueue_read_mesh_buffer(result_Y.data(), buffer_Y, true);
        write_elements(data_dir / "Y.out.bin", result_Y);

        device->close();
    } catch (const std::exception& error) {
        std::cerr << "error: " << error.what() << std::endl;
        return 1;
    }
    return 0;
}
