// Emulated tt-metal host API: the fabric (tt-metal 0.81.1 tt-metalium/experimental/fabric/fabric.hpp, the
// declarations a host program of a worker kernel that sends over the fabric uses). The emulator's fabric is
// runtime/fabric.cpp; docs/emulator.md "Fabric" lists what it models.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <tt-metalium/base_types.hpp>
#include <tt-metalium/core_coord.hpp>
#include <tt-metalium/experimental/fabric/fabric_types.hpp>
#include <tt-metalium/program.hpp>

namespace tt::tt_fabric {

// Appends to `worker_args` the runtime args with which the worker kernel on `worker_core` builds its connection
// to the fabric router that forwards toward `dst_fabric_node_id` (WorkerToFabricEdmSender::build_from_args):
// the router's ethernet channel and two semaphores it creates on the core (teardown, buffer index). Under a 1-D
// fabric the destination must be a neighbour of the source; under a 2-D one, any chip of the mesh (the router
// of the first hop toward it). Only Program is emulated (not ProgramDescriptor).
template <typename ProgramOrDescriptor = tt::tt_metal::Program>
void append_fabric_connection_rt_args(
    const FabricNodeId& src_fabric_node_id,
    const FabricNodeId& dst_fabric_node_id,
    uint32_t link_idx,
    ProgramOrDescriptor& worker_program_or_desc,
    const CoreCoord& worker_core,
    std::vector<uint32_t>& worker_args,
    CoreType core_type = CoreType::WORKER);

// Call before creating the MeshDevice: the fabric's routing (1-D line or ring, 2-D mesh or torus) for the
// devices it opens. The other arguments are accepted and have no effect on the emulator.
void SetFabricConfig(
    FabricConfig fabric_config,
    FabricReliabilityMode reliability_mode = FabricReliabilityMode::STRICT_SYSTEM_HEALTH_SETUP_MODE,
    std::optional<uint8_t> num_routing_planes = std::nullopt,
    FabricTensixConfig fabric_tensix_config = FabricTensixConfig::DISABLED,
    FabricUDMMode fabric_udm_mode = FabricUDMMode::DISABLED,
    FabricManagerMode fabric_manager = FabricManagerMode::DEFAULT,
    FabricRouterConfig router_config = FabricRouterConfig{});

FabricConfig GetFabricConfig();

}  // namespace tt::tt_fabric
