// Emulated tt-metal host API: the mesh command queue. The emulator executes every command when
// it is enqueued, so blocking and non-blocking commands behave alike and finish() returns at once.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include <tt-metalium/mesh_buffer.hpp>
#include <tt-metalium/mesh_device.hpp>
#include <tt-metalium/mesh_workload.hpp>
#include <tt-metalium/sub_device_types.hpp>

namespace tt::tt_metal {

namespace distributed {

class MeshCommandQueue {
public:
    MeshCommandQueue(MeshDevice* device, uint32_t id);

    MeshDevice* device() const { return device_; }
    uint32_t id() const { return id_; }

    void enqueue_mesh_workload(MeshWorkload& mesh_workload, bool blocking);
    void enqueue_write_mesh_buffer(const std::shared_ptr<MeshBuffer>& buffer, const void* host_data, bool blocking);
    void enqueue_read_mesh_buffer(void* host_data, const std::shared_ptr<MeshBuffer>& buffer, bool blocking);
    void finish(std::span<const SubDeviceId> sub_device_ids = {});

private:
    MeshDevice* device_;
    uint32_t id_;
};

}  // namespace distributed
}  // namespace tt::tt_metal
