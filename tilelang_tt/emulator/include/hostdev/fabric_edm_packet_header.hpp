// Emulated tt-metal 0.81.1 kernel API: fabric packet headers (tt_metal/hw/inc/hostdev/fabric_edm_packet_header.hpp).
// A header's first bytes are the emulator's emu::k::FabricPacket (runtime/kernel_api.hpp), which the runtime reads
// from L1 when the header is sent (runtime/fabric.cpp); LowLatencyPacketHeader is 64 bytes, as tt-metal's.
// Emulated: unicast writes, atomic increments and fused write + increment, routed by hops (a 1-D header's
// to_chip_unicast), to every chip of a stretch of the line (a 1-D header's to_chip_multicast: each chip from
// start_distance_in_hops on for range_hops chips gets the write and the increment) or to a chip
// (tt_fabric_api.h fabric_set_unicast_route).
#pragma once

#include <cstddef>
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

namespace tt::tt_fabric {

enum NocSendType : uint8_t {
    NOC_UNICAST_WRITE = 0,
    NOC_UNICAST_INLINE_WRITE = 1,
    NOC_UNICAST_ATOMIC_INC = 2,
    NOC_FUSED_UNICAST_ATOMIC_INC = 3,
    NOC_UNICAST_SCATTER_WRITE = 4,
    NOC_MULTICAST_WRITE = 5,
    NOC_MULTICAST_ATOMIC_INC = 6,
    NOC_UNICAST_READ = 7,
    NOC_SPARSE_MCAST_WRITE = 8,
    NOC_SEND_TYPE_LAST = NOC_SPARSE_MCAST_WRITE
};

struct NocUnicastCommandHeader {
    uint64_t noc_address;
};

struct NocUnicastAtomicIncCommandHeader {
    NocUnicastAtomicIncCommandHeader(uint64_t noc_address, uint32_t val, bool flush = true) :
        noc_address(noc_address), val(val), flush(flush) {}

    uint64_t noc_address;
    uint32_t val;
    bool flush;
};

struct NocUnicastAtomicIncFusedCommandHeader {
    NocUnicastAtomicIncFusedCommandHeader(
        uint64_t noc_address, uint64_t semaphore_noc_address, uint32_t val, bool flush = true) :
        noc_address(noc_address), semaphore_noc_address(semaphore_noc_address), val(val), flush(flush) {}

    uint64_t noc_address;
    uint64_t semaphore_noc_address;
    uint32_t val;
    bool flush;
};

struct MulticastRoutingCommandHeader {
    uint8_t start_distance_in_hops;
    uint8_t range_hops;  // 0 implies unicast
};

template <typename Derived>
struct PacketHeaderBase {
    emu::k::FabricPacket emu_packet;  // the emulator's fields (runtime/kernel_api.hpp)

    size_t get_payload_size_excluding_header() volatile const { return this->emu_packet.payload_size_bytes; }
    size_t get_payload_size_including_header() volatile const {
        return get_payload_size_excluding_header() + sizeof(Derived);
    }
    NocSendType get_noc_send_type() volatile const { return static_cast<NocSendType>(this->emu_packet.noc_send_type); }

    Derived& to_chip_unicast(uint8_t distance_in_hops) {
        static_cast<Derived*>(this)->to_chip_unicast_impl(distance_in_hops);
        return *static_cast<Derived*>(this);
    }
    volatile Derived* to_chip_unicast(uint8_t distance_in_hops) volatile {
        static_cast<volatile Derived*>(this)->to_chip_unicast_impl(distance_in_hops);
        return static_cast<volatile Derived*>(this);
    }

    Derived& to_chip_multicast(const MulticastRoutingCommandHeader& mcast_routing_command_header) {
        static_cast<Derived*>(this)->to_chip_multicast_impl(mcast_routing_command_header);
        return *static_cast<Derived*>(this);
    }
    volatile Derived* to_chip_multicast(const MulticastRoutingCommandHeader& mcast_routing_command_header) volatile {
        static_cast<volatile Derived*>(this)->to_chip_multicast_impl(mcast_routing_command_header);
        return static_cast<volatile Derived*>(this);
    }

    Derived& to_noc_unicast_write(const NocUnicastCommandHeader& noc_unicast_command_header, size_t payload_size_bytes) {
        set_write(noc_unicast_command_header.noc_address, payload_size_bytes);
        return *static_cast<Derived*>(this);
    }
    volatile Derived* to_noc_unicast_write(
        const NocUnicastCommandHeader& noc_unicast_command_header, size_t payload_size_bytes) volatile {
        set_write(noc_unicast_command_header.noc_address, payload_size_bytes);
        return static_cast<volatile Derived*>(this);
    }

    Derived& to_noc_unicast_atomic_inc(const NocUnicastAtomicIncCommandHeader& noc_unicast_atomic_inc_command_header) {
        set_atomic_inc(noc_unicast_atomic_inc_command_header);
        return *static_cast<Derived*>(this);
    }
    volatile Derived* to_noc_unicast_atomic_inc(
        const NocUnicastAtomicIncCommandHeader& noc_unicast_atomic_inc_command_header) volatile {
        set_atomic_inc(noc_unicast_atomic_inc_command_header);
        return static_cast<volatile Derived*>(this);
    }

    Derived& to_noc_fused_unicast_write_atomic_inc(
        const NocUnicastAtomicIncFusedCommandHeader& noc_fused_unicast_write_atomic_inc_command_header,
        size_t payload_size_bytes) {
        set_fused(noc_fused_unicast_write_atomic_inc_command_header, payload_size_bytes);
        return *static_cast<Derived*>(this);
    }
    volatile Derived* to_noc_fused_unicast_write_atomic_inc(
        const NocUnicastAtomicIncFusedCommandHeader& noc_fused_unicast_write_atomic_inc_command_header,
        size_t payload_size_bytes) volatile {
        set_fused(noc_fused_unicast_write_atomic_inc_command_header, payload_size_bytes);
        return static_cast<volatile Derived*>(this);
    }

private:
    PacketHeaderBase() = default;
    friend Derived;

    void set_write(uint64_t noc_address, size_t payload_size_bytes) volatile {
        this->emu_packet.noc_send_type = NOC_UNICAST_WRITE;
        this->emu_packet.noc_address = noc_address;
        this->emu_packet.payload_size_bytes = static_cast<uint16_t>(payload_size_bytes);
    }
    void set_atomic_inc(const NocUnicastAtomicIncCommandHeader& h) volatile {
        this->emu_packet.noc_send_type = NOC_UNICAST_ATOMIC_INC;
        this->emu_packet.noc_address = h.noc_address;
        this->emu_packet.val = h.val;
        this->emu_packet.flush = h.flush;
        this->emu_packet.payload_size_bytes = 0;
    }
    void set_fused(const NocUnicastAtomicIncFusedCommandHeader& h, size_t payload_size_bytes) volatile {
        this->emu_packet.noc_send_type = NOC_FUSED_UNICAST_ATOMIC_INC;
        this->emu_packet.noc_address = h.noc_address;
        this->emu_packet.semaphore_noc_address = h.semaphore_noc_address;
        this->emu_packet.val = h.val;
        this->emu_packet.flush = h.flush;
        this->emu_packet.payload_size_bytes = static_cast<uint16_t>(payload_size_bytes);
    }
};

// The 1-D fabric's header: routed a number of hops along the connection's direction.
template <uint32_t ExtensionWords>
struct LowLatencyPacketHeaderT : public PacketHeaderBase<LowLatencyPacketHeaderT<ExtensionWords>> {
    uint8_t emu_padding[64 - sizeof(emu::k::FabricPacket)];

    void to_chip_unicast_impl(uint8_t distance_in_hops) volatile {
        this->emu_packet.route_kind = emu::k::kRouteHops;
        this->emu_packet.hops = distance_in_hops;
        this->emu_packet.dst_mesh_id = 0;
    }
    void to_chip_multicast_impl(const MulticastRoutingCommandHeader& header) volatile {
        if (header.range_hops == 0) {  // 0.81.1: a range of 0 is a unicast
            to_chip_unicast_impl(header.start_distance_in_hops);
            return;
        }
        this->emu_packet.route_kind = emu::k::kRouteMulticast;
        this->emu_packet.hops = header.start_distance_in_hops;
        this->emu_packet.range = header.range_hops;
        this->emu_packet.dst_mesh_id = 0;
    }
};

// The 2-D fabric's header: routed to a chip (tt_fabric_api.h fabric_set_unicast_route).
template <uint32_t RouteBufferSize = 35>
struct HybridMeshPacketHeaderT : PacketHeaderBase<HybridMeshPacketHeaderT<RouteBufferSize>> {
    uint8_t emu_padding[96 - sizeof(emu::k::FabricPacket)];

    void to_chip_unicast_impl(uint8_t) volatile {}
};

using LowLatencyPacketHeader = LowLatencyPacketHeaderT<1>;  // 64B, 32-hop
using HybridMeshPacketHeader = HybridMeshPacketHeaderT<>;

static_assert(sizeof(LowLatencyPacketHeader) == 64, "sizeof(LowLatencyPacketHeader) is 64 B on tt-metal");

// The header type the fabric's routing mode selects (tt-metal's JIT build defines ROUTING_MODE from the host's
// fabric config: fabric_routing_mode.h's bits, 0x2 = 2-D).
#if !defined(ROUTING_MODE) || (ROUTING_MODE & 0x2) == 0
#define PACKET_HEADER_TYPE tt::tt_fabric::LowLatencyPacketHeader
#else
#define PACKET_HEADER_TYPE tt::tt_fabric::HybridMeshPacketHeader
#endif

}  // namespace tt::tt_fabric
