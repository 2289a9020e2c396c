// The emulated tt-metal host API (include/tt-metalium/*.hpp) on top of the device model.
//
// Programs are recorded on the host; EnqueueMeshWorkload hands a program to emu::Device
// (reset_program, CBs, semaphores, kernels, runtime args) and runs it to completion. Every
// emu::EmulatorError, and every misuse of the host API detected here, ends the process with
// its message on stderr and exit code 3.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include <tt-metalium/distributed.hpp>
#include <tt-metalium/experimental/fabric/fabric.hpp>
#include <tt-metalium/experimental/metal2_bindings.hpp>
#include <tt-metalium/host_api.hpp>
#include <tt-metalium/tensor_accessor_args.hpp>

#include "device.hpp"
#include "jit.hpp"

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
        case tt::DataFormat::Bfp4_b: return emu::DataFormat::Bfp4_b;
        case tt::DataFormat::UInt32: return emu::DataFormat::UInt32;
        case tt::DataFormat::Int32: return emu::DataFormat::Int32;
        case tt::DataFormat::UInt16: return emu::DataFormat::UInt16;
        case tt::DataFormat::UInt8: return emu::DataFormat::UInt8;
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

std::string shape_name(const Shape& shape) {
    std::string name = "[";
    for (std::size_t i = 0; i < shape.rank(); ++i) {
        name += (i ? ", " : "") + std::to_string(shape[static_cast<int64_t>(i)]);
    }
    return name + "]";
}

uint64_t align_up(uint64_t value, uint64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

}  // namespace

// ---- program state ----

struct CircularBufferSpec {
    std::vector<emu::CoreXY> cores;
    uint32_t index;
    uint32_t total_size;
    uint32_t page_size;
    emu::DataFormat format;
    int32_t shares_l1_of;  // the config's first index, for its other indices (they share its L1); else -1
    tt::DataFormat host_format;  // as configured (the kernel-side DataFormat id a kernel file is built with)
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
    uint8_t noc = 0;  // a data-movement kernel's DataMovementConfig::noc
    emu::ComputeOptions options;
    // A kernel file (not one compiled into the program): built at launch with these (jit.hpp).
    std::string path;
    std::map<std::string, std::string> defines;
    std::unordered_map<std::string, uint32_t> named_args;
    std::optional<experimental::Metal2KernelBindings> metal2;  // BindMetal2Kernel's
};

struct RuntimeArgsSpec {
    KernelHandle kernel;
    emu::CoreXY core;
    std::vector<uint32_t> args;
};

struct CommonRuntimeArgsSpec {
    KernelHandle kernel;
    std::vector<uint32_t> args;
};

struct ProgramState {
    std::vector<CircularBufferSpec> circular_buffers;
    std::vector<SemaphoreSpec> semaphores;
    std::vector<KernelSpec> kernels;
    std::vector<RuntimeArgsSpec> runtime_args;
    std::vector<CommonRuntimeArgsSpec> common_runtime_args;
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

// ---- buffer distribution ----

namespace detail {

std::pair<Shape, Shape> squeeze_shape_ranks(const Shape& tensor_shape, const Shape& shard_shape) {
    if (tensor_shape.rank() < shard_shape.rank()) {
        fail("BufferDistributionSpec: tensor shape " + shape_name(tensor_shape) + " has a lower rank than shard shape " +
             shape_name(shard_shape));
    }
    // Walking from the innermost dimension, a dimension folds into the inner neighbour when every
    // dimension folded so far is whole in the shard, or when the shard takes 1 of it and the inner
    // neighbour divides evenly (no padding between them). Tensor dimensions beyond the shard's
    // rank fold into the outermost kept one.
    const uint64_t tensor_volume = tensor_shape.volume();
    const uint64_t shard_volume = shard_shape.volume();
    const auto shard_rank = static_cast<int64_t>(shard_shape.rank());
    std::vector<uint32_t> tensor_dims;  // innermost first
    std::vector<uint32_t> shard_dims;
    bool whole_so_far = false;
    bool inner_divides = false;
    uint64_t tensor_seen = 1;
    uint64_t shard_seen = 1;
    for (int64_t dim = -1; dim >= -shard_rank; --dim) {
        const uint32_t tensor_size = tensor_shape[dim];
        const uint32_t shard_size = shard_shape[dim];
        if (dim < -1 && (whole_so_far || (shard_size == 1 && inner_divides))) {
            tensor_dims.back() *= tensor_size;
            shard_dims.back() *= shard_size;
        } else {
            tensor_dims.push_back(tensor_size);
            shard_dims.push_back(shard_size);
            whole_so_far = true;
        }
        whole_so_far = whole_so_far && tensor_size == shard_size;
        inner_divides = tensor_size % shard_size == 0;
        tensor_seen *= tensor_size;
        shard_seen *= shard_size;
        if (tensor_seen == tensor_volume && shard_seen == shard_volume) {
            break;
        }
    }
    for (int64_t dim = -shard_rank - 1; dim >= -static_cast<int64_t>(tensor_shape.rank()); --dim) {
        tensor_dims.back() *= tensor_shape[dim];
    }
    std::reverse(tensor_dims.begin(), tensor_dims.end());
    std::reverse(shard_dims.begin(), shard_dims.end());
    return {Shape(tensor_dims), Shape(shard_dims)};
}

}  // namespace detail

namespace {

// tt-metal's corerange_to_cores: each range in turn, row by row (row_wise) or column by column.
std::vector<CoreCoord> linearise(const CoreRangeSet& core_range_set, bool row_wise) {
    std::vector<CoreCoord> cores;
    for (const CoreRange& range : core_range_set.ranges()) {
        const CoreCoord& start = range.start_coord;
        const CoreCoord& end = range.end_coord;
        if (row_wise) {
            for (std::size_t y = start.y; y <= end.y; ++y) {
                for (std::size_t x = start.x; x <= end.x; ++x) {
                    cores.emplace_back(x, y);
                }
            }
        } else {
            for (std::size_t x = start.x; x <= end.x; ++x) {
                for (std::size_t y = start.y; y <= end.y; ++y) {
                    cores.emplace_back(x, y);
                }
            }
        }
    }
    return cores;
}

}  // namespace

BufferDistributionSpec::BufferDistributionSpec(
    const Shape& tensor_shape_in_pages, const Shape& shard_shape_in_pages, const CoreRangeSet& core_range_set,
    ShardOrientation shard_orientation, ShardDistributionStrategy shard_distribution_strategy)
    : tensor_shape_in_pages_(tensor_shape_in_pages),
      shard_shape_in_pages_(shard_shape_in_pages),
      shard_distribution_strategy_(shard_distribution_strategy) {
    validate();
    cores_ = compute_core_list(
        tensor_shape_in_pages, shard_shape_in_pages, core_range_set, shard_orientation, shard_distribution_strategy);
    std::tie(tensor_shape_in_pages_, shard_shape_in_pages_) =
        detail::squeeze_shape_ranks(tensor_shape_in_pages, shard_shape_in_pages);
    if (tensor_shape_in_pages_.volume() != 0 && cores_.empty()) {
        fail("BufferDistributionSpec: a tensor of " + shape_name(tensor_shape_in_pages) + " pages needs at least one core");
    }
    if (shard_distribution_strategy == ShardDistributionStrategy::CONTIGUOUS_1D && num_shards() % cores_.size() != 0) {
        fail("BufferDistributionSpec: CONTIGUOUS_1D distribution requires a uniform shards-per-core: num_shards (" +
             std::to_string(num_shards()) + ") must be divisible by num_cores (" + std::to_string(cores_.size()) + ")");
    }
}

BufferDistributionSpec::BufferDistributionSpec(
    const Shape& tensor_shape_in_pages, const Shape& shard_shape_in_pages, std::vector<CoreCoord> cores)
    : tensor_shape_in_pages_(tensor_shape_in_pages), shard_shape_in_pages_(shard_shape_in_pages), cores_(std::move(cores)) {
    validate();
    std::tie(tensor_shape_in_pages_, shard_shape_in_pages_) =
        detail::squeeze_shape_ranks(tensor_shape_in_pages, shard_shape_in_pages);
    if (tensor_shape_in_pages_.volume() != 0 && cores_.empty()) {
        fail("BufferDistributionSpec: a tensor of " + shape_name(tensor_shape_in_pages) + " pages needs at least one core");
    }
}

void BufferDistributionSpec::validate() const {
    if (tensor_shape_in_pages_.rank() == 0 || shard_shape_in_pages_.rank() == 0) {
        fail("BufferDistributionSpec: the tensor and shard shapes need a rank of at least 1");
    }
    if (shard_shape_in_pages_.volume() == 0) {
        fail("BufferDistributionSpec: shard shape " + shape_name(shard_shape_in_pages_) + " has zero volume");
    }
}

std::vector<CoreCoord> BufferDistributionSpec::compute_core_list(
    const Shape& tensor_shape_in_pages, const Shape& shard_shape_in_pages, const CoreRangeSet& core_range_set,
    ShardOrientation shard_orientation, ShardDistributionStrategy shard_distribution_strategy) {
    const bool row_wise = shard_orientation == ShardOrientation::ROW_MAJOR;
    if (shard_distribution_strategy != ShardDistributionStrategy::GRID_2D) {
        return linearise(core_range_set, row_wise);
    }
    if (tensor_shape_in_pages.rank() != 2 || shard_shape_in_pages.rank() != 2 || core_range_set.ranges().size() != 1) {
        fail("BufferDistributionSpec: GRID_2D distribution needs 2D tensor and shard shapes and one core range");
    }
    const CoreRange& grid = core_range_set.ranges()[0];
    auto shards_along = [&](int64_t dim) {
        return std::max<std::size_t>(
            (tensor_shape_in_pages[dim] + shard_shape_in_pages[dim] - 1) / shard_shape_in_pages[dim], 1);
    };
    std::size_t across = shards_along(-1);
    std::size_t down = shards_along(-2);
    if (!row_wise) {
        std::swap(across, down);
    }
    const std::size_t grid_x = grid.end_coord.x - grid.start_coord.x + 1;
    const std::size_t grid_y = grid.end_coord.y - grid.start_coord.y + 1;
    if (across > grid_x || down > grid_y) {
        fail("BufferDistributionSpec: GRID_2D needs a " + std::to_string(across) + "x" + std::to_string(down) +
             " core grid; the core range is " + std::to_string(grid_x) + "x" + std::to_string(grid_y));
    }
    const CoreRange trimmed(grid.start_coord, CoreCoord(grid.start_coord.x + across - 1, grid.start_coord.y + down - 1));
    return linearise(CoreRangeSet(trimmed), row_wise);
}

std::size_t BufferDistributionSpec::num_shards() const {
    if (tensor_shape_in_pages_.volume() == 0) {
        return 0;
    }
    std::size_t shards = 1;
    for (std::size_t i = 0; i < tensor_shape_in_pages_.rank(); ++i) {
        const auto dim = static_cast<int64_t>(i);
        shards *= (tensor_shape_in_pages_[dim] + shard_shape_in_pages_[dim] - 1) / shard_shape_in_pages_[dim];
    }
    return shards;
}

std::size_t BufferDistributionSpec::max_num_shards_per_core() const {
    return cores_.empty() ? 0 : (num_shards() + cores_.size() - 1) / cores_.size();
}

std::size_t BufferDistributionSpec::max_num_dev_pages_per_core() const {
    return max_num_shards_per_core() * shard_shape_in_pages_.volume();
}

// ---- buffers ----

BufferShardingArgs::BufferShardingArgs(BufferDistributionSpec buffer_distribution_spec)
    : buffer_distribution_spec_(std::move(buffer_distribution_spec)) {}

BufferShardingArgs::BufferShardingArgs(std::optional<BufferDistributionSpec> buffer_distribution_spec)
    : buffer_distribution_spec_(std::move(buffer_distribution_spec)) {}

Buffer::Buffer(DeviceAddr address, DeviceAddr size, DeviceAddr page_size, BufferType type,
               std::optional<BufferDistributionSpec> buffer_distribution_spec)
    : address_(address),
      size_(size),
      page_size_(page_size),
      type_(type),
      buffer_distribution_spec_(std::move(buffer_distribution_spec)) {}

DeviceAddr Buffer::address() const { return address_; }
DeviceAddr Buffer::size() const { return size_; }
DeviceAddr Buffer::page_size() const { return page_size_; }

DeviceAddr Buffer::aligned_page_size() const {
    const uint32_t alignment = guarded([&] {
        emu::Device& device = emu::Device::get();
        return is_dram() ? device.dram_alignment() : device.l1_alignment();
    });
    return align_up(page_size_, alignment);
}

const std::optional<BufferDistributionSpec>& Buffer::buffer_distribution_spec() const { return buffer_distribution_spec_; }

namespace {

// The device bytes of every page of a sharded buffer, in host page order (pages placed as the
// kernels' TensorAccessor finds them).
std::vector<uint8_t*> shard_pages(const Buffer& buffer) {
    const BufferDistributionSpec& spec = *buffer.buffer_distribution_spec();
    const std::span<const uint32_t> tensor_dims = spec.tensor_shape_in_pages().view();
    const std::span<const uint32_t> shard_dims = spec.shard_shape_in_pages().view();
    const emu::View<uint32_t> tensor_shape{tensor_dims.data(), u32(tensor_dims.size())};
    const emu::View<uint32_t> shard_shape{shard_dims.data(), u32(shard_dims.size())};
    const bool contiguous = spec.shard_distribution_strategy() == ShardDistributionStrategy::CONTIGUOUS_1D;
    const DeviceAddr aligned_page_size = buffer.aligned_page_size();
    emu::Device& device = emu::Device::get();
    std::vector<uint8_t*> pages(spec.tensor_shape_in_pages().volume());
    for (std::size_t page = 0; page < pages.size(); ++page) {
        const emu::ShardPage placed =
            emu::locate_shard_page(tensor_shape, shard_shape, u32(spec.num_cores()), contiguous, u32(page));
        const CoreCoord& bank = spec.cores()[placed.bank];
        const DeviceAddr addr = buffer.address() + placed.page_in_bank * aligned_page_size;
        pages[page] = buffer.is_dram() ? device.dram_bank_data(u32(bank.x), addr, buffer.page_size())
                                       : device.l1_data({u32(bank.x), u32(bank.y)}, u32(addr), buffer.page_size());
    }
    return pages;
}

}  // namespace

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
    int32_t first_index = -1;  // one L1 allocation for every index of the config, as in tt-metal
    for (std::size_t index = 0; index < CircularBufferConfig::max_buffer_index; ++index) {
        if (!config.data_formats()[index]) {
            continue;
        }
        if (!config.page_sizes()[index]) {
            fail("circular buffer " + std::to_string(index) + " has a data format but no page size (set_page_size)");
        }
        state.circular_buffers.push_back({cores, u32(index), config.total_size(), *config.page_sizes()[index],
                                          to_emu(*config.data_formats()[index]), first_index,
                                          *config.data_formats()[index]});
        first_index = first_index < 0 ? static_cast<int32_t>(index) : first_index;
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

DeviceAddr GlobalSemaphore::address() const { return address_; }

GlobalSemaphore CreateGlobalSemaphore(
    distributed::MeshDevice& device, CoreRangeSet cores, uint32_t initial_value, BufferType buffer_type) {
    if (buffer_type != BufferType::L1) {
        fail("CreateGlobalSemaphore: the emulator holds global semaphores in L1 only (BufferType::L1)");
    }
    const std::vector<emu::CoreXY> on = cores_of(cores);
    if (on.empty()) {
        fail("CreateGlobalSemaphore: no cores");
    }
    // One word below the L1 buffers of every device, at the same address (tt-metal's GlobalSemaphore is a
    // sharded L1 buffer of one word per core), written now: a neighbour's fabric increment finds it set
    // whenever this chip's programs start.
    const uint32_t devices = u32(device.num_devices());
    uint32_t address = 0;
    for (uint32_t i = 0; i < devices; ++i) {
        guarded([&] {
            emu::Device::select(i);
            emu::Device& chip = emu::Device::get();
            const uint32_t at = chip.allocate_l1(sizeof(uint32_t));
            if (i > 0 && at != address) {
                throw emu::EmulatorError("CreateGlobalSemaphore: device " + std::to_string(i) +
                                         " allocated the semaphore at another L1 address");
            }
            address = at;
            for (const emu::CoreXY& core : on) {
                chip.worker_noc_coord(core);  // throws for a core outside the grid
                std::memcpy(chip.l1_data(core, at, sizeof(uint32_t)), &initial_value, sizeof(uint32_t));
            }
        });
    }
    guarded([] { emu::Device::select(0); });
    return GlobalSemaphore(address);
}

// ---- kernels ----

namespace {

DataMovementConfig data_movement_config(DataMovementProcessor processor, NOC noc, std::vector<uint32_t> compile_args,
                                        std::map<std::string, std::string> defines,
                                        std::unordered_map<std::string, uint32_t> named_compile_args,
                                        KernelBuildOptLevel opt_level, const std::vector<std::filesystem::path>& paths) {
    if (!paths.empty()) {
        fail("Reader/WriterDataMovementConfig: the paths argument is not emulated");
    }
    return DataMovementConfig{.processor = processor, .noc = noc, .noc_mode = NOC_MODE::DM_DEDICATED_NOC,
                              .compile_args = std::move(compile_args), .defines = std::move(defines),
                              .named_compile_args = std::move(named_compile_args), .opt_level = opt_level};
}

}  // namespace

// The two constructors differ in their processor and NOC only.
#define TT_EMU_DATA_MOVEMENT_CONFIG(Config, processor, noc)                                                        \
    Config::Config(std::vector<uint32_t> compile_args, std::map<std::string, std::string> defines,                  \
                   std::unordered_map<std::string, uint32_t> named_compile_args, KernelBuildOptLevel opt_level,    \
                   std::vector<std::filesystem::path> paths)                                                        \
        : DataMovementConfig(data_movement_config(processor, noc, std::move(compile_args), std::move(defines),      \
                                                  std::move(named_compile_args), opt_level, paths)) {}

TT_EMU_DATA_MOVEMENT_CONFIG(ReaderDataMovementConfig, DataMovementProcessor::RISCV_1, NOC::NOC_0)
TT_EMU_DATA_MOVEMENT_CONFIG(WriterDataMovementConfig, DataMovementProcessor::RISCV_0, NOC::NOC_1)
#undef TT_EMU_DATA_MOVEMENT_CONFIG

KernelHandle CreateKernel(
    Program& program,
    const std::string& file_name,
    const std::variant<CoreCoord, CoreRange, CoreRangeSet>& core_spec,
    const std::variant<DataMovementConfig, ComputeConfig>& config) {
    KernelSpec spec{file_name, emu::KernelRole::Reader, cores_of(core_spec), {}, {}, {}, {}, {}};
    if (const auto* movement = std::get_if<DataMovementConfig>(&config)) {
        spec.role = movement->processor == DataMovementProcessor::RISCV_1 ? emu::KernelRole::Reader
                                                                           : emu::KernelRole::Writer;
        spec.compile_args = movement->compile_args;
        spec.noc = static_cast<uint8_t>(movement->noc);
        spec.defines = movement->defines;
        spec.named_args = movement->named_compile_args;
    } else {
        const ComputeConfig& compute = std::get<ComputeConfig>(config);
        spec.role = emu::KernelRole::Compute;
        spec.defines = compute.defines;
        spec.named_args = compute.named_compile_args;
        spec.compile_args = compute.compile_args;
        spec.options.fp32_dest_acc_en = compute.fp32_dest_acc_en;
        spec.options.math_approx_mode = compute.math_approx_mode;
        spec.options.math_fidelity = static_cast<int>(compute.math_fidelity);
        spec.options.dst_full_sync_en = compute.dst_full_sync_en;
        for (const UnpackToDestMode mode : compute.unpack_to_dest_mode) {
            spec.options.unpack_to_dest_fp32.push_back(mode == UnpackToDestMode::UnpackToDestFp32);
        }
    }
    // A kernel compiled into the program (the driver's: a plan's kernels, registered under their source
    // names, which main.cpp gives as they are; emu::find_kernel compares normalised paths, so a file of the
    // same name in another directory is not it) was built with its plan's compile-time args and nothing
    // else; any other name is a kernel file, found now as tt-metal's KernelSource does and built at launch
    // with this config.
    const emu::KernelInfo* compiled_in = emu::find_kernel(file_name);
    if (compiled_in == nullptr) {
        spec.path = guarded([&] { return emu::resolve_kernel_source(file_name); });
    } else if (!spec.defines.empty() || !spec.named_args.empty()) {
        fail(file_name + " is compiled into the program (a plan's kernel) without defines or named compile-time "
                         "args; a kernel that takes them is given to CreateKernel as a kernel file");
    }
    ProgramState& state = program.state();
    state.kernels.push_back(std::move(spec));
    return u32(state.kernels.size() - 1);
}

void experimental::BindMetal2Kernel(Program& program, KernelHandle kernel, Metal2KernelBindings bindings) {
    ProgramState& state = program.state();
    if (kernel >= state.kernels.size()) {
        fail("BindMetal2Kernel: unknown kernel handle " + std::to_string(kernel));
    }
    KernelSpec& spec = state.kernels[kernel];
    if (spec.path.empty()) {
        fail("BindMetal2Kernel: " + spec.source + " is compiled into the program; a Metal 2.0 kernel is a kernel file");
    }
    spec.metal2 = std::move(bindings);
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

void SetCommonRuntimeArgs(const Program& program, KernelHandle kernel_id, std::span<const uint32_t> runtime_args) {
    ProgramState& state = program.state();
    if (kernel_id >= state.kernels.size()) {
        fail("SetCommonRuntimeArgs: unknown kernel handle " + std::to_string(kernel_id));
    }
    state.common_runtime_args.push_back({kernel_id, {runtime_args.begin(), runtime_args.end()}});
}

void SetCommonRuntimeArgs(const Program& program, KernelHandle kernel_id, std::initializer_list<uint32_t> runtime_args) {
    SetCommonRuntimeArgs(program, kernel_id, std::span<const uint32_t>(runtime_args.begin(), runtime_args.size()));
}

// ---- tensor accessor args ----

TensorAccessorArgs::TensorAccessorArgs(const Buffer& buffer, tensor_accessor::ArgsConfig args_config)
    : buffer_(&buffer), args_config_(args_config) {
    update_args_config();
}

// No buffer: the placeholder of an absent tensor (ttnn's matmul factories append one for the sparsity
// tensor), an interleaved L1 accessor (ArgsConfig None) of page size 0, as tt-metal's update_args_config
// makes it for a null buffer.
TensorAccessorArgs::TensorAccessorArgs(const Buffer* buffer, tensor_accessor::ArgsConfig args_config)
    : buffer_(buffer), args_config_(args_config) {
    if (buffer_ == nullptr) {
        args_config_ = tensor_accessor::ArgConfig::None;
    } else {
        update_args_config();
    }
}

TensorAccessorArgs::TensorAccessorArgs(const distributed::MeshBuffer& buffer, tensor_accessor::ArgsConfig args_config)
    : TensorAccessorArgs(*buffer.get_reference_buffer(), args_config) {}

TensorAccessorArgs::TensorAccessorArgs(const std::shared_ptr<distributed::MeshBuffer>& buffer,
                                       tensor_accessor::ArgsConfig args_config)
    : TensorAccessorArgs(*buffer, args_config) {}

void TensorAccessorArgs::update_args_config() {
    using tensor_accessor::ArgConfig;
    if (buffer_->buffer_distribution_spec()) {
        args_config_.set(ArgConfig::Sharded);
    } else {
        args_config_ = ArgConfig::None;
    }
    args_config_.set(ArgConfig::IsDram, buffer_->is_dram());
    if (args_config_.test(ArgConfig::RuntimeRank) &&
        !(args_config_.test(ArgConfig::RuntimeTensorShape) && args_config_.test(ArgConfig::RuntimeShardShape))) {
        fail("TensorAccessorArgs: if rank is runtime, tensor_shape and shard_shape must also be runtime");
    }
    if (args_config_.test(ArgConfig::RuntimeNumBanks) && !args_config_.test(ArgConfig::RuntimeBankCoords)) {
        fail("TensorAccessorArgs: if num_banks is runtime, bank_coords must also be runtime");
    }
    if (args_config_.test(ArgConfig::Sharded) && args_config_.test(ArgConfig::RuntimePageSize)) {
        fail("TensorAccessorArgs: RuntimePageSize is not supported on sharded buffers");
    }
}

void TensorAccessorArgs::append_sharded_args(std::vector<uint32_t>& args, bool is_runtime) const {
    using tensor_accessor::ArgConfig;
    const BufferDistributionSpec& spec = *buffer_->buffer_distribution_spec();
    const Shape& tensor_shape = spec.tensor_shape_in_pages();
    const Shape& shard_shape = spec.shard_shape_in_pages();
    const std::vector<CoreCoord>& banks = spec.cores();
    if (tensor_shape.rank() > MAX_NUM_DIMENSIONS) {
        fail("TensorAccessorArgs: rank " + std::to_string(tensor_shape.rank()) + " exceeds " +
             std::to_string(MAX_NUM_DIMENSIONS));
    }
    auto here = [&](ArgConfig field) { return args_config_.test(field) == is_runtime; };
    if (!is_runtime) {
        args.push_back(args_config_.raw());
        args.push_back(static_cast<uint32_t>(buffer_->aligned_page_size()));
    }
    if (here(ArgConfig::RuntimeRank)) {
        args.push_back(u32(tensor_shape.rank()));
    }
    if (here(ArgConfig::RuntimeNumBanks)) {
        args.push_back(tensor_accessor::pack_num_banks(
            u32(banks.size()), spec.shard_distribution_strategy() == ShardDistributionStrategy::CONTIGUOUS_1D));
    }
    if (here(ArgConfig::RuntimeTensorShape)) {
        args.insert(args.end(), tensor_shape.cbegin(), tensor_shape.cend());
    }
    if (here(ArgConfig::RuntimeShardShape)) {
        args.insert(args.end(), shard_shape.cbegin(), shard_shape.cend());
    }
    if (here(ArgConfig::RuntimeBankCoords)) {
        // L1 banks are addressed by the NOC coordinates of their cores; DRAM banks by (bank id, 0).
        auto packed = [&](const CoreCoord& bank) {
            const CoreCoord xy = buffer_->is_dram() ? bank : guarded([&] {
                const emu::CoreXY noc = emu::Device::get().worker_noc_coord({u32(bank.x), u32(bank.y)});
                return CoreCoord(noc.x, noc.y);
            });
            return u32(((xy.x & 0xFF) << 8) | (xy.y & 0xFF));
        };
        for (std::size_t i = 0; i < banks.size(); i += 2) {
            args.push_back(packed(banks[i]) | (i + 1 < banks.size() ? packed(banks[i + 1]) << 16 : 0u));
        }
    }
}

void TensorAccessorArgs::append_to(std::vector<uint32_t>& compile_time_args) const {
    if (args_config_.test(tensor_accessor::ArgConfig::Sharded) &&
        (args_config_ & tensor_accessor::ArgConfig::Runtime).raw() != 0) {
        fail("TensorAccessorArgs: common runtime arguments are required for ArgsConfig " +
             std::to_string(args_config_.raw()) + " (use append_to(compile_time_args, common_runtime_args))");
    }
    std::vector<uint32_t> unused;
    append_to(compile_time_args, unused);
}

void TensorAccessorArgs::append_to(std::vector<uint32_t>& compile_time_args,
                                   std::vector<uint32_t>& common_runtime_args) const {
    if (args_config_.test(tensor_accessor::ArgConfig::Sharded)) {
        append_sharded_args(compile_time_args, false);
        append_sharded_args(common_runtime_args, true);
    } else {
        compile_time_args.push_back(args_config_.raw());
        compile_time_args.push_back(buffer_ == nullptr ? 0u : static_cast<uint32_t>(buffer_->aligned_page_size()));
    }
}

std::vector<uint32_t> TensorAccessorArgs::get_compile_time_args() const {
    std::vector<uint32_t> compile_time_args;
    std::vector<uint32_t> common_runtime_args;
    append_to(compile_time_args, common_runtime_args);
    return compile_time_args;
}

std::vector<uint32_t> TensorAccessorArgs::get_common_runtime_args() const {
    std::vector<uint32_t> compile_time_args;
    std::vector<uint32_t> common_runtime_args;
    append_to(compile_time_args, common_runtime_args);
    return common_runtime_args;
}

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

namespace {

// Writes `text()` (`what`) to the file the environment variable `var` names, when it names one.
template <class Text>
void write_to_env_path(const char* var, const char* what, Text text) {
    if (const char* path = std::getenv(var); path && *path) {
        std::ofstream file(path);
        file << text();
        if (!file) {
            throw emu::EmulatorError(std::string("cannot write ") + what + " to " + path);
        }
    }
}

}  // namespace

MeshDevice::MeshDevice(const MeshShape& shape)
    : shape_(shape), command_queue_(std::make_unique<MeshCommandQueue>(this, 0)) {}

namespace {

// Opens `count` emulated devices of $TT_EMU_ARCH with the driver's settings ($TT_EMU_TRACE,
// $TT_EMU_TIMING_ONLY, $TT_EMU_PROGRESS_FD) on each.
void open_devices(uint32_t count) {
    const char* arch = std::getenv("TT_EMU_ARCH");
    const char* trace = std::getenv("TT_EMU_TRACE");
    const char* timing_only = std::getenv("TT_EMU_TIMING_ONLY");
    const char* progress_fd = std::getenv("TT_EMU_PROGRESS_FD");
    guarded([&] {
        emu::Device::open_mesh(arch && *arch ? arch : "wormhole_b0", count);
        for (uint32_t i = 0; i < count; ++i) {
            emu::Device::select(i);
            emu::Device& device = emu::Device::get();
            device.set_tracing(trace && *trace);
            device.set_timing_only(timing_only && std::string_view(timing_only) == "1");
            device.set_progress_fd(progress_fd && *progress_fd ? std::atoi(progress_fd) : -1);
        }
        emu::Device::select(0);
    });
}

// The row-major index of `coord` in a mesh of `shape`.
uint32_t device_index(const MeshShape& shape, const MeshCoordinate& coord) {
    const std::vector<uint32_t>& c = coord.coords();
    const uint32_t cols = shape.dims() > 1 ? shape[1] : 1;
    const uint32_t row = c.at(0), col = c.size() > 1 ? c[1] : 0;
    if (row >= shape[0] || col >= cols) {
        fail("mesh coordinate (" + std::to_string(row) + ", " + std::to_string(col) + ") is outside the " +
             std::to_string(shape[0]) + "x" + std::to_string(cols) + " mesh");
    }
    return row * cols + col;
}

}  // namespace

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
    open_devices(1);
    emu::fabric_set_mesh(1, 1);
    return std::shared_ptr<MeshDevice>(new MeshDevice(MeshShape(1, 1)));
}

std::shared_ptr<MeshDevice> MeshDevice::create(
    const MeshDeviceConfig& config, std::size_t, std::size_t, std::size_t num_command_queues, const DispatchCoreConfig&,
    std::span<const std::uint32_t>, std::size_t) {
    const MeshShape& shape = config.mesh_shape();
    if (shape.dims() != 2 || shape.mesh_size() == 0 || num_command_queues != 1) {
        fail("the emulator opens a 2D mesh (rows, cols) of at least one device with one command queue");
    }
    open_devices(static_cast<uint32_t>(shape.mesh_size()));
    emu::fabric_set_mesh(shape[0], shape[1]);
    return std::shared_ptr<MeshDevice>(new MeshDevice(shape));
}

MeshCommandQueue& MeshDevice::mesh_command_queue(std::optional<uint8_t> cq_id) const {
    if (cq_id.value_or(0) != 0) {
        fail("the emulated mesh device has only command queue 0");
    }
    return *command_queue_;
}

const MeshShape& MeshDevice::shape() const { return shape_; }

tt::tt_fabric::FabricNodeId MeshDevice::get_fabric_node_id(const MeshCoordinate& coord) const {
    return tt::tt_fabric::FabricNodeId(tt::tt_fabric::MeshId{0}, device_index(shape_, coord));
}

CoreCoord MeshDevice::compute_with_storage_grid_size() const {
    return guarded([] {
        emu::Device& device = emu::Device::get();
        return CoreCoord(device.grid_x(), device.grid_y());
    });
}

CoreCoord MeshDevice::worker_core_from_logical_core(const CoreCoord& logical_core) const {
    return guarded([&] {
        const emu::CoreXY noc = emu::Device::get().worker_noc_coord({u32(logical_core.x), u32(logical_core.y)});
        return CoreCoord(noc.x, noc.y);
    });
}

bool MeshDevice::close() {
    if (!open_) {
        return false;
    }
    open_ = false;
    guarded([] {
        const uint32_t count = emu::Device::count();
        if (count == 1) {
            emu::Device& device = emu::Device::get();
            write_to_env_path("TT_EMU_COUNTERS", "counters", [&] { return device.run_counters_json(); });
            write_to_env_path("TT_EMU_TRACE", "the trace", [&] { return device.trace_json(); });
            device.close();
            return;
        }
        // a mesh: each device's counters of its whole run (every workload: a sum across chips runs its combine
        // after the kernel's), in row-major order (the driver adds the mesh's totals)
        write_to_env_path("TT_EMU_COUNTERS", "counters", [&] {
            std::string json = "{\"devices\": [";
            for (uint32_t i = 0; i < count; ++i) {
                emu::Device::select(i);
                json += (i ? ", " : "") + emu::Device::get().run_counters_json();
            }
            return json + "]}";
        });
        // a mesh's trace: every chip's, and the fabric's links
        write_to_env_path("TT_EMU_TRACE", "the trace", [&] {
            std::vector<emu::Device*> devices;
            for (uint32_t i = 0; i < count; ++i) {
                emu::Device::select(i);
                devices.push_back(&emu::Device::get());
            }
            return emu::Device::mesh_trace_json(devices);
        });
        while (emu::Device::count() > 0) {
            emu::Device::select(0);
            emu::Device::get().close();
        }
    });
    return true;
}

// ---- mesh buffers ----

MeshBuffer::MeshBuffer(MeshDevice* device, const DeviceLocalBufferConfig& local_config, Buffer reference,
                       std::optional<ShardedBufferConfig> sharded)
    : device_(device), sharded_(std::move(sharded)), local_config_(local_config), reference_(reference) {}

uint32_t ShardedBufferConfig::compute_datum_size_bytes() const {
    return static_cast<uint32_t>(global_size / (global_buffer_shape.height() * global_buffer_shape.width()));
}

namespace {

// Allocates a sharded buffer: shard_bytes per core at one L1 address on every core (top-down), or
// per DRAM bank at one address in every bank. Returns the address.
DeviceAddr allocate_sharded(const BufferDistributionSpec& spec, BufferType type, DeviceAddr num_pages,
                            DeviceAddr aligned_page_size) {
    if (spec.tensor_shape_in_pages().volume() != num_pages) {
        fail("MeshBuffer::create: the buffer holds " + std::to_string(num_pages) +
             " pages but its BufferDistributionSpec describes a tensor of " +
             std::to_string(spec.tensor_shape_in_pages().volume()) + " pages " +
             shape_name(spec.tensor_shape_in_pages()));
    }
    const uint64_t bytes_per_bank = spec.max_num_dev_pages_per_core() * aligned_page_size;
    return guarded([&]() -> DeviceAddr {
        emu::Device& device = emu::Device::get();
        for (const CoreCoord& core : spec.cores()) {
            if (type == BufferType::L1) {
                device.worker_noc_coord({u32(core.x), u32(core.y)});
            } else if (core.y != 0 || core.x >= device.num_dram_banks()) {
                throw emu::EmulatorError("MeshBuffer::create: DRAM shard core (" + std::to_string(core.x) + ", " +
                                         std::to_string(core.y) + ") is not a DRAM bank (0..." +
                                         std::to_string(device.num_dram_banks() - 1) + ", 0) of " + device.arch());
            }
        }
        return type == BufferType::L1 ? device.allocate_l1(bytes_per_bank) : device.allocate_dram_banks(bytes_per_bank);
    });
}

}  // namespace

std::shared_ptr<MeshBuffer> MeshBuffer::create(
    const MeshBufferConfig& mesh_buffer_config, const DeviceLocalBufferConfig& device_local_config,
    MeshDevice* mesh_device, std::optional<DeviceAddr> address) {
    const auto* sharded = std::get_if<ShardedBufferConfig>(&mesh_buffer_config);
    const MeshShape& mesh = mesh_device->shape();
    const uint32_t devices = static_cast<uint32_t>(mesh.mesh_size());
    ReplicatedBufferConfig each{};  // what each device holds
    if (sharded != nullptr) {
        const Shape2D& whole = sharded->global_buffer_shape;
        const Shape2D& shard = sharded->shard_shape;
        if (sharded->shard_orientation != ShardOrientation::ROW_MAJOR || shard.height() == 0 || shard.width() == 0 ||
            whole.height() != shard.height() * mesh[0] || whole.width() != shard.width() * mesh[1] ||
            sharded->global_size % (whole.height() * whole.width()) != 0) {
            fail("MeshBuffer::create: the emulator shards a buffer as one shard per device, row-major over the mesh "
                 "(global_buffer_shape = shard_shape * mesh shape, a whole number of bytes per datum)");
        }
        each.size = sharded->global_size / devices;
    } else {
        each = std::get<ReplicatedBufferConfig>(mesh_buffer_config);
    }
    if (address) {
        fail("MeshBuffer::create: buffers at a given address are not emulated");
    }
    const DeviceAddr page_size = device_local_config.page_size;
    if (page_size == 0 || each.size % page_size != 0) {
        fail("MeshBuffer::create: size " + std::to_string(each.size) + " is not a multiple of the page size " +
             std::to_string(page_size));
    }
    const BufferType type = device_local_config.buffer_type;
    const std::optional<BufferDistributionSpec>& spec = device_local_config.sharding_args.buffer_distribution_spec();
    DeviceAddr base = 0;
    if (spec) {
        if (type != BufferType::DRAM && type != BufferType::L1) {
            fail("MeshBuffer::create: sharded buffers are emulated in DRAM and L1 only");
        }
        if (type == BufferType::L1 && device_local_config.bottom_up.value_or(false)) {
            fail("MeshBuffer::create: the emulator allocates L1 buffers top-down only (bottom_up = true)");
        }
    } else if (type != BufferType::DRAM) {
        fail("MeshBuffer::create: interleaved buffers are emulated in DRAM only");
    }
    // the same allocation on every device of the mesh: the same address
    for (uint32_t i = 0; i < devices; ++i) {
        guarded([&] { emu::Device::select(i); });
        DeviceAddr at = 0;
        if (spec) {
            const Buffer layout(0, each.size, page_size, type, spec);
            at = allocate_sharded(*spec, type, each.size / page_size, layout.aligned_page_size());
        } else {
            at = guarded([&] { return emu::Device::get().allocate_dram(each.size, static_cast<uint32_t>(page_size)); });
        }
        if (i > 0 && at != base) {
            fail("MeshBuffer::create: device " + std::to_string(i) + " allocated the buffer at another address");
        }
        base = at;
    }
    guarded([] { emu::Device::select(0); });
    Buffer reference(base, each.size, page_size, type, spec);
    std::optional<ShardedBufferConfig> layout;
    if (sharded != nullptr) {
        layout = *sharded;
    }
    return std::shared_ptr<MeshBuffer>(new MeshBuffer(mesh_device, device_local_config, reference, layout));
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

// The data format of each CB index on the kernel's cores, the kernel-side DataFormat id (0xff for
// none): what tt-metal's JIT build writes into the kernel's chlkc_descriptors.h
// (ProgramImpl::set_cb_data_fmt over the kernel's core ranges, tt_metal/impl/program/program.cpp).
std::vector<uint8_t> cb_formats_of(const ProgramState& state, const KernelSpec& kernel) {
    std::vector<uint8_t> formats;
    for (const CircularBufferSpec& cb : state.circular_buffers) {
        const bool on_kernel_core = std::any_of(cb.cores.begin(), cb.cores.end(), [&](const emu::CoreXY& core) {
            return std::find(kernel.cores.begin(), kernel.cores.end(), core) != kernel.cores.end();
        });
        if (on_kernel_core) {
            formats.resize(std::max<std::size_t>(formats.size(), cb.index + 1), 0xff);
            formats[cb.index] = static_cast<uint8_t>(cb.host_format);
        }
    }
    return formats;
}

// What tt-metal's JIT build adds to a kernel's defines under the host's fabric config (ROUTING_MODE, FABRIC_2D:
// the packet header type the fabric headers select, hostdev/fabric_edm_packet_header.hpp).
std::map<std::string, std::string> with_fabric_defines(std::map<std::string, std::string> defines) {
    for (const std::string& define : emu::fabric_kernel_defines()) {
        const auto eq = define.find('=');
        defines.emplace(define.substr(0, eq), eq == std::string::npos ? "" : define.substr(eq + 1));
    }
    return defines;
}

// Sets up `state` on the current device, to launch.
void load_program(const ProgramState& state) {
    emu::Device& device = emu::Device::get();
    device.reset_program();
    for (const CircularBufferSpec& cb : state.circular_buffers) {
        for (const emu::CoreXY& core : cb.cores) {
            device.add_cb(core, cb.index, cb.total_size, cb.page_size, cb.format, cb.shares_l1_of);
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
        if (kernel.path.empty()) {
            device_kernel_ids.push_back(
                device.add_kernel(kernel.source, kernel.role, kernel.cores, kernel.compile_args, kernel.noc,
                                  kernel.options));
        } else {
            const emu::KernelInfo& built = emu::build_kernel(
                {kernel.path, kernel.compile_args, with_fabric_defines(kernel.defines), kernel.named_args,
                 cb_formats_of(state, kernel),
                 kernel.role == emu::KernelRole::Compute ? &kernel.options : nullptr, kernel.noc, device.arch(),
                 kernel.metal2 ? &*kernel.metal2 : nullptr});
            device_kernel_ids.push_back(device.add_kernel(built, kernel.source, kernel.role, kernel.cores,
                                                          kernel.compile_args, kernel.noc, kernel.options));
        }
    }
    for (const RuntimeArgsSpec& args : state.runtime_args) {
        device.set_runtime_args(device_kernel_ids[args.kernel], args.core, args.args);
    }
    for (const CommonRuntimeArgsSpec& args : state.common_runtime_args) {
        device.set_common_runtime_args(device_kernel_ids[args.kernel], args.args);
    }
}

}  // namespace

// Without the fabric the chips of a mesh cannot reach one another, and each device runs its program in turn; with
// it (SetFabricConfig), a kernel on one chip may wait for what another sends, and every device of the workload
// runs at once (emu::Device::launch_mesh).
void MeshCommandQueue::enqueue_mesh_workload(MeshWorkload& mesh_workload, bool) {
    const MeshShape& mesh = device_->shape();
    const bool together = emu::fabric_config() != 0;
    std::vector<emu::Device*> devices;
    for (auto& [range, program] : mesh_workload.get_programs()) {
        const uint32_t first = device_index(mesh, range.start_coord()), last = device_index(mesh, range.end_coord());
        const uint32_t cols = mesh.dims() > 1 ? mesh[1] : 1;
        for (uint32_t row = first / cols; row <= last / cols; ++row) {
            for (uint32_t col = first % cols; col <= last % cols; ++col) {
                guarded([&] {
                    emu::Device::select(row * cols + col);
                    emu::Device& device = emu::Device::get();
                    if (std::find(devices.begin(), devices.end(), &device) != devices.end()) {
                        throw emu::EmulatorError("mesh coordinate (" + std::to_string(row) + ", " + std::to_string(col) +
                                                 ") is in two programs of one MeshWorkload");
                    }
                    load_program(program.state());
                    devices.push_back(&device);
                    if (!together) device.launch();
                });
            }
        }
    }
    if (together) guarded([&] { emu::Device::launch_mesh(devices); });
    guarded([] { emu::Device::select(0); });
}

namespace {

// Host data of a device buffer (sharded over cores or banks: in page order, each page to its shard).
void write_local(const Buffer& buffer, const uint8_t* src) {
    if (!buffer.buffer_distribution_spec()) {
        emu::Device::get().write_buffer(buffer.address(), src, buffer.size());
        return;
    }
    const std::vector<uint8_t*> pages = shard_pages(buffer);
    for (std::size_t page = 0; page < pages.size(); ++page) {
        std::memcpy(pages[page], src + page * buffer.page_size(), buffer.page_size());
    }
}

void read_local(const Buffer& buffer, uint8_t* dst) {
    if (!buffer.buffer_distribution_spec()) {
        emu::Device::get().read_buffer(buffer.address(), dst, buffer.size());
        return;
    }
    const std::vector<uint8_t*> pages = shard_pages(buffer);
    for (std::size_t page = 0; page < pages.size(); ++page) {
        std::memcpy(dst + page * buffer.page_size(), pages[page], buffer.page_size());
    }
}

// Copies device `device`'s shard between the host's global buffer (a row-major 2D array of datums)
// and its own bytes (the shard's rows one after another): to the shard when `to_shard`.
void copy_shard(const ShardedBufferConfig& config, const MeshShape& mesh, uint32_t device, uint8_t* host,
                uint8_t* shard, bool to_shard) {
    const std::size_t datum = config.compute_datum_size_bytes();
    const std::size_t rows = config.shard_shape.height(), row_bytes = config.shard_shape.width() * datum;
    const std::size_t cols = mesh.dims() > 1 ? mesh[1] : 1;
    const std::size_t first_row = device / cols * rows;
    const std::size_t first_col = device % cols * row_bytes;
    const std::size_t stride = config.global_buffer_shape.width() * datum;
    for (std::size_t r = 0; r < rows; ++r) {
        uint8_t* at = host + (first_row + r) * stride + first_col;
        if (to_shard) {
            std::memcpy(shard + r * row_bytes, at, row_bytes);
        } else {
            std::memcpy(at, shard + r * row_bytes, row_bytes);
        }
    }
}

}  // namespace

// A replicated buffer: the same data to every device; a sharded one: each device its shard.
void MeshCommandQueue::enqueue_write_mesh_buffer(const std::shared_ptr<MeshBuffer>& buffer, const void* host_data, bool) {
    const Buffer& device_buffer = *buffer->get_reference_buffer();
    auto* src = static_cast<uint8_t*>(const_cast<void*>(host_data));
    const MeshShape& mesh = device_->shape();
    guarded([&] {
        std::vector<uint8_t> shard(buffer->sharded_ ? device_buffer.size() : 0);
        for (uint32_t i = 0; i < mesh.mesh_size(); ++i) {
            emu::Device::select(i);
            if (buffer->sharded_) {
                copy_shard(*buffer->sharded_, mesh, i, src, shard.data(), true);
            }
            write_local(device_buffer, buffer->sharded_ ? shard.data() : src);
        }
        emu::Device::select(0);
    });
}

// tt-metal reads a sharded buffer (every device's shard into its place) or, of a one-device mesh, a replicated one.
void MeshCommandQueue::enqueue_read_mesh_buffer(void* host_data, const std::shared_ptr<MeshBuffer>& buffer, bool) {
    const Buffer& device_buffer = *buffer->get_reference_buffer();
    auto* dst = static_cast<uint8_t*>(host_data);
    const MeshShape& mesh = device_->shape();
    if (!buffer->sharded_ && mesh.mesh_size() > 1) {
        fail("enqueue_read_mesh_buffer: a replicated MeshBuffer of a mesh of " + std::to_string(mesh.mesh_size()) +
             " devices cannot be read into one host buffer: read a sharded MeshBuffer");
    }
    guarded([&] {
        std::vector<uint8_t> shard(buffer->sharded_ ? device_buffer.size() : 0);
        for (uint32_t i = 0; i < mesh.mesh_size(); ++i) {
            emu::Device::select(i);
            read_local(device_buffer, buffer->sharded_ ? shard.data() : dst);
            if (buffer->sharded_) {
                copy_shard(*buffer->sharded_, mesh, i, dst, shard.data(), false);
            }
        }
        emu::Device::select(0);
    });
}

void MeshCommandQueue::finish(std::span<const SubDeviceId>) {}

void EnqueueMeshWorkload(MeshCommandQueue& mesh_cq, MeshWorkload& mesh_workload, bool blocking) {
    mesh_cq.enqueue_mesh_workload(mesh_workload, blocking);
}

void Finish(MeshCommandQueue& mesh_cq, std::span<const SubDeviceId> sub_device_ids) { mesh_cq.finish(sub_device_ids); }

}  // namespace distributed
}  // namespace tt::tt_metal

namespace tt::tt_fabric {

void SetFabricConfig(FabricConfig fabric_config, FabricReliabilityMode, std::optional<uint8_t>, FabricTensixConfig,
                     FabricUDMMode, FabricManagerMode, FabricRouterConfig) {
    tt::tt_metal::guarded([&] { emu::fabric_set_config(static_cast<uint32_t>(fabric_config)); });
}

FabricConfig GetFabricConfig() { return static_cast<FabricConfig>(emu::fabric_config()); }

// As tt-metal 0.81.1's (tt_metal/fabric/fabric.cpp) for a worker core: the router's ethernet channel toward the
// destination, then a teardown and a buffer-index semaphore it creates on the core.
template <>
void append_fabric_connection_rt_args<tt::tt_metal::Program>(
    const FabricNodeId& src_fabric_node_id, const FabricNodeId& dst_fabric_node_id, uint32_t link_idx,
    tt::tt_metal::Program& worker_program, const CoreCoord& worker_core,
    std::vector<uint32_t>& worker_args, CoreType core_type) {
    if (core_type != CoreType::WORKER) {
        tt::tt_metal::fail("append_fabric_connection_rt_args: the emulator connects worker cores only");
    }
    if (*src_fabric_node_id.mesh_id != 0 || *dst_fabric_node_id.mesh_id != 0) {
        tt::tt_metal::fail("append_fabric_connection_rt_args: the emulated fabric is mesh 0");
    }
    const uint32_t channel = tt::tt_metal::guarded(
        [&] { return emu::fabric_connection(src_fabric_node_id.chip_id, dst_fabric_node_id.chip_id, link_idx); });
    const tt::tt_metal::CoreRange core(worker_core, worker_core);
    const uint32_t teardown = tt::tt_metal::CreateSemaphore(worker_program, core, 0);
    const uint32_t buffer_index = tt::tt_metal::CreateSemaphore(worker_program, core, 0);
    worker_args.push_back(channel);
    worker_args.push_back(teardown);
    worker_args.push_back(buffer_index);
}

}  // namespace tt::tt_fabric
