// Emulated tt-metal host API: a device buffer as seen from one device, and the sharding
// arguments of a buffer's DeviceLocalBufferConfig.
#pragma once

#include <cstdint>
#include <optional>

#include <tt-metalium/base_types.hpp>
#include <tt-metalium/buffer_distribution_spec.hpp>
#include <tt-metalium/buffer_types.hpp>

namespace tt::tt_metal {

class BufferShardingArgs {
public:
    BufferShardingArgs() = default;
    BufferShardingArgs(std::nullopt_t) {}
    BufferShardingArgs(BufferDistributionSpec buffer_distribution_spec);
    BufferShardingArgs(std::optional<BufferDistributionSpec> buffer_distribution_spec);

    const std::optional<BufferDistributionSpec>& buffer_distribution_spec() const { return buffer_distribution_spec_; }

private:
    std::optional<BufferDistributionSpec> buffer_distribution_spec_;
};

class Buffer {
public:
    Buffer(DeviceAddr address, DeviceAddr size, DeviceAddr page_size, BufferType type,
           std::optional<BufferDistributionSpec> buffer_distribution_spec);

    DeviceAddr address() const;
    DeviceAddr size() const;
    DeviceAddr page_size() const;
    // page_size rounded up to the alignment of the buffer's memory (L1 16 B, DRAM per arch).
    DeviceAddr aligned_page_size() const;
    BufferType buffer_type() const { return type_; }
    bool is_dram() const { return type_ == BufferType::DRAM; }
    const std::optional<BufferDistributionSpec>& buffer_distribution_spec() const;

private:
    DeviceAddr address_;
    DeviceAddr size_;
    DeviceAddr page_size_;
    BufferType type_;
    std::optional<BufferDistributionSpec> buffer_distribution_spec_;
};

}  // namespace tt::tt_metal
