// Host program for the TileLang kernel "main" (tt-metal 0.81.1 Mesh API).
// Planned for wormhole_b0, core grid 4x2.
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

        // Q: bfloat16 [1, 2, 256, 64], read, 32 pages of 2048 B (Float16_b)
        std::shared_ptr<distributed::MeshBuffer> buffer_Q = create_dram_buffer(device.get(), 65536, 2048);
        const uint32_t address_Q = device_address(buffer_Q);
        std::vector<uint16_t> input_Q = read_elements<uint16_t>(data_dir / "Q.bin", 32768);
        std::vector<uint16_t> tiled_Q = tilize(input_Q, 2, 256, 64);
        command_queue.enqueue_write_mesh_buffer(buffer_Q, tiled_Q.data(), false);

        // K: bfloat16 [1, 2, 256, 64], read, 32 pages of 2048 B (Float16_b)
        std::shared_ptr<distributed::MeshBuffer> buffer_K = create_dram_buffer(device.get(), 65536, 2048);
        const uint32_t address_K = device_address(buffer_K);
        std::vector<uint16_t> input_K = read_elements<uint16_t>(data_dir / "K.bin", 32768);
        std::vector<uint16_t> tiled_K = tilize(input_K, 2, 256, 64);
        command_queue.enqueue_write_mesh_buffer(buffer_K, tiled_K.data(), false);

        // V: bfloat16 [1, 2, 256, 64], read, 32 pages of 2048 B (Float16_b)
        std::shared_ptr<distributed::MeshBuffer> buffer_V = create_dram_buffer(device.get(), 65536, 2048);
        const uint32_t address_V = device_address(buffer_V);
        std::vector<uint16_t> input_V = read_elements<uint16_t>(data_dir / "V.bin", 32768);
        std::vector<uint16_t> tiled_V = tilize(input_V, 2, 256, 64);
        command_queue.enqueue_write_mesh_buffer(buffer_V, tiled_V.data(), false);

        // O: bfloat16 [1, 2, 256, 64], write, 32 pages of 2048 B (Float16_b)
        std::shared_ptr<distributed::MeshBuffer> buffer_O = create_dram_buffer(device.get(), 65536, 2048);
        const uint32_t address_O = device_address(buffer_O);
        if (std::filesystem::exists(data_dir / "O.bin")) {
            std::vector<uint16_t> input_O = read_elements<uint16_t>(data_dir / "O.bin", 32768);
            std::vector<uint16_t> tiled_O = tilize(input_O, 2, 256, 64);
            command_queue.enqueue_write_mesh_buffer(buffer_O, tiled_O.data(), false);
        }

        Program program = CreateProgram();
        CoreRangeSet cores(std::vector<CoreRange>{CoreRange(CoreCoord{0, 0}, CoreCoord{3, 1})});

        // CB 0 "Q_s": reader -> compute, 8 pages of 2048 B (Float16_b)
        std::map<uint8_t, tt::DataFormat> cb0_formats = {{0, tt::DataFormat::Float16_b}};
        CircularBufferConfig cb0_config(16384, cb0_formats);
        cb0_config.set_page_size(0, 2048);
        CreateCircularBuffer(program, cores, cb0_config);

        // CB 1 "K_s": reader -> compute, 8 pages of 2048 B (Float16_b)
        std::map<uint8_t, tt::DataFormat> cb1_formats = {{1, tt::DataFormat::Float16_b}};
        CircularBufferConfig cb1_config(16384, cb1_formats);
        cb1_config.set_page_size(1, 2048);
        CreateCircularBuffer(program, cores, cb1_config);

        // CB 2 "acc_s_gen": reader -> compute, 8 pages of 4096 B (Float32)
        std::map<uint8_t, tt::DataFormat> cb2_formats = {{2, tt::DataFormat::Float32}};
        CircularBufferConfig cb2_config(32768, cb2_formats);
        cb2_config.set_page_size(2, 4096);
        CreateCircularBuffer(program, cores, cb2_config);

        // CB 3 "V_s": reader -> compute, 8 pages of 2048 B (Float16_b)
        std::map<uint8_t, tt::DataFormat> cb3_formats = {{3, tt::DataFormat::Float16_b}};
        CircularBufferConfig cb3_config(16384, cb3_formats);
        cb3_config.set_page_size(3, 2048);
        CreateCircularBuffer(program, cores, cb3_config);

        // CB 4 "reduce_scaler": reader -> compute, 1 pages of 2048 B (Float16_b)
        std::map<uint8_t, tt::DataFormat> cb4_formats = {{4, tt::DataFormat::Float16_b}};
        CircularBufferConfig cb4_config(2048, cb4_formats);
        cb4_config.set_page_size(4, 2048);
        CreateCircularBuffer(program, cores, cb4_config);

        // CB 5 "O_s": compute -> writer, 8 pages of 2048 B (Float16_b)
        std::map<uint8_t, tt::DataFormat> cb5_formats = {{5, tt::DataFormat::Float16_b}};
        CircularBufferConfig cb5_config(16384, cb5_formats);
        cb5_config.set_page_size(5, 2048);
        CreateCircularBuffer(program, cores, cb5_config);

        // CB 6 "acc_o": compute -> compute, 8 pages of 4096 B (Float32)
        std::map<uint8_t, tt::DataFormat> cb6_formats = {{6, tt::DataFormat::Float32}};
        CircularBufferConfig cb6_config(32768, cb6_formats);
        cb6_config.set_page_size(6, 4096);
        CreateCircularBuffer(program, cores, cb6_config);

        // CB 7 "logsum": compute -> compute, 4 pages of 4096 B (Float32)
        std::map<uint8_t, tt::DataFormat> cb7_formats = {{7, tt::DataFormat::Float32}};
        CircularBufferConfig cb7_config(16384, cb7_formats);
        cb7_config.set_page_size(7, 4096);
        CreateCircularBuffer(program, cores, cb7_config);

        // CB 8 "m": compute -> compute, 4 pages of 4096 B (Float32)
        std::map<uint8_t, tt::DataFormat> cb8_formats = {{8, tt::DataFormat::Float32}};
        CircularBufferConfig cb8_config(16384, cb8_formats);
        cb8_config.set_page_size(8, 4096);
        CreateCircularBuffer(program, cores, cb8_config);

        // CB 9 "acc_s": compute -> compute, 8 pages of 4096 B (Float32)
        std::map<uint8_t, tt::DataFormat> cb9_formats = {{9, tt::DataFormat::Float32}};
        CircularBufferConfig cb9_config(32768, cb9_formats);
        cb9_config.set_page_size(9, 4096);
        CreateCircularBuffer(program, cores, cb9_config);

        // CB 10 "m_prev": compute -> compute, 4 pages of 4096 B (Float32)
        std::map<uint8_t, tt::DataFormat> cb10_formats = {{10, tt::DataFormat::Float32}};
        CircularBufferConfig cb10_config(16384, cb10_formats);
        cb10_config.set_page_size(10, 4096);
        CreateCircularBuffer(program, cores, cb10_config);

        // CB 11 "scores_scale": compute -> compute, 4 pages of 4096 B (Float32)
        std::map<uint8_t, tt::DataFormat> cb11_formats = {{11, tt::DataFormat::Float32}};
        CircularBufferConfig cb11_config(16384, cb11_formats);
        cb11_config.set_page_size(11, 4096);
        CreateCircularBuffer(program, cores, cb11_config);

        // CB 12 "acc_s_rowsum": compute -> compute, 4 pages of 4096 B (Float32)
        std::map<uint8_t, tt::DataFormat> cb12_formats = {{12, tt::DataFormat::Float32}};
        CircularBufferConfig cb12_config(16384, cb12_formats);
        cb12_config.set_page_size(12, 4096);
        CreateCircularBuffer(program, cores, cb12_config);

        // CB 13 "scores_sum": compute -> compute, 4 pages of 4096 B (Float32)
        std::map<uint8_t, tt::DataFormat> cb13_formats = {{13, tt::DataFormat::Float32}};
        CircularBufferConfig cb13_config(16384, cb13_formats);
        cb13_config.set_page_size(13, 4096);
        CreateCircularBuffer(program, cores, cb13_config);

        // CB 14 "acc_s_cast": compute -> compute, 8 pages of 2048 B (Float16_b)
        std::map<uint8_t, tt::DataFormat> cb14_formats = {{14, tt::DataFormat::Float16_b}};
        CircularBufferConfig cb14_config(16384, cb14_formats);
        cb14_config.set_page_size(14, 2048);
        CreateCircularBuffer(program, cores, cb14_config);

        std::vector<uint32_t> reader_compile_args;
        TensorAccessorArgs reader_accessor_Q(*buffer_Q);
        reader_accessor_Q.append_to(reader_compile_args);
        TensorAccessorArgs reader_accessor_K(*buffer_K);
        reader_accessor_K.append_to(reader_compile_args);
        TensorAccessorArgs reader_accessor_V(*buffer_V);
        reader_accessor_V.append_to(reader_compile_args);
        KernelHandle reader_kernel = CreateKernel(program, "reader.cpp", cores, DataMovementConfig{.processor = DataMovementProcessor::RISCV_1, .noc = NOC::RISCV_1_default, .compile_args = reader_compile_args});

        std::vector<uint32_t> compute_compile_args;
        std::vector<UnpackToDestMode> unpack_to_dest(NUM_CIRCULAR_BUFFERS, UnpackToDestMode::Default);
        unpack_to_dest[6] = UnpackToDestMode::UnpackToDestFp32;
        unpack_to_dest[2] = UnpackToDestMode::UnpackToDestFp32;
        unpack_to_dest[7] = UnpackToDestMode::UnpackToDestFp32;
        unpack_to_dest[8] = UnpackToDestMode::UnpackToDestFp32;
        unpack_to_dest[10] = UnpackToDestMode::UnpackToDestFp32;
        unpack_to_dest[11] = UnpackToDestMode::UnpackToDestFp32;
        unpack_to_dest[13] = UnpackToDestMode::UnpackToDestFp32;
        KernelHandle compute_kernel = CreateKernel(program, "compute.cpp", cores, ComputeConfig{.math_fidelity = MathFidelity::HiFi4, .fp32_dest_acc_en = true, .unpack_to_dest_mode = unpack_to_dest, .math_approx_mode = false, .compile_args = compute_compile_args});

        std::vector<uint32_t> writer_compile_args;
        TensorAccessorArgs writer_accessor_O(*buffer_O);
        writer_accessor_O.append_to(writer_compile_args);
        KernelHandle writer_kernel = CreateKernel(program, "writer.cpp", cores, DataMovementConfig{.processor = DataMovementProcessor::RISCV_0, .noc = NOC::RISCV_0_default, .compile_args = writer_compile_args});

        SetRuntimeArgs(program, reader_kernel, CoreCoord{0, 0}, std::vector<uint32_t>{address_Q, address_K, address_V, 0, 1, 1});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{0, 0}, std::vector<uint32_t>{0, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{0, 0}, std::vector<uint32_t>{address_O, 0, 1, 1});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{1, 0}, std::vector<uint32_t>{address_Q, address_K, address_V, 1, 1, 1});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{1, 0}, std::vector<uint32_t>{1, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{1, 0}, std::vector<uint32_t>{address_O, 1, 1, 1});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{2, 0}, std::vector<uint32_t>{address_Q, address_K, address_V, 2, 1, 1});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{2, 0}, std::vector<uint32_t>{2, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{2, 0}, std::vector<uint32_t>{address_O, 2, 1, 1});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{3, 0}, std::vector<uint32_t>{address_Q, address_K, address_V, 3, 1, 1});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{3, 0}, std::vector<uint32_t>{3, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{3, 0}, std::vector<uint32_t>{address_O, 3, 1, 1});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{0, 1}, std::vector<uint32_t>{address_Q, address_K, address_V, 4, 1, 1});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{0, 1}, std::vector<uint32_t>{4, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{0, 1}, std::vector<uint32_t>{address_O, 4, 1, 1});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{1, 1}, std::vector<uint32_t>{address_Q, address_K, address_V, 5, 1, 1});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{1, 1}, std::vector<uint32_t>{5, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{1, 1}, std::vector<uint32_t>{address_O, 5, 1, 1});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{2, 1}, std::vector<uint32_t>{address_Q, address_K, address_V, 6, 1, 1});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{2, 1}, std::vector<uint32_t>{6, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{2, 1}, std::vector<uint32_t>{address_O, 6, 1, 1});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{3, 1}, std::vector<uint32_t>{address_Q, address_K, address_V, 7, 1, 1});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{3, 1}, std::vector<uint32_t>{7, 1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{3, 1}, std::vector<uint32_t>{address_O, 7, 1, 1});

        distributed::MeshWorkload workload;
        distributed::MeshCoordinateRange device_range(device->shape());
        workload.add_program(device_range, std::move(program));
        distributed::EnqueueMeshWorkload(command_queue, workload, false);
        distributed::Finish(command_queue);

        std::vector<uint16_t> result_O(32768);
        command_queue.enqueue_read_mesh_buffer(result_O.data(), buffer_O, true);
        write_elements(data_dir / "O.out.bin", untilize(result_O, 2, 256, 64));

        device->close();
    } catch (const std::exception& error) {
        std::cerr << "error: " << error.what() << std::endl;
        return 1;
    }
    return 0;
}
