// Emulated tt-metal host API: distributed (Mesh) free functions.
#pragma once

#include <span>

#include <tt-metalium/mesh_buffer.hpp>
#include <tt-metalium/mesh_command_queue.hpp>
#include <tt-metalium/mesh_coord.hpp>
#include <tt-metalium/mesh_device.hpp>
#include <tt-metalium/mesh_workload.hpp>

namespace tt::tt_metal::distributed {

void EnqueueMeshWorkload(MeshCommandQueue& mesh_cq, MeshWorkload& mesh_workload, bool blocking);

void Finish(MeshCommandQueue& mesh_cq, std::span<const SubDeviceId> sub_device_ids = {});

}  // namespace tt::tt_metal::distributed
