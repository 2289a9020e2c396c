// The emulated tt-metal host API (include/tt-metalium/*.hpp) on top of the device model.
//
// Programs are recorded on the host; EnqueueMeshWorkload hands a program to emu::Device
// (reset_program, CBs, semaphores, kernels, runtime args) and runs it to completion. Every
// emu::EmulatorError, and every misuse of the host API detected here, ends the process with
// its message on stderr and exit code 3.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <tt-metalium/distributed.hpp>
#include <tt-metalium/host_api.hpp>
#include <tt-metalium/tensor_accessor_args.hpp>

#include "device.hpp"

namespace tt::tt_metal {

namespace {

constexpr int kEmulatorErrorExitCode = 3;

[[noreturn]] void fail(const std::string& message) {
    std::cout.flush();
    std::cerr << "emulator error: " << message << std::endl;
    // Kernel threads of a failed launch may still be blocked; leave without unwinding them.
    std::_Exit(kEmulatorErrorExitCode);
}

// Runs `body`, turning an emu::EmulatorError into the emulator's exit protocol.
template <typename Body>
decltype(auto) guarded(Body&& body) {
    try {
        return body();
    } catch (const emu::EmulatorError& error) {
        fail(error.what());
    }
}

emu::DataFormat to_emu(tt::DataFormat format) {
    switch (format) {
        case tt::DataFormat::Float32: return emu::DataFormat::Float32;
        case tt::DataFormat::Float16_b: return emu::DataFormat::Float16_b;
        case tt::DataFormat::Bfp8_b: return emu::DataFormat::Bfp8_b;
        case tt::DataFormat::UInt32: return emu::DataFormat::UInt32;
        case tt::DataFormat::Int32: return emu::DataFormat::Int32;
        case tt::DataFormat::UInt16: return emu::DataFormat::UInt16;
        case tt::DataFormat::Invalid: break;
    }
    fail("circular buffer data format " + std::to_string(static_cast<int>(format)) + " is not emulated");
}

uint32_t u32(std::size_t value) { return static_cast<uint32_t>(value); }

std::vector<emu::CoreXY> cores_of(const CoreRange& range) {
    std::vector<emu::CoreXY> cores;
    for (std::size_t y = range.start_coord.y; y <= range.end_coord.y; ++y) {
        for (std::size_t x = range.start_coord.x; x <= range.end_coord.x; ++x) {
            cores.push_back({u32(x), u32(y)});
        }
    }
    return cores;
}

std::vector<emu::CoreXY> cores_of(const CoreRangeSet& set) {
    std::vector<emu::CoreXY> cores;
    for (const CoreRange& range : set.ranges()) {
        for (const emu::CoreXY& core : cores_of(range)) {
            cores.push_back(core);
        }
    }
    return cores;
}

std::vector<emu::CoreXY> cores_of(const CoreCoord& core) { return {{u32(core.x), u32(core.y)}}; }

template <typename... Alternatives>
std::vector<emu::CoreXY> cores_of(const std::variant<Alternatives...>& spec) {
    return std::visit([](const auto& alternative) { return cores_of(alternative); }, spec);
}

std::string core_name(const emu::CoreXY& core) {
    return "(" + std::to_string(core.x) + ", " + std::to_string(core.y) + ")";
}

}  // namespace

// ---- program state ----

struct CircularBufferSpec {
    std::vector<emu::CoreXY> cores;
    uint32_t index;
    uint32_t total_size;
    uint32_t page_size;
    emu::DataFormat format;
};

struct SemaphoreSpec {
    std::vector<emu::CoreXY> cores;
    uint32_t initial_value;
    uint32_t id;
};

struct KernelSpec {
    std::string source;
    emu::KernelRole role;
    std::vector<emu::CoreXY> cores;
    std::vector<uint32_t> compile_args;
    emu::ComputeOptions options;
};

struct RuntimeArgsSpec {
    KernelHandle kernel;
    emu::CoreXY core;
    std::vector<uint32_t> args;
};

struct ProgramState {
    std::vector<CircularBufferSpec> circular_buffers;
    std::vector<SemaphoreSpec> semaphores;
    std::vector<KernelSpec> kernels;
    std::vector<RuntimeArgsSpec> runtime_args;
};

Program::Program() : state_(std::make_unique<ProgramState>()) {}
Program::Program(Program&& other) noexcept = default;
Program& Program::operator=(Program&& other) noexcept = default;
Program::~Program() = default;

Program CreateProgram() { return Program(); }

// ---- core ranges ----

CoreRange::CoreRange(const CoreCoord& point) : CoreRange(point, point) {}

CoreRange::CoreRange(const CoreCoord& start, const CoreCoord& end) : start_coord(start), end_coord(end) {
    if (end.x < start.x || end.y < start.y) {
        fail("CoreRange end (" + std::to_string(end.x) + ", " + std::to_string(end.y) + ") precedes its start (" +
             std::to_string(start.x) + ", " + std::to_string(start.y) + ")");
    }
}

std::size_t CoreRange::size() const { return (end_coord.x - start_coord.x + 1) * (end_coord.y - start_coord.y + 1); }

bool CoreRange::contains(const CoreCoord& core) const {
    return core.x >= start_coord.x && core.x <= end_coord.x && core.y >= start_coord.y && core.y <= end_coord.y;
}

CoreRangeSet::CoreRangeSet(const CoreRange& range) : ranges_{range} {}

CoreRangeSet::CoreRangeSet(std::span<const CoreRange> ranges) : ranges_(ranges.begin(), ranges.end()) {}

CoreRangeSet::CoreRangeSet(std::vector<CoreRange>&& ranges) : ranges_(std::move(ranges)) {
    for (std::size_t i = 0; i < ranges_.size(); ++i) {
        for (std::size_t j = i + 1; j < ranges_.size(); ++j) {
            const CoreRange& a = ranges_[i];
            const CoreRange& b = ranges_[j];
            const bool disjoint = a.end_coord.x < b.start_coord.x || b.end_coord.x < a.start_coord.x ||
                                  a.end_coord.y < b.start_coord.y || b.end_coord.y < a.start_coord.y;
            if (!disjoint) {
                fail("CoreRangeSet ranges " + std::to_string(i) + " and " + std::to_string(j) + " overlap");
            }
        }
    }
}

std::size_t CoreRangeSet::num_cores() const {
    std::size_t count = 0;
    for (const CoreRange& range : ranges_) {
        count += range.size();
    }
    return count;
}

// ---- buffers ----

Buffer::Buffer(DeviceAddr address, DeviceAddr size, DeviceAddr page_size, BufferType type)
    : address_(address), size_(size), page_size_(page_size), type_(type) {}

DeviceAddr Buffer::address() const { return address_; }
DeviceAddr Buffer::size() const { return size_; }
DeviceAddr Buffer::page_size() const { return page_size_; }

// ---- circular buffers ----

CircularBufferConfig::CircularBufferConfig(uint32_t total_size) : total_size_(total_size) {}

CircularBufferConfig::CircularBufferConfig(uint32_t total_size, const std::map<uint8_t, tt::DataFormat>& data_format_spec)
    : total_size_(total_size) {
    for (const auto& [index, format] : data_format_spec) {
        if (index >= max_buffer_index) {
            fail("circular buffer index " + std::to_string(index) + " is out of range");
        }
        formats_[index] = format;
    }
}

CircularBufferConfig& CircularBufferConfig::set_page_size(uint8_t buffer_index, uint32_t page_size) {
    if (buffer_index >= max_buffer_index || !formats_[buffer_index]) {
        fail("set_page_size: circular buffer index " + std::to_string(buffer_index) + " has no data format");
    }
    if (page_size == 0 || total_size_ % page_size != 0) {
        fail("circular buffer " + std::to_string(buffer_index) + ": total size " + std::to_string(total_size_) +
             " is not a multiple of the page size " + std::to_string(page_size));
    }
    page_sizes_[buffer_index] = page_size;
    return *this;
}

CBHandle CreateCircularBuffer(
    Program& program, const std::variant<CoreCoord, CoreRange, CoreRangeSet>& core_spec, const CircularBufferConfig& config) {
    std::vector<emu::CoreXY> cores = cores_of(core_spec);
    ProgramState& state = program.state();
    CBHandle handle = state.circular_buffers.size();
    for (std::size_t index = 0; index < CircularBufferConfig::max_buffer_index; ++index) {
        if (!config.data_formats()[index]) {
            continue;
        }
        if (!config.page_sizes()[index]) {
            fail("circular buffer " + std::to_string(index) + " has a data format but no page size (set_page_size)");
        }
        state.circular_buffers.push_back(
            {cores, u32(index), config.total_size(), *config.page_sizes()[index], to_emu(*config.data_formats()[index])});
    }
    return handle;
}

// ---- semaphores ----

uint32_t CreateSemaphore(Program& program, const std::variant<CoreRange, CoreRangeSet>& core_spec, uint32_t initial_value) {
    std::vector<emu::CoreXY> cores = cores_of(core_spec);
    ProgramState& state = program.state();
    uint32_t id = 0;
    for (const SemaphoreSpec& earlier : state.semaphores) {
        for (const emu::CoreXY& core : cores) {
            bool shared = false;
            for (const emu::CoreXY& other : earlier.cores) {
                shared = shared || other == core;
            }
            if (shared && earlier.id + 1 > id) {
                id = earlier.id + 1;
            }
        }
    }
    state.semaphores.push_back({cores, initial_value, id});
    return id;
}

// ---- kernels ----

KernelHandle CreateKernel(
    Program& program,
    const std::string& file_name,
    const std::variant<CoreCoord, CoreRange, CoreRangeSet>& core_spec,
    const std::variant<DataMovementConfig, ComputeConfig>& config) {
    KernelSpec spec{file_name, emu::KernelRole::Reader, cores_of(core_spec), {}, {}};
    if (const auto* movement = std::get_if<DataMovementConfig>(&config)) {
        if (!movement->defines.empty() || !movement->named_compile_args.empty()) {
            fail(file_name + ": kernel defines and named compile-time args are not emulated");
        }
        spec.role = movement->processor == DataMovementProcessor::RISCV_1 ? emu::KernelRole::Reader
                                                                           : emu::KernelRole::Writer;
        spec.compile_args = movement->compile_args;
    } else {
        const ComputeConfig& compute = std::get<ComputeConfig>(config);
        if (!compute.defines.empty() || !compute.named_compile_args.empty()) {
            fail(file_name + ": kernel defines and named compile-time args are not emulated");
        }
        spec.role = emu::KernelRole::Compute;
        spec.compile_args = compute.compile_args;
        spec.options.fp32_dest_acc_en = compute.fp32_dest_acc_en;
        spec.options.math_approx_mode = compute.math_approx_mode;
        spec.options.math_fidelity = static_cast<int>(compute.math_fidelity);
    }
    ProgramState& state = program.state();
    state.kernels.push_back(std::move(spec));
    return u32(state.kernels.size() - 1);
}

// ---- runtime args ----

namespace {

void record_runtime_args(const Program& program, KernelHandle kernel, const std::vector<emu::CoreXY>& cores,
                         const std::vector<uint32_t>& args) {
    ProgramState& state = program.state();
    if (kernel >= state.kernels.size()) {
        fail("SetRuntimeArgs: unknown kernel handle " + std::to_string(kernel));
    }
    const KernelSpec& spec = state.kernels[kernel];
    for (const emu::CoreXY& core : cores) {
        bool placed = false;
        for (const emu::CoreXY& kernel_core : spec.cores) {
            placed = placed || kernel_core == core;
        }
        if (!placed) {
            fail("SetRuntimeArgs: kernel " + spec.source + " does not run on core " + core_name(core));
        }
        state.runtime_args.push_back({kernel, core, args});
    }
}

}  // namespace

void SetRuntimeArgs(const Program& program, KernelHandle kernel,
                    const std::variant<CoreCoord, CoreRange, CoreRangeSet>& core_spec,
                    std::span<const uint32_t> runtime_args) {
    record_runtime_args(program, kernel, cores_of(core_spec), {runtime_args.begin(), runtime_args.end()});
}

void SetRuntimeArgs(const Program& program, KernelHandle kernel,
                    const std::variant<CoreCoord, CoreRange, CoreRangeSet>& core_spec,
                    std::initializer_list<uint32_t> runtime_args) {
    record_runtime_args(program, kernel, cores_of(core_spec), std::vector<uint32_t>(runtime_args));
}

void SetRuntimeArgs(const Program& program, KernelHandle kernel, const std::vector<CoreCoord>& core_spec,
                    const std::vector<std::vector<uint32_t>>& runtime_args) {
    if (core_spec.size() != runtime_args.size()) {
        fail("SetRuntimeArgs: " + std::to_string(core_spec.size()) + " cores but " +
             std::to_string(runtime_args.size()) + " argument lists");
    }
    for (std::size_t i = 0; i < core_spec.size(); ++i) {
        record_runtime_args(program, kernel, cores_of(core_spec[i]), runtime_args[i]);
    }
}

// ---- tensor accessor args ----

TensorAccessorArgs::TensorAccessorArgs(const distributed::MeshBuffer& buffer, tensor_accessor::ArgConfig args_config) {
    if (args_config != tensor_accessor::ArgConfig::None) {
        fail("TensorAccessorArgs: runtime accessor arguments are not emulated");
    }
    const bool is_dram = buffer.device_local_config().buffer_type == BufferType::DRAM;
    const uint32_t alignment = guarded([&] {
        emu::Device& device = emu::Device::get();
        return is_dram ? device.dram_alignment() : device.l1_alignment();
    });
    const uint32_t page_size = buffer.page_size();
    const uint32_t aligned_page_size = (page_size + alignment - 1) / alignment * alignment;
    const uint32_t config_bits = is_dram ? static_cast<uint32_t>(tensor_accessor::ArgConfig::IsDram) : 0u;
    compile_time_args_ = {config_bits, aligned_page_size};
}

TensorAccessorArgs::TensorAccessorArgs(const std::shared_ptr<distributed::MeshBuffer>& buffer,
                                       tensor_accessor::ArgConfig args_config)
    : TensorAccessorArgs(*buffer, args_config) {}

void TensorAccessorArgs::append_to(std::vector<uint32_t>& compile_time_args) const {
    compile_time_args.insert(compile_time_args.end(), compile_time_args_.begin(), compile_time_args_.end());
}

std::vector<uint32_t> TensorAccessorArgs::get_compile_time_args() const { return compile_time_args_; }

namespace distributed {

// ---- mesh coordinates ----

MeshShape::MeshShape(uint32_t x) : dims_{x} {}
MeshShape::MeshShape(uint32_t x, uint32_t y) : dims_{x, y} {}

std::size_t MeshShape::mesh_size() const {
    std::size_t size = 1;
    for (uint32_t dim : dims_) {
        size *= dim;
    }
    return size;
}

MeshCoordinate::MeshCoordinate(uint32_t x) : coords_{x} {}
MeshCoordinate::MeshCoordinate(uint32_t x, uint32_t y) : coords_{x, y} {}

MeshCoordinateRange::MeshCoordinateRange(const MeshShape& shape)
    : start_(0, 0), end_(shape[0] - 1, shape.dims() > 1 ? shape[1] - 1 : 0) {}

MeshCoordinateRange::MeshCoordinateRange(const MeshCoordinate& start, const MeshCoordinate& end)
    : start_(start), end_(end) {}

// ---- mesh device ----

MeshDevice::MeshDevice() : shape_(1, 1), command_queue_(std::make_unique<MeshCommandQueue>(this, 0)) {}

MeshDevice::~MeshDevice() {
    if (open_) {
        close();
    }
}

std::shared_ptr<MeshDevice> MeshDevice::create_unit_mesh(
    int device_id, std::size_t, std::size_t, std::size_t num_command_queues, const DispatchCoreConfig&,
    std::span<const std::uint32_t>, std::size_t) {
    if (device_id != 0 || num_command_queues != 1) {
        fail("the emulator provides device 0 with one command queue (asked for device " +
             std::to_string(device_id) + " with " + std::to_string(num_command_queues) + " queues)");
    }
    const char* arch = std::getenv("TT_EMU_ARCH");
    guarded([&] { emu::Device::open(arch && *arch ? arch : "wormhole_b0"); });
    return std::shared_ptr<MeshDevice>(new MeshDevice());
}

MeshCommandQueue& MeshDevice::mesh_command_queue(std::optional<uint8_t> cq_id) const {
    if (cq_id.value_or(0) != 0) {
        fail("the emulated mesh device has only command queue 0");
    }
    return *command_queue_;
}

const MeshShape& MeshDevice::shape() const { return shape_; }

CoreCoord MeshDevice::compute_with_storage_grid_size() const {
    return guarded([] {
        emu::Device& device = emu::Device::get();
        return CoreCoord(device.grid_x(), device.grid_y());
    });
}

bool MeshDevice::close() {
    if (!open_) {
        return false;
    }
    open_ = false;
    guarded([] {
        emu::Device& device = emu::Device::get();
        if (const char* path = std::getenv("TT_EMU_COUNTERS"); path && *path) {
            std::ofstream file(path);
            file << device.counters_json();
            if (!file) {
                throw emu::EmulatorError(std::string("cannot write counters to ") + path);
            }
        }
        device.close();
    });
    return true;
}

// ---- mesh buffers ----

MeshBuffer::MeshBuffer(MeshDevice* device, const DeviceLocalBufferConfig& local_config, Buffer reference)
    : device_(device), local_config_(local_config), reference_(reference) {}

std::shared_ptr<MeshBuffer> MeshBuffer::create(
    const MeshBufferConfig& mesh_buffer_config, const DeviceLocalBufferConfig& device_local_config,
    MeshDevice* mesh_device, std::optional<DeviceAddr> address) {
    const auto* replicated = std::get_if<ReplicatedBufferConfig>(&mesh_buffer_config);
    if (replicated == nullptr) {
        fail("MeshBuffer::create: only replicated buffers are emulated");
    }
    if (device_local_config.buffer_type != BufferType::DRAM || address) {
        fail("MeshBuffer::create: only freshly allocated DRAM buffers are emulated");
    }
    const DeviceAddr page_size = device_local_config.page_size;
    if (page_size == 0 || replicated->size % page_size != 0) {
        fail("MeshBuffer::create: size " + std::to_string(replicated->size) + " is not a multiple of the page size " +
             std::to_string(page_size));
    }
    const DeviceAddr base = guarded([&] {
        return emu::Device::get().allocate_dram(replicated->size, static_cast<uint32_t>(page_size));
    });
    Buffer reference(base, replicated->size, page_size, BufferType::DRAM);
    return std::shared_ptr<MeshBuffer>(new MeshBuffer(mesh_device, device_local_config, reference));
}

DeviceAddr MeshBuffer::size() const { return reference_.size(); }

Buffer* MeshBuffer::get_reference_buffer() const { return &reference_; }

// ---- workloads and the command queue ----

MeshWorkload::MeshWorkload() = default;
MeshWorkload::MeshWorkload(MeshWorkload&& other) noexcept = default;
MeshWorkload& MeshWorkload::operator=(MeshWorkload&& other) noexcept = default;
MeshWorkload::~MeshWorkload() = default;

void MeshWorkload::add_program(const MeshCoordinateRange& device_range, Program&& program) {
    programs_.emplace_back(device_range, std::move(program));
}

MeshCommandQueue::MeshCommandQueue(MeshDevice* device, uint32_t id) : device_(device), id_(id) {}

namespace {

void run_program(const ProgramState& state) {
    emu::Device& device = emu::Device::get();
    device.reset_program();
    for (const CircularBufferSpec& cb : state.circular_buffers) {
        for (const emu::CoreXY& core : cb.cores) {
            device.add_cb(core, cb.index, cb.total_size, cb.page_size, cb.format);
        }
    }
    for (const SemaphoreSpec& semaphore : state.semaphores) {
        const uint32_t id = device.add_semaphore(semaphore.cores, semaphore.initial_value);
        if (id != semaphore.id) {
            throw emu::EmulatorError("semaphore created as id " + std::to_string(semaphore.id) +
                                     " was allocated as id " + std::to_string(id) + " on the device");
        }
    }
    std::vector<uint32_t> device_kernel_ids;
    for (const KernelSpec& kernel : state.kernels) {
        device_kernel_ids.push_back(
            device.add_kernel(kernel.source, kernel.role, kernel.cores, kernel.compile_args, kernel.options));
    }
    for (const RuntimeArgsSpec& args : state.runtime_args) {
        device.set_runtime_args(device_kernel_ids[args.kernel], args.core, args.args);
    }
    device.launch();
}

}  // namespace

void MeshCommandQueue::enqueue_mesh_workload(MeshWorkload& mesh_workload, bool) {
    for (auto& [range, program] : mesh_workload.get_programs()) {
        for (uint32_t coord : range.end_coord().coords()) {
            if (coord != 0) {
                fail("the workload targets mesh coordinates beyond the emulated 1x1 mesh");
            }
        }
        guarded([&] { run_program(program.state()); });
    }
}

void MeshCommandQueue::enqueue_write_mesh_buffer(const std::shared_ptr<MeshBuffer>& buffer, const void* host_data, bool) {
    guarded([&] { emu::Device::get().write_buffer(buffer->address(), host_data, buffer->size()); });
}

void MeshCommandQueue::enqueue_read_mesh_buffer(void* host_data, const std::shared_ptr<MeshBuffer>& buffer, bool) {
    guarded([&] { emu::Device::get().read_buffer(buffer->address(), host_data, buffer->size()); });
}

void MeshCommandQueue::finish(std::span<const SubDeviceId>) {}

void EnqueueMeshWorkload(MeshCommandQueue& mesh_cq, MeshWorkload& mesh_workload, bool blocking) {
    mesh_cq.enqueue_mesh_workload(mesh_workload, blocking);
}

void Finish(MeshCommandQueue& mesh_cq, std::span<const SubDeviceId> sub_device_ids) { mesh_cq.finish(sub_device_ids); }

}  // namespace distributed
}  // namespace tt::tt_metal
