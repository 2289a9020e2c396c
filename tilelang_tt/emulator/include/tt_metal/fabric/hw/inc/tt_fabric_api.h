// Emulated tt-metal 0.81.1 kernel API: unicast routes of fabric packet headers (tt_metal/fabric/hw/inc/
// tt_fabric_api.h). A 2-D header is routed to a chip of the mesh (the runtime routes it north/south first, then
// east/west: runtime/fabric.cpp); a 1-D header to a chip (target_as_dev) or a number of hops along the line of the
// worker's connection.
#pragma once

#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "hostdev/fabric_edm_packet_header.hpp"

namespace tt::tt_fabric {

inline bool fabric_set_unicast_route(
    volatile tt_l1_ptr HybridMeshPacketHeader* packet_header, uint16_t dst_dev_id, uint16_t dst_mesh_id) {
    packet_header->emu_packet.route_kind = emu::k::kRouteDevice2D;
    packet_header->emu_packet.dst_dev_id = dst_dev_id;
    packet_header->emu_packet.dst_mesh_id = dst_mesh_id;
    return true;
}

template <bool target_as_dev = true, bool compressed = true>
bool fabric_set_unicast_route(volatile tt_l1_ptr LowLatencyPacketHeader* packet_header, uint16_t target_num) {
    if constexpr (target_as_dev) {
        packet_header->emu_packet.route_kind = emu::k::kRouteDevice1D;
        packet_header->emu_packet.dst_dev_id = target_num;
    } else {
        packet_header->emu_packet.route_kind = emu::k::kRouteHops;
        packet_header->emu_packet.hops = target_num;
    }
    packet_header->emu_packet.dst_mesh_id = 0;
    return true;
}

}  // namespace tt::tt_fabric
