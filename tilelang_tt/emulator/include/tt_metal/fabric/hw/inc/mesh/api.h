// Emulated tt-metal 0.81.1 kernel API: the fabric's mesh API (tt_metal/fabric/hw/inc/mesh/api.h), its unicast
// calls on one connection: a NOC write, an atomic increment, and a fused write + increment at an address of
// another chip of the mesh, each routed to the chip (fabric_set_unicast_route) and sent as mesh/api.h sends it
// (the payload, then the header).
#pragma once

#include <cstdint>

#include "hostdev/fabric_edm_packet_header.hpp"
#include "tt_metal/fabric/hw/inc/edm_fabric/edm_fabric_worker_adapters.hpp"
#include "tt_metal/fabric/hw/inc/packet_header_pool.h"
#include "tt_metal/fabric/hw/inc/tt_fabric_api.h"

namespace tt::tt_fabric::mesh::experimental {

template <typename FabricSenderType, bool SetRoute = true>
FORCE_INLINE void fabric_unicast_noc_unicast_write(
    tt_l1_ptr FabricSenderType* client_interface,
    volatile PACKET_HEADER_TYPE* packet_header,
    uint8_t dst_dev_id,
    uint16_t dst_mesh_id,
    uint32_t src_addr,
    uint32_t size,
    tt::tt_fabric::NocUnicastCommandHeader noc_unicast_command_header,
    emu::k::Loc loc = emu::k::Loc::current()) {
    if constexpr (SetRoute) {
        fabric_set_unicast_route(packet_header, dst_dev_id, dst_mesh_id);
    }
    packet_header->to_noc_unicast_write(noc_unicast_command_header, size);
    client_interface->wait_for_empty_write_slot(loc);
    client_interface->send_payload_without_header_non_blocking_from_address(src_addr, size, get_fabric_worker_noc(), loc);
    client_interface->send_payload_flush_non_blocking_from_address(
        (uint32_t)(uintptr_t)packet_header, sizeof(PACKET_HEADER_TYPE), get_fabric_worker_noc(), loc);
}

template <typename FabricSenderType>
FORCE_INLINE void fabric_unicast_noc_unicast_atomic_inc(
    tt_l1_ptr FabricSenderType* client_interface,
    volatile PACKET_HEADER_TYPE* packet_header,
    uint8_t dst_dev_id,
    uint16_t dst_mesh_id,
    tt::tt_fabric::NocUnicastAtomicIncCommandHeader noc_unicast_atomic_inc_command_header,
    emu::k::Loc loc = emu::k::Loc::current()) {
    fabric_set_unicast_route(packet_header, dst_dev_id, dst_mesh_id);
    packet_header->to_noc_unicast_atomic_inc(noc_unicast_atomic_inc_command_header);
    client_interface->wait_for_empty_write_slot(loc);
    client_interface->send_payload_flush_non_blocking_from_address(
        (uint32_t)(uintptr_t)packet_header, sizeof(PACKET_HEADER_TYPE), get_fabric_worker_noc(), loc);
}

template <typename FabricSenderType, bool SetRoute = true>
FORCE_INLINE void fabric_unicast_noc_fused_unicast_with_atomic_inc(
    tt_l1_ptr FabricSenderType* client_interface,
    volatile PACKET_HEADER_TYPE* packet_header,
    uint8_t dst_dev_id,
    uint16_t dst_mesh_id,
    uint32_t src_addr,
    uint32_t size,
    tt::tt_fabric::NocUnicastAtomicIncFusedCommandHeader noc_fused_unicast_atomic_inc_command_header,
    emu::k::Loc loc = emu::k::Loc::current()) {
    if constexpr (SetRoute) {
        fabric_set_unicast_route(packet_header, dst_dev_id, dst_mesh_id);
    }
    packet_header->to_noc_fused_unicast_write_atomic_inc(noc_fused_unicast_atomic_inc_command_header, size);
    client_interface->wait_for_empty_write_slot(loc);
    client_interface->send_payload_without_header_non_blocking_from_address(src_addr, size, get_fabric_worker_noc(), loc);
    client_interface->send_payload_flush_non_blocking_from_address(
        (uint32_t)(uintptr_t)packet_header, sizeof(PACKET_HEADER_TYPE), get_fabric_worker_noc(), loc);
}

}  // namespace tt::tt_fabric::mesh::experimental
