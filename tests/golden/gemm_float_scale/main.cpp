// Host program for the TileLang kernel "main" (tt-metal 0.81.1 Mesh API).
// Planned for wormhole_b0, core grid 2x2.
// Usage: main DATA_DIR SCALE. Reads <buffer>.bin (row-major) for every input buffer and writes
// <buffer>.out.bin (row-major) for every output buffer; an output's <buffer>.bin, when there, is its
// contents before the call (what the kernel does not write keeps them).
// SCALE: the scalar parameter scale (a float32: a float).
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
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

// A dynamic size from the command line: a positive integer the kernels' uint32_t arithmetic holds.
uint64_t parse_dim(const char* text, const std::string& name) {
    std::size_t used = 0;
    unsigned long long value = 0;
    try {
        value = std::stoull(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || text[used] != '\0' || value < 1 || value > 0x7fffffffULL) {
        throw std::runtime_error("the size " + name + " = " + std::string(text) + " is not an integer in [1, 2^31)");
    }
    return value;
}

// A float scalar parameter from the command line (strtof: decimal, hexadecimal, inf, nan), as its float32 bits (the kernels' runtime argument).
uint64_t parse_float_scalar(const char* text, const std::string& name) {
    char* end = nullptr;
    errno = 0;
    const float value = std::strtof(text, &end);
    if (end == text || *end != '\0' || (errno == ERANGE && std::isinf(value))) {
        throw std::runtime_error("the scalar parameter " + name + " = " + std::string(text) + " is not a float32");
    }
    uint32_t bits = 0;
    std::memcpy(&bits, &value, sizeof(bits));
    return bits;
}

// A buffer's bytes fit the 12884901888 bytes of DRAM of wormhole_b0.
void check_dram(const std::string& buffer, uint64_t bytes) {
    if (bytes > 12884901888ULL) {
        throw std::runtime_error("buffer " + buffer + " needs " + std::to_string(bytes) + " bytes for these sizes, more than the 12884901888 bytes of DRAM of wormhole_b0");
    }
}

// Device address of a buffer, as kernels receive it in runtime args.
uint32_t device_address(const std::shared_ptr<distributed::MeshBuffer>& buffer) {
    Buffer* reference = buffer->get_reference_buffer();
    return static_cast<uint32_t>(reference->address());
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: " << argv[0] << " DATA_DIR SCALE" << std::endl;
        return 2;
    }
    const std::filesystem::path data_dir = argv[1];
    try {
        const uint64_t dim_scale = parse_float_scalar(argv[2], "scale");
        std::shared_ptr<distributed::MeshDevice> device = distributed::MeshDevice::create_unit_mesh(0);
        distributed::MeshCommandQueue& command_queue = device->mesh_command_queue();

        // A: bfloat16 [64, 64], read, 4 pages of 2048 B (Float16_b)
        std::shared_ptr<distributed::MeshBuffer> buffer_A = create_dram_buffer(device.get(), 8192, 2048);
        const uint32_t address_A = device_address(buffer_A);
        std::vector<uint16_t> input_A = read_elements<uint16_t>(data_dir / "A.bin", 4096);
        std::vector<uint16_t> tiled_A = tilize(input_A, 1, 64, 64);
        command_queue.enqueue_write_mesh_buffer(buffer_A, tiled_A.data(), false);

        // B: bfloat16 [64, 64], read, 4 pages of 2048 B (Float16_b)
        std::shared_ptr<distributed::MeshBuffer> buffer_B = create_dram_buffer(device.get(), 8192, 2048);
        const uint32_t address_B = device_address(buffer_B);
        std::vector<uint16_t> input_B = read_elements<uint16_t>(data_dir / "B.bin", 4096);
        std::vector<uint16_t> tiled_B = tilize(input_B, 1, 64, 64);
        command_queue.enqueue_write_mesh_buffer(buffer_B, tiled_B.data(), false);

        // C: float32 [64, 64], write, 4 pages of 4096 B (Float32)
        std::shared_ptr<distributed::MeshBuffer> buffer_C = create_dram_buffer(device.get(), 16384, 4096);
        const uint32_t address_C = device_address(buffer_C);
        if (std::filesystem::exists(data_dir / "C.bin")) {
            std::vector<uint32_t> input_C = read_elements<uint32_t>(data_dir / "C.bin", 4096);
            std::vector<uint32_t> tiled_C = tilize(input_C, 1, 64, 64);
            command_queue.enqueue_write_mesh_buffer(buffer_C, tiled_C.data(), false);
        }

        Program program = CreateProgram();
        CoreRangeSet cores(std::vector<CoreRange>{CoreRange(CoreCoord{0, 0}, CoreCoord{1, 1})});

        // CB 0 "a": reader -> compute, 2 pages of 2048 B (Float16_b)
        std::map<uint8_t, tt::DataFormat> cb0_formats = {{0, tt::DataFormat::Float16_b}};
        CircularBufferConfig cb0_config(4096, cb0_formats);
        cb0_config.set_page_size(0, 2048);
        CreateCircularBuffer(program, cores, cb0_config);

        // CB 1 "b": reader -> compute, 2 pages of 2048 B (Float16_b)
        std::map<uint8_t, tt::DataFormat> cb1_formats = {{1, tt::DataFormat::Float16_b}};
        CircularBufferConfig cb1_config(4096, cb1_formats);
        cb1_config.set_page_size(1, 2048);
        CreateCircularBuffer(program, cores, cb1_config);

        // CB 16 "c_out": compute -> writer, 2 pages of 4096 B (Float32)
        std::map<uint8_t, tt::DataFormat> cb16_formats = {{16, tt::DataFormat::Float32}};
        CircularBufferConfig cb16_config(8192, cb16_formats);
        cb16_config.set_page_size(16, 4096);
        CreateCircularBuffer(program, cores, cb16_config);

        // CB 24 "c": compute -> compute, 2 pages of 4096 B (Float32)
        std::map<uint8_t, tt::DataFormat> cb24_formats = {{24, tt::DataFormat::Float32}};
        CircularBufferConfig cb24_config(8192, cb24_formats);
        cb24_config.set_page_size(24, 4096);
        CreateCircularBuffer(program, cores, cb24_config);

        std::vector<uint32_t> reader_compile_args;
        TensorAccessorArgs reader_accessor_A(*buffer_A);
        reader_accessor_A.append_to(reader_compile_args);
        TensorAccessorArgs reader_accessor_B(*buffer_B);
        reader_accessor_B.append_to(reader_compile_args);
        KernelHandle reader_kernel = CreateKernel(program, "reader.cpp", cores, DataMovementConfig{.processor = DataMovementProcessor::RISCV_1, .noc = NOC::RISCV_1_default, .compile_args = reader_compile_args});

        std::vector<uint32_t> compute_compile_args;
        std::vector<UnpackToDestMode> unpack_to_dest(NUM_CIRCULAR_BUFFERS, UnpackToDestMode::Default);
        unpack_to_dest[24] = UnpackToDestMode::UnpackToDestFp32;
        KernelHandle compute_kernel = CreateKernel(program, "compute.cpp", cores, ComputeConfig{.math_fidelity = MathFidelity::HiFi4, .fp32_dest_acc_en = true, .unpack_to_dest_mode = unpack_to_dest, .math_approx_mode = false, .compile_args = compute_compile_args});

        std::vector<uint32_t> writer_compile_args;
        TensorAccessorArgs writer_accessor_C(*buffer_C);
        writer_accessor_C.append_to(writer_compile_args);
        KernelHandle writer_kernel = CreateKernel(program, "writer.cpp", cores, DataMovementConfig{.processor = DataMovementProcessor::RISCV_0, .noc = NOC::RISCV_0_default, .compile_args = writer_compile_args});

        SetRuntimeArgs(program, reader_kernel, CoreCoord{0, 0}, std::vector<uint32_t>{address_A, address_B, 0, 1, 1, static_cast<uint32_t>((dim_scale))});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{0, 0}, std::vector<uint32_t>{0, 1, 1, static_cast<uint32_t>((dim_scale))});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{0, 0}, std::vector<uint32_t>{address_C, 0, 1, 1, static_cast<uint32_t>((dim_scale))});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{1, 0}, std::vector<uint32_t>{address_A, address_B, 1, 1, 1, static_cast<uint32_t>((dim_scale))});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{1, 0}, std::vector<uint32_t>{1, 1, 1, static_cast<uint32_t>((dim_scale))});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{1, 0}, std::vector<uint32_t>{address_C, 1, 1, 1, static_cast<uint32_t>((dim_scale))});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{0, 1}, std::vector<uint32_t>{address_A, address_B, 2, 1, 1, static_cast<uint32_t>((dim_scale))});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{0, 1}, std::vector<uint32_t>{2, 1, 1, static_cast<uint32_t>((dim_scale))});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{0, 1}, std::vector<uint32_t>{address_C, 2, 1, 1, static_cast<uint32_t>((dim_scale))});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{1, 1}, std::vector<uint32_t>{address_A, address_B, 3, 1, 1, static_cast<uint32_t>((dim_scale))});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{1, 1}, std::vector<uint32_t>{3, 1, 1, static_cast<uint32_t>((dim_scale))});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{1, 1}, std::vector<uint32_t>{address_C, 3, 1, 1, static_cast<uint32_t>((dim_scale))});

        distributed::MeshWorkload workload;
        distributed::MeshCoordinateRange device_range(device->shape());
        workload.add_program(device_range, std::move(program));
        distributed::EnqueueMeshWorkload(command_queue, workload, false);
        distributed::Finish(command_queue);

        std::vector<uint32_t> result_C(4096);
        command_queue.enqueue_read_mesh_buffer(result_C.data(), buffer_C, true);
        write_elements(data_dir / "C.out.bin", untilize(result_C, 1, 64, 64));

        device->close();
    } catch (const std::exception& error) {
        std::cerr << "error: " << error.what() << std::endl;
        return 1;
    }
    return 0;
}
