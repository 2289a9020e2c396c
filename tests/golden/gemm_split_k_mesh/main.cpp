// Host program for the TileLang kernel "main" (tt-metal 0.81.1 Mesh API).
// Planned for wormhole_b0, core grid 8x1.
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
#include <tt-metalium/experimental/fabric/fabric.hpp>
#include <tt-metalium/global_semaphore.hpp>

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

// A buffer of `size` bytes per device, in pages of `page_size` bytes, sharded over the rows x cols
// mesh: the global buffer is rows x (cols * pages) pages, device (r, c) holds block (r, c) of one row.
std::shared_ptr<distributed::MeshBuffer> create_mesh_sharded_buffer(distributed::MeshDevice* device, uint64_t size, uint32_t page_size, uint32_t rows, uint32_t cols) {
    distributed::DeviceLocalBufferConfig local_config{.page_size = page_size, .buffer_type = BufferType::DRAM};
    const uint64_t pages = size / page_size;
    distributed::ShardedBufferConfig sharded_config{.global_size = size * rows * cols, .global_buffer_shape = Shape2D(rows, cols * pages), .shard_shape = Shape2D(1, pages), .shard_orientation = ShardOrientation::ROW_MAJOR};
    return distributed::MeshBuffer::create(sharded_config, local_config, device);
}

// Of a row-major tensor seen as [outer][n][inner], device `device`'s rows [device * k, (device + 1) * k)
// of n = k * devices (its shard along that dimension), or, when `gather`, those rows put back.
template <typename T>
void copy_device_rows(std::vector<T>& whole, std::vector<T>& shard, uint64_t outer, uint64_t n, uint64_t inner, uint32_t device, uint32_t devices, bool gather) {
    const uint64_t k = n / devices;
    shard.resize(outer * k * inner);
    for (uint64_t o = 0; o < outer; ++o) {
        T* from = whole.data() + (o * n + device * k) * inner;
        T* to = shard.data() + o * k * inner;
        for (uint64_t i = 0; i < k * inner; ++i) {
            if (gather) {
                from[i] = to[i];
            } else {
                to[i] = from[i];
            }
        }
    }
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
        tt::tt_fabric::SetFabricConfig(tt::tt_fabric::FabricConfig::FABRIC_1D);
        distributed::MeshDeviceConfig mesh_config(distributed::MeshShape(1, 2));
        std::shared_ptr<distributed::MeshDevice> device = distributed::MeshDevice::create(mesh_config);
        distributed::MeshCommandQueue& command_queue = device->mesh_command_queue();

        // A: bfloat16 [64, 128], read, 8 pages of 2048 B (Float16_b)
        std::shared_ptr<distributed::MeshBuffer> buffer_A = create_mesh_sharded_buffer(device.get(), 16384, 2048, 1, 2);
        const uint32_t address_A = device_address(buffer_A);
        std::vector<uint16_t> input_A = read_elements<uint16_t>(data_dir / "A.bin", 16384);
        std::vector<uint16_t> mesh_A;
        for (uint32_t d = 0; d < 2; ++d) {
            std::vector<uint16_t> shard;
            copy_device_rows(input_A, shard, 64, 256, 1, d, 2, false);
            std::vector<uint16_t> tiled = tilize(shard, 1, 64, 128);
            mesh_A.insert(mesh_A.end(), tiled.begin(), tiled.end());
        }
        command_queue.enqueue_write_mesh_buffer(buffer_A, mesh_A.data(), false);

        // B: bfloat16 [128, 64], read, 8 pages of 2048 B (Float16_b)
        std::shared_ptr<distributed::MeshBuffer> buffer_B = create_mesh_sharded_buffer(device.get(), 16384, 2048, 1, 2);
        const uint32_t address_B = device_address(buffer_B);
        std::vector<uint16_t> input_B = read_elements<uint16_t>(data_dir / "B.bin", 16384);
        std::vector<uint16_t> mesh_B;
        for (uint32_t d = 0; d < 2; ++d) {
            std::vector<uint16_t> shard;
            copy_device_rows(input_B, shard, 1, 256, 64, d, 2, false);
            std::vector<uint16_t> tiled = tilize(shard, 1, 128, 64);
            mesh_B.insert(mesh_B.end(), tiled.begin(), tiled.end());
        }
        command_queue.enqueue_write_mesh_buffer(buffer_B, mesh_B.data(), false);

        // C: float32 [64, 64], readwrite, 4 pages of 4096 B (Float32)
        std::shared_ptr<distributed::MeshBuffer> buffer_C = create_mesh_sharded_buffer(device.get(), 16384, 4096, 1, 2);
        const uint32_t address_C = device_address(buffer_C);
        std::vector<uint32_t> input_C = read_elements<uint32_t>(data_dir / "C.bin", 4096);
        std::vector<uint32_t> mesh_C = tilize(input_C, 1, 64, 64);
        mesh_C.resize(mesh_C.size() * 2, uint32_t{});
        command_queue.enqueue_write_mesh_buffer(buffer_C, mesh_C.data(), false);

        Program program = CreateProgram();
        CoreRangeSet cores(std::vector<CoreRange>{CoreRange(CoreCoord{0, 0}, CoreCoord{7, 0})});

        // CB 0 "A_s": reader -> compute, 2 pages of 2048 B (Float16_b)
        std::map<uint8_t, tt::DataFormat> cb0_formats = {{0, tt::DataFormat::Float16_b}};
        CircularBufferConfig cb0_config(4096, cb0_formats);
        cb0_config.set_page_size(0, 2048);
        CreateCircularBuffer(program, cores, cb0_config);

        // CB 1 "B_s": reader -> compute, 2 pages of 2048 B (Float16_b)
        std::map<uint8_t, tt::DataFormat> cb1_formats = {{1, tt::DataFormat::Float16_b}};
        CircularBufferConfig cb1_config(4096, cb1_formats);
        cb1_config.set_page_size(1, 2048);
        CreateCircularBuffer(program, cores, cb1_config);

        // CB 2 "C_s": reader -> compute, 2 pages of 4096 B (Float32)
        std::map<uint8_t, tt::DataFormat> cb2_formats = {{2, tt::DataFormat::Float32}};
        CircularBufferConfig cb2_config(8192, cb2_formats);
        cb2_config.set_page_size(2, 4096);
        CreateCircularBuffer(program, cores, cb2_config);

        // CB 16 "C_l": compute -> writer, 2 pages of 4096 B (Float32)
        std::map<uint8_t, tt::DataFormat> cb16_formats = {{16, tt::DataFormat::Float32}};
        CircularBufferConfig cb16_config(8192, cb16_formats);
        cb16_config.set_page_size(16, 4096);
        CreateCircularBuffer(program, cores, cb16_config);

        // CB 24 "part": compute -> compute, 2 pages of 4096 B (Float32)
        std::map<uint8_t, tt::DataFormat> cb24_formats = {{24, tt::DataFormat::Float32}};
        CircularBufferConfig cb24_config(8192, cb24_formats);
        cb24_config.set_page_size(24, 4096);
        CreateCircularBuffer(program, cores, cb24_config);

        if (CreateSemaphore(program, cores, 0) != 0) {
            throw std::runtime_error("semaphore 0 was not allocated as id 0");
        }

        std::vector<uint32_t> reader_compile_args;
        TensorAccessorArgs reader_accessor_A(*buffer_A);
        reader_accessor_A.append_to(reader_compile_args);
        TensorAccessorArgs reader_accessor_B(*buffer_B);
        reader_accessor_B.append_to(reader_compile_args);
        TensorAccessorArgs reader_accessor_C(*buffer_C);
        reader_accessor_C.append_to(reader_compile_args);
        KernelHandle reader_kernel = CreateKernel(program, "reader.cpp", cores, DataMovementConfig{.processor = DataMovementProcessor::RISCV_1, .noc = NOC::RISCV_1_default, .compile_args = reader_compile_args});

        std::vector<uint32_t> compute_compile_args;
        std::vector<UnpackToDestMode> unpack_to_dest(NUM_CIRCULAR_BUFFERS, UnpackToDestMode::Default);
        unpack_to_dest[2] = UnpackToDestMode::UnpackToDestFp32;
        unpack_to_dest[24] = UnpackToDestMode::UnpackToDestFp32;
        KernelHandle compute_kernel = CreateKernel(program, "compute.cpp", cores, ComputeConfig{.math_fidelity = MathFidelity::HiFi4, .fp32_dest_acc_en = true, .unpack_to_dest_mode = unpack_to_dest, .math_approx_mode = false, .compile_args = compute_compile_args});

        std::vector<uint32_t> writer_compile_args;
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
        SetRuntimeArgs(program, reader_kernel, CoreCoord{0, 0}, std::vector<uint32_t>{address_A, address_B, address_C, 0, 1});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{0, 0}, std::vector<uint32_t>{0, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{0, 0}, std::vector<uint32_t>{address_C, 0, 1, static_cast<uint32_t>(noc_0_0.x), static_cast<uint32_t>(noc_0_0.y), static_cast<uint32_t>(noc_1_0.x), static_cast<uint32_t>(noc_1_0.y)});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{1, 0}, std::vector<uint32_t>{address_A, address_B, address_C, 1, 1});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{1, 0}, std::vector<uint32_t>{1, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{1, 0}, std::vector<uint32_t>{address_C, 1, 1, static_cast<uint32_t>(noc_1_0.x), static_cast<uint32_t>(noc_1_0.y), static_cast<uint32_t>(noc_2_0.x), static_cast<uint32_t>(noc_2_0.y)});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{2, 0}, std::vector<uint32_t>{address_A, address_B, address_C, 2, 1});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{2, 0}, std::vector<uint32_t>{2, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{2, 0}, std::vector<uint32_t>{address_C, 2, 1, static_cast<uint32_t>(noc_2_0.x), static_cast<uint32_t>(noc_2_0.y), static_cast<uint32_t>(noc_3_0.x), static_cast<uint32_t>(noc_3_0.y)});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{3, 0}, std::vector<uint32_t>{address_A, address_B, address_C, 3, 1});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{3, 0}, std::vector<uint32_t>{3, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{3, 0}, std::vector<uint32_t>{address_C, 3, 1, static_cast<uint32_t>(noc_3_0.x), static_cast<uint32_t>(noc_3_0.y), static_cast<uint32_t>(noc_4_0.x), static_cast<uint32_t>(noc_4_0.y)});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{4, 0}, std::vector<uint32_t>{address_A, address_B, address_C, 4, 1});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{4, 0}, std::vector<uint32_t>{4, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{4, 0}, std::vector<uint32_t>{address_C, 4, 1, static_cast<uint32_t>(noc_4_0.x), static_cast<uint32_t>(noc_4_0.y), static_cast<uint32_t>(noc_5_0.x), static_cast<uint32_t>(noc_5_0.y)});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{5, 0}, std::vector<uint32_t>{address_A, address_B, address_C, 5, 1});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{5, 0}, std::vector<uint32_t>{5, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{5, 0}, std::vector<uint32_t>{address_C, 5, 1, static_cast<uint32_t>(noc_5_0.x), static_cast<uint32_t>(noc_5_0.y), static_cast<uint32_t>(noc_6_0.x), static_cast<uint32_t>(noc_6_0.y)});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{6, 0}, std::vector<uint32_t>{address_A, address_B, address_C, 6, 1});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{6, 0}, std::vector<uint32_t>{6, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{6, 0}, std::vector<uint32_t>{address_C, 6, 1, static_cast<uint32_t>(noc_6_0.x), static_cast<uint32_t>(noc_6_0.y), static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y)});
        SetRuntimeArgs(program, reader_kernel, CoreCoord{7, 0}, std::vector<uint32_t>{address_A, address_B, address_C, 7, 1});
        SetRuntimeArgs(program, compute_kernel, CoreCoord{7, 0}, std::vector<uint32_t>{7, 1});
        SetRuntimeArgs(program, writer_kernel, CoreCoord{7, 0}, std::vector<uint32_t>{address_C, 7, 1, static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y), static_cast<uint32_t>(noc_7_0.x), static_cast<uint32_t>(noc_7_0.y)});

        distributed::MeshWorkload workload;
        distributed::MeshCoordinateRange device_range(device->shape());
        workload.add_program(device_range, std::move(program));
        distributed::EnqueueMeshWorkload(command_queue, workload, false);
        distributed::Finish(command_queue);
        {  // the sum across the mesh
            // The sum across the mesh of C (all_reduce): each device's partial copy, combined over the fabric along the line
            // [0, 0] -> [0, 1]; panel p of its 4 tiles is summed at line position owners[p] = [0, 1].
            std::shared_ptr<distributed::MeshBuffer> received_C = create_dram_buffer(device.get(), 32768, 4096);
            const uint32_t address_received_C = device_address(received_C);
            CoreCoord combine_core_0{0, 0};  // sends forward
            CoreCoord combine_core_1{1, 0};  // sends backward
            CoreRangeSet combine_cores(std::vector<CoreRange>{CoreRange(combine_core_0, combine_core_0), CoreRange(combine_core_1, combine_core_1)});
            CoreCoord forward_noc = device->worker_core_from_logical_core(combine_core_0);
            CoreCoord backward_noc = device->worker_core_from_logical_core(combine_core_1);
            const uint32_t line_rows[2] = {0, 0};
            const uint32_t line_cols[2] = {0, 1};
            const uint32_t panels[2] = {0, 1};
            GlobalSemaphore semaphore_partial_from_prev = CreateGlobalSemaphore(*device, combine_cores, 0, BufferType::L1);
            const uint32_t partial_from_prev = static_cast<uint32_t>(semaphore_partial_from_prev.address());
            GlobalSemaphore semaphore_partial_from_next = CreateGlobalSemaphore(*device, combine_cores, 0, BufferType::L1);
            const uint32_t partial_from_next = static_cast<uint32_t>(semaphore_partial_from_next.address());
            GlobalSemaphore semaphore_total_from_prev = CreateGlobalSemaphore(*device, combine_cores, 0, BufferType::L1);
            const uint32_t total_from_prev = static_cast<uint32_t>(semaphore_total_from_prev.address());
            GlobalSemaphore semaphore_total_from_next = CreateGlobalSemaphore(*device, combine_cores, 0, BufferType::L1);
            const uint32_t total_from_next = static_cast<uint32_t>(semaphore_total_from_next.address());
            GlobalSemaphore semaphore_total_written = CreateGlobalSemaphore(*device, combine_cores, 0, BufferType::L1);
            const uint32_t total_written = static_cast<uint32_t>(semaphore_total_written.address());
            distributed::MeshWorkload combine;
            for (uint32_t pos = 0; pos < 2; ++pos) {
                distributed::MeshCoordinate coord(line_rows[pos], line_cols[pos]);
                Program program = CreateProgram();
                std::map<uint8_t, tt::DataFormat> combine_prev_formats = {{0, tt::DataFormat::Float32}};
                CircularBufferConfig combine_prev_config(32768, combine_prev_formats);
                combine_prev_config.set_page_size(0, 4096);
                CreateCircularBuffer(program, combine_cores, combine_prev_config);
                std::map<uint8_t, tt::DataFormat> combine_own_formats = {{1, tt::DataFormat::Float32}};
                CircularBufferConfig combine_own_config(32768, combine_own_formats);
                combine_own_config.set_page_size(1, 4096);
                CreateCircularBuffer(program, combine_cores, combine_own_config);
                std::map<uint8_t, tt::DataFormat> combine_next_formats = {{2, tt::DataFormat::Float32}};
                CircularBufferConfig combine_next_config(32768, combine_next_formats);
                combine_next_config.set_page_size(2, 4096);
                CreateCircularBuffer(program, combine_cores, combine_next_config);
                std::map<uint8_t, tt::DataFormat> combine_out_formats = {{16, tt::DataFormat::Float32}};
                CircularBufferConfig combine_out_config(8192, combine_out_formats);
                combine_out_config.set_page_size(16, 4096);
                CreateCircularBuffer(program, combine_cores, combine_out_config);
                std::map<uint8_t, tt::DataFormat> combine_stage_formats = {{17, tt::DataFormat::Float32}};
                CircularBufferConfig combine_stage_config(16384, combine_stage_formats);
                combine_stage_config.set_page_size(17, 4096);
                CreateCircularBuffer(program, combine_cores, combine_stage_config);
                std::vector<uint32_t> reader_compile_args{4, 2, 4096, 4, 0, 1, 2};
                TensorAccessorArgs reader_accessor(*buffer_C);
                reader_accessor.append_to(reader_compile_args);
                TensorAccessorArgs reader_received_accessor(*received_C);
                reader_received_accessor.append_to(reader_compile_args);
                KernelHandle reader_kernel = CreateKernel(program, "combine_reader.cpp", combine_cores, DataMovementConfig{.processor = DataMovementProcessor::RISCV_1, .noc = NOC::RISCV_1_default, .compile_args = reader_compile_args});
                std::vector<uint32_t> compute_compile_args{4, 2, 0, 1, 2, 16};
                std::vector<UnpackToDestMode> unpack_to_dest(NUM_CIRCULAR_BUFFERS, UnpackToDestMode::Default);
                unpack_to_dest[0] = UnpackToDestMode::UnpackToDestFp32;
                unpack_to_dest[1] = UnpackToDestMode::UnpackToDestFp32;
                unpack_to_dest[2] = UnpackToDestMode::UnpackToDestFp32;
                KernelHandle compute_kernel = CreateKernel(program, "combine_compute.cpp", combine_cores, ComputeConfig{.math_fidelity = MathFidelity::HiFi4, .fp32_dest_acc_en = true, .unpack_to_dest_mode = unpack_to_dest, .math_approx_mode = false, .compile_args = compute_compile_args});
                std::vector<uint32_t> writer_compile_args{4, 2, 4096, 4, 2, 16, 17, 1};
                TensorAccessorArgs writer_accessor(*buffer_C);
                writer_accessor.append_to(writer_compile_args);
                TensorAccessorArgs writer_received_accessor(*received_C);
                writer_received_accessor.append_to(writer_compile_args);
                KernelHandle writer_kernel = CreateKernel(program, "combine_writer.cpp", combine_cores, DataMovementConfig{.processor = DataMovementProcessor::RISCV_0, .noc = NOC::RISCV_0_default, .compile_args = writer_compile_args});
                tt::tt_fabric::FabricNodeId self_node = device->get_fabric_node_id(coord);
                tt::tt_fabric::FabricNodeId prev_node = self_node;
                tt::tt_fabric::FabricNodeId next_node = self_node;
                if (pos > 0) {
                    distributed::MeshCoordinate prev(line_rows[pos - 1], line_cols[pos - 1]);
                    prev_node = device->get_fabric_node_id(prev);
                }
                if (pos + 1 < 2) {
                    distributed::MeshCoordinate next(line_rows[pos + 1], line_cols[pos + 1]);
                    next_node = device->get_fabric_node_id(next);
                }
                std::vector<uint32_t> reader_args_0{address_C, address_received_C, pos, 1, 0, partial_from_prev, partial_from_next};
                reader_args_0.insert(reader_args_0.end(), panels, panels + 2);
                std::vector<uint32_t> compute_args_0{pos, 1, 0};
                compute_args_0.insert(compute_args_0.end(), panels, panels + 2);
                std::vector<uint32_t> writer_args_0{address_C, address_received_C, pos, 1, 0, partial_from_prev, partial_from_next, total_from_prev, total_from_next, total_written, static_cast<uint32_t>(forward_noc.x), static_cast<uint32_t>(forward_noc.y), static_cast<uint32_t>(backward_noc.x), static_cast<uint32_t>(backward_noc.y)};
                writer_args_0.insert(writer_args_0.end(), panels, panels + 2);
                if (pos + 1 < 2) {
                    tt::tt_fabric::append_fabric_connection_rt_args(self_node, next_node, 0, program, combine_core_0, writer_args_0, CoreType::WORKER);
                }
                SetRuntimeArgs(program, reader_kernel, combine_core_0, reader_args_0);
                SetRuntimeArgs(program, compute_kernel, combine_core_0, compute_args_0);
                SetRuntimeArgs(program, writer_kernel, combine_core_0, writer_args_0);
                std::vector<uint32_t> reader_args_1{address_C, address_received_C, pos, 0, 1, partial_from_prev, partial_from_next};
                reader_args_1.insert(reader_args_1.end(), panels, panels + 2);
                std::vector<uint32_t> compute_args_1{pos, 0, 1};
                compute_args_1.insert(compute_args_1.end(), panels, panels + 2);
                std::vector<uint32_t> writer_args_1{address_C, address_received_C, pos, 0, 1, partial_from_prev, partial_from_next, total_from_prev, total_from_next, total_written, static_cast<uint32_t>(forward_noc.x), static_cast<uint32_t>(forward_noc.y), static_cast<uint32_t>(backward_noc.x), static_cast<uint32_t>(backward_noc.y)};
                writer_args_1.insert(writer_args_1.end(), panels, panels + 2);
                if (pos > 0) {
                    tt::tt_fabric::append_fabric_connection_rt_args(self_node, prev_node, 0, program, combine_core_1, writer_args_1, CoreType::WORKER);
                }
                SetRuntimeArgs(program, reader_kernel, combine_core_1, reader_args_1);
                SetRuntimeArgs(program, compute_kernel, combine_core_1, compute_args_1);
                SetRuntimeArgs(program, writer_kernel, combine_core_1, writer_args_1);
                distributed::MeshCoordinateRange device_range(coord, coord);
                combine.add_program(device_range, std::move(program));
            }
            distributed::EnqueueMeshWorkload(command_queue, combine, true);
        }
        distributed::Finish(command_queue);

        std::vector<uint32_t> result_C(8192ULL);
        command_queue.enqueue_read_mesh_buffer(result_C.data(), buffer_C, true);
        std::vector<uint32_t> sum_C(4096ULL);
        for (uint32_t d = 0; d < 2; ++d) {
            for (std::size_t i = 0; i < 4096ULL; ++i) {
                if (d > 0 && result_C[d * 4096ULL + i] != result_C[i]) {
                    throw std::runtime_error("all-reduce of C: device " + std::to_string(d) + "'s copy differs from device 0's");
                }
                sum_C[i] = result_C[i];
            }
        }
        write_elements(data_dir / "C.out.bin", untilize(sum_C, 1, 64, 64));

        device->close();
    } catch (const std::exception& error) {
        std::cerr << "error: " << error.what() << std::endl;
        return 1;
    }
    return 0;
}
