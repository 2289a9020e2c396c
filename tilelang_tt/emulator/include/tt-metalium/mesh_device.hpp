// Emulated tt-metal host API: the mesh device. The emulator provides a unit mesh, or a mesh of
// rows x cols devices (MeshDevice::create), each its own device model, of the architecture the
// environment variable TT_EMU_ARCH names (default wormhole_b0).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include <tt-metalium/core_coord.hpp>
#include <tt-metalium/mesh_coord.hpp>

namespace tt::tt_fabric {
class FabricNodeId;
}  // namespace tt::tt_fabric

namespace tt::tt_metal {

struct DispatchCoreConfig {};

constexpr std::size_t DEFAULT_L1_SMALL_SIZE = 0;
constexpr std::size_t DEFAULT_TRACE_REGION_SIZE = 0;
constexpr std::size_t DEFAULT_WORKER_L1_SIZE = 0;

namespace distributed {

class MeshCommandQueue;

// The mesh to open: its shape (tt-metal's MeshDeviceConfig, a header class; the emulator needs the shape only).
class MeshDeviceConfig {
public:
    explicit MeshDeviceConfig(const MeshShape& mesh_shape) : mesh_shape_(mesh_shape) {}
    const MeshShape& mesh_shape() const { return mesh_shape_; }

private:
    MeshShape mesh_shape_;
};

class MeshDevice : public std::enable_shared_from_this<MeshDevice> {
public:
    static std::shared_ptr<MeshDevice> create_unit_mesh(
        int device_id,
        std::size_t l1_small_size = DEFAULT_L1_SMALL_SIZE,
        std::size_t trace_region_size = DEFAULT_TRACE_REGION_SIZE,
        std::size_t num_command_queues = 1,
        const DispatchCoreConfig& dispatch_core_config = DispatchCoreConfig{},
        std::span<const std::uint32_t> l1_bank_remap = {},
        std::size_t worker_l1_size = DEFAULT_WORKER_L1_SIZE);
    static std::shared_ptr<MeshDevice> create(
        const MeshDeviceConfig& config,
        std::size_t l1_small_size = DEFAULT_L1_SMALL_SIZE,
        std::size_t trace_region_size = DEFAULT_TRACE_REGION_SIZE,
        std::size_t num_command_queues = 1,
        const DispatchCoreConfig& dispatch_core_config = DispatchCoreConfig{},
        std::span<const std::uint32_t> l1_bank_remap = {},
        std::size_t worker_l1_size = DEFAULT_WORKER_L1_SIZE);

    MeshDevice(const MeshDevice&) = delete;
    MeshDevice& operator=(const MeshDevice&) = delete;
    ~MeshDevice();

    MeshCommandQueue& mesh_command_queue(std::optional<uint8_t> cq_id = std::nullopt) const;
    const MeshShape& shape() const;
    CoreCoord compute_with_storage_grid_size() const;
    // NOC (virtual) coordinates of a logical worker core, as kernels address it.
    CoreCoord worker_core_from_logical_core(const CoreCoord& logical_core) const;
    std::size_t num_devices() const { return shape_.mesh_size(); }
    // The fabric's id of the chip at `coord`: mesh 0, chip id row-major over the mesh
    // (tt-metalium/experimental/fabric/fabric_types.hpp defines FabricNodeId).
    tt::tt_fabric::FabricNodeId get_fabric_node_id(const MeshCoordinate& coord) const;
    // Writes the emulator's counters to $TT_EMU_COUNTERS (when set) and closes the device.
    bool close();

private:
    explicit MeshDevice(const MeshShape& shape);

    MeshShape shape_;
    std::unique_ptr<MeshCommandQueue> command_queue_;
    bool open_ = true;
};

}  // namespace distributed
}  // namespace tt::tt_metal
