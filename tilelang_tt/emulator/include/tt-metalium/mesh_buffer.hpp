// Emulated tt-metal host API: mesh buffers, replicated (the same size, at the same address, on every
// device of the mesh; a write goes to every device) or sharded over the mesh (ShardedBufferConfig: the
// global buffer, a 2D array of datums, cut into one shard_shape block per device, row-major over the
// mesh; each device holds its block's rows one after another).
// A buffer is an interleaved DRAM buffer, or sharded (in L1 or DRAM) when its sharding_args
// carry a BufferDistributionSpec; the host data of a sharded buffer is in page order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <variant>

#include <tt-metalium/buffer.hpp>
#include <tt-metalium/mesh_device.hpp>
#include <tt-metalium/sub_device_types.hpp>

namespace tt::tt_metal {

// Height x width (tt-metal's Shape2D).
class Shape2D {
public:
    Shape2D(std::size_t height, std::size_t width) : height_(height), width_(width) {}
    std::size_t height() const { return height_; }
    std::size_t width() const { return width_; }

private:
    std::size_t height_;
    std::size_t width_;
};

}  // namespace tt::tt_metal

namespace tt::tt_metal::distributed {

struct DeviceLocalBufferConfig {
    DeviceAddr page_size = 0;
    BufferType buffer_type = BufferType::DRAM;
    BufferShardingArgs sharding_args;
    std::optional<bool> bottom_up;
    std::optional<SubDeviceId> sub_device_id = std::nullopt;
};

struct ReplicatedBufferConfig {
    DeviceAddr size = 0;
};

struct ShardedBufferConfig {
    DeviceAddr global_size = 0;
    Shape2D global_buffer_shape = {0, 0};
    Shape2D shard_shape = {0, 0};
    ShardOrientation shard_orientation = ShardOrientation::ROW_MAJOR;

    uint32_t compute_datum_size_bytes() const;
};

using MeshBufferConfig = std::variant<ReplicatedBufferConfig, ShardedBufferConfig>;

class MeshBuffer {
public:
    static std::shared_ptr<MeshBuffer> create(
        const MeshBufferConfig& mesh_buffer_config,
        const DeviceLocalBufferConfig& device_local_config,
        MeshDevice* mesh_device,
        std::optional<DeviceAddr> address = std::nullopt);

    MeshBuffer(const MeshBuffer&) = delete;
    MeshBuffer& operator=(const MeshBuffer&) = delete;

    MeshDevice* device() const { return device_; }
    DeviceAddr size() const;
    DeviceAddr address() const { return reference_.address(); }
    uint32_t page_size() const { return static_cast<uint32_t>(reference_.page_size()); }
    const DeviceLocalBufferConfig& device_local_config() const { return local_config_; }
    Buffer* get_reference_buffer() const;

private:
    MeshBuffer(MeshDevice* device, const DeviceLocalBufferConfig& local_config, Buffer reference,
               std::optional<ShardedBufferConfig> sharded);

    friend class MeshCommandQueue;  // reads and writes each device's shard

    MeshDevice* device_;
    std::optional<ShardedBufferConfig> sharded_;  // none: replicated
    DeviceLocalBufferConfig local_config_;
    mutable Buffer reference_;
};

}  // namespace tt::tt_metal::distributed
