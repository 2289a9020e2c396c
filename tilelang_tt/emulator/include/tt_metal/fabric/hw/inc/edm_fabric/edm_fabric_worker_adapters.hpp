// Emulated tt-metal 0.81.1 kernel API: a worker's connection to a fabric router
// (tt_metal/fabric/hw/inc/edm_fabric/edm_fabric_worker_adapters.hpp). build_from_args reads what the host's
// append_fabric_connection_rt_args appended (the router's ethernet channel, a teardown and a buffer-index
// semaphore id); a packet is its payload (send_payload_without_header_*) and then its header
// (send_payload_flush_*: the header's L1 address and size), which sends it (runtime/fabric.cpp). The open / close
// handshakes with the router are checks here: sending needs an open connection.
#pragma once

#include <cstddef>
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "hostdev/fabric_edm_packet_header.hpp"

namespace tt::tt_fabric {

FORCE_INLINE constexpr uint8_t get_fabric_worker_noc() { return noc_index; }

template <bool I_USE_STREAM_REG_FOR_CREDIT_RECEIVE, uint8_t EDM_NUM_BUFFER_SLOTS = 0, uint8_t VC_ID = 0>
struct WorkerToFabricEdmSenderBase {
    template <ProgrammableCoreType my_core_type, bool sem_args_are_l1_addresses = false>
    static WorkerToFabricEdmSenderBase build_from_args(std::size_t& arg_idx, emu::k::Loc loc = emu::k::Loc::current()) {
        static_assert(my_core_type == ProgrammableCoreType::TENSIX, "emulator: a worker (Tensix) connection only");
        WorkerToFabricEdmSenderBase sender;
        sender.emu_channel = get_arg_val<uint32_t>(arg_idx++, loc);
        const uint32_t teardown = get_arg_val<uint32_t>(arg_idx++, loc);
        const uint32_t buffer_index = get_arg_val<uint32_t>(arg_idx++, loc);
        if constexpr (!sem_args_are_l1_addresses) {
            get_semaphore<my_core_type>(teardown, loc);  // the semaphores the host created for the connection
            get_semaphore<my_core_type>(buffer_index, loc);
        }
        emu::k::fabric_open(sender.emu_channel, loc);
        return sender;
    }

    template <bool SEND_CREDIT_ADDR = false, bool posted = false, uint8_t WORKER_HANDSHAKE_NOC = get_fabric_worker_noc()>
    void open_start(emu::k::Loc loc = emu::k::Loc::current()) {
        if (emu_open) emu::k::api_error("WorkerToFabricEdmSender::open: the connection is already open", loc);
        emu::k::fabric_connect(emu_channel, true, loc);
        emu_open = true;
    }
    template <bool posted = false, uint8_t WORKER_HANDSHAKE_NOC = get_fabric_worker_noc()>
    void open_finish() {}
    template <bool SEND_CREDIT_ADDR = false, bool posted = false, uint8_t WORKER_HANDSHAKE_NOC = get_fabric_worker_noc()>
    void open(emu::k::Loc loc = emu::k::Loc::current()) {
        open_start<SEND_CREDIT_ADDR, posted, WORKER_HANDSHAKE_NOC>(loc);
        open_finish<posted, WORKER_HANDSHAKE_NOC>();
    }
    template <bool posted = false, uint8_t WORKER_HANDSHAKE_NOC = get_fabric_worker_noc()>
    void close_start(emu::k::Loc loc = emu::k::Loc::current()) {
        if (!emu_open) emu::k::api_error("WorkerToFabricEdmSender::close: the connection is not open", loc);
        if (emu_payload_size != 0)
            emu::k::api_error("WorkerToFabricEdmSender::close: a payload was sent without its header", loc);
        emu::k::fabric_connect(emu_channel, false, loc);
        emu_open = false;
    }
    template <bool posted = false, uint8_t WORKER_HANDSHAKE_NOC = get_fabric_worker_noc()>
    void close_finish() {}
    template <bool posted = false, uint8_t WORKER_HANDSHAKE_NOC = get_fabric_worker_noc()>
    void close(emu::k::Loc loc = emu::k::Loc::current()) {
        close_start<posted, WORKER_HANDSHAKE_NOC>(loc);
        close_finish<posted, WORKER_HANDSHAKE_NOC>();
    }

    template <size_t num_slots = 1>
    FORCE_INLINE bool edm_has_space_for_packet() const {
        return true;  // the slots' time is the runtime's: wait_for_empty_write_slot waits in logical time
    }
    FORCE_INLINE void wait_for_empty_write_slot(emu::k::Loc loc = emu::k::Loc::current()) const {
        emu::k::fabric_wait_slot(emu_channel, loc);
    }

    template <bool posted = false>
    FORCE_INLINE void send_payload_without_header_non_blocking_from_address(
        uint32_t source_address, size_t size_bytes, uint8_t noc = get_fabric_worker_noc(),
        emu::k::Loc loc = emu::k::Loc::current()) {
        check_open(loc);
        if (emu_payload_size != 0)
            emu::k::api_error("fabric: a second payload before the first one's header was sent", loc);
        emu_payload_addr = source_address;
        emu_payload_size = static_cast<uint32_t>(size_bytes);
    }
    template <bool posted = false>
    FORCE_INLINE void send_payload_flush_blocking_from_address(
        uint32_t source_address, size_t size_bytes, uint8_t noc = get_fabric_worker_noc(),
        emu::k::Loc loc = emu::k::Loc::current()) {
        send_packet(source_address, size_bytes, loc);
    }
    template <bool posted = false>
    FORCE_INLINE void send_payload_flush_non_blocking_from_address(
        uint32_t source_address, size_t size_bytes, uint8_t noc = get_fabric_worker_noc(),
        emu::k::Loc loc = emu::k::Loc::current()) {
        send_packet(source_address, size_bytes, loc);
    }
    template <bool posted = false>
    FORCE_INLINE void send_payload_blocking_from_address(
        uint32_t source_address, size_t size_bytes, uint8_t noc = get_fabric_worker_noc(),
        emu::k::Loc loc = emu::k::Loc::current()) {
        send_packet(source_address, size_bytes, loc);
    }
    template <bool posted = false>
    FORCE_INLINE void send_payload_non_blocking_from_address(
        uint32_t source_address, size_t size_bytes, uint8_t noc = get_fabric_worker_noc(),
        emu::k::Loc loc = emu::k::Loc::current()) {
        send_packet(source_address, size_bytes, loc);
    }

    uint32_t emu_channel = 0;
    bool emu_open = false;
    uint32_t emu_payload_addr = 0, emu_payload_size = 0;

private:
    void check_open(emu::k::Loc loc) const {
        if (!emu_open) emu::k::api_error("fabric: sending on a connection that is not open (call open() first)", loc);
    }
    // The header at `address`: with a payload sent before it (mesh/api.h), that payload; else the `size_bytes`
    // at `address` are the header and, after it, the payload (a packet laid out whole in L1).
    void send_packet(uint32_t address, size_t size_bytes, emu::k::Loc loc) {
        check_open(loc);
        uint32_t payload = emu_payload_addr, payload_size = emu_payload_size;
        if (payload_size == 0 && size_bytes > sizeof(PACKET_HEADER_TYPE)) {
            payload = address + static_cast<uint32_t>(sizeof(PACKET_HEADER_TYPE));
            payload_size = static_cast<uint32_t>(size_bytes - sizeof(PACKET_HEADER_TYPE));
        }
        emu_payload_addr = emu_payload_size = 0;
        emu::k::fabric_send(emu_channel, address, payload, payload_size, loc);
    }
};

template <bool I_USE_STREAM_REG_FOR_CREDIT_RECEIVE, uint8_t EDM_NUM_BUFFER_SLOTS = 0>
using WorkerToFabricEdmSenderImpl =
    WorkerToFabricEdmSenderBase<I_USE_STREAM_REG_FOR_CREDIT_RECEIVE, EDM_NUM_BUFFER_SLOTS>;

using WorkerToFabricEdmSender = WorkerToFabricEdmSenderImpl<false, 0>;

}  // namespace tt::tt_fabric
