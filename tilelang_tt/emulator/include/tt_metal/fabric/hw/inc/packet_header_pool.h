// Emulated tt-metal 0.81.1 kernel API: the packet header pool (tt_metal/fabric/hw/inc/packet_header_pool.h), the
// headers a data movement kernel sends over the fabric, in its RISC-V's half of the core's pool in reserved L1
// (runtime/internal.hpp packet_header_pool_offset). Each launch starts with the whole pool free.
#pragma once

#include <cstdint>

#include "hostdev/fabric_edm_packet_header.hpp"

class PacketHeaderPool {
public:
    FORCE_INLINE static volatile tt_l1_ptr PACKET_HEADER_TYPE* allocate_header(
        uint8_t num_headers = 1, emu::k::Loc loc = emu::k::Loc::current()) {
        return reinterpret_cast<volatile tt_l1_ptr PACKET_HEADER_TYPE*>(static_cast<uintptr_t>(
            emu::k::packet_header_alloc(static_cast<uint32_t>(sizeof(PACKET_HEADER_TYPE)) * num_headers, loc)));
    }
};
